package robots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds robots.txt bodies (seeded from testdata/) and paths to
// the matcher: it must never panic, and where RFC 9309 and Google's parser
// agree (no percent-escapes, no /robots.txt) it must answer as
// grobotstxt does.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		f.Fatal(err)
	}
	paths := []string{"/", "/example/page.html", "/a.gif", "/foo/bar", "/x/y?q=1", "/private"}
	for i, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, paths[i%len(paths)])
	}
	f.Add([]byte("user-agent: FooBot\nallow: /$\ndisallow: /*\n"), "/")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r := Parse(body, "FooBot")
		if r.CrawlDelay() < 0 {
			t.Fatalf("negative crawl-delay %v", r.CrawlDelay())
		}
		p := "/" + strings.TrimPrefix(path, "/")
		got := r.Allowed(p)
		_ = Clip(body, 64, true)
		if !oracleApplies(body, p) {
			return
		}
		if want, ok := oracle(string(body), "FooBot", p); ok && got != want {
			t.Fatalf("path %q: allowed=%v, grobotstxt says %v\nbody: %q", p, got, want, body)
		}
	})
}

// oracleApplies tells whether the oracle's answer must equal ours: no
// percent-escapes (we decode unreserved ones, RFC 9309 §2.2.2; Google
// does not), not /robots.txt (always allowed here), and only characters
// that url.Parse keeps as they are.
func oracleApplies(body []byte, path string) bool {
	if strings.ContainsRune(string(body), '%') || path == Path {
		return false
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/-._~!$&'()*+,;=:@?", c) >= 0) {
			return false
		}
	}
	return !strings.Contains(path, "//") && !strings.Contains(path, "/./") && !strings.Contains(path, "/../")
}
