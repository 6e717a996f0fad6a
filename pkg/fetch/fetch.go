// Package fetch is the harvester's HTTP client: HTTP/1.1 only, one
// connection per host at a time with keep-alive, hard limits on time
// (connect, first byte, idle read, total, minimum transfer rate) and size,
// its own cached DNS lookups, an address policy that keeps the crawler out
// of private networks, conditional requests, a list of accepted media
// types, and gzip and brotli decoding it controls itself so that a
// compression bomb is cut at the same cap as any other body.
//
// A Client holds what all hosts share (settings, resolver, policy); a Host
// is one host's session with its own transport, used by one goroutine at
// a time. Redirects are never followed here: the caller decides. A Host
// reports what the scheduler needs to know of its server: how long
// connections take to open, how long responses take, and how many
// requests the server serves on one connection before closing it.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// Header names the stored response headers use.
const (
	// DecodedHeader replaces Content-Encoding in stored headers when the
	// harvester decoded the body: the stored body is already decoded and
	// must not be decoded again.
	DecodedHeader = "X-Wire-Decoded-Content-Encoding"
)

// WARC-Truncated reasons (WARC 1.1 §5.13).
const (
	TruncatedLength     = "length"      // the body cap was reached
	TruncatedTime       = "time"        // a time limit cut the body
	TruncatedDisconnect = "disconnect"  // the server closed or reset mid-body
	TruncatedOther      = "unspecified" // a body that could not be decoded, or was not downloaded (media type)
)

// AcceptEncoding is the Accept-Encoding header of every request: the
// codings the client decodes itself, under the body cap.
const AcceptEncoding = "gzip, br"

// DefaultRateWindow is the window over which the minimum transfer rate is
// measured.
const DefaultRateWindow = 5 * time.Second

// Config holds the client's settings (from config.Crawl and
// config.Harvester).
type Config struct {
	UserAgent        string        // sent on every request
	ConnectTimeout   time.Duration // per connection attempt (TCP, TLS handshake)
	FirstByteTimeout time.Duration // from the request written to the first byte of the response; 0 = none
	ReadTimeout      time.Duration // longest wait for any data once a request is sent
	TotalTimeout     time.Duration // whole request, body included
	// MinTransferRate in bytes per second: a response slower than this
	// over a RateWindow (counted from its first byte) is cut. 0 = none.
	MinTransferRate int64
	// RateWindow is the window of MinTransferRate; 0 means
	// DefaultRateWindow.
	RateWindow   time.Duration
	AllowPrivate bool          // allow loopback, private and link-local addresses
	DNSServer    string        // host:port of the DNS server; "" = system resolver
	DNSTimeout   time.Duration // per lookup; 0 means ConnectTimeout
	DNSCacheTime time.Duration // how long answers and failures are kept; 0 = the whole run
	// MaxHeaderBytes caps the response header; 0 means 64 KiB.
	MaxHeaderBytes int64
}

// Client fetches URLs under one Config. It is safe for concurrent use;
// each host gets its own Host.
type Client struct {
	cfg      Config
	resolver *Resolver
	policy   Policy
	log      *slog.Logger
	// header is the request header every request sends, shared
	// read-only by the requests that send nothing else (an
	// http.RoundTripper does not modify a request's header).
	header http.Header
}

// New returns a client. log may be nil.
func New(cfg Config, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = 64 << 10
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = DefaultRateWindow
	}
	if cfg.DNSTimeout <= 0 {
		cfg.DNSTimeout = cfg.ConnectTimeout
	}
	return &Client{
		cfg:      cfg,
		resolver: NewResolver(cfg.DNSServer, cfg.DNSTimeout, cfg.DNSCacheTime),
		policy:   Policy{AllowPrivate: cfg.AllowPrivate},
		log:      log,
		header: http.Header{
			"User-Agent":      {cfg.UserAgent},
			"Accept":          {"*/*"},
			"Accept-Encoding": {AcceptEncoding},
		},
	}
}

// Resolver is the client's DNS cache.
func (c *Client) Resolver() *Resolver { return c.resolver }

// Resolve looks host up and returns the address the client will dial
// first: the first answer the address policy allows. Failures are *Error
// of kind KindDNS or KindBlocked.
func (c *Client) Resolve(ctx context.Context, host string) (netip.Addr, error) {
	addrs, err := c.allowed(ctx, host)
	if err != nil {
		return netip.Addr{}, err
	}
	return addrs[0], nil
}

