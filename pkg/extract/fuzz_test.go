package extract

import (
	"bytes"
	htmlstd "html"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// FuzzExtract checks that no input panics Extract and that every string
// it returns is valid UTF-8. It is seeded with the testdata pages (cut to
// their first 4 KB, to keep the fuzzer quick) and the charset fixtures.
func FuzzExtract(f *testing.F) {
	for _, dir := range []string{"pages", "charset"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.html"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) > 4096 {
				b = b[:4096]
			}
			f.Add(b, "text/html")
		}
	}
	f.Add([]byte(`<base href="//x"><a href="../a#b">x<img alt="y"></a><meta http-equiv=refresh content="0;url=z">`), "text/html; charset=shift_jis")
	f.Add([]byte("\xFE\xFF\x00<\x00a"), "")
	e := New(Options{Agent: "wirebot"})
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		r := e.Extract(body, contentType, "http://www.example.cl/a/b.html")
		checkUTF8(t, r)
		for _, l := range r.Links {
			if l.URL == "" {
				t.Fatalf("empty link URL")
			}
		}
	})
}

// FuzzDecode checks the charset path alone: whatever the bytes and the
// Content-Type, Decode returns valid UTF-8 and names a known encoding and
// where it came from; a body that is valid UTF-8 with nothing declaring
// otherwise comes back unchanged. Seeded with the charset fixtures.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "charset", "*.html"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "text/html")
		f.Add(b, "")
	}
	for _, c := range charsets {
		f.Add([]byte("<meta charset="+c.charset+">\xff\xfe\x81"), c.contentType)
	}
	f.Add([]byte("caf\xc3\xa9 \xe9t\xe9 \xc3\xa9"), "")
	f.Add([]byte("\xEF\xBB\xBF\xff"), "text/html; charset=bogus")
	sources := map[string]bool{SourceBOM: true, SourceHeader: true, SourceMeta: true, SourceUTF8: true, SourceMixed: true, SourceDetected: true, SourceDefault: true}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		d := Decode(body, contentType)
		if !utf8.Valid(d.Text) {
			t.Fatalf("invalid UTF-8 out of %s (%s)", d.Charset, d.Source)
		}
		if !sources[d.Source] {
			t.Fatalf("unknown source %q", d.Source)
		}
		if _, ok := LookupCharset(d.Charset); !ok && d.Source != SourceBOM && d.Source != SourceHeader && d.Source != SourceMeta {
			t.Fatalf("unusable charset %q from %s", d.Charset, d.Source)
		}
		if d.Source == SourceUTF8 && utf8.Valid(body) && !bytes.Equal(d.Text, body) {
			t.Fatalf("valid UTF-8 changed")
		}
	})
}

// FuzzResolutionCache: an Extractor that read another page first (and
// remembers its resolutions) resolves a page's links as a fresh one.
func FuzzResolutionCache(f *testing.F) {
	f.Add("http://www.a.cl/dir/page.html", "http://www.a.cl/other/page.html", "../x")
	f.Add("http://www.a.cl/dir/?q", "http://www.a.cl/dir/", "?y")
	f.Add("https://a.cl/", "http://a.cl/", "//b.cl/")
	f.Add("http://a.cl/a/b", "http://a.cl/a/c", "c:d")
	f.Fuzz(func(t *testing.T, page1, page2, href string) {
		body := []byte(`<a href="` + htmlstd.EscapeString(href) + `">x</a><a href="/` + htmlstd.EscapeString(href) + `">y</a>`)
		e := New(Options{})
		e.Extract(body, "text/html", page1)
		got := e.Extract(body, "text/html", page2)
		want := New(Options{}).Extract(body, "text/html", page2)
		if !reflect.DeepEqual(got.Links, want.Links) || !reflect.DeepEqual(got.Dropped, want.Dropped) {
			t.Fatalf("after %s, %s: got %v %v, want %v %v", page1, page2, got.Links, got.Dropped, want.Links, want.Dropped)
		}
	})
}

