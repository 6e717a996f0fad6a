package sitemap

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: any input ends within the limits, and every entry handed out
// is an absolute http(s) URL in the sitemap's scope.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, p := range files {
		if strings.HasSuffix(p, ".golden") {
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
			f.Add(gz(f, data))
		}
	}
	base, _ := url.Parse("http://www.example.cl/dir/sitemap.xml")
	lim := Limits{MaxURLs: 100, MaxBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		res, err := Parse(bytes.NewReader(data), Options{Base: base, Limits: lim}, func(e Entry) error {
			n++
			u, err := url.Parse(e.Loc)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Errorf("entry %q is not an absolute http(s) URL", e.Loc)
			}
			if !e.Sitemap && !strings.HasPrefix(strings.ToLower(e.Loc), "http://www.example.cl/dir/") {
				t.Errorf("entry %q out of scope", e.Loc)
			}
			if e.Priority != -1 && (e.Priority < 0 || e.Priority > 1) {
				t.Errorf("priority %v", e.Priority)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("error from a bytes.Reader: %v", err)
		}
		if n != res.Entries || n > lim.MaxURLs || res.Bytes > lim.MaxBytes {
			t.Errorf("n=%d %+v", n, res)
		}
	})
}
