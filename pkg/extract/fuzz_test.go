package extract

import (
	"bytes"
	htmlstd "html"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"

	"github.com/wirecrawl/wire/pkg/extract/internal/htmltok"
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
		first := bytes.Clone(body)
		e.Extract(first, "text/html", page1)
		for i := range first { // the caller reuses its buffer
			first[i] = '/'
		}
		got := e.Extract(body, "text/html", page2)
		want := New(Options{}).Extract(body, "text/html", page2)
		if !reflect.DeepEqual(got.Links, want.Links) || !reflect.DeepEqual(got.Dropped, want.Dropped) {
			t.Fatalf("after %s, %s: got %v %v, want %v %v", page1, page2, got.Links, got.Dropped, want.Links, want.Dropped)
		}
	})
}

// FuzzAttrs: reading a tag's attributes from the raw keys and values
// htmltok found gives what x/net/html's TagAttr gives on the same page,
// whenever it does not give up.
func FuzzAttrs(f *testing.F) {
	f.Add(`<a href="x" HREF=y rel='nofollow' =x hidden>`)
	f.Add(`<a href = x / title="a&amp;b" alt=c\r>`)
	f.Add(`<img alt="x" src=y/>`)
	f.Add(`<meta name=robots content="noindex"<a>`)
	f.Add(`<input type=submit value=Go hidden=until-found>`)
	f.Add(`<a href="?a=1&amp;b=2&#38;c=&#x33;" title='&lt;&gt;&quot;&apos;&nbsp;' hidden="&#x75;ntil-found">`)
	f.Add(`<a href="?a=1&amp;b=2&copy=3" alt="&notit;">`)
	f.Fuzz(func(t *testing.T, doc string) {
		up := html.NewTokenizer(strings.NewReader(doc))
		z := htmltok.New([]byte(doc))
		var scratch []byte
		for {
			tt := z.Next()
			if up.Next() != tt {
				t.Fatalf("%q: the tokenizers part ways", doc)
			}
			if tt == htmltok.ErrorToken {
				return
			}
			if tt != htmltok.StartTagToken && tt != htmltok.SelfClosingTagToken {
				continue
			}
			all := uint32(1<<14 - 1)
			fast, ok := spanAttrs(z, all, &scratch)
			slow := tokenAttrs(z.Raw(), all)
			want := tagAttrs(up, all)
			if slow != want {
				t.Fatalf("%q: from the raw tag %+v, in the page %+v", z.Raw(), slow, want)
			}
			if ok && fast != want {
				t.Fatalf("%q:\n spans %+v\n token %+v", z.Raw(), fast, want)
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

// FuzzWordRun: the eight-byte steps of wordRun never go past the run
// that write's byte loop would copy, and the byte loop, resumed where
// wordRun stops, ends where it would have ended alone; also on texts
// that end before their buffer does.
func FuzzWordRun(f *testing.F) {
	f.Add([]byte("the quick brown fox jumps over the lazy dog, again and again"))
	f.Add([]byte("aaaaaaa  bbbbbbbbbbbbbbbbbbbbbbbbbb\tc!!!!!!!!!!!!!!!!! !!!!!!!!!!!!!!\x7f"))
	f.Add([]byte("x       ! ! ! ! ! ! ! ! ! ! ! ! ! !  !"))
	f.Add([]byte("Home Edit   \n"))
	f.Add([]byte("ab cd\x00 ef gh ij kl"))
	f.Add([]byte("abcdefg abcdefg\tabcdefgh  abcdefg! !"))
	f.Fuzz(func(t *testing.T, s []byte) {
		byteLoop := func(s []byte, j int) int {
			for j < len(s) {
				if d := s[j]; d > ' ' && d < 0x7f {
					j++
				} else if d == ' ' && j+1 < len(s) && s[j+1] > ' ' && s[j+1] < 0x7f {
					j += 2
				} else {
					break
				}
			}
			return j
		}
		check := func(s []byte) {
			for i := 1; i <= len(s); i++ {
				if c := s[i-1]; c <= ' ' || c >= 0x7f {
					continue
				}
				want := byteLoop(s, i)
				k := wordRun(s, i)
				if k < i || k > want || byteLoop(s, k) != want {
					t.Fatalf("%q from %d: wordRun %d, byte loop %d (from there %d)", s, i, k, want, byteLoop(s, k))
				}
			}
		}
		check(s)
		// The last bytes of a text that ends before its buffer does are
		// read with the bytes after it, which must not count.
		for _, n := range []int{len(s) - 1, len(s) - 3, len(s) - 8, len(s) / 2} {
			if n > 0 && n < len(s) {
				check(s[:n])
			}
		}
	})
}

// FuzzDecodeCharmap: decodeCharmap writes what the decoder charset.Lookup
// gives writes, for every single-byte encoding of the WHATWG table.
func FuzzDecodeCharmap(f *testing.F) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	f.Add(all)
	f.Add([]byte("plain ASCII text, long enough for eight-byte steps \x80\x9f\xff tail"))
	labels := []string{"windows-1250", "windows-1251", "windows-1252", "windows-1253", "windows-1254", "windows-1255",
		"windows-1256", "windows-1257", "windows-1258", "iso-8859-2", "iso-8859-5", "iso-8859-7", "iso-8859-8",
		"iso-8859-15", "koi8-r", "koi8-u", "ibm866", "macintosh", "x-mac-cyrillic", "windows-874"}
	var maps []*charmap.Charmap
	var decoders []encoding.Encoding
	for _, l := range labels {
		enc, name := charset.Lookup(l)
		cm := singleByte(name)
		if cm == nil {
			f.Fatalf("%s (%s): not a single-byte encoding", l, name)
		}
		maps, decoders = append(maps, cm), append(decoders, enc)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for i, cm := range maps {
			want, _, err := transform.Bytes(decoders[i].NewDecoder(), body)
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeCharmap(cm, body, nil); !bytes.Equal(got, want) {
				t.Fatalf("%s %q: %q, x/text %q", labels[i], body, got, want)
			}
		}
	})
}

// refWrite is textBuf.write as it was before it found its runs eight
// bytes at a time.
func refWrite(t *textBuf, s []byte, pre bool) {
	for i := 0; i < len(s) && !t.full; {
		c := s[i]
		if c < utf8.RuneSelf {
			if isSpaceByte(c) {
				if pre && c == '\n' {
					t.brk = true
				} else {
					t.space = true
				}
				i++
				continue
			}
			j := i + 1
			for j < len(s) {
				if d := s[j]; d > ' ' && d < 0x7f {
					j++
				} else if d == ' ' && j+1 < len(s) && s[j+1] > ' ' && s[j+1] < 0x7f {
					j += 2
				} else {
					break
				}
			}
			t.put(s[i:j])
			i = j
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if unicode.IsSpace(r) || (r >= 0x80 && r < 0xA0) {
			t.space = true
		} else {
			t.put(s[i : i+n])
		}
		i += n
	}
}

// FuzzTextWrite: textBuf.write gives what it gave before it found its
// runs eight bytes at a time, with and without a limit, in and out of
// pre, in two pieces.
func FuzzTextWrite(f *testing.F) {
	f.Add([]byte("Hello,  world!\nЗдравствуй,\u00a0мир — 日本語\u3000テキスト\xff\xc2\x85 end"), uint16(0), uint8(0))
	f.Add([]byte("a b c d e f g h i j k l m n o p q r s t u v w x y z"), uint16(9), uint8(5))
	// A separator owed before a character that does not fit is dropped:
	// the text stays within its limit (it once ended with the space, one
	// byte past it) and does not end with white space.
	f.Add([]byte("a\u00e9 b"), uint16(3), uint8(0))
	f.Add([]byte("abc def"), uint16(3), uint8(0))
	f.Add([]byte("abc\n\ndef"), uint16(4), uint8(0))
	// A run of words cut just after one of its spaces.
	f.Add([]byte("abc def"), uint16(4), uint8(0))
	f.Add([]byte("x abc def"), uint16(6), uint8(1))
	f.Fuzz(func(t *testing.T, s []byte, limit uint16, split uint8) {
		for _, pre := range []bool{false, true} {
			got, want := textBuf{limit: int(limit % 64)}, textBuf{limit: int(limit % 64)}
			k := min(int(split), len(s))
			got.write(s[:k], pre)
			got.write(s[k:], pre)
			refWrite(&want, s[:k], pre)
			refWrite(&want, s[k:], pre)
			if string(got.b) != string(want.b) || got.space != want.space || got.brk != want.brk || got.full != want.full {
				t.Fatalf("%q (limit %d, pre %v): %q %+v, one by one %q %+v", s, want.limit, pre, got.b, got, want.b, want)
			}
			if got.limit > 0 && len(got.b) > got.limit {
				t.Fatalf("%q (limit %d, pre %v): %q is %d bytes", s, got.limit, pre, got.b, len(got.b))
			}
			if n := len(got.b); n > 0 && (isSpaceByte(got.b[n-1]) || isSpaceByte(got.b[0])) {
				t.Fatalf("%q (limit %d, pre %v): %q has white space at an end", s, got.limit, pre, got.b)
			}
			if !utf8.Valid(s[:k]) || !utf8.Valid(s[k:]) {
				continue // valid UTF-8 in each write is what the text promise needs (a split may cut a character)
			}
			if !utf8.Valid(got.b) {
				t.Fatalf("%q (limit %d, pre %v): %q is not UTF-8", s, got.limit, pre, got.b)
			}
		}
	})
}

// FuzzCommonTag: commonTag gives either nothing or the atom atom.Lookup
// gives for the name lower-cased (ASCII), which is what tagName looks up
// otherwise.
func FuzzCommonTag(f *testing.F) {
	for _, name := range []string{"a", "A", "div", "DiV", "h1", "H6", "h7", "span", "strong", "section", "details",
		"a\x00", "\x00a", "di\x00", "svg", "tablex", "sectionss", "h\x11", "\xc4iv"} {
		f.Add([]byte(name))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// The name alone, and followed in its buffer by bytes that
		// must not count (commonTag reads eight at once when it can).
		a := commonTag(raw[:len(raw):len(raw)])
		for _, after := range []string{"", "\x00\x00\x00\x00\x00\x00\x00\x00", "ABCDEFGH", "v iv>"} {
			in := append(append([]byte(nil), raw...), after...)
			if b := commonTag(in[:len(raw)]); b != a {
				t.Fatalf("%q followed by %q: %v, alone %v", raw, after, b, a)
			}
		}
		if a == 0 {
			return
		}
		lower := bytes.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, raw)
		if want := atom.Lookup(lower); a != want || !bytes.Equal(lower, []byte(a.String())) {
			t.Fatalf("%q: %v, atom.Lookup %v", raw, a, want)
		}
	})
}

// TestCommonTag: the names commonTag knows, in any case, give their atoms.
func TestCommonTag(t *testing.T) {
	names := strings.Fields("a b i p br dd dl dt em h1 h2 h3 h4 h5 h6 hr li ol td th tr ul div img nav pre sup wbr " +
		"code link meta span font form head body html main small table tbody thead title input label style " +
		"strong script button header footer aside section article summary details")
	for _, n := range names {
		for _, raw := range []string{n, strings.ToUpper(n)} {
			if a := commonTag([]byte(raw)); a == 0 || a != atom.Lookup([]byte(n)) {
				t.Errorf("%q: %v, want %v", raw, a, atom.Lookup([]byte(n)))
			}
			// In a document: eight bytes are read at once.
			doc := []byte("<" + raw + " class=x>")
			if a := commonTag(doc[1 : 1+len(raw)]); a == 0 || a != atom.Lookup([]byte(n)) {
				t.Errorf("%q in a document: %v, want %v", raw, a, atom.Lookup([]byte(n)))
			}
		}
	}
}

// FuzzHrefScans: hasSpaceOrControl, hasEscapeOrControl and hasScheme,
// which look at an href a word at a time and from its first colon, say
// what byte loops say.
func FuzzHrefScans(f *testing.F) {
	for _, s := range []string{"", "a", "http://www.example.cl/", "/path", "lang.html", "a:b", "1a:b", ":x", "mailto:x@y",
		"foo bar", "abcdefgh\x20", "abcdefghijklmnop\x01", "\x80\x81\x82\x83\x84\x85\x86\x87\x88 ", "a+b-c.d:x", "a_b:c", "ab#c:d",
		"section-1", "cite_note-12", "abcdefghi%", "abcdefgh\x7f", "\x7f", "abcdefghijklmnopq\x1f", "\xa5\xa5\xa5\xa5\xa5\xa5\xa5\xa5\xa5", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		space, escape := false, false
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' {
				space = true
			}
			if c := s[i]; c == '%' || c < 0x20 || c == 0x7f {
				escape = true
			}
		}
		if got := hasSpaceOrControl(s); got != space {
			t.Errorf("%q: hasSpaceOrControl %v, byte loop %v", s, got, space)
		}
		if got := hasEscapeOrControl(s); got != escape {
			t.Errorf("%q: hasEscapeOrControl %v, byte loop %v", s, got, escape)
		}
		scheme := false
	loop:
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
				if i == 0 {
					break loop
				}
			case c == ':':
				scheme = i > 0
				break loop
			default:
				break loop
			}
		}
		if got := hasScheme(s); got != scheme {
			t.Errorf("%q: hasScheme %v, byte loop %v", s, got, scheme)
		}
	})
}