// allowed returns the addresses of host that the policy allows, in the
// resolver's order.
func (c *Client) allowed(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := c.resolver.Lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	var policyErr error
	for _, ip := range addrs {
		if err := c.policy.Check(ip); err != nil {
			if policyErr == nil {
				policyErr = err
			}
			continue
		}
		out = append(out, ip)
	}
	if len(out) == 0 {
		return nil, policyErr
	}
	return out, nil
}

// Response is one response as the harvester stores it.
type Response struct {
	URL        string        // the URL requested
	Started    time.Time     // when the request started
	Duration   time.Duration // until the end of the body
	IP         string        // server address
	Request    []byte        // request line and headers as sent
	Status     int           // HTTP status code
	StatusLine string        // e.g. "HTTP/1.1 200 OK"
	Header     http.Header   // stored headers: see DecodedHeader; Content-Length dropped when the body differs from it
	Body       []byte        // body as stored: de-chunked, decoded, at most the cap
	Truncated  string        // WARC-Truncated reason, or ""
	// Skipped says why the body was not downloaded at all ("media type
	// application/zip not accepted"); the body is then empty and
	// Truncated is TruncatedOther.
	Skipped string
	// Connect is the time it took to open the connection (TCP and TLS,
	// DNS excluded); 0 when an open connection was reused.
	Connect time.Duration
	// FirstByte is the time from the start of the request to the first
	// byte of the response.
	FirstByte time.Duration
	// Reused tells whether the request went over a connection kept alive
	// from an earlier request; ConnRequests counts the requests that
	// connection has carried, this one included.
	Reused       bool
	ConnRequests int

	bodyBuf *bytes.Buffer // holds Body, from bodyPool; see Release
}

// bodyPool recycles the buffers bodies are read into (see
// Response.Release).
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody bounds the buffers kept for reuse.
const maxPooledBody = 1 << 20

// Release gives the buffer of the body back for reuse by later
// responses: r.Body must not be used after. Calling it is optional (a
// response that is not released is collected as usual).
func (r *Response) Release() {
	if r == nil || r.bodyBuf == nil {
		return
	}
	if r.bodyBuf.Cap() <= maxPooledBody {
		r.bodyBuf.Reset()
		bodyPool.Put(r.bodyBuf)
	}
	r.bodyBuf, r.Body = nil, nil
}

// MIME is the media type of the response, lower-case, without parameters.
func (r *Response) MIME() string { return MediaType(r.Header.Get("Content-Type")) }

