// Package fetch is the harvester's HTTP client: HTTP/1.1 only, one
// connection per host at a time with keep-alive, hard limits on time and
// size, its own cached DNS lookups, an address policy that keeps the
// crawler out of private networks, and gzip decoding it controls itself so
// that a gzip bomb is cut at the same cap as any other body.
//
// A Client holds what all hosts share (settings, resolver, policy); a Host
// is one host's session with its own transport, used by one goroutine at
// a time. Redirects are never followed here: the caller decides.
package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
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
	TruncatedLength     = "length"     // the body cap was reached
	TruncatedTime       = "time"       // a time limit cut the body
	TruncatedDisconnect = "disconnect" // the server closed or reset mid-body
	TruncatedOther      = "unspecified"
)

// Config holds the client's settings (from config.Crawl and
// config.Harvester).
type Config struct {
	UserAgent      string        // sent on every request
	ConnectTimeout time.Duration // per connection attempt, DNS included
	ReadTimeout    time.Duration // longest wait for any data once a request is sent
	TotalTimeout   time.Duration // whole request, body included
	AllowPrivate   bool          // allow loopback, private and link-local addresses
	DNSServer      string        // host:port of the DNS server; "" = system resolver
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
}

// New returns a client. log may be nil.
func New(cfg Config, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = 64 << 10
	}
	return &Client{
		cfg:      cfg,
		resolver: NewResolver(cfg.DNSServer, cfg.ConnectTimeout),
		policy:   Policy{AllowPrivate: cfg.AllowPrivate},
		log:      log,
	}
}

// Resolver is the client's DNS cache.
func (c *Client) Resolver() *Resolver { return c.resolver }

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
	Body       []byte        // body as stored: de-chunked, gzip decoded, at most the cap
	Truncated  string        // WARC-Truncated reason, or ""
}

// MIME is the media type of the response, lower-case, without parameters.
func (r *Response) MIME() string {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
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

// Host is a session with one host: its own transport, at most one
// connection open at any time, kept alive between requests. Methods must
// not be called concurrently. Close it when the host is done.
type Host struct {
	c  *Client
	tr *http.Transport
	// cur is the request in flight, which the connections report to.
	mu  sync.Mutex
	cur *inflight
}

// inflight is what a request's connections report: the bytes written (the
// request as sent) and each read, which feeds the read watchdog.
type inflight struct {
	mu       sync.Mutex
	req      bytes.Buffer
	watchdog *time.Timer
	readLim  time.Duration
}

func (f *inflight) wrote(p []byte) {
	f.mu.Lock()
	if f.req.Len() < 64<<10 {
		f.req.Write(p)
	}
	f.mu.Unlock()
}

func (f *inflight) read() {
	f.mu.Lock()
	if f.watchdog != nil {
		f.watchdog.Reset(f.readLim)
	}
	f.mu.Unlock()
}

func (f *inflight) stop() {
	f.mu.Lock()
	if f.watchdog != nil {
		f.watchdog.Stop()
		f.watchdog = nil
	}
	f.mu.Unlock()
}

func (f *inflight) request() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.req.Bytes())
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
		ReadBufferSize:         32 << 10,
	}
	return h
}

// Close closes the session's idle connection.
func (h *Host) Close() { h.tr.CloseIdleConnections() }

// CloseIdle closes the idle connection, if any, e.g. before moving to
// another site of the same host name, so that the server never sees two.
func (h *Host) CloseIdle() { h.tr.CloseIdleConnections() }

func (h *Host) current() *inflight {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

// dial resolves addr's host through the client's cache, checks every
// address against the policy and connects to the first allowed one that
// answers, without a second lookup.
func (h *Host) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Kind: KindBadURL, Detail: err.Error()}
	}
	addrs, err := h.c.resolver.Lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var allowed []netip.Addr
	var policyErr error
	for _, ip := range addrs {
		if err := h.c.policy.Check(ip); err != nil {
			if policyErr == nil {
				policyErr = err
			}
			continue
		}
		allowed = append(allowed, ip)
	}
	if len(allowed) == 0 {
		return nil, policyErr
	}
	d := net.Dialer{Timeout: h.c.cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	var last error
	for _, ip := range allowed {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return &conn2{Conn: conn, h: h}, nil
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
	inner := raw.(*conn2).Conn
	tc := tls.Client(inner, cfg)
	hctx, cancel := context.WithTimeout(ctx, h.c.cfg.ConnectTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		inner.Close()
		if hctx.Err() != nil && ctx.Err() == nil {
			return nil, &Error{Kind: KindTimeout, Detail: "TLS handshake with " + host, Err: err}
		}
		return nil, &Error{Kind: KindTLS, Detail: err.Error(), Err: err}
	}
	return &conn2{Conn: tc, h: h}, nil
}

// conn2 reports writes and reads to the request in flight.
type conn2 struct {
	net.Conn
	h *Host
}

func (c *conn2) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if f := c.h.current(); f != nil && n > 0 {
		f.wrote(p[:n])
	}
	return n, err
}

