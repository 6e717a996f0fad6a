package scope

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

func testScope() *Scope {
	cfg := config.Defaults().Scope
	cfg.Domains = []string{"cl", ".Gob.AR"}
	cfg.MaxURLLength = 64
	return MustNew(cfg)
}

func TestCheck(t *testing.T) {
	s := testScope()
	cases := []struct {
		url  string
		want Reason // "" means in scope
		rule string
	}{
		{"http://www.uchile.cl/", "", "4: host ends with .cl"},
		{"https://uchile.cl/a/b.html", "", "4: host ends with .cl; html is not excluded"},
		{"http://www.uchile.cl:8080/", "", "4: the port does not count"},
		{"http://user@www.uchile.cl/", "", "2: user information is not the host"},
		{"http://WWW.UChile.CL./", "", "4: host compared lower-case without trailing dot"},
		{"http://www.argentina.gob.ar/", "", "4: suffixes are lower-cased, leading dot ignored"},
		{"http://www.uchile.com/", ReasonOutOfScope, "4: .com is not under cl"},
		{"http://www.notcl/", ReasonOutOfScope, "4: suffix matched on labels, 'notcl' is not under 'cl'"},
		{"http://uchilecl.com/", ReasonOutOfScope, "4: 'cl' inside a label is not a match"},
		{"http://gob.ar/", ReasonOutOfScope, "5: equals the suffix gob.ar, a public suffix with no registrable domain"},
		{"http://www.ar/", ReasonOutOfScope, "4: under ar but not under gob.ar"},
		{"http://cl/", ReasonOutOfScope, "5: the suffix itself is a public suffix, no registrable domain"},
		{"http://gob.cl/", ReasonOutOfScope, "5: gob.cl is a public suffix (PSL), no registrable domain"},
		{"http://www.gob.cl/", "", "5: www.gob.cl has registrable domain www.gob.cl"},
		{"http://localhost/", ReasonOutOfScope, "4/5: single-label host"},
		{"http://127.0.0.1/", ReasonIPHost, "3: IPv4 literal belongs to no domain"},
		{"http://[::1]:8080/", ReasonIPHost, "3: IPv6 literal belongs to no domain"},
		{"ftp://www.uchile.cl/", ReasonScheme, "2: only http and https"},
		{"www.uchile.cl/", ReasonScheme, "2: not an absolute URL"},
		{"http:///path", ReasonNoHost, "2: no host"},
		{"http://www.uchile.cl/logo.PNG", ReasonExtension, "6: extension compared case-insensitively"},
		{"http://www.uchile.cl/a/file.tar.gz", ReasonExtension, "6: last extension of the last segment"},
		{"http://www.uchile.cl/img.jpg?w=10", ReasonExtension, "6: the query does not hide the extension"},
		{"http://www.uchile.cl/show?f=a.jpg", "", "6: an extension in the query does not count"},
		{"http://www.uchile.cl/a.jpg/", "", "6: only the last segment counts"},
		{"http://www.uchile.cl/x.jpg;jsessionid=1", ReasonExtension, "6: a ;param (RFC 3986 §3.3) is not part of the name"},
		{"http://www.uchile.cl/dir.", "", "6: a trailing dot is no extension"},
		{"http://www.uchile.cl/" + strings.Repeat("a", 64), ReasonTooLong, "1: longer than max_url_length"},
	}
	for _, c := range cases {
		err := s.Check(c.url)
		if got := ReasonOf(err); got != c.want {
			t.Errorf("Check(%q) = %v, want reason %q (rule %s)", c.url, err, c.want, c.rule)
		}
	}
}

