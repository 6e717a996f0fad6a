package testweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestUnchangedWithoutNewFields: a web without Pages, HeavyPages and
// Hostile serves byte for byte what the package served before those
// fields existed (the hash was computed with that version), so the tests
// of the other stages keep their web.
func TestUnchangedWithoutNewFields(t *testing.T) {
	const want = "ee20a468287aacb1caecc3e63fcde83e56ce3d9eca014062101757a7d7b096b8"
	w, err := New(Config{Seed: 5, Hosts: 80, MaxPages: 200})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for si := range w.sites {
		s := &w.sites[si]
		for i := 0; i < s.pages; i++ {
			resp, _, _ := w.respond(si, w.pathOf(s, i, s.kindOf(i)), false)
			fmt.Fprintf(h, "%s %d %s %s\n", s.name, resp.status, resp.ctype, resp.location)
			h.Write(resp.body)
		}
		resp, _, _ := w.respond(si, "/robots.txt", false)
		h.Write(resp.body)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("the default web changed: hash %s, want %s", got, want)
	}
	if len(w.HostileHosts()) != 0 {
		t.Error("hostile hosts without Config.Hostile")
	}
}

// hostileNamed returns the hostile host of kind k.
func hostileNamed(t *testing.T, w *Web, k HostileKind) HostileHost {
	t.Helper()
	for _, h := range w.HostileHosts() {
		if h.Kind == k {
			return h
		}
	}
	t.Fatalf("no hostile host of kind %s", k)
	return HostileHost{}
}

// rawClient returns a client that neither decodes gzip nor follows
// redirects, with a short overall timeout.
func rawClient(t *testing.T, w *Web, timeout time.Duration) *http.Client {
	c := newClient(t, w)
	c.Timeout = timeout
	return c
}

func TestHostileTruth(t *testing.T) {
	w := startWeb(t, Config{Seed: 8, Hosts: 30, MaxPages: 60, Hostile: true})
	hosts := w.HostileHosts()
	if len(hosts) != len(hostileKinds()) {
		t.Fatalf("%d hostile hosts, want %d", len(hosts), len(hostileKinds()))
	}
	names := map[string]bool{}
	for _, h := range w.HostNames() {
		names[h] = true
	}
	linked := map[string]bool{}
	for _, u := range w.SeedURLs(w.nIn) {
		info, _ := w.Page(u)
		for _, l := range info.Links {
			linked[l] = true
		}
	}
	for _, h := range hosts {
		if !strings.HasSuffix(h.Name, ".cl") || !names[h.Name] {
			t.Errorf("%s: not an in-scope host name listed by HostNames", h.Name)
		}
		if k, ok := w.IsHostile(h.Name); !ok || k != h.Kind {
			t.Errorf("IsHostile(%s) = %s, %v", h.Name, k, ok)
		}
		if len(h.Entries) == 0 || h.Note == "" {
			t.Errorf("%s: no entries or note", h.Name)
		}
		for _, e := range h.Entries {
			if !linked[e] {
				t.Errorf("%s: entry %s is linked from no home page", h.Name, e)
			}
		}
	}
	for _, u := range w.URLs() {
		if _, ok := w.IsHostile(hostOf(t, u)); ok {
			t.Fatalf("URLs lists hostile %s", u)
		}
	}
	// The home pages that link hostile hosts serve what Page says.
	c := newClient(t, w)
	for _, si := range []int{w.bySize[0], w.bySize[1]} {
		u := w.origin(si) + "/"
		info, _ := w.Page(u)
		r := fetch(t, c, u)
		ex, err := extract(r.body, r.header.Get("Content-Type"), u)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(ex.links, "\n") != strings.Join(info.Links, "\n") {
			t.Errorf("%s: served links differ from the truth", u)
		}
	}
}

