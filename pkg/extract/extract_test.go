package extract

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden is a Result as stored in testdata/golden, with the hash in hex.
type golden struct {
	*Result
	HashHex string `json:"hash"`
}

func checkGolden(t *testing.T, name string, r *Result) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(golden{r, HashHex(r.Hash)}); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: output differs from %s (run go test -update and review the diff):\n%s", name, path, firstDiff(got, want))
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + a + "\n want " + b
		}
	}
	return ""
}

// checkUTF8 fails if any string of r is not valid UTF-8.
func checkUTF8(t testing.TB, r *Result) {
	t.Helper()
	strs := []string{r.MIME, r.Charset, r.CharsetSource, r.Lang, r.Title, r.Description, r.Text, r.Base, r.Canonical, r.Refresh}
	for _, l := range r.Links {
		strs = append(strs, l.URL, l.Anchor, l.Tag)
	}
	for k := range r.Dropped {
		strs = append(strs, k)
	}
	for _, s := range strs {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 in output: %q", s)
		}
	}
}

// pages are real pages from Debian documentation packages, and two
// written for this project after real generators and sites
// (testdata/README.md), served with the Content-Type a web server would
// give them. notText are strings of their scripts, styles, comments and
// hidden parts that must not leak into the text.
var pages = []struct {
	file, contentType, url string
	minText, minLinks      int
	notText                []string
}{
	{"sqlite-about.html", "text/html", "http://www.sqlite.example.cl/about.html", 500, 10, []string{"<script"}},
	{"sqlite-lang.html", "text/html", "http://www.sqlite.example.cl/lang.html", 500, 10, nil},
	{"sqlite-c3ref-intro.html", "text/html", "http://www.sqlite.example.cl/c3ref/intro.html", 500, 10, nil},
	{"git-init.html", "application/xhtml+xml", "https://git.example.cl/docs/git-init.html", 500, 1, []string{"asciidoc.install"}},
	{"gittutorial.html", "text/html; charset=UTF-8", "https://git.example.cl/docs/gittutorial.html", 500, 10, nil},
	{"cmake-index.html", "text/html; charset=utf-8", "http://cmake.example.cl/help/latest/index.html", 500, 10, []string{"DOCUMENTATION_OPTIONS"}},
	{"cmake-command-if.html", "text/html", "http://cmake.example.cl/help/latest/command/if.html", 500, 10, []string{"DOCUMENTATION_OPTIONS"}},
	{"nodejs-url.html", "text/html; charset=utf-8", "http://nodejs.example.cl/api/url.html", 20000, 150, []string{"localStorage"}},
	{"nodejs-index.html", "text/html", "http://nodejs.example.cl/api/index.html", 1000, 80, []string{"localStorage"}},
	{"rust-std-index.html", "text/html", "https://doc.rust.example.cl/std/index.html", 5000, 200, []string{"window.currentCrate"}},
	{"rust-std-index-inline-scripts.html", "text/html", "https://doc.rust.example.cl/std/index-inline.html", 5000, 200, []string{"window.currentCrate", "searchState", "duckduckgo"}},
	{"rust-book-installation.html", "text/html", "https://doc.rust.example.cl/book/ch01-01-installation.html", 3000, 50, []string{"playground_text", "hljs"}},
	{"gimp-tool-text.html", "application/xhtml+xml", "https://docs.gimp.example.cl/2.10/en/gimp-tool-text.html", 3000, 10, nil},
	{"gimp-help-index.html", "text/html", "https://docs.gimp.example.cl/2.10/en/gimp-help-index.html", 20000, 600, nil},
	{"vim-russian.html", "text/html", "http://vimdoc.example.cl/russian.html", 2000, 30, nil},
	{"vim-quickref.html", "text/html", "http://vimdoc.example.cl/quickref.html", 50000, 1000, nil},
	{"vim-digraph.html", "text/html; charset=iso-8859-1", "http://vimdoc.example.cl/digraph.html", 20000, 100, nil},
	{"javadoc-classutils.html", "text/html", "http://commons.example.cl/lang/api/org/apache/commons/lang/ClassUtils.html", 10000, 30, []string{"pathtoroot", "loadScripts"}},
	{"frameset-javadoc8.html", "text/html", "http://commons.example.cl/lang/api/index.html", 0, 4, []string{"Frame Alert", "validURL", "JavaScript is disabled"}},
	{"tagsoup.html", "text/html", "http://www.ejemplo.cl/index.htm", 300, 12, []string{"MM_swapImage", "ventana", "A:hover", "contador", "no soporta iframes"}},
}

