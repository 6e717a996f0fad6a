package fetch

import (
	"errors"
	"mime"
	"strings"
	"testing"
	"unicode/utf8"
)

// mediaTypeCases are Content-Type values as servers send them, with the
// media type the harvester records for each.
var mediaTypeCases = map[string]string{
	"text/html; charset=utf-8":                     "text/html",
	"TEXT/HTML":                                    "text/html",
	" text/html ;charset=ISO-8859-1":               "text/html",
	"text/html;":                                   "text/html",
	"application/xhtml+xml":                        "application/xhtml+xml",
	`text/plain; charset="utf-8"`:                  "text/plain",
	"image/svg+xml":                                "image/svg+xml",
	"multipart/form-data; boundary=----x":          "multipart/form-data",
	"text/html; charset=utf-8; charset=iso-8859-1": "text/html", // mime.ParseMediaType: duplicate parameter
	"text/html, text/plain":                        "text/html, text/plain",
	"text/html\t":                                  "text/html",
	"":                                             "",
	";":                                            "",
	"  ":                                           "",
	"; charset=utf-8":                              "",
	"text/ht ml":                                   "text/ht ml",
	"TEXT/\xffHTML":                                "text/\ufffdhtml",
	"İMAGE/PNG":                                    "image/png",
}

func TestMediaType(t *testing.T) {
	for ct, want := range mediaTypeCases {
		if got := MediaType(ct); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", ct, got, want)
		}
	}
}

// FuzzMediaType checks MediaType on any Content-Type value: where
// mime.ParseMediaType reads the value (parameters valid or not), both give
// the same media type; parameters never change it; it is its own media
// type (lower case, trimmed, without ';'); and it is valid UTF-8, whatever
// bytes the server sent.
func FuzzMediaType(f *testing.F) {
	for ct := range mediaTypeCases {
		f.Add(ct)
	}
	f.Add("text/html; charset=\"unterminated")
	f.Add("Text/HTML; Charset=UTF-8; q=0.9")
	f.Add("application/octet-stream\x00")
	f.Add("\u00a0text/html\u0085")
	f.Fuzz(func(t *testing.T, ct string) {
		got := MediaType(ct)
		if mt, _, err := mime.ParseMediaType(ct); err == nil || errors.Is(err, mime.ErrInvalidMediaParameter) {
			if got != mt {
				t.Fatalf("MediaType(%q) = %q, mime.ParseMediaType %q", ct, got, mt)
			}
		}
		if with := MediaType(ct + "; charset=utf-8"); with != got {
			t.Fatalf("a parameter changed the media type of %q: %q, %q", ct, got, with)
		}
		if again := MediaType(got); again != got {
			t.Fatalf("MediaType(%q) = %q, whose media type is %q", ct, got, again)
		}
		if strings.Contains(got, ";") || got != strings.TrimSpace(got) || !utf8.ValidString(got) {
			t.Fatalf("MediaType(%q) = %q", ct, got)
		}
	})
}
