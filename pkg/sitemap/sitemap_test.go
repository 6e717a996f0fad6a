package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// dump writes a parse's entries and result in a stable text form.
func dump(res Result, entries []Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind=%s entries=%d invalid=%d outOfScope=%d dropped=%d bytes=%d gzip=%v\n",
		res.Kind, res.Entries, res.Invalid, res.OutOfScope, res.Dropped, res.Bytes, res.Gzip)
	fmt.Fprintf(&b, "reason=%q\n", res.Reason)
	for _, e := range entries {
		lm := "-"
		if !e.LastMod.IsZero() {
			lm = e.LastMod.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(&b, "%s sitemap=%v lastmod=%s changefreq=%q priority=%g cross=%v\n", e.Loc, e.Sitemap, lm, e.ChangeFreq, e.Priority, e.Cross)
	}
	return b.String()
}

func parseAll(t testing.TB, data []byte, base string, lim Limits) (Result, []Entry) {
	t.Helper()
	o := Options{Limits: lim, CrossSubmit: func(site string) bool { return site == "http://other.example.cl" }}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		o.Base = u
	}
	var got []Entry
	res, err := Parse(bytes.NewReader(data), o, func(e Entry) error {
		got = append(got, e)
		return nil
	})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return res, got
}

// TestGolden parses every file of testdata/ as if it were
// http://www.example.cl/sitemap.xml (other.example.cl cross-submits it) and
// compares with FILE.golden; the gzip form of each must give the same.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*")
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") || strings.HasSuffix(f, ".md") {
			continue
		}
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, got := parseAll(t, data, "http://www.example.cl/sitemap.xml", Limits{})
			out := dump(res, got)
			golden := f + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if out != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", out, want)
			}
			// The same file gzip-compressed gives the same entries.
			zres, zgot := parseAll(t, gz(t, data), "http://www.example.cl/sitemap.xml", Limits{})
			if !zres.Gzip {
				t.Error("gzip not detected")
			}
			zres.Gzip = false
			if dump(zres, zgot) != out {
				t.Errorf("gzip form differs:\n%s", dump(zres, zgot))
			}
		})
	}
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestScope: the protocol's "Sitemap file location" rule.
func TestScope(t *testing.T) {
	cases := []struct {
		base, loc string
		index     bool
		want      bool
	}{
		{"http://a.cl/catalog/sitemap.xml", "http://a.cl/catalog/x", false, true},
		{"http://a.cl/catalog/sitemap.xml", "http://a.cl/catalog/", false, true},
		{"http://a.cl/catalog/sitemap.xml", "http://a.cl/images/x", false, false}, // sitemaps.org: not under /catalog/
		{"http://a.cl/catalog/sitemap.xml", "https://a.cl/catalog/x", false, false},
		{"http://a.cl/catalog/sitemap.xml", "http://www.a.cl/catalog/x", false, false},
		{"http://a.cl/sitemap.xml", "http://A.CL/x", false, true},
		{"http://a.cl:8080/sitemap.xml", "http://a.cl/x", false, false},
		{"http://a.cl/catalog/sitemap.xml", "http://a.cl/other/s.xml", true, true}, // an index lists sitemaps of its host
		{"http://a.cl/sitemap.xml", "http://b.cl/s.xml", true, false},
		{"http://a.cl/sitemap.xml", "http://x.cl/cross", false, true}, // x.cl's robots.txt names it
	}
	for _, c := range cases {
		tag := "urlset"
		if c.index {
			tag = "sitemapindex"
		}
		inner := "url"
		if c.index {
			inner = "sitemap"
		}
		doc := fmt.Sprintf("<%s><%s><loc>%s</loc></%s></%s>", tag, inner, c.loc, inner, tag)
		u, _ := url.Parse(c.base)
		res, err := Parse(strings.NewReader(doc), Options{Base: u, CrossSubmit: func(s string) bool { return s == "http://x.cl" }}, func(Entry) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Entries == 1; got != c.want {
			t.Errorf("%s lists %s: in scope %v, want %v (%+v)", c.base, c.loc, got, c.want, res)
		}
	}
}

// TestParseTime: W3C datetime in its six forms (https://www.w3.org/TR/NOTE-datetime),
// and the forms real sitemaps and feeds use.
func TestParseTime(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1997", "1997-01-01T00:00:00Z"},
		{"1997-07", "1997-07-01T00:00:00Z"},
		{"1997-07-16", "1997-07-16T00:00:00Z"},
		{"1997-07-16T19:20+01:00", "1997-07-16T18:20:00Z"},
		{"1997-07-16T19:20:30+01:00", "1997-07-16T18:20:30Z"},
		{"1997-07-16T19:20:30.45+01:00", "1997-07-16T18:20:30.45Z"},
		{"1997-07-16T19:20:30Z", "1997-07-16T19:20:30Z"},
		{"1997-07-16T19:20:30", "1997-07-16T19:20:30Z"},
		{"1997-07-16 19:20:30", "1997-07-16T19:20:30Z"},
		{"1997-07-16T19:20:30+0100", "1997-07-16T18:20:30Z"},
		{"Sat, 07 Sep 2002 00:00:01 GMT", "2002-09-07T00:00:01Z"},
		{"Tue, 10 Jun 2003 04:00:00 +0200", "2003-06-10T02:00:00Z"},
		{"yesterday", ""},
		{"1997-13-01", ""},
		{"", ""},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("ParseTime(%q) = %v, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got.Format(time.RFC3339Nano) != c.want {
			t.Errorf("ParseTime(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// TestCallbackError: an error of the callback stops the parse and is returned.
func TestCallbackError(t *testing.T) {
	stop := errors.New("enough")
	_, err := Parse(strings.NewReader("http://a.cl/1\nhttp://a.cl/2\n"), Options{}, func(Entry) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want %v", err, stop)
	}
}

// TestReaderError: a failing reader is an error of Parse, not a reason.
func TestReaderError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader("<urlset><url><loc>http://a.cl/</loc></url>"), errReader{boom})
	_, err := Parse(r, Options{}, func(Entry) error { return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestLimits: a file's entry and byte limits keep what came before.
func TestLimits(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "http://a.cl/%d\n", i)
	}
	res, got := parseAll(t, []byte(b.String()), "", Limits{MaxURLs: 4})
	if len(got) != 4 || res.Dropped != 1 || !strings.Contains(res.Reason, "more entries") {
		t.Errorf("MaxURLs 4: %s", dump(res, got))
	}
	res, got = parseAll(t, []byte(b.String()), "", Limits{MaxBytes: 40})
	if len(got) != 3 || !strings.Contains(res.Reason, "larger than") {
		t.Errorf("MaxBytes 40: %s", dump(res, got))
	}
	// Exactly at the limit is not over it.
	res, got = parseAll(t, []byte(b.String()), "", Limits{MaxBytes: int64(b.Len())})
	if len(got) != 10 || res.Reason != "" {
		t.Errorf("MaxBytes = size: %s", dump(res, got))
	}
}
