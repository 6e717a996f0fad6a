package htmltok

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// tricky are inputs that exercise the tokenizer's less common states.
var tricky = []string{
	"",
	"plain",
	"a<b>c</b>d",
	"<a href=x HREF=y Href='z' =w hidden>t</a>",
	`<p a=/>x<br/><img src="a"/><div a="/">`,
	"<script>a<!--b<script>c</script>d--></script>e",
	"<script><!--<script></script>--></script>",
	"<SCRIPT>x</ScRiPt >y",
	"<style>a</style",
	"<title>a&amp;b<i>c</i></title>",
	"<textarea>a\r\nb\rc&lt;</textarea>",
	"<plaintext>a</plaintext><b>",
	"<xmp><b>x</b></xmp>",
	"<iframe><a href=x></iframe><noframes><a href=y>z</a></noframes>",
	"<!-- a -- b --!><!--> <!---> <!DOCTYPE html><?xml x?><!x>",
	"<!--a\x00b-->\x00<title>\x00</title>",
	"</><//x></ x></3>",
	"a\r\nb\rc&#x41;&amp&ampx;&notit;&#0;",
	"<a x=\"&amp;&notit=\r\n\" y='&lt' z=&gt\x00>",
	"<A\x00B c\x00=d>",
	"<a " + strings.Repeat("x ", 40) + "X Y=1 " + strings.Repeat("k", 17) + "=2>",
	"<a b c d e f g h i j k l m n o p q r s t u v w x y z A B C>",
	"<![CDATA[x]]>",
	"<a href='x",
	"<a href=x",
	"<",
	"<a",
	"&",
	"<script>",
	"<title>x",
	"<p\n\tclass\f=\"a\"\n>",
}

// inputs returns the tricky strings and the extractor's fixture pages.
func inputs(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, s := range tricky {
		out = append(out, []byte(s))
	}
	for _, dir := range []string{"pages", "charset"} {
		files, err := filepath.Glob(filepath.Join("..", "..", "testdata", dir, "*.html"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// decodeAttr decodes a raw attribute value as upstream's TagAttr does, by
// tokenizing a tag that holds it with upstream's tokenizer.
func decodeAttr(t testing.TB, raw []byte) []byte {
	t.Helper()
	var tag string
	switch {
	case !bytes.ContainsRune(raw, '"'):
		tag = `<a k="` + string(raw) + `">`
	case !bytes.ContainsRune(raw, '\''):
		tag = `<a k='` + string(raw) + `'>`
	default: // both quotes: it was unquoted, so it has no space and no '>'
		tag = `<a k=` + string(raw) + `>`
	}
	z := html.NewTokenizer(strings.NewReader(tag))
	z.Next()
	_, v, _ := z.TagAttr()
	return v
}

// describe returns what upstream's tokenizer gives for the current token.
func describeUpstream(z *html.Tokenizer, tt html.TokenType) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v raw=%q", tt, z.Raw())
	switch tt {
	case html.TextToken, html.CommentToken, html.DoctypeToken:
		fmt.Fprintf(&b, " text=%q", z.Text())
	case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
		name, more := z.TagName()
		fmt.Fprintf(&b, " name=%q", name)
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			fmt.Fprintf(&b, " %q=%q", k, v)
		}
	}
	return b.String()
}

// describe is describeUpstream for this package's tokenizer.
func describe(t testing.TB, z *Tokenizer, tt TokenType) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v raw=%q", tt, z.Raw())
	switch tt {
	case TextToken, CommentToken, DoctypeToken:
		fmt.Fprintf(&b, " text=%q", z.Text())
	case StartTagToken, SelfClosingTagToken, EndTagToken:
		n := z.NumAttr()
		raw := bytesLowerASCII(bytes.ReplaceAll(z.TagNameRaw(), []byte{0}, []byte("\ufffd")))
		name, _ := z.TagName()
		if !bytes.Equal(raw, name) {
			t.Fatalf("TagNameRaw %q, TagName %q", z.TagNameRaw(), name)
		}
		fmt.Fprintf(&b, " name=%q", name)
		for i := range n {
			k, v := z.Attr(i)
			k = bytes.ReplaceAll(k, []byte{0}, []byte("\ufffd"))
			fmt.Fprintf(&b, " %q=%q", bytesLowerASCII(k), decodeAttr(t, v))
		}
	}
	return b.String()
}

// bytesLowerASCII is upstream's lower: A-Z only.
func bytesLowerASCII(b []byte) []byte {
	return lower(bytes.Clone(b))
}

// compare tokenizes doc with both tokenizers and fails at the first token
// on which they differ, or if doc was modified.
func compare(t testing.TB, doc []byte) {
	t.Helper()
	orig := bytes.Clone(doc)
	up := html.NewTokenizer(bytes.NewReader(orig))
	z := New(doc)
	for i := 0; ; i++ {
		want := up.Next()
		got := z.Next()
		w, g := describeUpstream(up, want), describe(t, z, got)
		if w != g {
			t.Fatalf("token %d of %.80q:\n upstream %s\n htmltok  %s", i, orig, w, g)
		}
		if want == html.ErrorToken {
			if up.Err() != z.Err() {
				t.Fatalf("%.80q: error %v, upstream %v", orig, z.Err(), up.Err())
			}
			break
		}
	}
	if !bytes.Equal(doc, orig) {
		t.Fatalf("%.80q: the document was modified", orig)
	}
}

// TestSameTokens: on the fixtures and the tricky inputs, this tokenizer
// gives every token upstream gives, with the same raw bytes, text, name
// and attributes, and leaves the document as it was.
func TestSameTokens(t *testing.T) {
	for _, doc := range inputs(t) {
		compare(t, doc)
	}
}

// FuzzSameTokens is TestSameTokens on any input.
func FuzzSameTokens(f *testing.F) {
	for _, doc := range inputs(f) {
		if len(doc) > 2048 {
			doc = doc[:2048]
		}
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		compare(t, doc)
	})
}

