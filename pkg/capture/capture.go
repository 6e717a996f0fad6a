// Package capture describes a URL's stored capture: the WARC response
// record that holds the payload a later revisit record of the URL refers
// to (WARC 1.1 §6.7: WARC-Refers-To, WARC-Refers-To-Date and
// WARC-Payload-Digest). The gatherer reads it from the response record,
// the seeder keeps it in graph.db, the manager writes it into the batch,
// and the harvester puts it into the revisit records it writes
// (docs/format/batch.md, docs/format/linkgraph.md).
package capture

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Capture is one stored response record: its id, its date and the digest
// of its payload. The zero Capture is "none known".
type Capture struct {
	ID     string    // WARC-Record-ID, as written: "<urn:uuid:…>"
	Date   time.Time // WARC-Date, UTC
	Digest string    // WARC-Payload-Digest, as written: "sha1:BASE32"
}

// ErrFormat marks a capture field that cannot be read.
var ErrFormat = errors.New("malformed capture")

// Limits on the fields: a record id or digest longer than these is not
// one any WARC writer makes.
const (
	MaxID     = 256
	MaxDigest = 160
)

// IsZero tells whether c is "none known".
func (c Capture) IsZero() bool { return c.ID == "" && c.Date.IsZero() && c.Digest == "" }

// DateString is the date as a WARC-Date (WARC 1.1 §5.4: UTC, to the
// second, fractions of a second only when the date has them), "" for the
// zero time.
func (c Capture) DateString() string {
	if c.Date.IsZero() {
		return ""
	}
	return c.Date.UTC().Format(time.RFC3339Nano)
}

// Parse reads a capture from its three fields as a WARC header writes
// them: the record id, the date and the payload digest. All three empty
// is the zero Capture; otherwise each must be well formed (Check). An
// error wraps ErrFormat and names the field.
func Parse(id, date, digest string) (Capture, error) {
	if id == "" && date == "" && digest == "" {
		return Capture{}, nil
	}
	c := Capture{ID: id, Digest: digest}
	if date == "" {
		return c, fmt.Errorf("%w: no date beside record id %s", ErrFormat, excerpt.Quote(id))
	}
	t, err := ParseDate(date)
	if err != nil {
		return c, err
	}
	c.Date = t
	return c, c.Check()
}

// ParseDate reads a WARC-Date (WARC 1.1 §5.4, W3C profile of ISO 8601):
// YYYY-MM-DDThh:mm:ssZ, with an optional fraction of a second, always UTC.
func ParseDate(s string) (time.Time, error) {
	if !strings.HasSuffix(s, "Z") || len(s) < len("2006-01-02T15:04:05Z") || len(s) > len("2006-01-02T15:04:05.999999999Z") {
		return time.Time{}, fmt.Errorf("%w: date %s is not a WARC-Date (YYYY-MM-DDThh:mm:ssZ)", ErrFormat, excerpt.Quote(s))
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1 {
		return time.Time{}, fmt.Errorf("%w: date %s is not a WARC-Date (YYYY-MM-DDThh:mm:ssZ)", ErrFormat, excerpt.Quote(s))
	}
	return t.UTC(), nil
}

// Check reports what is wrong with c, an error wrapping ErrFormat that
// names the field: the zero Capture is fine; otherwise the id must be a
// URI in angle brackets (WARC 1.1 §5.2), the date set, and the digest
// "algorithm:value" (§5.8), none with spaces or control characters.
func (c Capture) Check() error {
	if c.IsZero() {
		return nil
	}
	if err := CheckID(c.ID); err != nil {
		return err
	}
	if c.Date.IsZero() || c.Date.Year() < 1 || c.Date.Year() > 9999 {
		return fmt.Errorf("%w: record %s has no date (or one outside years 1 to 9999)", ErrFormat, excerpt.Quote(c.ID))
	}
	return CheckDigest(c.Digest)
}

// CheckID checks a WARC-Record-ID: "<" URI ">", the URI with a scheme and
// no space, control character or angle bracket, at most MaxID bytes.
func CheckID(id string) error {
	uri, ok := strings.CutPrefix(id, "<")
	if ok {
		uri, ok = strings.CutSuffix(uri, ">")
	}
	switch {
	case !ok:
		return fmt.Errorf("%w: record id %s is not a URI in angle brackets", ErrFormat, excerpt.Quote(id))
	case len(id) > MaxID:
		return fmt.Errorf("%w: record id %s is longer than %d bytes", ErrFormat, excerpt.Quote(id), MaxID)
	}
	scheme, _, found := strings.Cut(uri, ":")
	if !found || scheme == "" || !isScheme(scheme) {
		return fmt.Errorf("%w: record id %s has no URI scheme", ErrFormat, excerpt.Quote(id))
	}
	for i := 0; i < len(uri); i++ {
		if b := uri[i]; b <= ' ' || b >= 0x7f || b == '<' || b == '>' {
			return fmt.Errorf("%w: record id %s has a space, control, non-ASCII or angle bracket character", ErrFormat, excerpt.Quote(id))
		}
	}
	return nil
}

// isScheme tells whether s is a URI scheme (RFC 3986 §3.1).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z':
		case i > 0 && (b >= '0' && b <= '9' || b == '+' || b == '-' || b == '.'):
		default:
			return false
		}
	}
	return true
}

// CheckDigest checks a WARC labelled digest: an algorithm (letters,
// digits, "-"), ":", and a value of letters, digits and the base 32 and
// base 64 padding and symbols ("=", "+", "/", "_", "-"), at most
// MaxDigest bytes.
func CheckDigest(d string) error {
	algo, value, ok := strings.Cut(d, ":")
	if !ok || algo == "" || value == "" || len(d) > MaxDigest {
		return fmt.Errorf("%w: payload digest %s is not algorithm:value", ErrFormat, excerpt.Quote(d))
	}
	for i := 0; i < len(algo); i++ {
		if b := algo[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-') {
			return fmt.Errorf("%w: payload digest %s: bad algorithm name", ErrFormat, excerpt.Quote(d))
		}
	}
	for i := 0; i < len(value); i++ {
		if b := value[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("=+/_-", b) >= 0) {
			return fmt.Errorf("%w: payload digest %s: bad character in the value", ErrFormat, excerpt.Quote(d))
		}
	}
	return nil
}
