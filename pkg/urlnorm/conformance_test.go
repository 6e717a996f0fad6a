package urlnorm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// webCase is one case of the WHATWG URL test suite
// (testdata/urltestdata.json, from web-platform-tests).
type webCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

// loadWebCases returns the cases of the suite whose base is an http or
// https URL.
func loadWebCases(t testing.TB) []webCase {
	t.Helper()
	data, err := os.ReadFile("testdata/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("urltestdata.json: %v", err)
	}
	var out []webCase
	for _, r := range raw {
		if r[0] != '{' {
			continue // the comments between cases
		}
		var c webCase
		if err := json.Unmarshal(r, &c); err != nil {
			t.Fatalf("urltestdata.json: %v", err)
		}
		if c.Base != nil && isWeb(*c.Base) {
			out = append(out, c)
		}
	}
	return out
}

func isWeb(u string) bool {
	return strings.HasPrefix(u, "http:") || strings.HasPrefix(u, "https:")
}

// policyDifferences are the cases of the suite where the crawler's answer
// is not the browsers' answer after normalisation, on purpose: each
// with the rule responsible (docs/urlnorm.md). The key is base + " " +
// input.
var policyDifferences = map[string]string{
	"http://example.org/foo/bar http://f:0/c":              "port 0 rejected (bad-port): no server listens there",
	"http://example.org/foo/bar http://f:00000000000000/c": "port 0 rejected (bad-port): no server listens there",
}

// TestWebPlatformURLs runs every case of the WHATWG URL test suite whose
// base is http(s): where browsers fail, the crawler rejects; where they
// resolve to an http(s) URL, the crawler gives Normalize of their answer,
// but for the policy differences listed; where they resolve to another
// scheme, the crawler rejects it for its scheme.
func TestWebPlatformURLs(t *testing.T) {
	n := New(0)
	var web, agree, policy, failures, otherScheme int
	seen := map[string]bool{}
	for _, c := range loadWebCases(t) {
		key := *c.Base + " " + c.Input
		got, err := n.ResolveString(*c.Base, c.Input)
		switch {
		case c.Failure:
			failures++
			if err == nil {
				t.Errorf("browsers fail on %q against %q; the crawler resolves it to %q", c.Input, *c.Base, got)
			}
		case !isWeb(c.Href):
			otherScheme++
			if ReasonOf(err) != ReasonScheme {
				t.Errorf("browsers resolve %q against %q to %q; the crawler gives %q, %v; want a rejection for the scheme", c.Input, *c.Base, c.Href, got, err)
			}
		default:
			web++
			want, werr := n.Normalize(c.Href)
			if err == nil && werr == nil && got == want {
				agree++
				if _, ok := policyDifferences[key]; ok {
					t.Errorf("%q against %q agrees with browsers (%q) but is listed as a policy difference", c.Input, *c.Base, got)
				}
				continue
			}
			if why, ok := policyDifferences[key]; ok {
				policy++
				seen[key] = true
				t.Logf("policy: %q against %q: browsers %q, crawler %q, %v (%s)", c.Input, *c.Base, c.Href, got, err, why)
				continue
			}
			t.Errorf("%q against %q: browsers %q (normalised %q, %v), crawler %q, %v", c.Input, *c.Base, c.Href, want, werr, got, err)
		}
	}
	for key := range policyDifferences {
		if !seen[key] {
			t.Errorf("policy difference %q matches no differing case", key)
		}
	}
	t.Logf("%d cases with an http(s) answer: %d agree (%.1f %%), %d policy differences; %d failures all rejected; %d other schemes rejected",
		web, agree, 100*float64(agree)/float64(web), policy, failures, otherScheme)
	if agree*100 < web*98 {
		t.Errorf("only %d of %d cases agree with browsers, want at least 98 %%", agree, web)
	}
}

// FuzzWebResolve compares Resolve, fast paths included, with the WHATWG
// parser alone on any (base, input) pair: it never panics; where the
// parser fails, the crawler rejects; where the parser gives an http(s)
// URL, the crawler gives the normal form of it, or rejects it for one of
// its documented rules (a host that is no DNS name or only a dot, port 0, a URL too
// long); any other scheme is rejected for its scheme.
func FuzzWebResolve(f *testing.F) {
	for _, c := range loadWebCases(f) {
		f.Add(*c.Base, c.Input)
	}
	for _, r := range []string{"a", "../b?c=d#e", "\\\\x\\y", "//999999999/", "//0x7f.1", "?q='x'", "a\tb\nc", " /x ", ":23", "%2e%2E/x", "/a;jsessionid=1/b", "HTTP://A.CL:80/", "//xn--and-6ma2c.cl/", "//ñandú.cl/a"} {
		f.Add("http://www.example.cl/a/b.html?q=1", r)
	}
	n := New(0)
	f.Fuzz(func(t *testing.T, base, input string) {
		got, err := n.ResolveString(base, input)
		var b *whatwg.Url
		if base != "" {
			b, _ = webParser.Parse(base)
		}
		u, lerr := webParser.BasicParser(input, b, nil, whatwg.NoState)
		switch {
		case lerr != nil:
			if err == nil {
				t.Fatalf("the parser fails on %q against %q (%v); the crawler resolves it to %q", input, base, lerr, got)
			}
		case !isWeb(u.Href(true)):
			if ReasonOf(err) != ReasonScheme {
				t.Fatalf("the parser gives %q for %q against %q; the crawler %q, %v; want a rejection for the scheme", u.Href(true), input, base, got, err)
			}
		case u.Hostname() == "":
			// The library keeps such a URL from a base it parsed
			// without a host ("http:%"); the Standard fails on it.
			if ReasonOf(err) != ReasonNoHost {
				t.Fatalf("the parser gives %q, without a host, for %q against %q; the crawler %q, %v; want no-host", u.Href(true), input, base, got, err)
			}
		default:
			want, werr := n.Normalize(u.Href(true))
			if err == nil && werr == nil {
				if got != want {
					t.Fatalf("%q against %q: the parser gives %q (normalised %q), the crawler %q", input, base, u.Href(true), want, got)
				}
				return
			}
			switch ReasonOf(err) {
			case ReasonBadHost, ReasonNoHost, ReasonBadPort, ReasonTooLong:
				if werr == nil {
					t.Fatalf("%q against %q: the crawler rejects it (%v) but accepts the parser's %q as %q", input, base, err, u.Href(true), want)
				}
			default:
				t.Fatalf("%q against %q: the parser gives %q, the crawler %q, %v (no documented rule)", input, base, u.Href(true), got, err)
			}
		}
	})
}
