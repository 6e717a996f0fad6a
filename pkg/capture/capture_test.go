package capture

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const (
	goodID     = "<urn:uuid:0c8e6a3e-6a8e-4f1b-9d5a-1b2c3d4e5f60>"
	goodDigest = "sha1:2CKOYS3I5ZUQAPJ3NS2JSLWOBOV6DEYG"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		id, date, digest string
		want             Capture
		bad              string // a word of the error
	}{
		{"", "", "", Capture{}, ""},
		// What the harvester writes (WARC 1.1 §5.2, §5.4, §5.8).
		{goodID, "2026-11-22T02:03:12Z", goodDigest, Capture{goodID, time.Date(2026, 11, 22, 2, 3, 12, 0, time.UTC), goodDigest}, ""},
		// Other writers: fractions of a second (WARC 1.1 allows them), a
		// sha256 digest in hex, a record id of another scheme.
		{"<urn:uuid:x>", "2026-11-22T02:03:12.5Z", "sha256:0a1B", Capture{"<urn:uuid:x>", time.Date(2026, 11, 22, 2, 3, 12, 5e8, time.UTC), "sha256:0a1B"}, ""},
		{"<http://archive.example/rec/1>", "2026-11-22T02:03:12Z", "md5:AA==", Capture{"<http://archive.example/rec/1>", time.Date(2026, 11, 22, 2, 3, 12, 0, time.UTC), "md5:AA=="}, ""},
		{goodID, "", goodDigest, Capture{}, "date"},
		{"", "2026-11-22T02:03:12Z", goodDigest, Capture{}, "record id"},
		{goodID, "2026-11-22T02:03:12Z", "", Capture{}, "digest"},
		{"urn:uuid:x", "2026-11-22T02:03:12Z", goodDigest, Capture{}, "angle brackets"},
		{"<uuid>", "2026-11-22T02:03:12Z", goodDigest, Capture{}, "scheme"},
		{"<urn:a b>", "2026-11-22T02:03:12Z", goodDigest, Capture{}, "space"},
		{"<urn:a<b>", "2026-11-22T02:03:12Z", goodDigest, Capture{}, "angle bracket"},
		{"<1urn:a>", "2026-11-22T02:03:12Z", goodDigest, Capture{}, "scheme"},
		{"<urn:" + strings.Repeat("a", MaxID) + ">", "2026-11-22T02:03:12Z", goodDigest, Capture{}, "longer"},
		{goodID, "2026-11-22 02:03:12Z", goodDigest, Capture{}, "WARC-Date"},
		{goodID, "2026-11-22T02:03:12+01:00", goodDigest, Capture{}, "WARC-Date"},
		{goodID, "2026-11-22T02:03:12", goodDigest, Capture{}, "WARC-Date"},
		{goodID, "2026-13-22T02:03:12Z", goodDigest, Capture{}, "WARC-Date"},
		{goodID, "2026-11-22T02:03:12Z", "sha1", Capture{}, "algorithm:value"},
		{goodID, "2026-11-22T02:03:12Z", ":abc", Capture{}, "algorithm:value"},
		{goodID, "2026-11-22T02:03:12Z", "sha 1:abc", Capture{}, "algorithm name"},
		{goodID, "2026-11-22T02:03:12Z", "sha1:ab\tc", Capture{}, "value"},
		{goodID, "2026-11-22T02:03:12Z", "sha1:" + strings.Repeat("A", MaxDigest), Capture{}, "algorithm:value"},
	} {
		got, err := Parse(c.id, c.date, c.digest)
		if c.bad != "" {
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("Parse(%q, %q, %q): error %v, want one about %q", c.id, c.date, c.digest, err, c.bad)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q, %q, %q) = %+v, %v; want %+v", c.id, c.date, c.digest, got, err, c.want)
		}
		if got.IsZero() != (c.id == "") {
			t.Errorf("Parse(%q, …).IsZero() = %v", c.id, got.IsZero())
		}
		if got.DateString() != c.date {
			t.Errorf("DateString() = %q, want %q", got.DateString(), c.date)
		}
	}
}

// FuzzParse checks that Parse never panics, that every failure wraps
// ErrFormat, and that what it accepts passes Check and reads back the
// same from its DateString.
func FuzzParse(f *testing.F) {
	f.Add(goodID, "2026-11-22T02:03:12Z", goodDigest)
	f.Add("", "", "")
	f.Add("<urn:uuid:x>", "2026-11-22T02:03:12.123456789Z", "sha256:0a1B")
	f.Add("<a:\x00>", "0000-01-01T00:00:00Z", "a:=")
	f.Add("<urn:x>", "9999-12-31T23:59:60Z", "x:y")
	f.Fuzz(func(t *testing.T, id, date, digest string) {
		c, err := Parse(id, date, digest)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if err := c.Check(); err != nil {
			t.Fatalf("Parse accepted %+v, which Check refuses: %v", c, err)
		}
		back, err := Parse(c.ID, c.DateString(), c.Digest)
		if err != nil || back != c {
			t.Fatalf("%+v read back from %q as %+v, %v", c, c.DateString(), back, err)
		}
		for _, s := range []string{c.ID, c.DateString(), c.Digest} {
			if strings.ContainsAny(s, "\t\r\n ") {
				t.Fatalf("accepted field %q holds white space", s)
			}
		}
	})
}
