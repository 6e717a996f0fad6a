package robots

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// check is one question asked of a robots.txt: may agent fetch path?
type check struct {
	agent string
	path  string
	want  bool
}

// oracle asks grobotstxt (Google's reference, ported) the same question;
// ok is false when the library panics.
func oracle(body, agent, path string) (allowed, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return grobotstxt.AgentAllowed(body, agent, "http://foo.bar"+path), true
}

func runChecks(t *testing.T, name, body string, checks []check, useOracle bool) {
	t.Helper()
	for _, c := range checks {
		got := Parse([]byte(body), c.agent).Allowed(c.path)
		if got != c.want {
			t.Errorf("%s: %s %s: allowed=%v, want %v", name, c.agent, c.path, got, c.want)
		}
		if useOracle {
			if o, ok := oracle(body, c.agent, c.path); ok && o != c.want {
				t.Errorf("%s: %s %s: grobotstxt says %v, the test wants %v", name, c.agent, c.path, o, c.want)
			}
		}
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixtures runs the fixture files of testdata/ through the matcher,
// checking each answer against grobotstxt too.
func TestFixtures(t *testing.T) {
	tests := []struct {
		file   string
		checks []check
	}{
		{"rfc9309-5.1.txt", []check{ // RFC 9309 §5.1
			{"foobot", "/example/page.html", true},
			{"foobot", "/example/allowed.gif", true},
			{"foobot", "/example/disallowed.gif", false},
			{"foobot", "/publications/", false}, // the '*' group does not apply to foobot
			{"barbot", "/example/page.html", false},
			{"barbot", "/example/allowed.gif", true},
			{"bazbot", "/example/page.html", false},
			{"BazBot", "/example/page.html", false}, // §2.2.1: case-insensitive
			{"quxbot", "/example/page.html", true},  // a group without rules allows all
			{"wirebot", "/example/page.html", false},
			{"wirebot", "/publications/", true},
			{"wirebot", "/a.gif", false},
			{"wirebot", "/a.gif?x=1", true}, // '$' anchors the end
			{"wirebot", "/publications/x.gif", true},
		}},
		{"rfc9309-5.2.txt", []check{ // RFC 9309 §5.2
			{"foobot", "/example/page/", true},
			{"foobot", "/example/page/disallowed.gif", false},
			{"foobot", "/example/page/other", true},
		}},
		{"rfc9309-2.2.1-merge.txt", []check{ // RFC 9309 §2.2.1
			{"ExampleBot", "/foo", false},
			{"ExampleBot", "/bar/x", false},
			{"examplebot", "/baz", false},
			{"ExampleBot", "/qux", true},
		}},
		{"google-groups.txt", []check{ // google/robotstxt ID_LineSyntax_Groups
			{"FooBot", "/x/b", true},
			{"FooBot", "/z/d", true},
			{"FooBot", "/y/c", false},
			{"BarBot", "/y/c", true},
			{"BarBot", "/w/a", true},
			{"BarBot", "/z/d", false},
			{"BazBot", "/z/d", true},
			{"FooBot", "/foo/bar/", false}, // rules before any user-agent are ignored
			{"BazBot", "/foo/bar/", false},
			{"QuxBot", "/foo/bar/", true},
		}},
		{"google-index.txt", []check{ // google/robotstxt GoogleOnly_IndexHTMLisDirectory
			{"foobot", "/allowed-slash/", true},
			{"foobot", "/allowed-slash/index.htm", false},
			{"foobot", "/allowed-slash/index.html", true},
			{"foobot", "/anyother-url", false},
		}},
		{"special-chars.txt", []check{ // RFC 9309 §2.2.3
			{"FooBot", "/foo/bar", false},
			{"FooBot", "/foo/bar/", true},
			{"FooBot", "/foo/bar/qux", true},
			{"FooBot", "/index.php", false},
			{"FooBot", "/index.php?x=1", true},
			{"FooBot", "/a/private/b", false},
			{"FooBot", "/foo/quz", false}, // '#' starts a comment
			{"FooBot", "/foo/quz2", false},
		}},
		{"bom-crlf.txt", []check{ // google/robotstxt ID_UTF8ByteOrderMarkIsSkipped
			{"foobot", "/private", false},
			{"foobot", "/public", true},
			{"otherbot", "/public", false},
		}},
		{"cr-only.txt", []check{
			{"foobot", "/cr-only", false},
			{"foobot", "/cr-only/open", true},
			{"foobot", "/x", true},
		}},
	}
	for _, tt := range tests {
		runChecks(t, tt.file, readTestdata(t, tt.file), tt.checks, true)
	}
}

func TestMatching(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		checks []check
		// rfc marks cases where RFC 9309 and Google's parser differ; the
		// oracle is not asked.
		rfc bool
	}{
		{"line syntax (google ID_LineSyntax_Line)", "user-agent: FooBot\ndisallow: /\n", []check{{"FooBot", "/x/y", false}}, false},
		{"unknown keys ignored", "foo: FooBot\nbar: /\n", []check{{"FooBot", "/x/y", true}}, false},
		{"missing colon accepted (google)", "user-agent FooBot\ndisallow /\n", []check{{"FooBot", "/x/y", false}}, false},
		{"keys case-insensitive", "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n", []check{{"FooBot", "/x/y", true}, {"FooBot", "/a/b", false}}, false},
		{"agent token before space/slash", "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n", []check{{"Foo", "/x/y", true}, {"Foo", "/a/b", false}, {"Bar", "/a/b", true}}, false},
		{"agent with version", "User-agent: wirebot/2.0\nDisallow: /\n", []check{{"wirebot", "/", false}}, false},
		{"values case-sensitive", "user-agent: FooBot\ndisallow: /x/\n", []check{{"FooBot", "/x/y", false}, {"FooBot", "/X/y", true}}, false},
		{"longest match wins", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/\n", []check{{"FooBot", "/x/page.html", false}}, false},
		{"longer allow wins", "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n", []check{{"FooBot", "/x/page.html", true}, {"FooBot", "/x/", false}}, false},
		{"allow wins ties", "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n", []check{{"FooBot", "/x/page.html", true}}, false},
		{"allow wins ties on /", "user-agent: FooBot\ndisallow: /\nallow: /\n", []check{{"FooBot", "/x/page.html", true}}, false},
		{"empty rules", "user-agent: FooBot\ndisallow: \nallow: \n", []check{{"FooBot", "/x", true}}, false},
		{"wildcard length counts", "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n", []check{{"FooBot", "/page.html", false}, {"FooBot", "/page", true}}, false},
		{"specific group beats global", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", []check{{"FooBot", "/x/page", true}, {"FooBot", "/y/page", false}, {"BarBot", "/x/page", false}}, false},
		{"global group secondary", "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n", []check{{"FooBot", "/", false}, {"BarBot", "/", true}}, false},
		{"global star with trailing text", "user-agent: * # all\ndisallow: /\n", []check{{"FooBot", "/a", false}}, false},
		{"sitemap does not close a group", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", []check{{"FooBot", "/", false}, {"BarBot", "/", false}}, false},
		{"empty file", "", []check{{"FooBot", "/", true}}, false},
		{"only comments", "# nothing here\n\n", []check{{"FooBot", "/a", true}}, false},
		{"dollar in the middle is literal", "user-agent: *\ndisallow: /a$b\n", []check{{"x", "/a$b", false}, {"x", "/a", true}}, false},
		{"query matched", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", []check{{"FooBot", "/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true}, {"FooBot", "/foo/bar", false}}, false},
		{"non-ASCII pattern encoded (RFC 9309 §2.2.2)", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", []check{{"FooBot", "/foo/bar/%E3%83%84", true}, {"FooBot", "/foo/bar/%e3%83%84", true}}, true},
		{"unreserved escapes decoded in pattern (RFC 9309 §2.2.2)", "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", []check{{"FooBot", "/foo/bar/baz", true}, {"FooBot", "/foo/bar/%62%61%7A", true}}, true},
		{"unreserved escapes decoded in URL", "User-agent: FooBot\nDisallow: /foo/bar/baz\n", []check{{"FooBot", "/foo/bar/%62%61%7a", false}}, true},
		{"reserved escapes kept", "User-agent: FooBot\nDisallow: /a%2Fb\n", []check{{"FooBot", "/a/b", true}, {"FooBot", "/a%2fb", false}}, true},
		{"robots.txt always allowed (RFC 9309 §2.2.2)", "User-agent: *\nDisallow: /\n", []check{{"FooBot", "/robots.txt", true}, {"FooBot", "/robots.txt?x", false}}, true},
		{"BOM in the middle is not skipped", "User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n", []check{{"foo", "/AnyValue", true}}, false},
		{"partial BOM skipped", "\xEF\xBBUser-Agent: foo\nDisallow: /AnyValue\n", []check{{"foo", "/AnyValue", false}}, false},
		{"typos accepted", "user-agent: FooBot\ndisalow: /a\ndissallow: /b\n", []check{{"FooBot", "/a", false}, {"FooBot", "/b", false}}, false},
	}
	for _, tt := range tests {
		runChecks(t, tt.name, tt.body, tt.checks, !tt.rfc)
	}
}

func TestAllowedURLForms(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /private\nDisallow: /*?session=\n"), "wirebot")
	tests := []struct {
		url  string
		want bool
	}{
		{"http://a.cl/private/x", false},
		{"http://a.cl/public", true},
		{"http://a.cl", true},
		{"https://a.cl:8443/private", false},
		{"http://a.cl/list?session=1", false},
		{"http://a.cl/list#session=1", true},
		{"/private#frag", false},
		{"http://a.cl/%70rivate", false}, // %70 is 'p'
		{"http://a.cl/robots.txt", true},
		{"http://[::1", false}, // unparsable
	}
	for _, tt := range tests {
		if got := r.Allowed(tt.url); got != tt.want {
			t.Errorf("Allowed(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

// TestForStatus follows RFC 9309 §2.3.1.
func TestForStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	tests := []struct {
		status  int
		mode    Mode
		private bool // may /private be fetched
		public  bool // may /public be fetched
	}{
		{200, ModeRules, false, true},
		{206, ModeRules, false, true},
		{301, ModeAllowAll, true, true}, // §2.3.1.2: redirects exhausted = unavailable
		{401, ModeAllowAll, true, true}, // §2.3.1.3: 4xx = unavailable
		{403, ModeAllowAll, true, true},
		{404, ModeAllowAll, true, true},
		{410, ModeAllowAll, true, true},
		{429, ModeDisallowAll, false, false}, // treated as 5xx (Google)
		{500, ModeDisallowAll, false, false}, // §2.3.1.4: unreachable
		{503, ModeDisallowAll, false, false},
		{0, ModeDisallowAll, false, false}, // no response
	}
	for _, tt := range tests {
		r := ForStatus(tt.status, body, "wirebot")
		if r.Mode() != tt.mode || r.Status() != tt.status {
			t.Errorf("status %d: mode %v status %d, want %v", tt.status, r.Mode(), r.Status(), tt.mode)
		}
		if got := r.Allowed("/private"); got != tt.private {
			t.Errorf("status %d: /private allowed=%v, want %v", tt.status, got, tt.private)
		}
		if got := r.Allowed("/public"); got != tt.public {
			t.Errorf("status %d: /public allowed=%v, want %v", tt.status, got, tt.public)
		}
		if !r.Allowed("/robots.txt") {
			t.Errorf("status %d: /robots.txt not allowed", tt.status)
		}
	}
	if r := ForFetch(200, "User-agent: *\nAllow: /\n", "timeout: total time limit 60s exceeded", "wirebot"); r.Mode() != ModeDisallowAll || r.Status() != 200 || r.Allowed("/a") {
		t.Errorf("a robots.txt cut short must disallow all, got %v", r.Mode())
	}
	if r := ForFetch(200, "User-agent: *\nDisallow: /a\n", "", "wirebot"); r.Mode() != ModeRules || r.Allowed("/a") || !r.Allowed("/b") {
		t.Errorf("ForFetch(200) = %v", r.Mode())
	}
	var nilRules *Rules
	if !nilRules.Allowed("/x") || nilRules.Mode() != ModeAllowAll || nilRules.CrawlDelay() != 0 {
		t.Error("nil rules should allow everything")
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		name string
		body string
		want time.Duration
	}{
		{"global", "User-agent: *\nCrawl-delay: 10\n", 10 * time.Second},
		{"fraction", "User-agent: *\nCrawl-delay: 0.5\n", 500 * time.Millisecond},
		{"specific wins", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: wirebot\nCrawl-delay: 2\nDisallow: /x\n", 2 * time.Second},
		{"specific without delay ignores global", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: wirebot\nDisallow: /x\n", 0},
		{"other agent only", "User-agent: otherbot\nCrawl-delay: 10\n", 0},
		{"largest of several", "User-agent: wirebot\nCrawl-delay: 1\nCrawl-delay: 3\n", 3 * time.Second},
		{"case-insensitive key", "User-agent: *\nCRAWL-DELAY: 4\n", 4 * time.Second},
		{"comment after value", "User-agent: *\nCrawl-delay: 7 # seconds\n", 7 * time.Second},
		{"garbage ignored", "User-agent: *\nCrawl-delay: soon\n", 0},
		{"negative ignored", "User-agent: *\nCrawl-delay: -5\n", 0},
		{"NaN ignored", "User-agent: *\nCrawl-delay: NaN\n", 0},
		{"huge capped", "User-agent: *\nCrawl-delay: 1e300\n", maxDelay},
		{"before any group ignored", "Crawl-delay: 9\nUser-agent: *\nDisallow:\n", 0},
		{"fixture special-chars", readTestdata(t, "special-chars.txt"), 0}, // FooBot group, asked as wirebot
	}
	for _, tt := range tests {
		if got := Parse([]byte(tt.body), "wirebot").CrawlDelay(); got != tt.want {
			t.Errorf("%s: crawl-delay %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := Parse([]byte(readTestdata(t, "special-chars.txt")), "FooBot").CrawlDelay(); got != 7*time.Second {
		t.Errorf("special-chars.txt as FooBot: crawl-delay %v, want 7s", got)
	}
	if got := Parse([]byte(readTestdata(t, "bom-crlf.txt")), "foobot").CrawlDelay(); got != 2500*time.Millisecond {
		t.Errorf("bom-crlf.txt as foobot: crawl-delay %v, want 2.5s", got)
	}
}

// TestClip checks the size cap (RFC 9309 §2.5) on a file larger than
// 500 KiB whose last line would forbid everything.
func TestClip(t *testing.T) {
	const max = 500 << 10
	var b bytes.Buffer
	b.WriteString("User-agent: *\nDisallow: /private\n")
	for b.Len() < max+100 {
		b.WriteString("# padding padding padding padding padding padding\n")
	}
	b.WriteString("Disallow: /\n")
	body := Clip(b.Bytes(), max, false)
	if len(body) > max {
		t.Fatalf("clipped to %d bytes, want at most %d", len(body), max)
	}
	r := ForStatus(200, body, "wirebot")
	if !r.Allowed("/public") || r.Allowed("/private") {
		t.Errorf("rules past the cap were applied, or rules before it lost")
	}

	// A rule cut in the middle of its line is dropped, not applied.
	full := []byte("User-agent: *\nDisallow: /private-area\n")
	cut := full[:len(full)-10] // "...Disallow: /priva"
	got := Clip(cut, 1<<20, true)
	if string(got) != "User-agent: *\n" {
		t.Errorf("Clip(truncated) = %q", got)
	}
	if !ForStatus(200, got, "wirebot").Allowed("/priv") {
		t.Error("half a rule was applied")
	}
	if got := Clip(full, 1<<20, false); !bytes.Equal(got, full) {
		t.Errorf("Clip(whole) changed the body")
	}
	crlf := []byte("User-agent: *\r\nDisallow: /a\r\nDisall")
	if got := Clip(crlf, int64(len(crlf)), true); string(got) != "User-agent: *\r\nDisallow: /a\r\n" {
		t.Errorf("Clip(crlf) = %q", got)
	}
}

// TestLongLine follows google/robotstxt GoogleOnly_LineTooLong: a line
// longer than 16 KiB is cut, so a pattern past that point is not seen.
func TestLongLine(t *testing.T) {
	long := "/x/" + strings.Repeat("a", 2083*8)
	body := "user-agent: FooBot\ndisallow: " + long + "/qux\nallow: /x/\n"
	r := Parse([]byte(body), "FooBot")
	if r.Allowed("/x/qux") != true {
		t.Error("allow after a long line lost")
	}
}

func TestModeString(t *testing.T) {
	for m, want := range map[Mode]string{ModeRules: "rules", ModeAllowAll: "allow-all", ModeDisallowAll: "disallow-all", Mode(9): "mode(9)"} {
		if m.String() != want {
			t.Errorf("%d: %q", int(m), m.String())
		}
	}
}

func BenchmarkAllowed(b *testing.B) {
	var body strings.Builder
	body.WriteString("User-agent: *\n")
	for i := 0; i < 1000; i++ {
		body.WriteString("Disallow: /dir" + strings.Repeat("x", i%20) + "/*.php$\n")
	}
	r := Parse([]byte(body.String()), "wirebot")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Allowed("http://a.cl/some/long/path/to/a/page.html?with=query")
	}
}