func TestPages(t *testing.T) {
	e := New(Options{Agent: "wirebot"})
	for _, p := range pages {
		t.Run(p.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "pages", p.file))
			if err != nil {
				t.Fatal(err)
			}
			r := e.Extract(body, p.contentType, p.url)
			checkUTF8(t, r)
			if !r.HTML || r.Title == "" || len(r.Text) < p.minText || len(r.Links) < p.minLinks {
				t.Errorf("html %v, title %q, %d bytes of text (want %d), %d links (want %d)", r.HTML, r.Title, len(r.Text), p.minText, len(r.Links), p.minLinks)
			}
			for _, s := range p.notText {
				if strings.Contains(r.Text, s) {
					t.Errorf("%q leaked into the text", s)
				}
			}
			checkGolden(t, "page-"+strings.TrimSuffix(p.file, ".html"), r)
		})
	}
}

// charsets are pages transcoded with iconv (testdata/charset/make.sh),
// each with the Content-Type header it is served with.
var charsets = []struct {
	file, contentType, charset, source, title string
}{
	{"latin1-header.html", "text/html; charset=ISO-8859-1", "windows-1252", SourceHeader, "Declaración Universal de Derechos Humanos"},
	{"cp1252-meta-charset.html", "text/html", "windows-1252", SourceMeta, "Déclaration universelle des droits de l’homme"},
	{"sjis-http-equiv.html", "text/html", "shift_jis", SourceMeta, "世界人権宣言"},
	{"koi8r-header.html", "text/html;charset=koi8-r", "koi8-r", SourceHeader, "Всеобщая декларация прав человека"},
	{"euckr-header.html", `text/html; charset="euc-kr"`, "euc-kr", SourceHeader, "세계 인권 선언"},
	{"gb2312-meta-charset.html", "text/html", "gbk", SourceMeta, "世界人权宣言"},
	{"utf8-bom.html", "text/html; charset=iso-8859-1", "utf-8", SourceBOM, "Déclaration universelle des droits de l’homme"},
	{"utf16le-bom.html", "text/html", "utf-16le", SourceBOM, "Всеобщая декларация прав человека"},
	{"utf8-undeclared.html", "text/html", "utf-8", SourceUTF8, "世界人権宣言"},
	{"latin1-undeclared.html", "text/html", "windows-1252", SourceDetected, "Declaración Universal de Derechos Humanos"},
	{"koi8r-header-beats-meta.html", "text/html; charset=KOI8-R", "koi8-r", SourceHeader, "Всеобщая декларация прав человека"},
	{"cp1252-meta-too-late.html", "", "windows-1252", SourceDetected, "Déclaration universelle des droits de l’homme"},
	{"latin1-declared-utf8.html", "text/html; charset=utf-8", "utf-8", SourceHeader, "Declaraci\uFFFDn Universal de Derechos Humanos"},
	{"sjis-undeclared.html", "text/html", "shift_jis", SourceDetected, "世界人権宣言"},
	{"eucjp-undeclared.html", "text/html", "euc-jp", SourceDetected, "世界人権宣言"},
	{"koi8r-undeclared.html", "text/html", "koi8-r", SourceDetected, "Всеобщая декларация прав человека"},
	{"cp1251-undeclared.html", "text/html", "windows-1251", SourceDetected, "Всеобщая декларация прав человека"},
	{"euckr-undeclared.html", "text/html", "euc-kr", SourceDetected, "세계 인권 선언"},
	{"gb2312-undeclared.html", "text/html", "gbk", SourceDetected, "世界人权宣言"},
	{"mixed-utf8-latin1-undeclared.html", "text/html", "utf-8", SourceMixed, "Déclaration universelle des droits de l’homme"},
}

func TestCharsets(t *testing.T) {
	e := New(Options{})
	for _, c := range charsets {
		t.Run(c.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "charset", c.file))
			if err != nil {
				t.Fatal(err)
			}
			r := e.Extract(body, c.contentType, "http://www.example.cl/udhr/"+c.file)
			checkUTF8(t, r)
			if r.Charset != c.charset || r.CharsetSource != c.source {
				t.Errorf("charset %s from %s, want %s from %s", r.Charset, r.CharsetSource, c.charset, c.source)
			}
			if r.Title != c.title {
				t.Errorf("title %q, want %q", r.Title, c.title)
			}
			if len(r.Links) != 1 || r.Links[0].URL != "http://www.example.cl/next.html" || r.Links[0].Anchor == "" {
				t.Errorf("links %+v", r.Links)
			}
			checkGolden(t, "charset-"+strings.TrimSuffix(c.file, ".html"), r)
		})
	}
}