// Suffixes are matched on the host, and the host must have a registrable
// domain under the public suffix list: a suffix more specific than a
// registrable domain narrows the crawl to that subtree, and private
// suffixes of the list make each of their subdomains a site of its own.
func TestRegistrableDomain(t *testing.T) {
	cfg := config.Defaults().Scope
	cfg.Domains = []string{"dcc.uchile.cl", "gob.cl", "github.io"}
	s := MustNew(cfg)
	for _, c := range []struct {
		url  string
		want Reason
	}{
		{"http://www.dcc.uchile.cl/", ""},           // under the narrower suffix; registrable uchile.cl
		{"http://dcc.uchile.cl/", ""},               // equals it
		{"http://www.uchile.cl/", ReasonOutOfScope}, // outside the subtree
		{"http://www.minsal.gob.cl/", ""},           // registrable minsal.gob.cl
		{"http://gob.cl/", ReasonOutOfScope},        // a public suffix itself
		{"http://someone.github.io/", ""},           // private suffix: someone.github.io is registrable
		{"http://github.io/", ReasonOutOfScope},     // the private suffix itself
		{"http://www.dcc.uchile.cl.evil.com/", ReasonOutOfScope},
	} {
		if got := ReasonOf(s.Check(c.url)); got != c.want {
			t.Errorf("Check(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

func TestPatterns(t *testing.T) {
	cfg := config.Defaults().Scope
	cfg.Include = []string{`^https?://[^/]*\.uchile\.cl/`, `^http://www\.gob\.cl/`}
	cfg.Exclude = []string{`/calendar/`, `[?&]print=1`}
	s, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url  string
		want Reason
		why  string
	}{
		{"http://www.uchile.cl/", "", "matches the first include pattern"},
		{"https://dcc.uchile.cl/a", "", "include patterns are regular expressions"},
		{"http://www.gob.cl/x", "", "matches the second include pattern"},
		{"http://www.puc.cl/", ReasonNotIncluded, "in the domains but matches no include pattern"},
		{"http://www.uchile.cl/calendar/2026/11", ReasonExcluded, "calendar trap excluded"},
		{"http://www.uchile.cl/n?id=1&print=1", ReasonExcluded, "exclude wins over include"},
		{"http://www.uchile.com/", ReasonOutOfScope, "patterns never widen the domains"},
		{"http://www.uchile.cl/calendar/a.jpg", ReasonExtension, "extension is checked before the patterns"},
	}
	for _, c := range cases {
		if got := ReasonOf(s.Check(c.url)); got != c.want {
			t.Errorf("Check(%q) = %q, want %q (%s)", c.url, got, c.want, c.why)
		}
	}
	cfg.Exclude = []string{"("}
	if _, err := Compile(cfg); err == nil || !strings.Contains(err.Error(), "scope.exclude") {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestCheckNoLengthLimit(t *testing.T) {
	s := MustNew(config.Scope{Domains: []string{"cl"}})
	if err := s.Check("http://a.cl/" + strings.Repeat("x", 5000)); err != nil {
		t.Errorf("max_url_length 0 should mean no limit here: %v", err)
	}
}

func TestErrorMessage(t *testing.T) {
	err := testScope().Check("http://x.com/")
	if err == nil || !strings.Contains(err.Error(), "out-of-scope") || !strings.Contains(err.Error(), "x.com") {
		t.Errorf("message %v should name the reason and the host", err)
	}
}

// FuzzScope checks that Check never panics and that an accepted URL
// really has a host under a configured suffix and no excluded extension.
func FuzzScope(f *testing.F) {
	for _, seed := range []string{
		"http://www.uchile.cl/", "https://a.b.cl:443/x.jpg", "http://[::1]/", "http://@/",
		"http://a.cl./%2e%2e/", "HTTP://A.CL/B.PDF?c=d#e", "://", "http://a.cl:99999999/", "http://x.gob.ar/;.jpg",
	} {
		f.Add(seed)
	}
	s := testScope()
	norm := urlnorm.New(0)
	f.Fuzz(func(t *testing.T, raw string) {
		err := s.Check(raw)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("error without reason: %v", err)
			}
			return
		}
		_, host, path, ok := split(raw)
		if !ok || !s.inDomains(host) {
			t.Fatalf("accepted %q with host %q", raw, host)
		}
		if s.extensions[extension(path)] {
			t.Fatalf("accepted %q with excluded extension", raw)
		}
		// A URL accepted in normal form keeps the same host after
		// normalising again.
		if n, err := norm.Normalize(raw); err == nil && n == raw && urlnorm.Host(n) != host {
			t.Fatalf("host of %q: split says %q, urlnorm says %q", raw, host, urlnorm.Host(n))
		}
	})
}

// patternScope is testScope with include and exclude patterns, so that
// every rule of Check can decide.
func patternScope() *Scope {
	cfg := config.Defaults().Scope
	cfg.Domains = []string{"cl", ".Gob.AR"}
	cfg.MaxURLLength = 64
	cfg.Include = []string{`^https?://[^/]*\.(uchile\.cl|gob\.ar)/`}
	cfg.Exclude = []string{`/calendar/`}
	return MustNew(cfg)
}

// TestCheckInSite: CheckSite on a normal URL's site key and CheckInSite
// on the URL give Check's verdict, whichever rule decides, in Check's
// order (a URL too long and out of scope is too long).
func TestCheckInSite(t *testing.T) {
	s := patternScope()
	long := "http://x.com/" + strings.Repeat("a", 80)
	for _, u := range []string{
		"http://www.uchile.cl/", "https://dcc.uchile.cl:8443/a/b.html?x=1", "http://www.uchile.cl/foto.JPG",
		"http://www.uchile.cl/foto.jpg?x=.html", "http://www.uchile.cl/calendar/x", "http://www.usach.cl/",
		"http://x.com/", "http://127.0.0.1/", "http://[::1]/", "http://cl/", "ftp://www.uchile.cl/", long,
		"http://www.uchile.com/1.html", "http://gob.ar/", "http://a.gob.ar/x.jpg", "http://x.cl/",
	} {
		key := urlnorm.SiteKey(u)
		got := s.CheckInSite(u, len(key), s.CheckSite(key))
		if want := s.Check(u); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: CheckInSite %v, Check %v", u, got, want)
		}
	}
	if ReasonOf(s.CheckInSite(long, len("http://x.com"), s.CheckSite("http://x.com"))) != ReasonTooLong {
		t.Error("the length is not checked first")
	}
}

// FuzzCheckInSite: for every URL in normal form, CheckSite and
// CheckInSite say exactly what Check says.
func FuzzCheckInSite(f *testing.F) {
	for _, seed := range []string{
		"http://www.uchile.cl/", "https://a.b.cl:443/x.jpg", "http://[::1]/", "http://a.gob.ar/calendar/",
		"HTTP://A.CL/B.PDF?c=d#e", "http://x.com/", "http://a.cl./%2e%2e/", "http://x.gob.ar/;.jpg",
	} {
		f.Add(seed)
	}
	s := patternScope()
	norm := urlnorm.New(0)
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := norm.Normalize(raw)
		if err != nil {
			return
		}
		key := urlnorm.SiteKey(u)
		got := s.CheckInSite(u, len(key), s.CheckSite(key))
		if want := s.Check(u); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q (normal %q): CheckInSite %v, Check %v", raw, u, got, want)
		}
	})
}

// TestNumericIPHosts checks that a host written as an IPv4 number in any
// of the forms browsers read (one number, hex, octal, short forms) or as
// an uncompressed IPv6 address is, once normalised (urlnorm parses hosts
// as the WHATWG URL Standard does), an IP host that scope refuses; so is
// a private address, whatever its spelling, before the harvester's
// address policy sees it.
func TestNumericIPHosts(t *testing.T) {
	s := testScope()
	norm := urlnorm.New(0)
	for _, raw := range []string{"http://999999999/", "http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/", "http://127.1/", "http://0x7F000001/", "http://10.0.0.1./", "http://[0:0:0:0:0:0:0:1]/", "http://[::ffff:127.0.0.1]/"} {
		n, err := norm.Normalize(raw)
		if err != nil {
			t.Errorf("Normalize(%q): %v", raw, err)
			continue
		}
		if got := ReasonOf(s.Check(n)); got != ReasonIPHost {
			t.Errorf("Check(Normalize(%q) = %q): reason %q, want %q", raw, n, got, ReasonIPHost)
		}
	}
}
