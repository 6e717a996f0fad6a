package urlnorm

import (
	"bufio"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	n := New(0)
	tests := []struct {
		in, want string
		why      string
	}{
		{"HTTP://WWW.Example.CL/", "http://www.example.cl/", "RFC 3986 §6.2.2.1: scheme and host are case-insensitive"},
		{"http://www.example.cl", "http://www.example.cl/", "§6.2.3: empty path is /"},
		{"http://www.example.cl:80/a", "http://www.example.cl/a", "§6.2.3: default port removed"},
		{"https://www.example.cl:443/a", "https://www.example.cl/a", "§6.2.3: default https port removed"},
		{"http://www.example.cl:8080/a", "http://www.example.cl:8080/a", "other ports kept"},
		{"http://www.example.cl/a/./b/../c", "http://www.example.cl/a/c", "§5.2.4: dot segments"},
		{"http://www.example.cl/../../a", "http://www.example.cl/a", "§5.2.4: dot segments above the root"},
		{"http://www.example.cl/a/..", "http://www.example.cl/", "§5.2.4: trailing .. keeps the slash"},
		{"http://www.example.cl/%7Euser/%41", "http://www.example.cl/~user/A", "§6.2.2.2: unreserved decoded"},
		{"http://www.example.cl/a%2fb%3F", "http://www.example.cl/a%2Fb%3F", "§6.2.2.1: escapes upper-cased, reserved kept escaped"},
		{"http://www.example.cl/a b", "http://www.example.cl/a%20b", "space escaped"},
		{"http://www.example.cl/ñandú", "http://www.example.cl/%C3%B1and%C3%BA", "non-ASCII path escaped as UTF-8"},
		{"http://www.example.cl/#top", "http://www.example.cl/", "fragment dropped"},
		{"http://www.example.cl/?", "http://www.example.cl/", "empty query dropped"},
		{"http://www.example.cl/p?b=2&a=1", "http://www.example.cl/p?b=2&a=1", "query order kept"},
		{"http://www.example.cl/p?PHPSESSID=abc&id=3", "http://www.example.cl/p?id=3", "session id removed"},
		{"http://www.example.cl/p;jsessionid=x?id=3&sid=9", "http://www.example.cl/p?id=3", "session ids in query and path parameters removed"},
		{"http://www.example.cl/a;JSESSIONID=1;type=a/b;v=2", "http://www.example.cl/a;type=a/b;v=2", "§3.3: only the session path parameter goes, case-insensitively"},
		{"http://www.example.cl/dir;sid=9/x", "http://www.example.cl/dir/x", "a path parameter ends at the next /"},
		{"http://www.ñandú.cl/", "http://www.xn--and-6ma2c.cl/", "IDN to punycode"},
		{"http://WWW.EXAMPLE.CL./", "http://www.example.cl/", "trailing dot of host removed"},
		{"http://user:pw@www.example.cl/", "http://www.example.cl/", "user information removed"},
		{"  http://www.example.cl/a  ", "http://www.example.cl/a", "surrounding space trimmed"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x", "IPv6 literal"},
		{"http://127.0.0.1/x", "http://127.0.0.1/x", "IPv4 literal"},
		{"http://www.example.cl/a%zz", "http://www.example.cl/a%25zz", "WHATWG: a bad escape is kept as it is; the crawler escapes its %"},
		{"http:///path", "http://path/", "WHATWG: slashes after http: are skipped to the host"},
		{"http://www.example.cl\\a\\b", "http://www.example.cl/a/b", "WHATWG: a backslash is a slash"},
		{"http://www.exa\tmple.cl/a\nb", "http://www.example.cl/ab", "WHATWG: tabs and newlines removed"},
		{"http://999999999/", "http://59.154.201.255/", "WHATWG: IPv4 as one number"},
		{"http://0x7f.1/", "http://127.0.0.1/", "WHATWG: IPv4 in hex and short forms"},
		{"http://[0:0::1]/", "http://[::1]/", "WHATWG: IPv6 compressed"},
		{"http://a.cl/p?q='x'", "http://a.cl/p?q=%27x%27", "WHATWG: apostrophe escaped in the query"},
	}
	for _, tc := range tests {
		got, err := n.Normalize(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: Normalize(%q) = %q, want error", tc.why, tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: Normalize(%q) = %q, %v; want %q", tc.why, tc.in, got, err, tc.want)
		}
	}
}

