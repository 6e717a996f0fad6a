// Package harvestertest provides what the harvester's tests need: a
// recording web server on loopback that serves several host names (each
// with its robots.txt and pages, on 127.0.0.1 or another loopback
// address), a DNS server that resolves those names (or drops or fails the
// queries of some), hostile pages (Drip, Endless, Huge, GzipBomb, Hijack
// with Reset or Noise, Stall), and helpers to write batches and
// collections.
//
// The server records every request and every connection with the host it
// served and the address it came to, so tests can check politeness from
// the server's side: one connection per host at a time, connections per
// address, the wait between requests, robots.txt first, forbidden pages
// never asked for.
package harvestertest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/miekg/dns"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
)

// Page is what the server answers for one path.
type Page struct {
	Status int         // 0 means 200
	Header http.Header // extra headers
	Body   []byte
	Gzip   bool          // send the body gzip-encoded
	Delay  time.Duration // wait before answering
	// Handler, if set, answers instead of the fields above.
	Handler http.HandlerFunc
}

// Host is one host name of the test web.
type Host struct {
	Name string // e.g. "a.test"
	// IP is the loopback address the DNS server gives for the name
	// (default 127.0.0.1); the server listens on each one used, on the
	// same port.
	IP string
	// DNS says how the DNS server treats the name: "" answers, "drop"
	// never answers (a DNS timeout), "servfail" answers SERVFAIL.
	DNS string
	// Robots is the robots.txt page; nil means 404.
	Robots *Page
	// Pages maps a path with its query ("/a?b=1") to its page; other
	// paths are 404.
	Pages map[string]*Page
}

// Request is one request the server received.
type Request struct {
	Host       string // host name, without port
	Path       string // path and query
	UserAgent  string
	Conn       int64  // connection id
	Local      string // the server address it came to (IP): the server as the crawler's politeness sees it
	Start, End time.Time
}

// Conn is one connection the server accepted.
type Conn struct {
	ID             int64
	Host           string // host of its first request ("" if none)
	Local          string // the server address it came to (IP)
	Opened, Closed time.Time
}

// Web is the test web: an HTTP server and a DNS server on loopback.
type Web struct {
	Port    string // HTTP port
	DNSAddr string // DNS server address, for harvester.dns_server

	hosts    map[string]*Host
	srv      *http.Server
	inFlight []Request // requests started, in order
	dnsSrv   *dns.Server
	nextID   atomic.Int64
	ids      sync.Map // net.Conn → id, shared by ConnContext and ConnState

	mu       sync.Mutex
	requests []Request
	conns    map[int64]*Conn
	lookups  []Lookup
}

// Lookup is one question the DNS server received.
type Lookup struct {
	Name string // the name asked, lower-case, without the final dot
	At   time.Time
}

type connKey struct{}

// Start serves hosts until the test ends.
func Start(t testing.TB, hosts ...*Host) *Web {
	t.Helper()
	w := &Web{hosts: map[string]*Host{}, conns: map[int64]*Conn{}}
	for _, h := range hosts {
		w.hosts[strings.ToLower(h.Name)] = h
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, w.Port, _ = net.SplitHostPort(ln.Addr().String())
	lns := []net.Listener{ln}
	ips := map[string]bool{"127.0.0.1": true}
	for _, h := range hosts {
		if h.IP == "" || ips[h.IP] {
			continue
		}
		if ip := net.ParseIP(h.IP); ip == nil || !ip.IsLoopback() {
			t.Fatalf("host %s: IP %q is not a loopback address", h.Name, h.IP)
		}
		ips[h.IP] = true
		l, err := net.Listen("tcp", net.JoinHostPort(h.IP, w.Port))
		if err != nil {
			t.Fatalf("listen on %s: %v", h.IP, err)
		}
		lns = append(lns, l)
	}
	w.srv = &http.Server{
		Handler: http.HandlerFunc(w.serve),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, w.connID(c))
		},
		ConnState: w.connState,
	}
	for _, l := range lns {
		go w.srv.Serve(l)
	}

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.DNSAddr = pc.LocalAddr().String()
	started := make(chan struct{})
	w.dnsSrv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(w.answer), NotifyStartedFunc: func() { close(started) }}
	go w.dnsSrv.ActivateAndServe()
	<-started
	t.Cleanup(w.Close)
	return w
}

// Close stops both servers.
func (w *Web) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	w.srv.Shutdown(ctx)
	w.srv.Close()
	w.dnsSrv.Shutdown()
}

// Site returns the site of a host name: "http://NAME:PORT".
func (w *Web) Site(name string) string { return "http://" + name + ":" + w.Port }