func TestHostileDNS(t *testing.T) {
	w := startWeb(t, Config{Seed: 8, Hosts: 10, Hostile: true})
	res := resolverFor(w, "udp")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, h := range w.HostileHosts() {
		addrs, err := res.LookupHost(ctx, h.Name+".")
		switch h.Kind {
		case HostileNXDomain:
			var de *net.DNSError
			if !errors.As(err, &de) || !de.IsNotFound {
				t.Errorf("%s: %v %v, want not found", h.Name, addrs, err)
			}
			if _, ok := w.Page(h.Entries[0]); ok {
				t.Errorf("%s: Page says it is a page", h.Name)
			}
		case HostileServFail:
			var de *net.DNSError
			if !errors.As(err, &de) || de.IsNotFound {
				t.Errorf("%s: %v %v, want a server failure", h.Name, addrs, err)
			}
		default:
			if err != nil || len(addrs) != 1 || addrs[0] != "127.0.0.1" {
				t.Errorf("%s: %v %v", h.Name, addrs, err)
			}
		}
	}
}

func TestHostileDrip(t *testing.T) {
	w := startWeb(t, Config{Seed: 8, Hosts: 10, Hostile: true})
	h := hostileNamed(t, w, HostileDrip)
	c := rawClient(t, w, 30*time.Second)
	resp, err := c.Get(h.Entries[0])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != DripBytes {
		t.Errorf("Content-Length %d, want %d", resp.ContentLength, DripBytes)
	}
	start := time.Now()
	buf := make([]byte, 1)
	for k := 0; k < 3; k++ {
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
	}
	// Three bytes take two pauses of one second.
	if d := time.Since(start); d < 1800*time.Millisecond {
		t.Errorf("3 bytes in %v: not dripping", d)
	}
	if len(dripBody()) != DripBytes || !utf8.Valid(dripBody()) {
		t.Error("drip body size or encoding")
	}
	// Close does not wait for the drip to end.
	start = time.Now()
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Close took %v with a drip in progress", d)
	}
}

func TestHostileStreams(t *testing.T) {
	w := startWeb(t, Config{Seed: 8, Hosts: 10, Hostile: true})
	c := rawClient(t, w, 60*time.Second)

	t.Run("endless", func(t *testing.T) {
		resp, err := c.Get(hostileNamed(t, w, HostileEndless).Entries[0])
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.ContentLength != -1 {
			t.Errorf("Content-Length %d, want none", resp.ContentLength)
		}
		n, err := io.CopyN(io.Discard, resp.Body, 20<<20)
		if err != nil || n != 20<<20 {
			t.Errorf("read %d bytes: %v", n, err)
		}
	})
	t.Run("huge", func(t *testing.T) {
		resp, err := c.Get(hostileNamed(t, w, HostileHuge).Entries[0])
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || n != HugeSize || resp.ContentLength != HugeSize {
			t.Errorf("read %d bytes of %d: %v", n, resp.ContentLength, err)
		}
	})
	t.Run("gzip-bomb", func(t *testing.T) {
		resp, err := c.Get(hostileNamed(t, w, HostileGzipBomb).Entries[0])
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("Content-Encoding") != "gzip" || len(body) > 2<<20 {
			t.Fatalf("Content-Encoding %q, %d bytes on the wire", resp.Header.Get("Content-Encoding"), len(body))
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		want := int64(64 << 20)
		if !testing.Short() {
			want = GzipBombSize
		}
		n, err := io.CopyN(io.Discard, zr, want)
		if err != nil || n != want {
			t.Errorf("decoded %d bytes: %v", n, err)
		}
		if want == GzipBombSize {
			if m, _ := io.Copy(io.Discard, zr); m != 0 {
				t.Errorf("%d bytes past GzipBombSize", m)
			}
		}
		t.Logf("gzip bomb: %d bytes on the wire, %d decoded", len(body), GzipBombSize)
	})
	t.Run("garbage", func(t *testing.T) {
		u := hostileNamed(t, w, HostileGarbage).Entries[0]
		r := fetch(t, c, u)
		if len(r.body) != GarbageSize || utf8.Valid(r.body) || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Errorf("%d bytes, valid UTF-8 %v, type %q", len(r.body), utf8.Valid(r.body), r.header.Get("Content-Type"))
		}
		if again := fetch(t, c, u); !bytes.Equal(again.body, r.body) {
			t.Error("garbage is not deterministic")
		}
	})
}

