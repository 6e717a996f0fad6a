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
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/wirecrawl/wire/pkg/contentcoding"
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
	// DNSTTL bounds how long the answers of DNSServer are kept (their
	// TTL, within Min and Max) and sets how long failures are; zero
	// values keep everything DNSCacheTime.
	DNSTTL TTLBounds
	// MaxHeaderBytes caps the response header; 0 means 64 KiB.
	MaxHeaderBytes int64
	// RootCAs are the certificate authorities a server's certificate is
	// checked against (Response.TLS); nil means the system's. The check
	// never stops a fetch.
	RootCAs *x509.CertPool
	// Dial, if set, opens the TCP connections in place of a
	// net.Dialer with ConnectTimeout (tests use it to play a network
	// without routes).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Raw keeps responses as the server sent them (harvester.warc_mode
	// "raw"): Response.Head holds the status line and header lines as
	// received, and Body the entity body with its content coding, which
	// is decoded only to count the decoded bytes against the cap
	// (Response.Size). False decodes gzip and br bodies and renames
	// their Content-Encoding (DecodedHeader).
	Raw bool
}

// Client fetches URLs under one Config. It is safe for concurrent use;
// each host gets its own Host.
type Client struct {
	cfg      Config
	resolver *Resolver
	policy   Policy
	log      *slog.Logger
	sessions tls.ClientSessionCache // TLS sessions by server name, for resumption
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
		resolver: NewTTLResolver(cfg.DNSServer, cfg.DNSTimeout, cfg.DNSCacheTime, cfg.DNSTTL),
		policy:   Policy{AllowPrivate: cfg.AllowPrivate},
		log:      log,
		sessions: tls.NewLRUClientSessionCache(sessionCacheSize),
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
	StatusLine string        // e.g. "HTTP/1.1 200 OK"; in raw mode the first line as received
	Header     http.Header   // decoded mode: the stored headers (see DecodedHeader; Content-Length dropped when the body differs from it); raw mode: the headers as net/http parsed them
	// Head, in raw mode (Config.Raw), is the head of the response as
	// stored: the status line and the header lines as received — names,
	// their case, order, values and repeats kept — each ending in CRLF
	// (a bare LF made CRLF), then the empty line; but without the
	// Transfer-Encoding and Content-Length lines of a chunked response,
	// whose body is stored de-chunked (see rawHead). Nil in decoded
	// mode.
	Head []byte
	// Body is the body as stored, at most the cap: de-chunked; decoded
	// (gzip, br) in decoded mode, with its content coding as received in
	// raw mode (Coding).
	Body []byte
	// Size is the decoded size of Body, what the cap counts: len(Body)
	// in decoded mode; in raw mode the bytes Body decodes to (the
	// received bytes for identity or a coding the client cannot
	// decode).
	Size int64
	// Coding is the content coding Body is stored in: "" when it is not
	// encoded (identity, or decoded in decoded mode), else the
	// Content-Encoding value as received, lower case.
	Coding string
	// Dechunked tells that the response came with Transfer-Encoding:
	// chunked, removed from the stored body (and, in raw mode, its
	// header line from Head).
	Dechunked bool
	Truncated string // WARC-Truncated reason, or ""
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
	// TLS describes the TLS connection of an https response (nil over
	// plain HTTP): version, cipher, and whether the certificate is valid
	// for the name (the fetch goes on either way).
	TLS *TLSInfo
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

// Content returns Body decoded from its content coding (Coding), at most
// max bytes: Body itself when it is not encoded, or in a coding this
// package cannot decode. A body that does not decode to its end gives
// what decoded of it, and the error.
func (r *Response) Content(max int64) ([]byte, error) {
	c, ok := contentcoding.Parse(r.Coding)
	if !ok || c == contentcoding.Identity {
		return r.Body[:min(int64(len(r.Body)), max)], nil
	}
	var d contentcoding.Decoder
	out, _, err := d.Append(nil, c, r.Body, max)
	return out, err
}

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
	// BeforeSend, if not nil, is called once the connection is open,
	// right before the request is written: the moment the server sees
	// the request start. It may wait (the request's total time limit
	// runs); an error it returns ends the request with that error, as it
	// is, and the connection stays open for the next request.
	BeforeSend func() error
	// Answered, if not nil, is called once the response's head has been
	// read, with the time its first byte came (the server had begun the
	// request by then), before the body is read.
	Answered func(firstByte time.Time)
}

