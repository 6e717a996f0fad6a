// Package harvestertest provides what the harvester's tests need: a
// recording web server on loopback that serves several host names (each
// with its robots.txt and pages), a DNS server that resolves those names
// to 127.0.0.1, and helpers to write batches and collections.
//
// The server records every request and every connection with the host it
// served, so tests can check politeness from the server's side: one
// connection per host at a time, the wait between requests, robots.txt
// first, forbidden pages never asked for.
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
	Conn       int64 // connection id
	Start, End time.Time
}

// Conn is one connection the server accepted.
type Conn struct {
	ID             int64
	Host           string // host of its first request ("" if none)
	Opened, Closed time.Time
}

// Web is the test web: an HTTP server and a DNS server on loopback.
type Web struct {
	Port    string // HTTP port
	DNSAddr string // DNS server address, for harvester.dns_server

	hosts  map[string]*Host
	srv    *http.Server
	dnsSrv *dns.Server
	nextID atomic.Int64
	ids    sync.Map // net.Conn → id, shared by ConnContext and ConnState

	mu       sync.Mutex
	requests []Request
	conns    map[int64]*Conn
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
	w.srv = &http.Server{
		Handler: http.HandlerFunc(w.serve),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, w.connID(c))
		},
		ConnState: w.connState,
	}
	go w.srv.Serve(ln)

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
		if _, ok := w.hosts[name]; !ok {
			m.Rcode = dns.RcodeNameError
		} else if q.Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(127, 0, 0, 1)})
		}
	}
	rw.WriteMsg(m)
}

func (w *Web) serve(rw http.ResponseWriter, r *http.Request) {
	req := Request{Host: hostName(r.Host), Path: r.URL.RequestURI(), UserAgent: r.UserAgent(), Start: time.Now()}
	req.Conn, _ = r.Context().Value(connKey{}).(int64)
	w.mu.Lock()
	if cn := w.conns[req.Conn]; cn != nil && cn.Host == "" {
		cn.Host = req.Host
	}
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

// CheckOneConnPerHost reports every host that had two connections open
// at the same time.
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
			if prev.Closed.IsZero() || prev.Closed.After(cur.Opened) {
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

// CheckWait reports every pair of consecutive requests to one host whose
// gap (end of one to start of the next) is shorter than min.
func (w *Web) CheckWait(min time.Duration) error {
	byHost := map[string][]Request{}
	for _, r := range w.Requests() {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	var errs []string
	for host, rs := range byHost {
		for i := 1; i < len(rs); i++ {
			if gap := rs[i].Start.Sub(rs[i-1].End); gap < min {
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

// Config returns a harvester configuration for the test web: loopback
// allowed, its DNS server, short waits and time limits.
func (w *Web) Config(wait time.Duration) config.Config {
	c := config.Defaults()
	c.Crawl.UserAgent = "wirebot-test/0.1 (+http://example.org/wirebot)"
	c.Crawl.ProductToken = "wirebot"
	c.Harvester.Connections = 4
	c.Harvester.Wait = config.Duration(wait)
	c.Harvester.ConnectTimeout = config.Duration(2 * time.Second)
	c.Harvester.ReadTimeout = config.Duration(2 * time.Second)
	c.Harvester.TotalTimeout = config.Duration(4 * time.Second)
	c.Harvester.MaxBodyBytes = 64 << 10
	c.Harvester.MaxRobotsBytes = 16 << 10
	c.Harvester.AllowPrivate = true
	c.Harvester.DNSServer = w.DNSAddr
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