func TestHostilePages(t *testing.T) {
	w := startWeb(t, Config{Seed: 8, Hosts: 10, Hostile: true})
	c := rawClient(t, w, 30*time.Second)
	check := func(t *testing.T, u string) PageInfo {
		t.Helper()
		info, ok := w.Page(u)
		if !ok {
			t.Fatalf("%s is not a page", u)
		}
		r := fetch(t, c, u)
		if r.status != info.Status || r.header.Get("Content-Type") != info.MIME {
			t.Fatalf("%s: served %d %q, truth %d %q", u, r.status, r.header.Get("Content-Type"), info.Status, info.MIME)
		}
		ex, err := extract(r.body, r.header.Get("Content-Type"), u)
		if err != nil {
			t.Fatal(err)
		}
		if ex.title != info.Title || strings.Join(ex.links, " ") != strings.Join(info.Links, " ") ||
			strings.Join(ex.anchors, "|") != strings.Join(info.Anchors, "|") {
			t.Fatalf("%s: served title %q and %d links, truth %q and %d", u, ex.title, len(ex.links), info.Title, len(info.Links))
		}
		return info
	}

	t.Run("many-links", func(t *testing.T) {
		h := hostileNamed(t, w, HostileManyLinks)
		info := check(t, h.Entries[0])
		if len(info.Links) != ManyLinks {
			t.Fatalf("%d links", len(info.Links))
		}
		check(t, info.Links[ManyLinks-1])
		if _, ok := w.Page(strings.Replace(info.Links[0], "/1.html", "/01.html", 1)); ok {
			t.Error("/item/01.html is a page")
		}
	})
	t.Run("calendar", func(t *testing.T) {
		h := hostileNamed(t, w, HostileCalendar)
		if h.Pages != -1 {
			t.Errorf("Pages %d", h.Pages)
		}
		info := check(t, h.Entries[0])
		seen := map[string]bool{}
		u := info.Links[0]
		// Follow "next month" 200 times: always a new page.
		var month PageInfo
		for k := 0; k < 200; k++ {
			month = check(t, u)
			if seen[u] {
				t.Fatalf("%s seen twice", u)
			}
			seen[u] = true
			if len(month.Links) < 12+28 {
				t.Fatalf("%s: %d links", u, len(month.Links))
			}
			u = month.Links[len(month.Links)-12-28] // the next month
		}
		if !strings.HasSuffix(month.URL, "month=199") {
			t.Errorf("200th month is %s", month.URL)
		}
		day := check(t, month.Links[len(month.Links)-1])
		hour := check(t, day.Links[len(day.Links)-1])
		if len(day.Links) != 25 || len(hour.Links) != 1 {
			t.Errorf("day %d links, hour %d", len(day.Links), len(hour.Links))
		}
		for _, bad := range []string{"/calendar?month=01", "/calendar?month=-1", "/calendar?month=1&day=0",
			"/calendar?day=1&month=1", "/calendar?month=1&day=2&hour=24", "/calendar?month=9999999999"} {
			if _, ok := w.Page(hostileOriginOf(w, h.Name) + bad); ok {
				t.Errorf("%s is a page", bad)
			}
		}
	})
	t.Run("deep", func(t *testing.T) {
		h := hostileNamed(t, w, HostileDeep)
		info := check(t, h.Entries[0])
		r := fetch(t, c, h.Entries[0])
		if n := bytes.Count(r.body, []byte("<div>")); n != DeepNesting {
			t.Errorf("%d <div>", n)
		}
		check(t, info.Links[0])
	})
	t.Run("redirect-loop", func(t *testing.T) {
		h := hostileNamed(t, w, HostileRedirectLoop)
		u := h.Entries[0]
		seen := map[string]bool{}
		for !seen[u] {
			seen[u] = true
			info, ok := w.Page(u)
			r := fetch(t, c, u)
			if !ok || r.status/100 != 3 || originOf(u)+r.header.Get("Location") != info.Location {
				t.Fatalf("%s: %d to %q, truth %s", u, r.status, r.header.Get("Location"), info.Location)
			}
			u = info.Location
		}
		if u != h.Entries[0] || len(seen) != 10 {
			t.Errorf("loop of %d ends at %s", len(seen), u)
		}
		if info, _ := w.Page(h.Entries[1]); info.Location != h.Entries[1] {
			t.Errorf("/self redirects to %s", info.Location)
		}
	})
	t.Run("reset", func(t *testing.T) {
		h := hostileNamed(t, w, HostileReset)
		if _, err := c.Get(h.Entries[0]); err == nil {
			t.Error("GET / did not fail")
		}
		resp, err := c.Get(h.Entries[1])
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil || n >= 10000 {
			t.Errorf("/partial.html: %d bytes, error %v", n, err)
		}
	})
	// Every request to a hostile host is recorded under its name.
	byHost := map[string]int{}
	for _, r := range w.Requests() {
		byHost[r.Host]++
	}
	for _, k := range []HostileKind{HostileManyLinks, HostileCalendar, HostileDeep, HostileRedirectLoop, HostileReset} {
		if byHost[hostileNamed(t, w, k).Name] == 0 {
			t.Errorf("no request recorded for %s", k)
		}
	}
}