func TestDecodeOrder(t *testing.T) {
	cases := []struct {
		name, body, contentType, charset, source string
	}{
		// WHATWG HTML §13.2.3.2: BOM, then transport layer, then prescan.
		{"bom beats header", "\xEF\xBB\xBFhi", "text/html; charset=koi8-r", "utf-8", SourceBOM},
		{"utf-16be bom", "\xFE\xFF\x00h\x00i", "", "utf-16be", SourceBOM},
		{"header beats meta", `<meta charset="koi8-r">`, "text/html; charset=shift_jis", "shift_jis", SourceHeader},
		{"unknown header label falls through", `<meta charset="koi8-r">`, "text/html; charset=bogus", "koi8-r", SourceMeta},
		{"meta in comment ignored", `<!-- <meta charset="koi8-r"> -->caf\xC3\xA9`, "", "utf-8", SourceUTF8},
		{"http-equiv without pragma ignored", `<meta content="text/html; charset=koi8-r">`, "", "utf-8", SourceUTF8},
		{"http-equiv", `<meta http-equiv="content-type" content="text/html; charset='koi8-r'">`, "", "koi8-r", SourceMeta},
		{"meta utf-16 means utf-8", `<meta charset="utf-16le">`, "", "utf-8", SourceMeta},
		{"x-user-defined means windows-1252", `<meta charset="x-user-defined">`, "", "windows-1252", SourceMeta},
		{"ascii label is windows-1252", "", "text/html; charset=us-ascii", "windows-1252", SourceHeader},
		{"latin1 label is windows-1252", "", "text/html; charset=latin1", "windows-1252", SourceHeader},
		{"unparsable content type", "", "text/html; charset=koi8-r; charset", "koi8-r", SourceHeader},
		{"valid utf-8 past 1024 bytes", strings.Repeat("a", 2000) + "caf\xC3\xA9", "", "utf-8", SourceUTF8},
		{"invalid utf-8 past 1024 bytes", strings.Repeat("a", 2000) + "caf\xE9 au lait", "", "windows-1252", SourceDetected},
		{"detection unsure: the fallback", "\x81\x8d\x8f\x90", "", "windows-1252", SourceDefault},
		{"utf-8 cut at the size limit", "caf\xC3\xA9 \xE4\xB8", "", "utf-8", SourceUTF8},
		{"empty body", "", "", "utf-8", SourceUTF8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decode([]byte(c.body), c.contentType)
			if d.Charset != c.charset || d.Source != c.source {
				t.Errorf("got %s from %s, want %s from %s", d.Charset, d.Source, c.charset, c.source)
			}
			if !utf8.Valid(d.Text) {
				t.Errorf("output not valid UTF-8: %q", d.Text)
			}
		})
	}
}

const page = "http://www.example.cl/dir/page.html"