// URL returns the URL of a path on a host.
func (w *Web) URL(name, path string) string { return w.Site(name) + path }

func (w *Web) connID(c net.Conn) int64 {
	if id, ok := w.ids.Load(c); ok {
		return id.(int64)
	}
	id := w.nextID.Add(1)
	w.ids.Store(c, id)
	return id
}

func (w *Web) connState(c net.Conn, st http.ConnState) {
	id := w.connID(c)
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	cn := w.conns[id]
	if cn == nil {
		cn = &Conn{ID: id}
		w.conns[id] = cn
	}
	switch st {
	case http.StateNew:
		cn.Opened = now
		if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
			cn.Local = a.IP.String()
		}
	case http.StateClosed, http.StateHijacked:
		cn.Closed = now
		w.ids.Delete(c)
	}
}

func (w *Web) answer(rw dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if len(r.Question) == 1 {
		q := r.Question[0]
		name := strings.TrimSuffix(strings.ToLower(q.Name), ".")
		w.mu.Lock()
		w.lookups = append(w.lookups, Lookup{Name: name, At: time.Now()})
		w.mu.Unlock()
		h, ok := w.hosts[name]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case h.DNS == "drop":
			return // never answer: the client times out
		case h.DNS == "servfail":
			m.Rcode = dns.RcodeServerFailure
		case q.Qtype == dns.TypeA:
			ip := net.IPv4(127, 0, 0, 1)
			if h.IP != "" {
				ip = net.ParseIP(h.IP)
			}
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: ip})
		}
	}
	rw.WriteMsg(m)
}

func (w *Web) serve(rw http.ResponseWriter, r *http.Request) {
	req := Request{Host: hostName(r.Host), Path: r.URL.RequestURI(), UserAgent: r.UserAgent(), Start: time.Now()}
	req.Conn, _ = r.Context().Value(connKey{}).(int64)
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		req.Local = a.IP.String()
	}
	w.mu.Lock()
	if cn := w.conns[req.Conn]; cn != nil && cn.Host == "" {
		cn.Host = req.Host
	}
	w.inFlight = append(w.inFlight, req)
	w.mu.Unlock()
	defer func() {
		req.End = time.Now()
		w.mu.Lock()
		w.requests = append(w.requests, req)
		w.mu.Unlock()
	}()
	h := w.hosts[req.Host]
	var p *Page
	if h != nil {
		if req.Path == "/robots.txt" {
			p = h.Robots
		} else {
			p = h.Pages[req.Path]
		}
	}
	if p == nil {
		http.NotFound(rw, r)
		return
	}
	if p.Delay > 0 {
		select {
		case <-time.After(p.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if p.Handler != nil {
		p.Handler(rw, r)
		return
	}
	for k, v := range p.Header {
		rw.Header()[k] = v
	}
	body := p.Body
	if p.Gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
		rw.Header().Set("Content-Encoding", "gzip")
	}
	if rw.Header().Get("Content-Type") == "" {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	status := p.Status
	if status == 0 {
		status = http.StatusOK
	}
	rw.WriteHeader(status)
	rw.Write(body)
}

func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(hostport)
}

// Reset forgets the requests and connections recorded so far, so that a
// test can harvest the same web again. Open connections are kept.
func (w *Web) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests = nil
	w.inFlight = nil
	w.lookups = nil
	for id, c := range w.conns {
		if !c.Closed.IsZero() {
			delete(w.conns, id)
		}
	}
}

// Lookups returns the questions the DNS server received, in order.
func (w *Web) Lookups() []Lookup {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Lookup(nil), w.lookups...)
}

// Started returns every request the server has started to answer (End
// not set), finished or not, in order of arrival.
func (w *Web) Started() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Request(nil), w.inFlight...)
}

// Hosts returns the web's hosts by name; a test may change their pages
// before the harvest starts.
func (w *Web) Hosts() map[string]*Host { return w.hosts }

// Requests returns the requests received so far, in order of arrival.
func (w *Web) Requests() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := append([]Request(nil), w.requests...)
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// RequestsTo returns the requests a host received, in order.
func (w *Web) RequestsTo(host string) []Request {
	var out []Request
	for _, r := range w.Requests() {
		if r.Host == host {
			out = append(out, r)
		}
	}
	return out
}

// Conns returns the connections accepted so far.
func (w *Web) Conns() []Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Conn, 0, len(w.conns))
	for _, c := range w.conns {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Opened.Before(out[j].Opened) })
	return out
}