func (c *conn2) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if f := c.h.current(); f != nil {
			f.read()
		}
	}
	return n, err
}

// Get fetches rawURL without following redirects and reads at most
// maxBody bytes of (decoded) body. It returns:
//   - a response and nil: the whole exchange, the body possibly cut at
//     maxBody (Truncated "length");
//   - a response and an *Error: headers arrived but the body was cut by a
//     time limit, a reset or a decoding error (Truncated says which); the
//     response is worth storing;
//   - nil and an *Error: no response (DNS, address policy, connection,
//     timeout before the headers, protocol error, cancelled).
func (h *Host) Get(ctx context.Context, rawURL string, maxBody int64) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{URL: rawURL, Kind: KindBadURL, Detail: "not an absolute http(s) URL"}
	}
	start := time.Now()
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	reqCtx, cancelT := context.WithTimeoutCause(reqCtx, h.c.cfg.TotalTimeout, errTotalTimeout)
	defer cancelT()

	f := &inflight{readLim: h.c.cfg.ReadTimeout}
	f.watchdog = time.AfterFunc(h.c.cfg.ReadTimeout, func() { cancel(errReadTimeout) })
	defer f.stop()
	h.mu.Lock()
	h.cur = f
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.cur = nil
		h.mu.Unlock()
	}()

	var ip string
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if a, ok := info.Conn.RemoteAddr().(*net.TCPAddr); ok {
			ip = a.IP.String()
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(reqCtx, trace), http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &Error{URL: rawURL, Kind: KindBadURL, Detail: err.Error()}
	}
	req.Header.Set("User-Agent", h.c.cfg.UserAgent)
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := h.tr.RoundTrip(req)
	if err != nil {
		return nil, h.classify(reqCtx, rawURL, err)
	}
	defer resp.Body.Close()

	out := &Response{
		URL:        rawURL,
		Started:    start,
		IP:         ip,
		Status:     resp.StatusCode,
		StatusLine: statusLine(resp),
		Header:     resp.Header.Clone(),
	}
	body, truncated, readErr := readBody(resp, maxBody)
	out.Body, out.Truncated = body, truncated
	if readErr != nil {
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

func statusLine(resp *http.Response) string {
	proto := resp.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	return proto + " " + resp.Status
}

// isGzip tells whether the response is gzip-encoded (the only coding the
// harvester asks for).
func isGzip(resp *http.Response) bool {
	ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	return ce == "gzip" || ce == "x-gzip"
}

// readBody reads at most max decoded bytes. The encoded input is capped
// too (at max plus an eighth, enough for incompressible data), so neither
// a gzip bomb nor an endless stream of empty gzip blocks is read further.
func readBody(resp *http.Response, max int64) ([]byte, string, error) {
	rawCap := max + max/8 + 64<<10
	lr := &io.LimitedReader{R: resp.Body, N: rawCap + 1}
	var r io.Reader = lr
	if isGzip(resp) {
		zr, err := gzip.NewReader(lr)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, "", nil // an empty body announced as gzip
			}
			return nil, "", &Error{Kind: KindDecode, Detail: "gzip: " + err.Error(), Err: err}
		}
		zr.Multistream(true)
		r = zr
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, max+1))
	if n > max {
		return buf.Bytes()[:max], TruncatedLength, nil
	}
	if lr.N <= 0 {
		return buf.Bytes(), TruncatedLength, nil
	}
	if err != nil {
		var fe *Error
		if isGzip(resp) && !errors.As(err, &fe) && isDecodeError(err) {
			return buf.Bytes(), "", &Error{Kind: KindDecode, Detail: "gzip: " + err.Error(), Err: err}
		}
		return buf.Bytes(), "", err
	}
	return buf.Bytes(), "", nil
}

func isDecodeError(err error) bool {
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || strings.Contains(err.Error(), "flate:")
}

// storedHeader turns the received headers into the stored ones: a gzip
// Content-Encoding the harvester decoded becomes DecodedHeader, and
// Content-Length is dropped when the stored body is not what it counted.
// (net/http has already removed the chunked Transfer-Encoding from the
// header: stored bodies are de-chunked.)
func storedHeader(out *Response, resp *http.Response, cut bool) {
	h := out.Header
	decoded := isGzip(resp)
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
