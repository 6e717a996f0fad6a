package excerpt

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	long := "http://a.cl/" + strings.Repeat("a", 20<<20)
	tests := []struct {
		name, in, want string
	}{
		{"short", "http://a.cl/", `"http://a.cl/"`},
		{"empty", "", `""`},
		{"control", "a\x1b[2Jb\x00", `"a\x1b[2Jb\x00"`},
		{"invalid UTF-8", "a\xffb", `"a\xffb"`},
		{"exactly Max", strings.Repeat("x", Max), `"` + strings.Repeat("x", Max) + `"`},
		{"long", long, `"http://a.cl/` + strings.Repeat("a", Max-12) + `"... (20971532 bytes)`},
		// "é" is two bytes: a cut inside it backs up to its start.
		{"cut on a character", strings.Repeat("x", Max-1) + "é" + "yyy", `"` + strings.Repeat("x", Max-1) + `"... (84 bytes)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Quote(tc.in)
			if got != tc.want {
				t.Errorf("Quote = %s, want %s", got, tc.want)
			}
			if b := Bytes([]byte(tc.in)); b != got {
				t.Errorf("Bytes = %s, Quote = %s", b, got)
			}
			if len(got) > 4*Max+40 || strings.ContainsAny(got, "\n\r\x00\x1b") || !utf8.ValidString(got) {
				t.Errorf("excerpt not short, one-line, escaped: %q", got)
			}
		})
	}
}

func FuzzQuote(f *testing.F) {
	f.Add("http://a.cl/\xff\x00")
	f.Add(strings.Repeat("é", 100))
	f.Fuzz(func(t *testing.T, s string) {
		got := Quote(s)
		if len(got) > 4*Max+40 || strings.ContainsAny(got, "\n\r\x00\x1b") || !utf8.ValidString(got) {
			t.Fatalf("Quote(%d bytes) = %q", len(s), got)
		}
	})
}