// MediaType returns the media type of a Content-Type value, lower-case,
// without parameters ("" if empty).
func MediaType(ct string) string {
	// What mime.ParseMediaType returns as the media type, valid or not,
	// without parsing (and allocating) the parameters.
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// Location is the redirect target as sent, for 3xx responses.
func (r *Response) Location() string {
	if r.Status >= 300 && r.Status < 400 {
		return r.Header.Get("Location")
	}
	return ""
}

// Request is what Host.Do fetches.
type Request struct {
	URL     string
	MaxBody int64 // cap on the decoded body
	// IfModifiedSince and IfNoneMatch, when set, make the request
	// conditional (RFC 9110 §13.1): the validators of an earlier visit.
	IfModifiedSince string
	IfNoneMatch     string
	// Accept, if not nil, is asked once the headers have arrived whether
	// the body of a response of this media type ("" when the response has
	// no Content-Type) is to be downloaded; when it says no, the body is
	// not read and Response.Skipped says why.
	Accept func(mediaType string) bool
}

// Host is a session with one host: its own transport, at most one
// connection open at any time (even across schemes and ports), kept alive
// between requests. Methods must not be called concurrently. Close it
// when the host is done.
type Host struct {
	c  *Client
	tr *http.Transport

	mu      sync.Mutex
	cur     *inflight // the request in flight, which the connections report to
	lastKey string    // scheme://host:port of the last request
	closes  []int     // requests served on connections the server closed
	last    *conn2    // the newest connection
	open    int       // connections open now
	peak    int       // most connections open at once (tests)
	// ourClose is set while CloseIdle runs: connections closed then are
	// closed by us, not by the server.
	ourClose bool

	// base is a child of the context Do was last given (baseOf), from
	// which each request's context is made: a request then registers
	// with this host's context, not with the caller's, which all the
	// harvester's connections share (its lock was contended). Only Do
	// (one at a time) and Close touch these.
	base       context.Context
	baseOf     context.Context
	baseCancel context.CancelFunc
}

// baseFor returns the host's context under ctx, made anew when ctx is
// not the one of the last request (or cannot be compared).
func (h *Host) baseFor(ctx context.Context) context.Context {
	if h.base != nil && reflect.TypeOf(ctx).Comparable() && ctx == h.baseOf {
		return h.base
	}
	if h.baseCancel != nil {
		h.baseCancel()
	}
	h.base, h.baseCancel = context.WithCancel(ctx)
	h.baseOf = ctx
	return h.base
}

// inflight is what a request's connections report: the bytes written (the
// request as sent) and each read, which feed the read watchdog, the
// time-to-first-byte limit and the transfer rate check.
type inflight struct {
	mu  sync.Mutex
	req bytes.Buffer
	// One timer keeps the request's three time limits — the total one
	// (deadline), the read watchdog (readLim after the last read, or
	// after the start) and the time to the first byte (ttfbAt, from the
	// request written) — armed for the earliest: when it fires, it
	// cancels the request with the limit that has passed, or is armed
	// again for the next. A read only notes its time.
	timer     *time.Timer
	stopped   bool
	deadline  time.Time
	readLim   time.Duration
	lastRead  time.Time
	ttfbAt    time.Time // zero: not armed
	firstByte time.Time
	cancel    context.CancelCauseFunc
	minRate   float64 // bytes per second
	window    time.Duration
	winStart  time.Time
	winBytes  int64
	// gotConn is set once the request has a connection: the transport
	// asking for another one means it wants to send the request again
	// (see Host.dial). connErr is the first error of a read or write on
	// the connection while the request was in flight.
	gotConn bool
	connErr error
}

// haveConn records that the request got a connection and tells whether
// it had one already (the transport is re-sending it).
func (f *inflight) haveConn() (again bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	again = f.gotConn
	f.gotConn = true
	return again
}

// hadConn tells whether the request got a connection already.
func (f *inflight) hadConn() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gotConn
}

// connFailed records the first error of the connection under the request.
func (f *inflight) connFailed(err error) {
	f.mu.Lock()
	if f.connErr == nil {
		f.connErr = err
	}
	f.mu.Unlock()
}

// lostConn is the error of the connection the request was sent on, for a
// request the transport wanted to send again.
func (f *inflight) lostConn() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.connErr != nil {
		return f.connErr
	}
	return io.ErrUnexpectedEOF
}

// errNotResent is what Host.dial answers when the transport asks for a
// new connection to send a request again after the first one failed.
var errNotResent = errors.New("fetch: a request is never sent again on a new connection")

func (f *inflight) wrote(p []byte) {
	f.mu.Lock()
	if f.req.Len() < 64<<10 {
		f.req.Write(p)
	}
	f.mu.Unlock()
}

// arm starts the time limits of a request started at start.
func (f *inflight) arm(start time.Time, total time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deadline, f.lastRead = start.Add(total), start
	f.timer = time.AfterFunc(f.next().Sub(start), f.fire)
}

// next is when the earliest limit passes. Called with mu held.
func (f *inflight) next() time.Time {
	t := f.deadline
	if r := f.lastRead.Add(f.readLim); r.Before(t) {
		t = r
	}
	if !f.ttfbAt.IsZero() && f.firstByte.IsZero() && f.ttfbAt.Before(t) {
		t = f.ttfbAt
	}
	return t
}

// fire is the timer's function: it cancels the request with the limit
// that has passed, or arms the timer again for the next one (a read
// moved the watchdog on since it was armed).
func (f *inflight) fire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	now := time.Now()
	switch {
	case !now.Before(f.deadline):
		f.cancel(errTotalTimeout)
	case !f.ttfbAt.IsZero() && f.firstByte.IsZero() && !now.Before(f.ttfbAt):
		f.cancel(errFirstByte)
	case !now.Before(f.lastRead.Add(f.readLim)):
		f.cancel(errReadTimeout)
	default:
		f.timer.Reset(f.next().Sub(now))
	}
}

func (f *inflight) read(n int) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastRead = now
	if f.firstByte.IsZero() {
		f.firstByte = now
		f.winStart = now
	}
	f.winBytes += int64(n)
	if f.minRate > 0 {
		if el := now.Sub(f.winStart); el >= f.window {
			if float64(f.winBytes) < f.minRate*el.Seconds() {
				f.cancel(errSlow)
			}
			f.winStart, f.winBytes = now, 0
		}
	}
}

