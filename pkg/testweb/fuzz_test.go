package testweb

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzPage feeds arbitrary request URIs (the server's outside input) to
// every host of a web with hostile hosts: answering and describing them
// never panics, a URI the model knows is described the same way under
// its own URL, and the truth and the served answer agree on the status.
func FuzzPage(f *testing.F) {
	w, err := New(Config{Seed: 3, Hosts: 20, MaxPages: 60, Hostile: true})
	if err != nil {
		f.Fatal(err)
	}
	hosts := w.HostNames()
	for _, u := range w.URLs()[:40] {
		pu, _ := url.Parse(u)
		f.Add(0, pu.RequestURI())
	}
	for k, h := range w.HostileHosts() {
		for _, e := range h.Entries {
			pu, _ := url.Parse(e)
			f.Add(k, pu.RequestURI())
		}
	}
	for _, s := range []string{"/calendar?month=7", "/calendar?month=7&day=3&hour=23", "/calendar?month=-0",
		"/item/20000.html", "/loop/8", "/inner.html", "/robots.txt", "/%zz", "/index.php?page=00", "//x", "*"} {
		f.Add(3, s)
	}
	f.Fuzz(func(t *testing.T, host int, uri string) {
		if host < 0 {
			host = -host
		}
		name := hosts[host%len(hosts)]
		raw := "http://" + name + uri
		info, ok := w.Page(raw)
		if !ok {
			return
		}
		if info.URL == "" || !strings.HasPrefix(info.URL, "http://"+name) {
			t.Fatalf("Page(%q).URL = %q", raw, info.URL)
		}
		again, ok2 := w.Page(info.URL)
		if !ok2 || again.URL != info.URL || again.Status != info.Status || len(again.Links) != len(info.Links) {
			t.Fatalf("Page(%q) = %+v, but Page(%q) = %+v", raw, info, info.URL, again)
		}
		if si, known := w.byName[name]; known {
			pu, err := url.Parse(info.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp, _, _ := w.respond(si, pu.RequestURI(), false)
			if resp.status != info.Status {
				t.Fatalf("%s: served %d, truth %d", info.URL, resp.status, info.Status)
			}
		}
	})
}