// FuzzRawAttrs: reading a tag's attributes from its raw bytes gives what
// the tokenizer's TagAttr gives, whenever it does not give up.
func FuzzRawAttrs(f *testing.F) {
	f.Add(`<a href="x" HREF=y rel='nofollow' =x hidden>`)
	f.Add(`<a href = x / title="a&amp;b" alt=c\r>`)
	f.Add(`<img alt="x" src=y/>`)
	f.Add(`<meta name=robots content="noindex"<a>`)
	f.Add(`<input type=submit value=Go hidden=until-found>`)
	f.Fuzz(func(t *testing.T, doc string) {
		z := html.NewTokenizer(strings.NewReader(doc))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				return
			}
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			all := uint32(1<<14 - 1)
			fast, ok := rawAttrs(z.Raw(), all)
			slow := tokenAttrs(z, all)
			if ok && fast != slow {
				t.Fatalf("%q:\n raw   %+v\n token %+v", z.Raw(), fast, slow)
			}
		}
	})
}

// FuzzParseRobotsHeader checks ParseRobotsHeader on X-Robots-Tag values
// (one per line of header) for a crawler named agent: the values count
// alone and in any order; a value without a colon reads as <meta
// name=robots> content; a flag is only set by a value naming it (or
// "none"); and, when agent is a plain token, "AGENT: v" reads as v, in
// any ASCII case, while "AGENTx: v" is another crawler's and reads as
// nothing.
func FuzzParseRobotsHeader(f *testing.F) {
	for _, c := range [][2]string{
		{"noindex", "wirebot"},
		{"noindex, nofollow", "wirebot"},
		{"none", "wirebot"},
		{"otherbot: noindex", "wirebot"},
		{"WireBot: nofollow", "wirebot"},
		{"unavailable_after: 25 Jun 2010 15:00:00 PST", "wirebot"},
		{"noarchive\nnofollow", "wirebot"},
		{"", "wirebot"},
		{"googlebot: noindex, nofollow\nwirebot: none\nnoarchive", "wirebot"},
		{"max-snippet: 20, NOINDEX", "wirebot"},
		{"max-image-preview:large,nofollow", "max-image-preview"},
		{" wirebot : NOINDEX\t", "wirebot"},
		{":noindex\nnoindex:\nno index", "wirebot"},
		{"wirebot: otherbot: noindex", "otherbot"},
		{"all\nindex, follow", "wirebot"},
		{"NOİNDEX,\u212aNOFOLLOW", "wire bot"},
		{"wirebot,otherbot: noindex", "wirebot,otherbot"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, header, agent string) {
		values := strings.Split(header, "\n")
		got := ParseRobotsHeader(values, agent)
		var each Robots
		reversed := make([]string, len(values))
		for i, v := range values {
			one := ParseRobotsHeader([]string{v}, agent)
			each = each.Merge(one)
			reversed[len(values)-1-i] = v
			if !strings.Contains(v, ":") && one != ParseRobots(v) {
				t.Fatalf("%q: %+v, as meta content %+v", v, one, ParseRobots(v))
			}
		}
		if got != each {
			t.Fatalf("%q: %+v, value by value %+v", values, got, each)
		}
		if r := ParseRobotsHeader(reversed, agent); r != got {
			t.Fatalf("%q: %+v, reversed %+v", values, got, r)
		}
		lower := strings.ToLower(header)
		none := strings.Contains(lower, "none")
		if got.NoIndex && !none && !strings.Contains(lower, "noindex") || got.NoFollow && !none && !strings.Contains(lower, "nofollow") {
			t.Fatalf("%q: %+v from no such directive", values, got)
		}
		if agent == "" || agent != strings.TrimSpace(agent) || strings.ContainsAny(agent, ": ,") ||
			isValuedDirective(agent) || isValuedDirective(agent+"x") {
			return
		}
		v := values[0]
		names := []string{agent}
		if isASCII(agent) {
			names = append(names, strings.ToUpper(agent), strings.ToLower(agent))
		}
		for _, name := range names {
			if r := ParseRobotsHeader([]string{name + ": " + v}, agent); r != ParseRobots(v) {
				t.Fatalf("%q for %q: %+v, want %+v", name+": "+v, agent, r, ParseRobots(v))
			}
		}
		if r := ParseRobotsHeader([]string{agent + "x:" + v}, agent); r != (Robots{}) {
			t.Fatalf("%q for %q: %+v, want nothing", agent+"x:"+v, agent, r)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