// startTTFB arms the time-to-first-byte limit once the request is written.
func (f *inflight) startTTFB(d time.Duration) {
	if d <= 0 {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.firstByte.IsZero() && f.ttfbAt.IsZero() && !f.stopped {
		f.ttfbAt = now.Add(d)
		if f.timer != nil && f.ttfbAt.Before(f.lastRead.Add(f.readLim)) && f.ttfbAt.Before(f.deadline) {
			f.timer.Reset(d)
		}
	}
}

// stop ends the time limits.
func (f *inflight) stop() {
	f.mu.Lock()
	f.stopped = true
	if f.timer != nil {
		f.timer.Stop()
	}
	f.mu.Unlock()
}

func (f *inflight) request() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.req.Bytes())
}

func (f *inflight) first() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.firstByte
}

// NewHost starts a session for one host.
func (c *Client) NewHost() *Host {
	h := &Host{c: c}
	h.tr = &http.Transport{
		Proxy:                  nil,
		DialContext:            h.dial,
		DialTLSContext:         h.dialTLS,
		MaxIdleConns:           1,
		MaxIdleConnsPerHost:    1,
		MaxConnsPerHost:        1,
		IdleConnTimeout:        2 * time.Minute,
		DisableCompression:     true,
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{}, // no HTTP/2
		MaxResponseHeaderBytes: c.cfg.MaxHeaderBytes,
		WriteBufferSize:        4 << 10,
		ReadBufferSize:         4 << 10, // a body is read past it, into its own buffer (readBody)
	}
	return h
}

// Close closes the session's idle connection and releases its context.
func (h *Host) Close() {
	h.CloseIdle()
	if h.baseCancel != nil {
		h.baseCancel()
		h.base, h.baseOf, h.baseCancel = nil, nil, nil
	}
}

// CloseIdle closes the idle connection, if any, e.g. before moving to
// another site of the same host name, so that the server never sees two.
// (Do does it by itself when the scheme or port changes.)
func (h *Host) CloseIdle() {
	h.mu.Lock()
	h.ourClose = true
	h.mu.Unlock()
	h.tr.CloseIdleConnections()
	h.mu.Lock()
	h.ourClose = false
	h.mu.Unlock()
}

// closing tells whether we are closing the idle connection right now.
func (h *Host) closing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ourClose
}

// ServerCloses returns, and forgets, the number of requests each
// connection carried before the server closed it (or announced it would,
// with Connection: close): the server's keep-alive behaviour, from which
// the harvester learns its requests per connection.
func (h *Host) ServerCloses() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.closes
	h.closes = nil
	return out
}

func (h *Host) serverClosed(n int) {
	h.mu.Lock()
	h.closes = append(h.closes, n)
	h.mu.Unlock()
}

func (h *Host) current() *inflight {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

// dial resolves addr's host through the client's cache, checks every
// address against the policy and connects to the first allowed one that
// answers, without a second lookup.
func (h *Host) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if f := h.current(); f != nil && f.hadConn() {
		// Go's Transport silently re-sends a GET with no body on a new
		// connection when a kept-alive one fails, which would hit the
		// host again at once, past the politeness wait and unseen by the
		// fetch log: refused here, and Do reports the first failure.
		return nil, errNotResent
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Kind: KindBadURL, Detail: err.Error()}
	}
	allowed, err := h.c.allowed(ctx, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: h.c.cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	var last error
	for _, ip := range allowed {
		start := time.Now()
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return h.opened(&conn2{Conn: conn, h: h, connect: time.Since(start)}), nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	var ne net.Error
	if errors.As(last, &ne) && ne.Timeout() && ctx.Err() == nil {
		return nil, &Error{Kind: KindTimeout, Detail: fmt.Sprintf("connect to %s after %s", host, h.c.cfg.ConnectTimeout), Err: last}
	}
	return nil, last
}

// dialTLS is dial plus a TLS handshake; the returned connection records
// the plaintext, so the request is stored as sent. Certificates are not
// verified: the crawler archives what servers send and authenticates
// nobody (a national web has many broken certificates).
func (h *Host) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	start := time.Now()
	raw, err := h.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	cfg := &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: true, //nolint:gosec // archival crawler, see above
		NextProtos:         []string{"http/1.1"},
	}
	if ip := net.ParseIP(host); ip != nil {
		cfg.ServerName = ""
	}
	plain := raw.(*conn2)
	tc := tls.Client(plain.Conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, h.c.cfg.ConnectTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		plain.Close()
		if hctx.Err() != nil && ctx.Err() == nil {
			return nil, &Error{Kind: KindTimeout, Detail: "TLS handshake with " + host, Err: err}
		}
		return nil, &Error{Kind: KindTLS, Detail: err.Error(), Err: err}
	}
	// The TLS connection takes the place of the plain one it wraps (and
	// its count in h.open: closing it closes the socket under both).
	plain.mu.Lock()
	plain.ours, plain.reported, plain.counted = true, true, false
	plain.mu.Unlock()
	c := &conn2{Conn: tc, h: h, connect: time.Since(start), counted: true}
	h.mu.Lock()
	h.last = c
	h.mu.Unlock()
	return c, nil
}