func TestCases(t *testing.T) {
	cases := []struct {
		name string
		html string
		want Result // only the fields set here are compared (see match)
	}{
		{"base href resolves links", `<base href="/other/"><a href="x.html">X</a>`,
			Result{Base: "http://www.example.cl/other/", Links: []Link{{URL: "http://www.example.cl/other/x.html", Anchor: "X", Tag: TagA}}}},
		{"base href applies to links before it", `<a href="x.html">X</a><base href="http://b.cl/b/">`,
			Result{Base: "http://b.cl/b/", Links: []Link{{URL: "http://b.cl/b/x.html", Anchor: "X", Tag: TagA}}}},
		{"first base wins", `<base target="_top"><base href="/one/"><base href="/two/"><a href="x">X</a>`,
			Result{Base: "http://www.example.cl/one/", Links: []Link{{URL: "http://www.example.cl/one/x", Anchor: "X", Tag: TagA}}}},
		{"bad base ignored", `<base href="javascript:void(0)"><a href="x">X</a>`,
			Result{Links: []Link{{URL: "http://www.example.cl/dir/x", Anchor: "X", Tag: TagA}}}},
		{"nofollow link", `<a href="/a" rel="external NoFollow">A</a><a href="/b" rel="next">B</a>`,
			Result{Links: []Link{{URL: "http://www.example.cl/a", Anchor: "A", NoFollow: true, Tag: TagA}, {URL: "http://www.example.cl/b", Anchor: "B", Tag: TagA}}}},
		{"meta robots noindex,nofollow", `<meta name="ROBOTS" content="NOINDEX, nofollow">`, Result{NoIndex: true, NoFollow: true}},
		{"meta robots none", `<meta name="robots" content="none">`, Result{NoIndex: true, NoFollow: true}},
		{"meta robots for our agent", `<meta name="wirebot" content="noindex">`, Result{NoIndex: true}},
		{"meta robots for another agent ignored", `<meta name="googlebot" content="noindex,nofollow">`, Result{}},
		{"canonical", `<link rel="canonical" href="/dir/page.html?ref=1#top"><link rel=canonical href="/second">`,
			Result{Canonical: "http://www.example.cl/dir/page.html?ref=1"}},
		{"meta refresh", `<meta http-equiv="Refresh" content="0; URL='/new/place.html'">`,
			Result{Refresh: "http://www.example.cl/new/place.html", Links: []Link{{URL: "http://www.example.cl/new/place.html", Tag: TagRefresh}}}},
		{"meta refresh without url= is self", `<meta http-equiv="refresh" content="30">`, Result{}},
		{"meta refresh bare url", `<meta http-equiv="refresh" content="5;other.html">`,
			Result{Refresh: "http://www.example.cl/dir/other.html", Links: []Link{{URL: "http://www.example.cl/dir/other.html", Tag: TagRefresh}}}},
		{"area frame iframe", `<map><area href="/a" alt="Area A" rel=nofollow></map><frameset><frame src="f.html" title="Menu"></frameset><iframe src="//cdn.example.cl/i">fallback <a href="/hidden">x</a></iframe>`,
			Result{Links: []Link{{URL: "http://www.example.cl/a", Anchor: "Area A", NoFollow: true, Tag: TagArea}, {URL: "http://www.example.cl/dir/f.html", Anchor: "Menu", Tag: TagFrame}, {URL: "http://cdn.example.cl/i", Tag: TagIFrame}}}},
		{"img alt inside anchor", `<a href="/"><img src="logo.png" alt="Home page">Start</a> <img alt="not an anchor">`,
			Result{Text: "Start", Links: []Link{{URL: "http://www.example.cl/", Anchor: "Home page Start", Tag: TagA}}}},
		{"script text is not links", `<script>document.write('<a href="/js.html">js</a>')</script><a href="/real">real</a><style>a{}</style><noscript><a href="/ns">ns</a></noscript>`,
			Result{Text: "real", Links: []Link{{URL: "http://www.example.cl/real", Anchor: "real", Tag: TagA}}}},
		{"self-closing script is a start tag: the rest is script", `<p>a</p><script/><a href="/x">x</a>`,
			Result{Text: "a"}},
		{"template is inert", `<template><p>tpl <a href="/t">t</a></p><template>inner</template>still</template><p>after</p>`,
			Result{Text: "after"}},
		{"comments are not links", `<!-- <a href="/old">old</a> --><p>x</p>`, Result{Text: "x"}},
		{"link rel alternate next prev", `<link rel="alternate" hreflang="en" href="/en/" title="English"><link rel="next" href="p2"><link rel="PREV" href="p0"><link rel="alternate stylesheet" href="s.css"><link rel="stylesheet" href="m.css">`,
			Result{Links: []Link{{URL: "http://www.example.cl/en/", Anchor: "English", Tag: TagLink}, {URL: "http://www.example.cl/dir/p2", Tag: TagLink}, {URL: "http://www.example.cl/dir/p0", Tag: TagLink}}}},
		{"fragments dropped, duplicates merged", `<a href="#top">Top</a><a href="page.html#x">Top</a><a href="other#a">O</a><a href="other#b">O</a>`,
			Result{Links: []Link{{URL: page, Anchor: "Top", Tag: TagA}, {URL: "http://www.example.cl/dir/other", Anchor: "O", Tag: TagA}}}},
		{"bad links dropped and counted", `<a href="javascript:go()">j</a><a href="mailto:a@b.cl">m</a><a href="http://exa mple.cl/">s</a><a href="http://a.cl:99999/">p</a><a href="ok">ok</a>`,
			Result{Links: []Link{{URL: "http://www.example.cl/dir/ok", Anchor: "ok", Tag: TagA}}, Dropped: map[string]int{"scheme": 2, "unparsable": 1, "bad-port": 1}}},
		{"href with tabs and newlines", "<a href=\" /a\n/b\t.html \">x</a>",
			Result{Links: []Link{{URL: "http://www.example.cl/a/b.html", Anchor: "x", Tag: TagA}}}},
		{"a without href closes the open anchor", `<a href="/1">one<a name="n">two</a>`,
			Result{Text: "onetwo", Links: []Link{{URL: "http://www.example.cl/1", Anchor: "one", Tag: TagA}}}},
		{"unclosed anchor runs to the end", `<a href="/1">one <p>two`,
			Result{Links: []Link{{URL: "http://www.example.cl/1", Anchor: "one two", Tag: TagA}}}},
		{"blocks on lines, inline joined", "<h1>Title</h1><p>one <b>bo</b>ld\n  text</p><ul><li>a</li><li>b</li></ul>x<br>y<table><tr><td>c1</td><td>c2</td></tr></table>",
			Result{Text: "Title\none bold text\na\nb\nx\ny\nc1 c2"}},
		{"pre keeps lines", "<pre>line 1\n   line 2\n\nline 3</pre>after",
			Result{Text: "line 1\nline 2\nline 3\nafter"}},
		{"entities and nbsp", "<p>caf&eacute;&nbsp;&amp;&#x20AC;&#0;&#xD800;x</p>",
			Result{Text: "café &€\uFFFD\uFFFDx"}},
		{"hidden input not text, button value is", `<form><input type="hidden" value="secret"><input type=submit value="Send"></form>`,
			Result{Text: "Send"}},
		{"head and title not in the text", `<html><head><title>T</title><meta name="description" content=" A  page. "></head><body>B</body></html>`,
			Result{Title: "T", Description: "A page.", Text: "B"}},
		{"first title wins even if empty", `<title></title><title>Second</title>`, Result{}},
		{"title whitespace normalised", "<title>\n  A\n  title  </title>", Result{Title: "A title"}},
		{"svg title not the page title", `<title>Page</title><svg><title>icon</title></svg>`, Result{Title: "Page"}},
		{"lang", `<html lang="es-CL"><p>x`, Result{Lang: "es-CL", Text: "x"}},
		{"xml:lang", `<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">`, Result{Lang: "en"}},
		{"content-language meta", `<meta http-equiv="content-language" content="fr, en">`, Result{Lang: "fr"}},
		{"textarea text kept", "<textarea>a &lt;b&gt;\nc</textarea>", Result{Text: "a <b>\nc"}},

		// The hidden attribute (HTML §6.1): not rendered, so not text; its
		// links still count.
		{"hidden div", `<p>a</p><div hidden><p>secret <a href="/h">menu</a></p><div>inner</div></div><p>b</p>`,
			Result{Text: "a\nb", Links: []Link{{URL: "http://www.example.cl/h", Anchor: "menu", Tag: TagA}}}},
		{"hidden span closed by its parent", `<div>a<span HIDDEN>x<b>y</div>after`, Result{Text: "a\nafter"}},
		{"hidden p closed implicitly", `<p hidden>x<p>y<div hidden="hidden">z</div>w`, Result{Text: "y\nw"}},
		{"hidden li closed by the next li", `<ul><li hidden>x<li>y</ul>`, Result{Text: "y"}},
		{"nested same element", `<div hidden><div>x</div>y</div>z`, Result{Text: "z"}},
		{"until-found is visible", `<div hidden=until-found>found</div>`, Result{Text: "found"}},
		{"class hidden is not hidden", `<div class="hidden" data-x="HIDDEN">shown</div>`, Result{Text: "shown"}},
		{"hidden button", `<input type=submit value=Go hidden><input type=submit value=Send>`, Result{Text: "Send"}},
		{"hidden until end", `<section hidden><p>never closed`, Result{}},
		{"hidden ends with body", `<body><div hidden>x</body>y`, Result{Text: "y"}},

		{"headings in order", `<h1>Top</h1><p>x</p><h3>Deep <img alt="icon"> <a href="#a">link</a></h3><h2>Second</h2><h4></h4><h5 hidden>Hidden</h5><h6>Six<h2>Unclosed`,
			Result{Headings: []Heading{{1, "Top"}, {3, "Deep icon link"}, {2, "Second"}, {6, "Six"}, {2, "Unclosed"}},
				Links: []Link{{URL: page, Anchor: "link", Tag: TagA}}}},
		{"heading closed by any heading end tag", `<h2>a</h3>b`, Result{Text: "a\nb", Headings: []Heading{{2, "a"}}}},

		// Framesets: links in frames and in <noframes>, whose text is not
		// the page's.
		{"frameset with noframes", `<frameset cols="20%,80%"><frame src="menu.html" title="Menu"><frame src="main.html"></frameset><noframes><body><p>No frames: <a href="main.html">main page</a> <a href="/about" rel=nofollow>about</a></p></body></noframes>`,
			Result{Links: []Link{{URL: "http://www.example.cl/dir/menu.html", Anchor: "Menu", Tag: TagFrame}, {URL: "http://www.example.cl/dir/main.html", Tag: TagFrame},
				{URL: "http://www.example.cl/dir/main.html", Anchor: "main page", Tag: TagA}, {URL: "http://www.example.cl/about", Anchor: "about", NoFollow: true, Tag: TagA}}}},
		{"noframes inside noframes is not parsed again", `<noframes><a href="/a">a</a><noframes><a href="/b">b</a></noframes>`,
			Result{Links: []Link{{URL: "http://www.example.cl/a", Anchor: "a", Tag: TagA}}}},
	}
	e := New(Options{Agent: "wirebot"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.Extract([]byte(c.html), "text/html", page)
			checkUTF8(t, r)
			match(t, r, &c.want)
		})
	}
}