func TestNoSessionParams(t *testing.T) {
	n := NewWithParams(0, nil)
	for _, u := range []string{"http://www.example.cl/p;jsessionid=x?id=3&sid=9", "http://www.example.cl/p?PHPSESSID=1"} {
		if got, err := n.Normalize(u); err != nil || got != u {
			t.Errorf("without session parameters Normalize(%q) = %q, %v; want it unchanged", u, got, err)
		}
	}
	n = NewWithParams(0, []string{"token"})
	if got, _ := n.Normalize("http://a.cl/p?token=1&sid=2"); got != "http://a.cl/p?sid=2" {
		t.Errorf("configured parameters: got %q", got)
	}
}

func TestReject(t *testing.T) {
	n := New(100)
	tests := []struct {
		in   string
		want Reason
	}{
		{"mailto:a@b.cl", ReasonScheme},
		{"javascript:void(0)", ReasonScheme},
		{"ftp://ftp.example.cl/", ReasonScheme},
		{"/relative/path", ReasonScheme},
		{"http://", ReasonNoHost},
		{"http://256.256.256.256/", ReasonUnparsable},
		{"http://a.09/", ReasonUnparsable},
		{"http://example.cl:0/", ReasonBadPort},
		{"http://exa mple.cl/", ReasonUnparsable},
		{"http://example.cl:99999/", ReasonBadPort},
		{"http://ex*ample.cl/", ReasonBadHost},
		{"http://example.cl/" + strings.Repeat("a", 200), ReasonTooLong},
		{"http://%zz.cl/", ReasonUnparsable},
	}
	for _, tc := range tests {
		_, err := n.Normalize(tc.in)
		if got := ReasonOf(err); got != tc.want {
			t.Errorf("Normalize(%q): reason %q (%v), want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestResolve(t *testing.T) {
	n := New(0)
	base, _ := url.Parse("http://www.example.cl/dir/page.html?x=1")
	tests := []struct{ ref, want string }{
		{"other.html", "http://www.example.cl/dir/other.html"},
		{"../up.html", "http://www.example.cl/up.html"},
		{"/abs", "http://www.example.cl/abs"},
		{"?page=2", "http://www.example.cl/dir/page.html?page=2"},
		{"#frag", "http://www.example.cl/dir/page.html?x=1"},
		{"//other.cl/x", "http://other.cl/x"},
		{"HTTPS://Other.CL:443", "https://other.cl/"},
	}
	for _, tc := range tests {
		got, err := n.Resolve(base, tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
	}
}

func TestSiteKeyAndDynamic(t *testing.T) {
	if got := SiteKey("http://www.example.cl:8080/a/b?x"); got != "http://www.example.cl:8080" {
		t.Errorf("SiteKey = %q", got)
	}
	if got := Host("http://www.example.cl:8080/a"); got != "www.example.cl" {
		t.Errorf("Host = %q", got)
	}
	if !IsDynamic("http://a.cl/x?id=1") || IsDynamic("http://a.cl/x") {
		t.Error("IsDynamic")
	}
}

func seedCorpus(f *testing.F) {
	file, err := os.Open("testdata/urls.txt")
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		f.Add(sc.Text())
	}
}

// FuzzNormalize checks that normalising never panics, that its output is
// a fixed point (normalising twice changes nothing) and that it parses.
func FuzzNormalize(f *testing.F) {
	seedCorpus(f)
	n := New(0)
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := n.Normalize(raw)
		if err != nil {
			return
		}
		s2, err := n.Normalize(s)
		if err != nil {
			t.Fatalf("Normalize(%q) = %q, which is rejected: %v", raw, s, err)
		}
		if s2 != s {
			t.Fatalf("not idempotent: %q -> %q -> %q", raw, s, s2)
		}
		if _, err := url.Parse(s); err != nil {
			t.Fatalf("output %q does not parse: %v", s, err)
		}
	})
}

// FuzzResolve checks that resolving any reference never panics and gives
// a normal form.
func FuzzResolve(f *testing.F) {
	seedCorpus(f)
	n := New(0)
	base, _ := url.Parse("http://www.example.cl/a/b.html?q=1")
	f.Fuzz(func(t *testing.T, ref string) {
		s, err := n.Resolve(base, ref)
		if err != nil {
			return
		}
		if s2, err := n.Normalize(s); err != nil || s2 != s {
			t.Fatalf("Resolve(%q) = %q, renormalised %q, %v", ref, s, s2, err)
		}
	})
}

// FuzzPlainHost checks isNormal's host test against the full path: a
// host it accepts comes out of the WHATWG parser and the crawler's rules
// unchanged.
func FuzzPlainHost(f *testing.F) {
	for _, h := range []string{"www.uchile.cl", "WWW.UChile.CL", "a-b.cl", "xn--and-6ma2c.cl", "a--b.cl", "-a.cl", "a-.cl", "1.2.3", "1.2.3.4", "1-2.3", "a..b", "a_b.cl", "", "x", "-", "9", "a.0x1f", "a.0x", "a.09", "0x1f.cl", strings.Repeat("a", 254)} {
		f.Add(h)
	}
	n := New(0)
	f.Fuzz(func(t *testing.T, h string) {
		if !plainHost(h) {
			return
		}
		want := "http://" + h + "/"
		if got, err := n.normalizeFull(want); err != nil || got != want {
			t.Fatalf("plainHost(%q), but the full path gives %q, %v", h, got, err)
		}
	})
}

// FuzzIsNormal checks the fast path of Normalize: whatever it accepts as
// already normal, the full path normalises to the same string.
func FuzzIsNormal(f *testing.F) {
	seedCorpus(f)
	for _, u := range []string{"http://www.a.cl/x/y.html?id=3&b=%2F", "https://a.cl:8443/", "http://a.cl:80/", "http://a.cl/%7e", "http://a.cl/a/./b", "http://a.cl/?", "http://a.cl/p?sid=1", "http://a.cl/p;jsessionid=1", "http://1.2.3.4/", "http://A.cl/"} {
		f.Add(u)
	}
	n := New(0)
	slow := New(0)
	f.Fuzz(func(t *testing.T, raw string) {
		if !n.isNormal(raw) {
			return
		}
		if _, err := url.Parse(raw); err != nil {
			t.Fatalf("isNormal(%q), but it does not parse: %v", raw, err)
		}
		got, err := slow.normalizeFull(raw)
		if err != nil || got != raw {
			t.Fatalf("isNormal(%q), but the full path gives %q, %v", raw, got, err)
		}
	})
}

// FuzzNearlyNormal checks the second fast path of Normalize: whatever it
// normalises without parsing (a fragment dropped, the scheme and host
// lower-cased), the full path normalises to the same string, and accepts.
func FuzzNearlyNormal(f *testing.F) {
	seedCorpus(f)
	for _, u := range []string{"http://www.a.cl/x#top", "http://www.a.cl/x#%41b", "http://www.a.cl/x#%4", "http://www.a.cl/x#%zz", "http://www.a.cl/x# y ", "http://a.cl/x#\x01",
		"HTTP://WWW.A.CL/x", "Https://A.cl:8443/P?Q=1", "HTTP://A.CL:80/", "HTTP://A.CL/#x", "HTTP://USER@A.CL/", "HTTP://1.2.3.4/", "http://\u212a.cl/", "http://a.cl/a/./b#c", "hTtP://a.Cl/%7e"} {
		f.Add(u)
	}
	n := New(0)
	f.Fuzz(func(t *testing.T, raw string) {
		fast, ok := n.nearlyNormal(raw)
		if !ok {
			return
		}
		full, err := n.normalizeFull(raw)
		if err != nil || full != fast {
			t.Fatalf("nearlyNormal(%q) = %q, the full path gives %q, %v", raw, fast, full, err)
		}
	})
}

// FuzzResolveFast checks the fast path of Resolve: whatever it resolves
// by string operations, the full path
// (the WHATWG parser) resolve to the same string, against bases of
// every shape.
func FuzzResolveFast(f *testing.F) {
	seedCorpus(f)
	for _, r := range []string{"", "a", "a/b.html", "/", "/x/y?id=3&b=c", "?q=2", "?", "..", "../a", "./a", ".", "a/..", "//other.cl/a", "a?b?c", "a//b", "/a?sid=1", "HTTP://A.cl/", "http://a.cl/x", "a=b&c", "~u/", "a.", "a..b", "a%20b", "a%2Fb/../c", "%2e%2e/x", "a%zz", "x,y(1)!*+@$", "a:b", "./a:b", "a;b=c?d;e", "?x=%41", "a?b#c"} {
		f.Add(r)
	}
	n := New(0)
	var bases []*url.URL
	for _, b := range []string{"http://www.example.cl/a/b.html?q=1", "https://a.cl:8443/", "http://a.cl/dir/", "http://a.cl/x/y/z", "http://a.cl/p;jsessionid=1", "http://A.cl/a", "http://a.cl/a/./b"} {
		u, err := url.Parse(b)
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, u)
	}
	// Without session parameters, a base may have path parameters
	// (";x=1") and still be normal.
	noParams := NewWithParams(0, nil)
	f.Fuzz(func(t *testing.T, ref string) {
		for _, n := range []*Normalizer{n, noParams} {
			for _, base := range bases {
				fast, ok := n.resolveFast(base.String(), ref)
				if !ok {
					continue
				}
				slow, err := n.resolveWeb(base.String(), ref)
				if err != nil || slow != fast {
					t.Fatalf("resolveFast(%q, %q) = %q, the full path gives %q, %v (session parameters %q)", base, ref, fast, slow, err, n.SessionParams)
				}
			}
		}
	})
}