// Host is a session with one host: at most one connection open at any
// time (even across schemes and ports), kept alive between requests, on
// which requests go one at a time. The session speaks HTTP/1.1 itself
// over the connection it owns (requests written by hand, responses read
// with net/http's parser, http.ReadResponse), on the calling goroutine:
// no transport goroutines, no request ever sent twice. Methods must not
// be called concurrently. Close it when the host is done.
type Host struct {
	c   *Client
	dec contentcoding.Decoder // decodes the bodies of the host's responses

	conn       *conn2 // the open connection (idle between requests), or nil
	connScheme string // the scheme and host[:port] conn goes to
	connHost   string
	closes     []int // requests served on connections the server closed
	open       int   // connections open now
	peak       int   // most connections open at once (tests)

	// base is a child of the context Do was last given (baseOf), from
	// which each request's context is made: a request then registers
	// with this host's context, not with the caller's, which all the
	// harvester's connections share (its lock was contended).
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

// inflight is a request's time limits, fed by the reads of its
// connection: the read watchdog, the time-to-first-byte limit and the
// transfer rate check, beside the total limit.
type inflight struct {
	mu sync.Mutex
	// One timer keeps the request's three time limits — the total one
	// (deadline), the read watchdog (readLim after the last read, or
	// after the start) and the time to the first byte (ttfbAt, from the
	// request written) — armed for the earliest: when it fires, it
	// cancels the request with the limit that has passed, or is armed
	// again for the next. A read only notes its time.
	timer     *time.Timer
	stopped   bool
	paused    bool // between pause and resume: the timer does not fire
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
	if f.stopped || f.paused {
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

// pause stops the limits' timer while the request waits to be sent
// (Request.BeforeSend); one that already fired has cancelled the request.
func (f *inflight) pause() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = true
	if f.timer != nil {
		f.timer.Stop()
	}
}

// resume counts the total and read limits again from now, the moment the
// request is sent (after pause).
func (f *inflight) resume(now time.Time, total time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = false
	if f.stopped || f.timer == nil {
		return
	}
	f.deadline, f.lastRead = now.Add(total), now
	f.timer.Reset(f.next().Sub(now))
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

func (f *inflight) first() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.firstByte
}

// NewHost starts a session for one host.
func (c *Client) NewHost() *Host {
	return &Host{c: c}
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
	h.drop()
}

// drop closes the open connection, if any.
func (h *Host) drop() {
	if h.conn == nil {
		return
	}
	h.conn.Close()
	h.conn = nil
	h.open--
}

// ServerCloses returns, and forgets, the number of requests each
// connection carried before the server closed it (or announced it would,
// with Connection: close): the server's keep-alive behaviour, from which
// the harvester learns its requests per connection.
func (h *Host) ServerCloses() []int {
	out := h.closes
	h.closes = nil
	return out
}

// serverClosed records that the server ended the connection after its
// requests, once per connection.
func (h *Host) serverClosed(c *conn2) {
	if !c.reported && c.reqs > 0 {
		h.closes = append(h.closes, c.reqs)
	}
	c.reported = true
}

// dial resolves addr's host through the client's cache, checks every
// address against the policy and connects to the first allowed one that
// answers, without a second lookup.
func (h *Host) dial(ctx context.Context, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Kind: KindBadURL, Detail: err.Error()}
	}
	allowed, err := h.c.allowed(ctx, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: h.c.cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if h.c.cfg.Dial != nil {
		dial = h.c.cfg.Dial
	}
	var last error
	for _, ip := range allowed {
		conn, err := dial(ctx, "tcp", net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
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

// connect opens the session's connection to addr (host:port), with a TLS
// handshake for https. Certificates do not stop a fetch: the crawler
// archives what servers send and authenticates nobody (a national web
// has many broken certificates); they are checked after the handshake
// against Config.RootCAs, and the verdict goes with every response of
// the connection (Response.TLS). Sessions are resumed across the
// connections to one server name (the Client's session cache). A
// handshake that does not end within ConnectTimeout is a KindTLS error.
func (h *Host) connect(ctx context.Context, scheme, addr string) (*conn2, error) {
	start := time.Now()
	raw, err := h.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	c := &conn2{Conn: raw, raw: raw}
	if scheme == "https" {
		host, _, _ := net.SplitHostPort(addr)
		cfg := &tls.Config{
			ServerName:         host,
			InsecureSkipVerify: true, //nolint:gosec // archival crawler, see above
			NextProtos:         []string{"http/1.1"},
			ClientSessionCache: h.c.sessions,
		}
		if ip := net.ParseIP(host); ip != nil {
			cfg.ServerName = ""
		}
		tc := tls.Client(raw, cfg)
		hctx, cancel := context.WithTimeout(ctx, h.c.cfg.ConnectTimeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			if hctx.Err() != nil && ctx.Err() == nil {
				return nil, &Error{Kind: KindTLS, Detail: fmt.Sprintf("handshake with %s not done after %s (timeout)", host, h.c.cfg.ConnectTimeout), Err: err}
			}
			return nil, &Error{Kind: KindTLS, Detail: strings.TrimPrefix(err.Error(), "tls: "), Err: err}
		}
		c.Conn = tc
		c.tls = tlsInfo(tc.ConnectionState(), cfg.ServerName, h.c.cfg.RootCAs)
	}
	c.connect = time.Since(start)
	c.br = bufio.NewReaderSize(c, readBufferSize)
	h.open++
	h.peak = max(h.peak, h.open)
	return c, nil
}

// idle is what a kept-alive connection looks like before it carries the
// next request (conn2.idleState).
type idle int

const (
	idleOpen        idle = iota // nothing from the server: usable
	idleClosed                  // closed or reset by the server
	idleUnsolicited             // the server sent bytes nobody asked for
)

// readBufferSize is the size of a connection's read buffer: the
// response head is parsed in it, and a body is read past it, into its own
// buffer (readBody).
const readBufferSize = 4 << 10

// noLimit is conn2.left when no header is being read.
const noLimit = math.MaxInt64

// conn2 is the session's connection: it feeds the reads to the request
// in flight (its time limits), caps the bytes a response head may take,
// and counts the requests it carried.
type conn2 struct {
	net.Conn          // what requests are written to and responses read from (TLS or plain)
	raw      net.Conn // the TCP connection under it
	br       *bufio.Reader
	connect  time.Duration
	tls      *TLSInfo  // the TLS facts, for https
	f        *inflight // the request in flight, or nil
	left     int64     // bytes the response head may still take (noLimit: not reading one)
	reqs     int       // requests carried
	reported bool      // its requests were reported to ServerCloses (or must not be)
	// recording, while a response head is read in raw mode, appends
	// every byte read from the connection to rec (readHead).
	recording bool
	rec       []byte
}

func (c *conn2) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.Conn.Read(p)
	if c.left != noLimit {
		c.left -= int64(n)
	}
	if n > 0 && c.f != nil {
		c.f.read(n)
	}
	if c.recording {
		c.rec = append(c.rec, p[:n]...)
	}
	return n, err
}

// readHead reads a response head with net/http's parser and, when raw,
// returns the bytes it took from the connection: the status line and
// header lines exactly as received. They are recorded, not re-read: the
// bytes already in the read buffer when the head begins, then every byte
// read from the connection while the parser reads, less what is left in
// the buffer after it (the start of the body) — the parser takes the head
// from the buffer in order, up to and including its empty line, and
// never reads into the body.
func (c *conn2) readHead(raw bool) (*http.Response, []byte, error) {
	if !raw {
		resp, err := http.ReadResponse(c.br, nil)
		return resp, nil, err
	}
	buffered, _ := c.br.Peek(c.br.Buffered())
	c.rec = append(c.rec[:0], buffered...)
	c.recording = true
	resp, err := http.ReadResponse(c.br, nil)
	c.recording = false
	if err != nil {
		return nil, nil, err
	}
	head := c.rec[:len(c.rec)-c.br.Buffered()]
	if cap(c.rec) > maxKeptHead {
		c.rec = nil // the head is copied out (rawHead) before the next one
	}
	return resp, head, nil
}

// maxKeptHead bounds the recording buffer a connection keeps between
// responses.
const maxKeptHead = 16 << 10

// errHeadTooLarge is returned by reads past the cap on a response head.
var errHeadTooLarge = errors.New("response head too large")

// Get fetches rawURL without following redirects and reads at most
// maxBody bytes of (decoded) body: Do with no condition and every media
// type accepted.
func (h *Host) Get(ctx context.Context, rawURL string, maxBody int64) (*Response, error) {
	return h.Do(ctx, Request{URL: rawURL, MaxBody: maxBody})
}

// aLongTimeAgo is the deadline that makes a connection's blocked reads
// and writes return at once.
var aLongTimeAgo = time.Unix(1, 0)

// max1xx bounds the informational (1xx) responses skipped before the
// response, as net/http's transport does.
const max1xx = 5

// Do makes one GET request. It returns:
//   - a response and nil: the whole exchange, the body possibly cut at
//     MaxBody (Truncated "length") or not downloaded (Skipped);
//   - a response and an *Error: headers arrived but the body was cut by a
//     time limit, a reset or a decoding error (Truncated says which); the
//     response is worth storing;
//   - nil and an *Error: no response (DNS, address policy, connection,
//     timeout before the headers, protocol error, cancelled).
//
// A request is sent once: if the connection it went on fails, the
// failure is the answer (a kept-alive connection the server closed
// while idle is noticed before, and a new one opened).
func (h *Host) Do(ctx context.Context, r Request) (*Response, error) {
	rawURL := r.URL
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{URL: rawURL, Kind: KindBadURL, Detail: "not an absolute http(s) URL"}
	}
	hostPort, err := httpguts.PunycodeHostPort(strings.TrimSuffix(u.Host, ":"))
	if err != nil || !httpguts.ValidHostHeader(hostPort) || strings.HasPrefix(hostPort, ":") {
		return nil, &Error{URL: rawURL, Kind: KindBadURL, Detail: "invalid host " + strconv.Quote(u.Host)}
	}
	addr := hostPort
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(strings.Trim(hostPort, "[]"), port)
	}
	if u.Scheme != h.connScheme || hostPort != h.connHost {
		// Another scheme or port of the host: the idle connection is
		// closed before another is opened.
		h.drop()
		h.connScheme, h.connHost = u.Scheme, hostPort
	}
	uri := u.RequestURI()
	if err := checkTarget(uri); err != nil {
		return nil, &Error{URL: rawURL, Kind: KindBadURL, Detail: err.Error()}
	}
	request := h.c.request(uri, hostPort, r)

	// The request's context: cancelled with a cause by the time limits —
	// the total one (a timer armed here), and those of the inflight
	// (read, first byte, transfer rate) — or by the caller. Its
	// cancellation makes the connection's blocked reads and writes
	// return.
	reqCtx, cancel := context.WithCancelCause(h.baseFor(ctx))
	defer cancel(nil)
	f := &inflight{readLim: h.c.cfg.ReadTimeout, cancel: cancel, minRate: float64(h.c.cfg.MinTransferRate), window: h.c.cfg.RateWindow}
	start := time.Now()
	f.arm(start, h.c.cfg.TotalTimeout)
	defer f.stop()

	reused := h.conn != nil
	if reused {
		switch h.conn.idleState() {
		case idleClosed:
			h.serverClosed(h.conn)
			h.drop()
			reused = false
		case idleUnsolicited:
			h.conn.reported = true // the server's fault, not its keep-alive limit
			h.drop()
			reused = false
		}
	}
	if !reused {
		c, err := h.connect(reqCtx, u.Scheme, addr)
		if err != nil {
			return nil, h.classify(reqCtx, rawURL, err)
		}
		h.conn = c
	}
	c := h.conn
	c.f = f
	defer func() { c.f = nil }()
	stopInterrupt := context.AfterFunc(reqCtx, func() { c.Conn.SetDeadline(aLongTimeAgo) })
	// fail ends the connection after a failed request: it says nothing
	// of the server's keep-alive limit.
	fail := func(err error) *Error {
		c.reported = true
		h.drop()
		return h.classify(reqCtx, rawURL, err)
	}
	defer func() {
		if !stopInterrupt() && h.conn == c {
			// The deadline was set (or is being set) at the very end of
			// the request: the connection cannot be used again.
			c.reported = true
			h.drop()
		}
	}()

	if r.BeforeSend != nil {
		// The hook may wait (the harvester's address floor): the
		// request's limits count from when it is sent, not from a wait
		// for its turn, which is no fault of the server's.
		f.pause()
		err := r.BeforeSend()
		f.resume(time.Now(), h.c.cfg.TotalTimeout)
		if err != nil {
			return nil, err
		}
	}
	if _, err := c.Write(request); err != nil {
		return nil, fail(err)
	}
	f.startTTFB(h.c.cfg.FirstByteTimeout)
	var resp *http.Response
	var head []byte
	for n := 0; ; n++ {
		c.left = h.c.cfg.MaxHeaderBytes
		resp, head, err = c.readHead(h.c.cfg.Raw)
		c.left = noLimit
		if err != nil {
			if errors.Is(err, errHeadTooLarge) {
				err = &Error{Kind: KindProtocol, Detail: fmt.Sprintf("server response headers exceeded %d bytes", h.c.cfg.MaxHeaderBytes)}
			}
			return nil, fail(err)
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if n == max1xx {
			return nil, fail(&Error{Kind: KindProtocol, Detail: "too many 1xx informational responses"})
		}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Close = true // what follows is not HTTP
	}
	if r.Answered != nil {
		r.Answered(f.first())
	}
	c.reqs++
	out := &Response{
		URL:          rawURL,
		Started:      start,
		Status:       resp.StatusCode,
		StatusLine:   statusLine(resp),
		Header:       resp.Header, // ours: storedHeader edits it in place
		Request:      request,
		Reused:       reused,
		ConnRequests: c.reqs,
		TLS:          c.tls,
		Dechunked:    slices.Contains(resp.TransferEncoding, "chunked"),
	}
	if h.c.cfg.Raw {
		out.Head = rawHead(head, out.Dechunked)
		out.StatusLine = string(bytes.TrimRight(out.Head[:bytes.IndexByte(out.Head, '\n')], "\r"))
	}
	if a, ok := c.raw.RemoteAddr().(*net.TCPAddr); ok {
		out.IP = a.IP.String()
	}
	if fb := f.first(); !fb.IsZero() {
		out.FirstByte = fb.Sub(start)
	}
	if !reused {
		out.Connect = c.connect
	}
	if resp.Close {
		// Connection: close (or an HTTP/1.0 server): this connection
		// ends with this response.
		h.serverClosed(c)
	}
	var body []byte
	var truncated string
	var readErr error
	whole := false // the body was read to its end: the connection can carry the next request
	if mt := out.MIME(); r.Accept != nil && !r.Accept(mt) {
		out.Skipped = fmt.Sprintf("media type %s not accepted", orDash(mt))
		truncated = TruncatedOther
		whole = drain(resp)
	} else {
		out.bodyBuf = bodyPool.Get().(*bytes.Buffer)
		if h.c.cfg.Raw {
			body, out.Size, truncated, readErr = h.readRaw(out.bodyBuf, resp, r.MaxBody)
			out.Coding = strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
			if c, ok := contentcoding.Parse(out.Coding); ok && c == contentcoding.Identity {
				out.Coding = ""
			}
		} else {
			body, truncated, readErr = h.readBodyInto(out.bodyBuf, resp, r.MaxBody)
			out.Size = int64(len(body))
		}
		whole = truncated == "" && readErr == nil && atEOF(resp.Body)
	}
	out.Body, out.Truncated = body, truncated
	if readErr != nil {
		fe := fail(readErr)
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
	} else if !whole || resp.Close {
		// The rest of the body is left unread (our doing, not the
		// server's), or the server ends the connection here.
		c.reported = true
		h.drop()
	}
	out.Duration = time.Since(start)
	if !h.c.cfg.Raw {
		storedHeader(out, resp, truncated != "" || readErr != nil)
	}
	if readErr != nil {
		return out, readErr
	}
	return out, nil
}

// atEOF tells whether body has nothing left to read (the chunked
// trailer included). It never blocks on a body that was read to its
// end.
func atEOF(body io.Reader) bool {
	var b [1]byte
	n, err := body.Read(b[:])
	return n == 0 && err == io.EOF
}

// checkTarget refuses a request target that would not be sent as one
// (RFC 9112 §3.2: visible ASCII only): a space would split the request
// line ("GET /robots.txt?a b HTTP/1.0 HTTP/1.1"), a line break end it.
// url.Parse leaves such bytes in a query as they came; URLs the project's
// normaliser spelt never have them.
func checkTarget(uri string) error {
	for i := 0; i < len(uri); i++ {
		if c := uri[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("request target has byte %#02x at offset %d: only visible ASCII can be sent (not a normalised URL)", c, i)
		}
	}
	return nil
}

// request formats the request as it is sent and stored: the header
// net/http would write for it, in the same order.
func (c *Client) request(uri, host string, r Request) []byte {
	b := make([]byte, 0, 128+len(uri)+len(host)+len(c.cfg.UserAgent)+len(r.IfModifiedSince)+len(r.IfNoneMatch))
	b = append(b, "GET "...)
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if c.cfg.UserAgent != "" {
		b = appendField(b, "User-Agent", c.cfg.UserAgent)
	}
	b = append(b, "Accept: */*\r\nAccept-Encoding: "+AcceptEncoding+"\r\n"...)
	if r.IfModifiedSince != "" {
		b = appendField(b, "If-Modified-Since", r.IfModifiedSince)
	}
	if r.IfNoneMatch != "" {
		b = appendField(b, "If-None-Match", r.IfNoneMatch)
	}
	return append(b, "\r\n"...)
}

// appendField appends "name: value\r\n", with any line break in value
// made a space (as net/http does), so that no value can end the header.
func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\r', '\n':
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return append(b, "\r\n"...)
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

// coding returns the content coding the client decodes in decoded mode:
// gzip (also x-gzip) and br, the codings it asks for; Identity for any
// other, which is stored as received.
func coding(resp *http.Response) contentcoding.Coding {
	switch c, _ := contentcoding.Parse(resp.Header.Get("Content-Encoding")); c {
	case contentcoding.Gzip, contentcoding.Brotli:
		return c
	}
	return contentcoding.Identity
}

// readBody reads at most max decoded bytes, as a Host in decoded mode
// does (tests).
func readBody(resp *http.Response, max int64) ([]byte, string, error) {
	var h Host
	return h.readBodyInto(new(bytes.Buffer), resp, max)
}

// rawCap is the most encoded bytes read for a cap of max decoded ones:
// an eighth more, and 64 KiB, enough for incompressible data, so that
// neither a compression bomb nor an endless stream of empty blocks is
// read further.
func rawCap(max int64) int64 { return max + max/8 + 64<<10 }

// readBodyInto reads at most max decoded bytes into buf (empty), whose
// bytes it returns: the decoded mode, which decodes gzip and br (the
// codings it asks for) and keeps any other coding as received.
func (h *Host) readBodyInto(buf *bytes.Buffer, resp *http.Response, max int64) ([]byte, string, error) {
	lr := &io.LimitedReader{R: resp.Body, N: rawCap(max) + 1}
	c := coding(resp)
	r, err := h.dec.NewReader(c, lr)
	if err != nil {
		return nil, "", decodeError(c, err)
	}
	if cl := resp.ContentLength; cl > 0 && c == contentcoding.Identity {
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
		return buf.Bytes(), "", decodeError(c, err)
	}
	return buf.Bytes(), "", nil
}

// readRaw reads the body as received (de-chunked, its content coding
// kept) into buf (empty) and returns it with its decoded size: a body the
// client can decode (gzip, br, deflate) is decoded as it arrives only to
// be counted, and cut (TruncatedLength) once it decodes to more than max
// bytes or once more than rawCap(max) encoded bytes arrived, so that a
// compression bomb is refused at the same cap as in decoded mode without
// storing more than its first encoded bytes. A body in another coding,
// or none, is cut at max received bytes. Once the content has decoded to
// its end, the rest of the body (bytes past the compressed data) is
// stored too, within the cap.
func (h *Host) readRaw(buf *bytes.Buffer, resp *http.Response, max int64) ([]byte, int64, string, error) {
	c, ok := contentcoding.Parse(resp.Header.Get("Content-Encoding"))
	if !ok || c == contentcoding.Identity {
		if cl := resp.ContentLength; cl > 0 {
			buf.Grow(int(min(cl, max) + bytes.MinRead))
		}
		n, err := io.Copy(buf, io.LimitReader(resp.Body, max+1))
		if n > max {
			return buf.Bytes()[:max], max, TruncatedLength, nil
		}
		return buf.Bytes(), n, "", err
	}
	limit := rawCap(max)
	lr := &io.LimitedReader{R: resp.Body, N: limit + 1}
	r, err := h.dec.NewReader(c, io.TeeReader(lr, buf))
	if err != nil {
		return cutAt(buf, limit), 0, "", decodeError(c, err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, max+1))
	switch {
	case n > max:
		return cutAt(buf, limit), max, TruncatedLength, nil
	case lr.N <= 0:
		return cutAt(buf, limit), n, TruncatedLength, nil
	case err != nil:
		return buf.Bytes(), n, "", decodeError(c, err)
	}
	if _, err := io.Copy(buf, lr); err != nil {
		return cutAt(buf, limit), n, "", err
	}
	if lr.N <= 0 {
		return cutAt(buf, limit), n, TruncatedLength, nil
	}
	return buf.Bytes(), n, "", nil
}

// cutAt returns the bytes of buf, at most n of them.
func cutAt(buf *bytes.Buffer, n int64) []byte {
	b := buf.Bytes()
	return b[:min(int64(len(b)), n)]
}

// decodeError makes an error of a decompressor a KindDecode *Error and
// leaves the connection's errors as they are.
func decodeError(c contentcoding.Coding, err error) error {
	if c == contentcoding.Identity || !contentcoding.IsDecodeError(err) {
		return err
	}
	var fe *Error
	if errors.As(err, &fe) {
		return err
	}
	var ce *contentcoding.Error
	if !errors.As(err, &ce) {
		ce = &contentcoding.Error{Coding: c, Err: err}
	}
	return &Error{Kind: KindDecode, Detail: ce.Error(), Err: err}
}

// storedHeader turns the received headers into the stored ones: a
// Content-Encoding the harvester decoded becomes DecodedHeader, and
// Content-Length is dropped when the stored body is not what it counted.
// (net/http has already removed the chunked Transfer-Encoding from the
// header: stored bodies are de-chunked.)
func storedHeader(out *Response, resp *http.Response, cut bool) {
	h := out.Header
	decoded := coding(resp) != contentcoding.Identity && out.Skipped == ""
	if decoded {
		h[DecodedHeader] = h["Content-Encoding"]
		delete(h, "Content-Encoding")
	}
	if decoded || cut {
		delete(h, "Content-Length")
	}
}
