package testweb

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// startWeb builds and starts a web that is closed when the test ends.
func startWeb(t testing.TB, cfg Config) *Web {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	serve(t, w)
	return w
}

// serve starts w and closes it when the test ends.
func serve(t testing.TB, w *Web) {
	t.Helper()
	if err := w.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// resolverFor returns a pure-Go resolver that sends every query to the
// web's DNS server over network ("udp" or "tcp").
func resolverFor(w *Web, network string) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, w.DNSAddr())
		},
	}
}

// newClient returns an HTTP client that resolves host names through the
// web's DNS server and does not follow redirects. Its idle connections
// are closed when the test ends (before the web is closed).
func newClient(t testing.TB, w *Web) *http.Client {
	d := &net.Dialer{Resolver: resolverFor(w, "udp"), Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// fetched is a response read in full.
type fetched struct {
	status int
	header http.Header
	body   []byte
	// chunked tells whether the body came with chunked transfer
	// coding; length is the Content-Length (-1 when none).
	chunked bool
	length  int64
}

// fetch GETs rawURL.
func fetch(t testing.TB, c *http.Client, rawURL string) fetched {
	t.Helper()
	return do(t, c, http.MethodGet, rawURL, "")
}

// do sends one request and reads the whole response.
func do(t testing.TB, c *http.Client, method, rawURL, ua string) fetched {
	t.Helper()
	h := http.Header{}
	if ua != "" {
		h.Set("User-Agent", ua)
	}
	return doHeader(t, c, method, rawURL, h)
}

// doHeader sends one request with header h and reads the whole response.
func doHeader(t testing.TB, c *http.Client, method, rawURL string, h http.Header) fetched {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatalf("request %s: %v", rawURL, err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", rawURL, err)
	}
	return fetched{status: resp.StatusCode, header: resp.Header, body: body,
		chunked: len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked", length: resp.ContentLength}
}

// extracted is what a standard tokenizer finds in an HTML document.
type extracted struct {
	title   string
	links   []string
	anchors []string
}

// extract decodes body (charset from the header or the document, as a
// crawler would) and tokenizes it with golang.org/x/net/html: <title>
// text, href of a/area, src of frame/iframe resolved against the first
// <base href> or the page URL without fragment; anchor text of <a> with
// collapsed white space, alt of <area>.
func extract(body []byte, contentType, pageURL string) (extracted, error) {
	enc, _, _ := charset.DetermineEncoding(body, contentType)
	text, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return extracted{}, err
	}
	var (
		ex      extracted
		hrefs   []string
		baseRef string
		inTitle bool
		inA     = -1
	)
	attr := func(tok html.Token, name string) (string, bool) {
		for _, a := range tok.Attr {
			if a.Key == name {
				return a.Val, true
			}
		}
		return "", false
	}
	z := html.NewTokenizer(bytes.NewReader(text))
	for done := false; !done; {
		switch z.Next() {
		case html.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				return ex, z.Err()
			}
			done = true
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "title":
				inTitle = true
			case "base":
				if v, ok := attr(tok, "href"); ok && baseRef == "" {
					baseRef = v
				}
			case "a":
				if v, ok := attr(tok, "href"); ok {
					hrefs = append(hrefs, v)
					ex.anchors = append(ex.anchors, "")
					inA = len(ex.anchors) - 1
				}
			case "area":
				if v, ok := attr(tok, "href"); ok {
					alt, _ := attr(tok, "alt")
					hrefs = append(hrefs, v)
					ex.anchors = append(ex.anchors, alt)
				}
			case "frame", "iframe":
				if v, ok := attr(tok, "src"); ok {
					hrefs = append(hrefs, v)
					ex.anchors = append(ex.anchors, "")
				}
			}
		case html.TextToken:
			tok := z.Token()
			if inTitle {
				ex.title += tok.Data
			}
			if inA >= 0 {
				ex.anchors[inA] += tok.Data
			}
		case html.EndTagToken:
			switch z.Token().Data {
			case "title":
				inTitle = false
			case "a":
				inA = -1
			}
		}
	}
	base, err := url.Parse(pageURL)
	if err != nil {
		return ex, err
	}
	if baseRef != "" {
		if base, err = base.Parse(baseRef); err != nil {
			return ex, err
		}
	}
	for k, h := range hrefs {
		u, err := base.Parse(h)
		if err != nil {
			return ex, err
		}
		u.Fragment, u.RawFragment = "", ""
		ex.links = append(ex.links, u.String())
		ex.anchors[k] = strings.Join(strings.Fields(ex.anchors[k]), " ")
	}
	return ex, nil
}

// samePort replaces the web's port in s with a placeholder.
func samePort(w *Web, s string) string {
	return strings.ReplaceAll(s, w.HTTPAddr()[strings.LastIndex(w.HTTPAddr(), ":"):], ":PORT")
}

// hostOf returns the host name of an absolute URL.
func hostOf(t testing.TB, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("parse %q: %v", rawURL, err)
	}
	return u.Hostname()
}