// FuzzResolveBase checks the prepared base: ResolveBase gives what
// ResolveNormal gives (URL, or error and reason) for the same base,
// normal or not.
func FuzzResolveBase(f *testing.F) {
	seedCorpus(f)
	for _, r := range []string{"", "a", "/x/y?id=3", "?q=2", "../a", "//other.cl/a", "a:b", "HTTP://A.cl/", "http://a.cl/x", "a%zz", "?x=%41", "a?b#c"} {
		f.Add(r)
	}
	n := New(0)
	var bases []*url.URL
	for _, b := range []string{"http://www.example.cl/a/b.html?q=1", "https://a.cl:8443/", "http://a.cl/dir/", "http://a.cl/x/y/z", "http://a.cl/p;jsessionid=1", "http://A.cl/a", "http://a.cl/a/./b", "http://a.cl", "mailto:x@a.cl", ""} {
		u, err := url.Parse(b)
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, u)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, base := range bases {
			for _, baseStr := range []string{"", base.String()} {
				want, werr := n.ResolveNormal(base, baseStr, ref)
				got, err := n.ResolveBase(n.Prepare(base, baseStr), ref)
				if got != want || (err == nil) != (werr == nil) || ReasonOf(err) != ReasonOf(werr) {
					t.Fatalf("ResolveBase(%q, %q) = %q, %v; ResolveNormal gives %q, %v", base, ref, got, err, want, werr)
				}
			}
		}
	})
}