// opened registers a new connection. The connection it replaces, if the
// server closed it (and we did not, and its last request went well),
// tells how many requests the server serves per connection.
func (h *Host) opened(c *conn2) *conn2 {
	h.mu.Lock()
	prev := h.last
	h.last = c
	h.open++
	h.peak = max(h.peak, h.open)
	c.counted = true
	h.mu.Unlock()
	if prev != nil {
		prev.report()
	}
	return c
}

// conn2 reports writes and reads to the request in flight, counts the
// requests it carries and notices when the server closes it.
type conn2 struct {
	net.Conn
	h       *Host
	connect time.Duration

	mu       sync.Mutex
	reqs     int  // requests carried
	ours     bool // we are closing it
	failed   bool // its last request failed
	reported bool // its requests were reported to ServerCloses (or must not be)
	closed   bool
	counted  bool // counted in h.open
}

func (c *conn2) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 || err != nil {
		if f := c.h.current(); f != nil {
			if n > 0 {
				f.wrote(p[:n])
			}
			if err != nil {
				f.connFailed(err)
			}
		}
	}
	return n, err
}

func (c *conn2) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 || err != nil {
		if f := c.h.current(); f != nil {
			if n > 0 {
				f.read(n)
			}
			if err != nil {
				f.connFailed(err)
			}
		}
	}
	return n, err
}

// Close is called by the transport, either because we asked (CloseIdle,
// Close) or because the connection ended.
func (c *conn2) Close() error {
	c.mu.Lock()
	if c.h.closing() {
		c.ours = true
	}
	first := !c.closed
	c.closed = true
	counted := c.counted
	c.mu.Unlock()
	if first && counted {
		c.h.mu.Lock()
		c.h.open--
		c.h.mu.Unlock()
	}
	return c.Conn.Close()
}

// mine marks the connection as closed by us: the transport closes a
// connection whose body was not read to its end.
func (c *conn2) mine() {
	c.mu.Lock()
	c.ours = true
	c.mu.Unlock()
}

// fail marks the connection's last request as failed: if the connection
// then ends, it is not a sign of the server's keep-alive limit.
func (c *conn2) fail() {
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// used counts one more request on the connection.
func (c *conn2) used() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs++
	return c.reqs
}

// report tells the host how many requests the connection carried before
// the server closed it, once, unless we closed it ourselves.
func (c *conn2) report() {
	c.mu.Lock()
	n, skip := c.reqs, c.ours || c.failed || c.reported || c.reqs == 0
	c.reported = true
	c.mu.Unlock()
	if !skip {
		c.h.serverClosed(n)
	}
}

// Get fetches rawURL without following redirects and reads at most
// maxBody bytes of (decoded) body: Do with no condition and every media
// type accepted.
func (h *Host) Get(ctx context.Context, rawURL string, maxBody int64) (*Response, error) {
	return h.Do(ctx, Request{URL: rawURL, MaxBody: maxBody})
}

