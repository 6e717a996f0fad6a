package urlnorm

import (
	"strings"
	"testing"
)

// TestSURT: the cases come from the Python surt library's tests
// (tests/test_surt.py: WaybackURLKeyMakerTest and IAURLCanonicalizerTest
// of archive-commons), which pywb's CDXJ indexer uses with its defaults,
// and from the test web's and the harvester's URLs.
func TestSURT(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		// surt test_surt
		{"http://www.archive.org/", "org,archive)/"},
		{"http://archive.org/", "org,archive)/"},
		{"http://archive.org/goo/", "org,archive)/goo"},
		{"http://archive.org/goo/?", "org,archive)/goo"},
		{"http://archive.org/goo/?b&a", "org,archive)/goo?a&b"},
		{"http://archive.org/goo/?a=2&b&a=1", "org,archive)/goo?a=1&a=2&b"},
		{"dns:archive.org", "dns:archive.org"},
		{"mailto:foo@example.com", "mailto:foo@example.com"},
		{"warcinfo:foo.warc.gz", "warcinfo:foo.warc.gz"},
		// IAURLCanonicalizer: host case, www massage, default ports
		{"http://ARCHIVE.ORG/", "org,archive)/"},
		{"http://www.archive.org:80/", "org,archive)/"},
		{"https://www.archive.org:80/", "org,archive:80)/"},
		{"http://www.archive.org:443/", "org,archive:443)/"},
		{"https://www.archive.org:443/", "org,archive)/"},
		{"http://www.archive.org/big/", "org,archive)/big"},
		{"http://www12.foo.com/", "com,foo)/"},
		{"http://www2foo.com/", "com,www2foo)/"},
		{"http://www2.www2foo.com/", "com,www2foo)/"},
		{"http://www34.archive.org/index.html?b=a&b=b&a=b", "org,archive)/index.html?a=b&b=a&b=b"},
		{"http://archive.org/index.html?b=b&a=b", "org,archive)/index.html?a=b&b=b"},
		// alphaReorderQuery: name then value, a bare name first
		{"http://a.cl/?a=1&", "cl,a)/?&a=1"},
		{"http://a.cl/?b=b&a=b&b=a&a=a", "cl,a)/?a=a&a=b&b=a&b=b"},
		{"http://a.cl/?a1=x&a=y", "cl,a)/?a=y&a1=x"},
		// the crawler's URLs: ports, IP literals, fragments, user info
		{"http://www.uchile.cl", "cl,uchile)/"},
		{"http://a.test:45549/Moved?X=Y#frag", "test,a:45549)/moved?x=y"},
		{"http://user:pw@a.cl/x", "cl,a)/x"},
		{"http://127.0.0.1:8080/robots.txt", "1,0,0,127:8080)/robots.txt"},
		{"http://[::1]:8080/a", "[::1]:8080)/a"},
		{"http://a.cl./x", "cl,a)/x"},
		{"HTTP://A.CL/%7Ea", "cl,a)/%7ea"},
		// what a key cannot hold is escaped
		{"http://a.cl/a b", "cl,a)/a%20b"},
		{"http://a.cl/?q=a b", "cl,a)/?q=a%20b"},
		{"http://a.cl/é", "cl,a)/%c3%a9"},
		{"not a url", "not%20a%20url"},
		{"http://a b/", "http://a%20b/"},
		{"", ""},
		// tabs and line breaks are dropped, other bytes kept as they are
		{"http://a.cl/x\ty\r\n", "cl,a)/xy"},
		{"\thttp://a.cl/\xff\n", "cl,a)/%ff"},
	} {
		if got := SURT(tt.in); got != tt.want {
			t.Errorf("SURT(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// BenchmarkSURT is the key of one URL, as the harvester's index makes it
// for every record.
func BenchmarkSURT(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		SURT("http://www.uchile.cl:8080/Noticias/2026/Articulo.html?b=2&a=1")
	}
}

// FuzzSURT checks that a key never panics, is ASCII without white space
// (a CDXJ line splits on the first space) and, for an ASCII http(s) URL,
// does not depend on letter case.
func FuzzSURT(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, raw string) {
		key := SURT(raw)
		for i := 0; i < len(key); i++ {
			if c := key[i]; c <= ' ' || c >= 0x7f {
				t.Fatalf("SURT(%q) = %q holds byte %#x", raw, key, c)
			}
		}
		ascii := true
		for i := 0; i < len(raw); i++ {
			if raw[i] >= 0x80 {
				ascii = false
			}
		}
		if lower := strings.ToLower(raw); ascii && (strings.HasPrefix(lower, "http:") || strings.HasPrefix(lower, "https:")) && SURT(strings.ToUpper(raw)) != SURT(lower) {
			t.Fatalf("SURT depends on case: %q gives %q, %q gives %q", strings.ToUpper(raw), SURT(strings.ToUpper(raw)), lower, SURT(lower))
		}
	})
}