// FuzzUnescapeSimple: whenever UnescapeSimple decodes a text, it gives
// what x/net/html gives for it in text and in an attribute value.
func FuzzUnescapeSimple(f *testing.F) {
	for _, s := range []string{"a&amp;b", "&lt;&gt;&quot;&apos;&nbsp;", "&#65;&#x41;&#X41;", "&#128;", "&#0;",
		"&#1114111;", "&#1114112;", "&amp", "&ampx;", "&notit;", "&#xD800;", "&#00000065;", "&&amp;", "x&", "&#;", "&#x;"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.ContainsAny(b, "\r\x00") {
			return // converted before unescaping, not by it
		}
		in := string(b)
		got, ok := UnescapeSimple(bytes.Clone(b))
		if !ok {
			return
		}
		if want := html.UnescapeString(in); string(got) != want {
			t.Fatalf("%q: %q, text %q", in, got, want)
		}
		if bytes.ContainsRune(b, '"') && bytes.ContainsRune(b, '\'') {
			return // not a value decodeAttr can quote
		}
		if want := decodeAttr(t, b); string(got) != string(want) {
			t.Fatalf("%q: %q, attribute %q", in, got, want)
		}
	})
}

// TestUnescapeSimple: what is decoded and what is left to x/net/html.
func TestUnescapeSimple(t *testing.T) {
	for _, c := range []struct {
		in, out string
		ok      bool
	}{
		{"plain", "plain", true},
		{"a&amp;b&lt;c&gt;&quot;&apos;&nbsp;", "a&b<c>\"'\u00a0", true},
		{"&#65;&#x42;&#X43;&#128512;", "ABC😀", true},
		{"&amp", "", false},
		{"&copy;", "", false},
		{"&#128;", "", false},
		{"&#65", "", false},
		{"a & b", "", false},
	} {
		got, ok := UnescapeSimple([]byte(c.in))
		if ok != c.ok || ok && string(got) != c.out {
			t.Errorf("%q: %q %v, want %q %v", c.in, got, ok, c.out, c.ok)
		}
	}
}

// TestSameTokensExhaustive compares the tokenizers on every string of up
// to five bytes from the bytes that drive the tokenizer's states, after
// prefixes that put it in its states (comments, raw text, script, tags,
// attribute values): where skipping to the next interesting byte would
// differ from reading byte by byte.
func TestSameTokensExhaustive(t *testing.T) {
	const alphabet = "<!->/a'=\r&"
	prefixes := []string{"", "x", "<!--", "<!-- a", "<title>", "<script>", "<script><!--", "<a b='", "<a b=", "<!x", "</ "}
	if testing.Short() {
		prefixes = prefixes[:3]
	}
	var build func(b []byte, n int)
	build = func(b []byte, n int) {
		for _, p := range prefixes {
			compare(t, append([]byte(p), b...))
		}
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			build(append(b, alphabet[i]), n-1)
		}
	}
	build(nil, 4)
}