// match compares the fields of want that are set, and the links always.
func match(t *testing.T, got, want *Result) {
	t.Helper()
	chk := func(name, g, w string) {
		if w != "" && g != w {
			t.Errorf("%s = %q, want %q", name, g, w)
		}
	}
	chk("text", got.Text, want.Text)
	chk("title", got.Title, want.Title)
	chk("description", got.Description, want.Description)
	chk("lang", got.Lang, want.Lang)
	chk("base", got.Base, want.Base)
	if got.Canonical != want.Canonical {
		t.Errorf("canonical = %q, want %q", got.Canonical, want.Canonical)
	}
	if got.Refresh != want.Refresh {
		t.Errorf("refresh = %q, want %q", got.Refresh, want.Refresh)
	}
	if got.NoIndex != want.NoIndex || got.NoFollow != want.NoFollow {
		t.Errorf("noindex %v nofollow %v, want %v %v", got.NoIndex, got.NoFollow, want.NoIndex, want.NoFollow)
	}
	if len(got.Links) != len(want.Links) || (len(got.Links) > 0 && !reflect.DeepEqual(got.Links, want.Links)) {
		t.Errorf("links:\n got  %+v\n want %+v", got.Links, want.Links)
	}
	if want.Headings != nil && !reflect.DeepEqual(got.Headings, want.Headings) {
		t.Errorf("headings:\n got  %+v\n want %+v", got.Headings, want.Headings)
	}
	if want.Dropped != nil && !reflect.DeepEqual(got.Dropped, want.Dropped) {
		t.Errorf("dropped %v, want %v", got.Dropped, want.Dropped)
	}
}

