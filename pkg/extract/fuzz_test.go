package extract

import (
	"os"
	"path/filepath"
	"testing"
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