// BenchmarkNormalize normalises URLs that are not normal, through
// Normalize (with its fast paths) and through the full path alone.
func BenchmarkNormalize(b *testing.B) {
	n := New(0)
	for _, raw := range []string{"http://www.sitio1.cl/seccion3/pagina-12.html#seccion", "HTTP://WWW.SITIO1.CL/seccion3/pagina-12.html", "http://www.sitio1.cl:80/./seccion3/pagina-12.html"} {
		b.Run("normalize/"+raw, func(b *testing.B) {
			for b.Loop() {
				_, _ = n.Normalize(raw)
			}
		})
		b.Run("full/"+raw, func(b *testing.B) {
			for b.Loop() {
				_, _ = n.normalizeFull(raw)
			}
		})
	}
}

// BenchmarkResolve resolves common references against a normal base,
// through Resolve (the fast path where it applies) and through the full
// path alone.
func BenchmarkResolve(b *testing.B) {
	n := New(0)
	base, _ := url.Parse("http://www.example.cl/noticias/2024/index.html")
	for _, ref := range []string{"articulo-1.html", "/contacto", "?page=2", "http://www.uchile.cl/", "fotos/a%20b.jpg", "../otra/pagina.html"} {
		b.Run("resolve/"+ref, func(b *testing.B) {
			for b.Loop() {
				_, _ = n.Resolve(base, ref)
			}
		})
		b.Run("full/"+ref, func(b *testing.B) {
			for b.Loop() {
				_, _ = n.resolveWeb(base.String(), ref)
			}
		})
	}
}

// TestAllowed: the table of allowed says, for every byte, what the
// character classes say: unreserved (RFC 3986 §2.3), sub-delimiters,
// ":", "@" and "/" in a path and a query; the apostrophe in a path only
// and "?" in a query only (the WHATWG special-query percent-encode set).
func TestAllowed(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		unreserved := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("-._~", b) >= 0
		both := unreserved || strings.IndexByte("!$&()*+,;=:@/", b) >= 0
		if got, want := allowed(b, false), both || b == '\''; got != want {
			t.Errorf("%q in a path: %v, want %v", b, got, want)
		}
		if got, want := allowed(b, true), both || b == '?'; got != want {
			t.Errorf("%q in a query: %v, want %v", b, got, want)
		}
		if isUnreserved(b) != unreserved {
			t.Errorf("%q: isUnreserved %v", b, !unreserved)
		}
	}
}
