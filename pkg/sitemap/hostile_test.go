package sitemap

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// genReader streams n copies of a record made by rec, between head and
// tail, without holding them: a file of any size at the cost of one record.
type genReader struct {
	head, tail string
	rec        func(i int) string
	n, i       int
	buf        []byte
	read       int64 // bytes handed out
	tailDone   bool
}

func (g *genReader) Read(b []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.head != "":
			g.buf, g.head = []byte(g.head), ""
		case g.i < g.n:
			g.buf = append(g.buf[:0], g.rec(g.i)...)
			g.i++
		case !g.tailDone:
			g.buf, g.tailDone = []byte(g.tail), true
		default:
			return 0, io.EOF
		}
	}
	k := copy(b, g.buf)
	g.buf = g.buf[k:]
	g.read += int64(k)
	return k, nil
}

// bounded runs f and fails when it takes longer than d or its heap grows
// by more than maxHeap bytes.
func bounded(t *testing.T, d time.Duration, maxHeap uint64, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if took > d {
		t.Errorf("took %v, bound %v", took, d)
	}
	if after.HeapInuse > before.HeapInuse && after.HeapInuse-before.HeapInuse > maxHeap {
		t.Errorf("heap grew by %d bytes, bound %d", after.HeapInuse-before.HeapInuse, maxHeap)
	}
	t.Logf("took %v", took)
}

// TestTenMillionEntries: a sitemap of 10 million entries, made on the fly,
// is read up to the protocol's 50,000 and no further.
func TestTenMillionEntries(t *testing.T) {
	g := &genReader{head: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`, tail: "</urlset>", n: 10_000_000,
		rec: func(i int) string { return fmt.Sprintf("<url><loc>http://a.cl/p%d</loc></url>\n", i) }}
	var res Result
	n := 0
	bounded(t, 10*time.Second, 32<<20, func() {
		var err error
		res, err = Parse(g, Options{}, func(Entry) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
	})
	if n != MaxURLs || res.Dropped == 0 || !strings.Contains(res.Reason, "more entries") {
		t.Errorf("got %d entries, %+v", n, res)
	}
	if g.read > 4<<20 {
		t.Errorf("read %d bytes of the stream to take 50,000 entries", g.read)
	}
}

// TestOneGigabyte: a 1 GB stream (of entries that are all invalid, so the
// entry limit never stops it) is read up to 50 MB and no further.
func TestOneGigabyte(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 50 MB")
	}
	const rec = "http://a.cl/" // + padding: too long to be a URL
	line := rec + strings.Repeat("x", 4000) + "\n"
	g := &genReader{n: (1 << 30) / len(line), rec: func(int) string { return line }}
	var res Result
	bounded(t, 10*time.Second, 32<<20, func() {
		var err error
		res, err = Parse(g, Options{}, func(Entry) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
	})
	if !strings.Contains(res.Reason, "larger than") || res.Bytes != MaxBytes {
		t.Errorf("%+v", res)
	}
	if g.read > MaxBytes+1<<20 {
		t.Errorf("read %d bytes", g.read)
	}
}

// TestGzipBomb: 1 MB of gzip that inflates to 1 GB (a thousand members of
// a megabyte of XML comments each) stops at 50 MB uncompressed.
func TestGzipBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 50 MB")
	}
	var member bytes.Buffer
	w, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	w.Write(bytes.Repeat([]byte("<!---->"), (1<<20)/7)) //nolint:errcheck // bytes.Buffer
	w.Close()                                           //nolint:errcheck // bytes.Buffer
	head := gz(t, []byte(`<urlset><url><loc>http://a.cl/first</loc></url>`))
	var bomb bytes.Buffer
	bomb.Write(head)
	for range 1000 {
		bomb.Write(member.Bytes())
	}
	t.Logf("bomb: %d bytes compressed", bomb.Len())
	var res Result
	n := 0
	bounded(t, 15*time.Second, 32<<20, func() {
		var err error
		res, err = Parse(bytes.NewReader(bomb.Bytes()), Options{}, func(Entry) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
	})
	if !res.Gzip || n != 1 || !strings.Contains(res.Reason, "larger than") || res.Bytes != MaxBytes {
		t.Errorf("n=%d %+v", n, res)
	}
}

// TestBillionLaughs: entities defined in a DTD are never expanded; the
// first use is an error, and what came before is kept.
func TestBillionLaughs(t *testing.T) {
	var dtd strings.Builder
	dtd.WriteString(`<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a0 "lol">`)
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&dtd, `<!ENTITY a%d "%s">`, i, strings.Repeat(fmt.Sprintf("&a%d;", i-1), 10))
	}
	dtd.WriteString(`]><urlset><url><loc>http://a.cl/ok</loc></url><url><loc>http://a.cl/&a29;</loc></url></urlset>`)
	var res Result
	n := 0
	bounded(t, time.Second, 1<<20, func() {
		res, _ = Parse(strings.NewReader(dtd.String()), Options{}, func(Entry) error { n++; return nil })
	})
	if n != 1 || !strings.Contains(res.Reason, "entity") {
		t.Errorf("n=%d %+v", n, res)
	}
}

// TestIndexLoops: an index that lists itself, two that list each other,
// and a chain of indexes deeper than MaxDepth all end.
func TestIndexLoops(t *testing.T) {
	files := map[string]string{}
	index := func(locs ...string) string {
		var b strings.Builder
		b.WriteString("<sitemapindex>")
		for _, l := range locs {
			fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>", l)
		}
		b.WriteString("</sitemapindex>")
		return b.String()
	}
	files["http://a.cl/self.xml"] = index("http://a.cl/self.xml", "http://a.cl/b.xml")
	files["http://a.cl/b.xml"] = index("http://a.cl/c.xml", "http://a.cl/self.xml")
	files["http://a.cl/c.xml"] = index("http://a.cl/b.xml", "http://a.cl/d0.xml")
	for i := range 10 {
		files[fmt.Sprintf("http://a.cl/d%d.xml", i)] = index(fmt.Sprintf("http://a.cl/d%d.xml", i+1))
	}
	open := func(loc string) (io.ReadCloser, error) {
		s, ok := files[loc]
		if !ok {
			return nil, fmt.Errorf("404")
		}
		return io.NopCloser(strings.NewReader(s)), nil
	}
	st, err := Walk("http://a.cl/self.xml", open, WalkOptions{}, func(string, Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	// self (0) → b (1) → c (2) → d0 (3), whose d1 is too deep.
	if st.Files != 4 || st.Repeated != 3 || st.TooDeep != 1 {
		t.Errorf("%+v", st)
	}
	// A fan-out index: the file count caps it.
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf("http://a.cl/m%d.xml", i))
		files[many[i]] = index("http://a.cl/fan.xml")
	}
	files["http://a.cl/fan.xml"] = index(many...)
	st, _ = Walk("http://a.cl/fan.xml", open, WalkOptions{MaxFiles: 10}, func(string, Entry) error { return nil })
	if st.Files != 10 || st.OverFiles != 91 {
		t.Errorf("fan-out: %+v", st)
	}
}