// hostileOriginOf returns "http://name:port" of a hostile host.
func hostileOriginOf(w *Web, name string) string {
	return w.hostileOrigin(w.hostileByName[name])
}

// originOf returns the "http://host:port" part of an absolute URL.
func originOf(u string) string {
	i := strings.Index(u[len("http://"):], "/")
	return u[:len("http://")+i]
}

// TestHostileRobotsAndMethods: robots.txt is a 404 everywhere, and
// other methods get 405, on every hostile host that resolves.
func TestHostileRobotsAndMethods(t *testing.T) {
	w := startWeb(t, Config{Seed: 8, Hosts: 10, Hostile: true})
	c := rawClient(t, w, 10*time.Second)
	for _, h := range w.HostileHosts() {
		if h.Kind == HostileNXDomain || h.Kind == HostileServFail {
			continue
		}
		o := hostileOriginOf(w, h.Name)
		if r := fetch(t, c, o+"/robots.txt"); r.status != 404 {
			t.Errorf("%s/robots.txt: %d", h.Name, r.status)
		}
		if r := do(t, c, http.MethodPost, o+"/", ""); r.status != 405 {
			t.Errorf("POST %s: %d", h.Name, r.status)
		}
		if r := fetch(t, c, o+"/no/such"); r.status != 404 {
			t.Errorf("%s/no/such: %d", h.Name, r.status)
		}
	}
}

// With EndlessLinks the endless host's pages start with links to more
// endless pages of it, in the body and in the truth.
func TestHostileEndlessLinks(t *testing.T) {
	if _, err := New(Config{Seed: 8, Hosts: 10, EndlessLinks: 3}); err == nil {
		t.Error("EndlessLinks without Hostile accepted")
	}
	w := startWeb(t, Config{Seed: 8, Hosts: 10, Hostile: true, EndlessLinks: 3})
	c := rawClient(t, w, 60*time.Second)
	h := hostileNamed(t, w, HostileEndless)
	if h.Pages != 4 {
		t.Errorf("%d pages, want 4", h.Pages)
	}
	origin := strings.TrimSuffix(h.Entries[0], "/")
	for _, path := range []string{"/", "/sin-fin/3", "/sin-fin/4", "/sin-fin/03"} {
		resp, err := c.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4096)
		n, _ := io.ReadFull(resp.Body, head)
		resp.Body.Close()
		want := 200
		if path == "/sin-fin/4" || path == "/sin-fin/03" {
			want = 404
		}
		if resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", path, resp.StatusCode, want)
			continue
		}
		if want == 200 && !strings.Contains(string(head[:n]), `<a href="/sin-fin/1">`) {
			t.Errorf("%s: no link in the head of the body: %q", path, head[:n])
		}
	}
}