func TestNotHTML(t *testing.T) {
	e := New(Options{})
	for _, ct := range []string{"image/png", "application/pdf", "text/plain; charset=utf-8", "application/xml"} {
		r := e.Extract([]byte(`<html><title>x</title><a href="/a">a</a>`), ct, page)
		if r.HTML || r.Text != "" || len(r.Links) != 0 || r.Title != "" || r.Hash != 0 {
			t.Errorf("%s: parsed: %+v", ct, r)
		}
		if r.MIME != MediaType(ct) {
			t.Errorf("%s: mime %q", ct, r.MIME)
		}
	}
	// Without a Content-Type the body is sniffed.
	if r := e.Extract([]byte("<!DOCTYPE html><title>x</title>"), "", page); !r.HTML || r.Title != "x" {
		t.Errorf("sniffed HTML not parsed: %+v", r)
	}
	if r := e.Extract([]byte("\x89PNG\r\n\x1a\n...."), "", page); r.HTML {
		t.Errorf("PNG parsed as HTML")
	}
	// XHTML is parsed as HTML.
	if r := e.Extract([]byte(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body><p>y</p></body></html>`), "application/xhtml+xml", page); !r.HTML || r.Title != "x" || r.Text != "y" {
		t.Errorf("XHTML: %+v", r)
	}
}

func TestRobotsHeader(t *testing.T) {
	cases := []struct {
		values []string
		want   Robots
	}{
		{[]string{"noindex"}, Robots{NoIndex: true}},
		{[]string{"noindex, nofollow"}, Robots{true, true}},
		{[]string{"none"}, Robots{true, true}},
		{[]string{"otherbot: noindex"}, Robots{}},
		{[]string{"WireBot: nofollow"}, Robots{NoFollow: true}},
		{[]string{"unavailable_after: 25 Jun 2010 15:00:00 PST"}, Robots{}},
		{[]string{"noarchive", "nofollow"}, Robots{NoFollow: true}},
		{nil, Robots{}},
	}
	for _, c := range cases {
		if got := ParseRobotsHeader(c.values, "wirebot"); got != c.want {
			t.Errorf("%q: got %+v, want %+v", c.values, got, c.want)
		}
	}
}

func TestParseRefresh(t *testing.T) {
	// WHATWG HTML §7.11.1, shared declarative refresh steps.
	cases := map[string]string{
		"0; url=/a":             "/a",
		"0;URL='/a b'":          "/a b",
		`3, url="x.html"`:       "x.html",
		"0; url = /a":           "/a",
		"  1.5 ; /b":            "/b",
		"0":                     "",
		"":                      "",
		"x; url=/a":             "",
		".5; url=/a":            "/a",
		"0; url='/unterminated": "/unterminated",
	}
	for in, want := range cases {
		if got := parseRefresh(in); got != want {
			t.Errorf("parseRefresh(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDeepNesting: a page nested 100,000 deep (a hostile server's
// favourite) is read in linear time; the tokenizer keeps no stack.
func TestDeepNesting(t *testing.T) {
	const depth = 100000
	e := New(Options{})
	for _, tag := range []string{"div", "a href=x", "b", "table", "template", "pre"} {
		name, _, _ := strings.Cut(tag, " ")
		body := strings.Repeat("<"+tag+">", depth) + "deep" + strings.Repeat("</"+name+">", depth) + "<p>end</p>"
		start := time.Now()
		r := e.Extract([]byte(body), "text/html", page)
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("%s: %v for %d bytes", name, el, len(body))
		}
		checkUTF8(t, r)
		if !strings.HasSuffix(r.Text, "end") {
			t.Errorf("%s: text ends %q", name, r.Text[max(0, len(r.Text)-20):])
		}
	}
}

// TestManyLinks: a page with 20,000 links keeps them all, in order.
func TestManyLinks(t *testing.T) {
	var b strings.Builder
	const n = 20000
	for i := range n {
		b.WriteString(`<a href="/p/` + strconv.Itoa(i) + `.html">page ` + strconv.Itoa(i) + "</a>\n")
	}
	start := time.Now()
	r := New(Options{}).Extract([]byte(b.String()), "text/html", page)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("%v for %d links", el, n)
	}
	if len(r.Links) != n {
		t.Fatalf("%d links, want %d", len(r.Links), n)
	}
	if l := r.Links[n-1]; l.URL != "http://www.example.cl/p/19999.html" || l.Anchor != "page 19999" {
		t.Errorf("last link %+v", l)
	}
}

func TestLimits(t *testing.T) {
	long := strings.Repeat("é", 2000)
	r := New(Options{}).Extract([]byte("<title>"+long+"</title><a href=/x>"+long+"</a>"), "text/html; charset=utf-8", page)
	if len(r.Title) > MaxTitleBytes || !utf8.ValidString(r.Title) || len(r.Title) < MaxTitleBytes-1 {
		t.Errorf("title of %d bytes", len(r.Title))
	}
	if len(r.Links) != 1 || len(r.Links[0].Anchor) > MaxAnchorBytes || !utf8.ValidString(r.Links[0].Anchor) {
		t.Errorf("anchor of %d bytes", len(r.Links[0].Anchor))
	}
	if r.Text != long {
		t.Errorf("text of %d bytes, want %d", len(r.Text), len(long))
	}
}

// TestLimitsPendingSpace: a title, anchor or heading that fills its limit
// exactly, followed by white space and more text, keeps to the limit and
// does not end with the white space.
func TestLimitsPendingSpace(t *testing.T) {
	for _, fill := range []int{MaxTitleBytes, MaxTitleBytes - 1, MaxTitleBytes - 2} {
		long := strings.Repeat("x", fill)
		want := long
		if fill+2 <= MaxTitleBytes {
			want += " y" // the space and one letter fit, not two
		}
		r := New(Options{}).Extract([]byte("<title>"+long+" yz</title><h1>"+long+"\n\n<b>yz</b></h1><a href=/x>"+long+" <img alt=yz></a>"), "text/html", page)
		if r.Title != want {
			t.Errorf("fill %d: title of %d bytes ending %q, want %d", fill, len(r.Title), r.Title[max(0, len(r.Title)-3):], len(want))
		}
		if len(r.Headings) != 1 || r.Headings[0].Text != want {
			t.Errorf("fill %d: headings %d, want one of %d bytes", fill, len(r.Headings), len(want))
		}
		if len(r.Links) != 1 || r.Links[0].Anchor != want {
			t.Errorf("fill %d: want one anchor of %d bytes", fill, len(want))
		}
	}
}

func TestInvalidInputStaysValidUTF8(t *testing.T) {
	bodies := []string{
		"<title>\xff\xfe\xfd</title><p>\xc3\x28 \xa0\xa1<a href='/\xff'>\xed\xa0\x80</a>",
		"<p>a\x00b\x01c</p>",
		"\xEF\xBB\xBF<p>\xff</p>",
		"\xFE\xFF\xD8\x00",
	}
	e := New(Options{})
	for _, ct := range []string{"text/html", "text/html; charset=utf-8", "text/html; charset=shift_jis", "text/html; charset=utf-16le"} {
		for _, b := range bodies {
			checkUTF8(t, e.Extract([]byte(b), ct, page))
		}
	}
}

func TestHashIsOfText(t *testing.T) {
	e := New(Options{})
	a := e.Extract([]byte("<p>Hello   <b>world</b></p>"), "text/html", page)
	b := e.Extract([]byte("<div>Hello world</div><script>x()</script>"), "text/html", "http://other.cl/")
	if a.Hash != b.Hash || a.Hash != TextHash("Hello world") {
		t.Errorf("hashes %x %x, want both %x", a.Hash, b.Hash, TextHash("Hello world"))
	}
	if HashHex(1) != "0000000000000001" {
		t.Errorf("HashHex(1) = %s", HashHex(1))
	}
}

func TestUnusablePageURL(t *testing.T) {
	// The page URL itself may be unusable; absolute links still resolve.
	r := New(Options{}).Extract([]byte(`<a href="rel">r</a><a href="http://ok.cl/">ok</a>`), "text/html", "not a url")
	if len(r.Links) != 1 || r.Links[0].URL != "http://ok.cl/" {
		t.Errorf("links %+v", r.Links)
	}
}

// TestResolutionCache: links resolved through the cache shared by the
// pages an Extractor reads are what the normaliser gives for each page
// on its own.
func TestResolutionCache(t *testing.T) {
	pageURLs := []string{
		"http://www.a.cl/", "http://www.a.cl/dir/page.html", "http://www.a.cl/dir/other.html?q=1", "http://www.a.cl/dir/sub/",
		"https://www.a.cl/dir/page.html", "http://www.b.cl/dir/page.html", "http://www.a.cl:8080/dir/page.html", "http://www.a.cl/dir",
		"not a url",
	}
	hrefs := []string{"", "#f", "?x=1", "a", "./a", "../a", "../../../a", "a/b?c#d", "/a", "//www.c.cl/a", "http://www.d.cl/x", "HTTP://WWW.D.CL/x",
		"mailto:x@a.cl", "javascript:go()", ":bad", "1a:b", "a:b", "./", "..", "?", " /spaced ", "a\tb"}
	shared := New(Options{})
	for _, base := range []string{"", `<base href="/base/">`, `<base href="http://www.e.cl/x/y">`} {
		for _, p := range pageURLs {
			var body strings.Builder
			body.WriteString(base)
			for _, h := range hrefs {
				body.WriteString(`<a href="` + h + `">x</a>`)
			}
			got := shared.Extract([]byte(body.String()), "text/html", p)
			want := New(Options{}).Extract([]byte(body.String()), "text/html", p)
			if !reflect.DeepEqual(got.Links, want.Links) || !reflect.DeepEqual(got.Dropped, want.Dropped) {
				t.Errorf("base %q, page %s:\n got  %v %v\n want %v %v", base, p, got.Links, got.Dropped, want.Links, want.Dropped)
			}
		}
	}
}

// TestFallback: a page that declares nothing, is not UTF-8 and defeats
// detection is read with the configured fallback (a browser's locale
// default).
func TestFallback(t *testing.T) {
	body := []byte("\x81\x8d\x8f\x90")
	for _, c := range []struct{ label, want string }{{"", "windows-1252"}, {"windows-1253", "windows-1253"}, {"ISO-8859-7", "iso-8859-7"}, {"bogus", "windows-1252"}, {"utf-16le", "windows-1252"}} {
		r := New(Options{Fallback: c.label}).Extract(body, "text/html", page)
		if r.Charset != c.want || r.CharsetSource != SourceDefault {
			t.Errorf("fallback %q: %s from %s, want %s", c.label, r.Charset, r.CharsetSource, c.want)
		}
	}
	if _, ok := LookupCharset("replacement"); ok {
		t.Error("the replacement encoding accepted")
	}
	if name, ok := LookupCharset("latin1"); !ok || name != "windows-1252" {
		t.Errorf("latin1: %s %v", name, ok)
	}
}

// TestCharsetFromContentNotUTF8: "charset" is found in a meta content
// with bytes that are not UTF-8, or characters whose lower case has
// another length, before it (strings.ToLower once shifted the positions:
// a slice out of range, which FuzzExtract found).
func TestCharsetFromContentNotUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"\xfeChArset0":                        "",
		"\xfe\xfetext/html; CHARSET=koi8-r":   "koi8-r",
		"\u212a\u212atext/html; charset=big5": "big5", // KELVIN SIGN lowers to one byte
		"\u0130 x; charset='utf-8'":           "utf-8",
	} {
		if got := charsetFromContent(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	if r := New(Options{}).Extract([]byte("<metA Content=\xfeChArset0>"), "text/html", page); r.CharsetSource == SourceMeta {
		t.Errorf("charset %q from a meta that declares none", r.Charset)
	}
}