// Do makes one GET request. It returns:
//   - a response and nil: the whole exchange, the body possibly cut at
//     MaxBody (Truncated "length") or not downloaded (Skipped);
//   - a response and an *Error: headers arrived but the body was cut by a
//     time limit, a reset or a decoding error (Truncated says which); the
//     response is worth storing;
//   - nil and an *Error: no response (DNS, address policy, connection,
//     timeout before the headers, protocol error, cancelled).
func (h *Host) Do(ctx context.Context, r Request) (*Response, error) {
	rawURL := r.URL
	// The request's context: cancelled with a cause by the time limits —
	// the total one (a timer armed here), and those of the inflight
	// (read, first byte, transfer rate).
	reqCtx, cancel := context.WithCancelCause(h.baseFor(ctx))
	defer cancel(nil)
	f := &inflight{readLim: h.c.cfg.ReadTimeout, cancel: cancel, minRate: float64(h.c.cfg.MinTransferRate), window: h.c.cfg.RateWindow}
	var ip string
	var conn *conn2
	var reused bool
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if f.haveConn() {
				// A second connection for the same request (an idle
				// one; a new one is refused in dial): stop it before
				// it is sent again.
				cancel(errNotResent)
				return
			}
			if a, ok := info.Conn.RemoteAddr().(*net.TCPAddr); ok {
				ip = a.IP.String()
			}
			conn, _ = info.Conn.(*conn2)
			reused = info.Reused
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { f.startTTFB(h.c.cfg.FirstByteTimeout) },
	}
	// The URL is parsed once, here.
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(reqCtx, trace), http.MethodGet, rawURL, nil)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		return nil, &Error{URL: rawURL, Kind: KindBadURL, Detail: "not an absolute http(s) URL"}
	}
	if key := req.URL.Scheme + "://" + req.URL.Host; key != h.lastKey {
		// Another scheme or port of the host: the transport would open a
		// second connection beside the idle one.
		h.CloseIdle()
		h.lastKey = key
	}
	start := time.Now()
	f.arm(start, h.c.cfg.TotalTimeout)
	defer f.stop()
	h.mu.Lock()
	h.cur = f
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.cur = nil
		h.mu.Unlock()
	}()

	// Go's Transport silently re-sends a GET with no body on a new
	// connection when a kept-alive one fails: Host.dial refuses that
	// connection (a non-replayable empty body would do too, but the
	// Transport probes such a body with a goroutine and a timer on every
	// request), and the first failure is reported below.
	req.Header = h.c.header
	if r.IfModifiedSince != "" || r.IfNoneMatch != "" {
		req.Header = h.c.header.Clone()
		if r.IfModifiedSince != "" {
			req.Header.Set("If-Modified-Since", r.IfModifiedSince)
		}
		if r.IfNoneMatch != "" {
			req.Header.Set("If-None-Match", r.IfNoneMatch)
		}
	}
	resp, err := h.tr.RoundTrip(req)
	if err != nil {
		if conn != nil {
			conn.fail()
		}
		if errors.Is(err, errNotResent) || errors.Is(context.Cause(reqCtx), errNotResent) {
			// The transport wanted to send the request again: what
			// failed is the connection it was sent on.
			return nil, h.classify(context.Background(), rawURL, f.lostConn())
		}
		return nil, h.classify(reqCtx, rawURL, err)
	}
	defer resp.Body.Close()

	out := &Response{
		URL:        rawURL,
		Started:    start,
		IP:         ip,
		Status:     resp.StatusCode,
		StatusLine: statusLine(resp),
		Header:     resp.Header, // the transport is done with it: storedHeader edits it in place
		Reused:     reused,
	}
	if fb := f.first(); !fb.IsZero() {
		out.FirstByte = fb.Sub(start)
	}
	if conn != nil {
		out.ConnRequests = conn.used()
		if !reused {
			out.Connect = conn.connect
		}
		if resp.Close {
			// Connection: close (or an HTTP/1.0 server): this
			// connection ends with this response.
			conn.report()
		}
	}
	var body []byte
	var truncated string
	var readErr error
	drained := false
	if mt := out.MIME(); r.Accept != nil && !r.Accept(mt) {
		out.Skipped = fmt.Sprintf("media type %s not accepted", orDash(mt))
		truncated = TruncatedOther
		drained = drain(resp)
	} else {
		out.bodyBuf = bodyPool.Get().(*bytes.Buffer)
		body, truncated, readErr = readBodyInto(out.bodyBuf, resp, r.MaxBody)
	}
	out.Body, out.Truncated = body, truncated
	if truncated != "" && conn != nil && !drained {
		// The rest of the body is left unread: the transport closes the
		// connection, which is our doing, not the server's.
		conn.mine()
	}
	if readErr != nil {
		if conn != nil {
			conn.fail()
		}
		fe := h.classify(reqCtx, rawURL, readErr)
		if fe.Kind == KindCancelled {
			return nil, fe
		}
		switch fe.Kind {
		case KindTimeout:
			out.Truncated = TruncatedTime
		case KindReset:
			out.Truncated = TruncatedDisconnect
		default:
			out.Truncated = TruncatedOther
		}
		readErr = fe
	}
	out.Duration = time.Since(start)
	out.Request = f.request()
	if len(out.Request) == 0 {
		out.Request = fallbackRequest(req)
	}
	storedHeader(out, resp, truncated != "" || readErr != nil)
	if readErr != nil {
		return out, readErr
	}
	return out, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// drain reads a small skipped body to the end so that the connection can