// CloseLag is how late the server may notice a connection's close: the
// client closes a connection before it dials the next one, but the
// server's read of the end of stream can come after it accepted the new
// connection, by a scheduling delay on a loaded machine. An overlap
// shorter than this is that lag, not two connections at once.
const CloseLag = 100 * time.Millisecond

// CheckOneConnPerHost reports every host that had two connections open
// at the same time (beyond CloseLag).
func (w *Web) CheckOneConnPerHost() error {
	byHost := map[string][]Conn{}
	for _, c := range w.Conns() {
		if c.Host != "" {
			byHost[c.Host] = append(byHost[c.Host], c)
		}
	}
	var errs []string
	for host, cs := range byHost {
		for i := 1; i < len(cs); i++ {
			prev, cur := cs[i-1], cs[i]
			if prev.Closed.IsZero() || prev.Closed.Sub(cur.Opened) > CloseLag {
				errs = append(errs, fmt.Sprintf("%s: connection %d opened at %s while %d was open (closed %s)",
					host, cur.ID, cur.Opened.Format("15:04:05.000"), prev.ID, prev.Closed.Format("15:04:05.000")))
			}
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// endSlack is how late the server may stamp a request's end: the
// handler's goroutine reads the clock after its last write, and on a
// loaded machine (the whole test suite on two cores) it can be descheduled
// for a few milliseconds in between, after the client has read the last
// byte and started counting its wait. Seen once in CI: a 60 ms wait
// measured as 57.8 ms.
const endSlack = 3 * time.Millisecond

// CheckWait reports every pair of consecutive requests to one host whose
// gap (end of one to start of the next) is shorter than min (less the
// server's clock slack, endSlack).
func (w *Web) CheckWait(min time.Duration) error {
	byHost := map[string][]Request{}
	for _, r := range w.Requests() {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	var errs []string
	for host, rs := range byHost {
		for i := 1; i < len(rs); i++ {
			if gap := rs[i].Start.Sub(rs[i-1].End); gap < min-endSlack {
				errs = append(errs, fmt.Sprintf("%s: %s then %s after %s (< %s)", host, rs[i-1].Path, rs[i].Path, gap, min))
			}
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// MaxOpen returns the largest number of connections that were open at
// the same time, among those for which keep returns true. A connection
// counts as closed slack before the server noticed (the client closes one
// before it opens the next, but the server may see the new one first).
func (w *Web) MaxOpen(slack time.Duration, keep func(Conn) bool) int {
	type ev struct {
		t     time.Time
		delta int
	}
	var evs []ev
	end := time.Now()
	for _, c := range w.Conns() {
		if !keep(c) {
			continue
		}
		closed := c.Closed.Add(-slack)
		if c.Closed.IsZero() {
			closed = end
		}
		if closed.Before(c.Opened) {
			closed = c.Opened
		}
		evs = append(evs, ev{c.Opened, 1}, ev{closed, -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if !evs[i].t.Equal(evs[j].t) {
			return evs[i].t.Before(evs[j].t)
		}
		return evs[i].delta < evs[j].delta
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}

// Config returns a harvester configuration for the test web: loopback
// allowed, its DNS server, short waits and time limits.
func (w *Web) Config(wait time.Duration) config.Config {
	c := config.Defaults()
	c.Crawl.UserAgent = "wirebot-test/0.1 (+http://example.org/wirebot)"
	c.Crawl.ProductToken = "wirebot"
	c.Harvester.Connections = 4
	c.Harvester.ConnectionsPerIP = 0 // every test host is 127.0.0.1
	c.Harvester.AddressWait = 0      // (tests of the floor set it)
	c.Harvester.Wait = config.Duration(wait)
	c.Harvester.ConnectTimeout = config.Duration(2 * time.Second)
	c.Harvester.FirstByteTimeout = config.Duration(2 * time.Second)
	c.Harvester.ReadTimeout = config.Duration(2 * time.Second)
	c.Harvester.TotalTimeout = config.Duration(4 * time.Second)
	c.Harvester.DNSTimeout = config.Duration(time.Second)
	c.Harvester.StopTimeout = config.Duration(2 * time.Second)
	c.Harvester.MaxBodyBytes = 64 << 10
	c.Harvester.MaxRobotsBytes = 16 << 10
	c.Harvester.AllowPrivate = true
	c.Harvester.DNSServer = w.DNSAddr
	// Tests check whole harvests: the tail rule would defer the last
	// host's URLs of these small batches (tests of the rule turn it on).
	c.Harvester.TailFraction = 0
	return c
}

// WriteBatch writes dir/batch.tsv with the entries (scores descending in
// the order given) and returns them.
func WriteBatch(t testing.TB, dir string, id int, entries []batch.Entry) []batch.Entry {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sites := map[string]bool{}
	for _, e := range entries {
		sites[e.Site] = true
	}
	h := batch.Header{Batch: id, Created: time.Now(), Strategy: "test", Params: map[string]string{"test": "1"},
		Counts: map[string]int{"urls": len(entries), "sites": len(sites), "new": len(entries), "revisits": 0}}
	err := collection.WriteAtomic(filepath.Join(dir, collection.BatchFile), func(wr io.Writer) error {
		return batch.Write(wr, h, entries)
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// Entries builds batch entries for URLs (absolute), with decreasing
// scores in the order given and doc ids from 1.
func Entries(urls ...string) []batch.Entry {
	out := make([]batch.Entry, len(urls))
	for i, u := range urls {
		site := u
		if p, err := url.Parse(u); err == nil {
			site = p.Scheme + "://" + p.Host
		}
		out[i] = batch.Entry{DocID: uint64(i + 1), Site: site, Score: float64(len(urls) - i), Depth: 1, Kind: batch.KindNew, URL: u}
	}
	return out
}

// NewCollection creates a collection in dir with cfg as its wire.toml.
func NewCollection(t testing.TB, dir string, cfg config.Config) *collection.Collection {
	t.Helper()
	col, err := collection.Create(dir, config.Render(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return col
}

// Hostile servers, for the harvester's limits: each is a Page whose
// handler misbehaves in one way.

// Drip sends a 200 text/html response whose body comes one byte every
// interval, forever.
func Drip(interval time.Duration) *Page {
	return &Page{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		f := w.(http.Flusher)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			f.Flush()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
	}}
}

// Endless sends a 200 text/html body that never ends, as fast as the
// client reads; sent counts the bytes written.
func Endless(sent *atomic.Int64) *Page {
	chunk := bytes.Repeat([]byte("<p>and more</p>\n"), 4096)
	return &Page{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			if sent != nil {
				sent.Add(int64(n))
			}
			if err != nil {
				return
			}
		}
	}}
}

// Huge sends a page of size bytes with its Content-Length; sent counts
// the bytes written.
func Huge(size int64, sent *atomic.Int64) *Page {
	chunk := bytes.Repeat([]byte("<p>a huge page</p>\n"), 3449) // 65531 bytes
	return &Page{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		for left := size; left > 0 && r.Context().Err() == nil; {
			n, err := w.Write(chunk[:min(int64(len(chunk)), left)])
			left -= int64(n)
			if sent != nil {
				sent.Add(int64(n))
			}
			if err != nil {
				return
			}
		}
	}}
}

// GzipBomb sends decoded bytes of zeros gzip-compressed (about a
// thousandth of the size on the wire), as Content-Encoding: gzip.
func GzipBomb(decoded int64) *Page {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for left := decoded; left > 0; left -= int64(len(zeros)) {
		zw.Write(zeros[:min(int64(len(zeros)), left)])
	}
	zw.Close()
	return &Page{Gzip: false, Header: http.Header{"Content-Encoding": {"gzip"}, "Content-Type": {"text/html"}}, Body: b.Bytes()}
}

// BrotliBomb sends decoded bytes of zeros brotli-compressed (quality 1:
// a few hundred bytes per 100 MB on the wire), as Content-Encoding: br.
func BrotliBomb(decoded int64) *Page {
	var b bytes.Buffer
	bw := brotli.NewWriterLevel(&b, 1)
	zeros := make([]byte, 1<<20)
	for left := decoded; left > 0; left -= int64(len(zeros)) {
		bw.Write(zeros[:min(int64(len(zeros)), left)])
	}
	bw.Close()
	return &Page{Header: http.Header{"Content-Encoding": {"br"}, "Content-Type": {"text/html"}}, Body: b.Bytes()}
}

// Hijack answers with whatever fn writes on the raw connection, after
// the request was read (the server closes the connection afterwards).
func Hijack(fn func(c net.Conn)) *Page {
	return &Page{Handler: func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "no hijack", 500)
			return
		}
		c, brw, err := hj.Hijack()
		if err != nil {
			return
		}
		brw.Flush()
		fn(c)
		c.Close()
	}}
}

// Reset closes a connection with a TCP reset (SO_LINGER 0).
func Reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// Noise returns n pseudo-random bytes (the same for the same seed).
func Noise(n int, seed uint64) []byte {
	out := make([]byte, n)
	x := seed | 1
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = byte(x)
	}
	return out
}

// Stall waits d before answering 200 (or until the client goes).
func Stall(d time.Duration) *Page {
	return &Page{Body: []byte("<html>late</html>"), Delay: d}
}