// be kept alive; a large or unknown one is left, and the connection is
// closed with the body.
func drain(resp *http.Response) bool {
	const small = 64 << 10
	if resp.ContentLength >= 0 && resp.ContentLength <= small {
		_, err := io.Copy(io.Discard, io.LimitReader(resp.Body, small))
		return err == nil
	}
	return false
}

func statusLine(resp *http.Response) string {
	proto := resp.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	return proto + " " + resp.Status
}

// coding returns the content coding the client decodes for the response:
// "gzip" (also for x-gzip), "br", or "" (identity, or a coding it did not
// ask for, which is stored as received).
func coding(resp *http.Response) string {
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		return "gzip"
	case "br":
		return "br"
	}
	return ""
}

// readBody reads at most max decoded bytes. The encoded input is capped
// too (at max plus an eighth, enough for incompressible data), so neither
// a compression bomb nor an endless stream of empty blocks is read
// further.
func readBody(resp *http.Response, max int64) ([]byte, string, error) {
	return readBodyInto(new(bytes.Buffer), resp, max)
}

// readBodyInto is readBody into buf (empty), whose bytes it returns.
func readBodyInto(buf *bytes.Buffer, resp *http.Response, max int64) ([]byte, string, error) {
	rawCap := max + max/8 + 64<<10
	lr := &io.LimitedReader{R: resp.Body, N: rawCap + 1}
	var r io.Reader = lr
	switch coding(resp) {
	case "gzip":
		zr, err := gzip.NewReader(lr)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, "", nil // an empty body announced as gzip
			}
			if !isDecodeError(err) {
				return nil, "", err
			}
			return nil, "", &Error{Kind: KindDecode, Detail: "gzip: " + strings.TrimPrefix(err.Error(), "gzip: "), Err: err}
		}
		zr.Multistream(true)
		r = zr
	case "br":
		r = brotli.NewReader(lr)
	}
	if cl := resp.ContentLength; cl > 0 && coding(resp) == "" {
		buf.Grow(int(min(cl, max) + bytes.MinRead))
	}
	n, err := io.Copy(buf, io.LimitReader(r, max+1))
	if n > max {
		return buf.Bytes()[:max], TruncatedLength, nil
	}
	if lr.N <= 0 {
		return buf.Bytes(), TruncatedLength, nil
	}
	if err != nil {
		if c := coding(resp); c != "" && isDecodeError(err) {
			msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "gzip: "), "brotli: ")
			return buf.Bytes(), "", &Error{Kind: KindDecode, Detail: c + ": " + msg, Err: err}
		}
		return buf.Bytes(), "", err
	}
	return buf.Bytes(), "", nil
}

// isDecodeError tells an error of the gzip or brotli decoder from one of
// the connection under it.
func isDecodeError(err error) bool {
	var fe *Error
	if errors.As(err, &fe) {
		return false
	}
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "flate:") || strings.Contains(msg, "gzip:") || strings.Contains(msg, "brotli")
}

// storedHeader turns the received headers into the stored ones: a
// Content-Encoding the harvester decoded becomes DecodedHeader, and
// Content-Length is dropped when the stored body is not what it counted.
// (net/http has already removed the chunked Transfer-Encoding from the
// header: stored bodies are de-chunked.)
func storedHeader(out *Response, resp *http.Response, cut bool) {
	h := out.Header
	decoded := coding(resp) != "" && out.Skipped == ""
	if decoded {
		h[DecodedHeader] = h["Content-Encoding"]
		delete(h, "Content-Encoding")
	}
	if decoded || cut {
		delete(h, "Content-Length")
	}
}

// fallbackRequest formats the request when no bytes were recorded (which
// only happens if the transport did not write through our connection).
func fallbackRequest(req *http.Request) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", req.URL.RequestURI(), req.URL.Host)
	req.Header.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}
