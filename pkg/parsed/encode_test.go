package parsed

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jsonLine is what encoding/json's Encoder writes for d, as the Writer
// did before it wrote records itself.
func jsonLine(t testing.TB, d *Doc) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkAppendDoc fails if appendDoc and encoding/json differ on d.
func checkAppendDoc(t testing.TB, d *Doc) {
	t.Helper()
	got, err := appendDoc(nil, d)
	if err != nil {
		t.Fatal(err)
	}
	if want := jsonLine(t, d); !bytes.Equal(got, want) {
		t.Fatalf("appendDoc:\n %s\nencoding/json:\n %s", got, want)
	}
}

// TestAppendDoc: on every record of the testdata files, and on records
// with every field set and with strings that need escaping, appendDoc
// writes what encoding/json writes.
func TestAppendDoc(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		docs, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			checkAppendDoc(t, d)
		}
	}
	odd := "a\"b\\c\b\f\n\r\t\x00\x1f\x7f<>&\u2028\u2029\xff\xc3é€😀\xed\xa0\x80"
	full := &Doc{V: 1, DocID: 1<<64 - 1, URL: odd, Status: -1, Err: odd, Fetched: time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", -3600)),
		MIME: odd, Charset: odd, Bytes: -5, Title: odd, Description: odd, Lang: odd, LastModified: odd, ETag: odd, Hash: odd,
		DuplicateOf: odd, TextBytes: 7, Redirect: odd, Canonical: odd, NoIndex: true, NoFollow: true, Unchanged: true,
		Links: []Link{{URL: odd, Anchor: odd, NoFollow: true}, {URL: ""}, {URL: "u", Anchor: "a"}}}
	checkAppendDoc(t, full)
	checkAppendDoc(t, &Doc{})
	checkAppendDoc(t, &Doc{Links: []Link{}})
	if _, err := appendDoc(nil, &Doc{Fetched: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("a year beyond 9999 encoded")
	}
}

// FuzzAppendDoc: appendDoc writes what encoding/json writes, whatever
// the strings, numbers and flags.
func FuzzAppendDoc(f *testing.F) {
	f.Add("http://a.cl/", "t\"\\\x00", "é\xff\u2028", int64(3), 200, uint8(5), int64(1700000000123456789))
	// Escapes in the last eight bytes, before and after where the byte
	// loop resumes (safeRun looks at them as one word).
	f.Add("abcdefg\"hij", "abcdefgh\x01", "\"abcdefghijk", int64(1), 200, uint8(9), int64(0))
	f.Add("ab\xffcdefghijk\"", "0123456789abcdé", "0123456789\u2029xyz", int64(1), 200, uint8(25), int64(0))
	f.Add("sha1:AB", "<urn:uuid:x>", "2026-11-22T02:03:12Z", int64(1), 200, uint8(96), int64(0))
	f.Fuzz(func(t *testing.T, url, s1, s2 string, n int64, status int, flags uint8, unix int64) {
		fetched := time.Unix(0, unix).In(time.FixedZone("z", int(n%50000)))
		if fetched.Year() < 0 || fetched.Year() > 9999 {
			return
		}
		d := &Doc{V: 1, DocID: uint64(n), URL: url, Status: status, Err: s1, Fetched: fetched, MIME: s2, Bytes: n, Title: s1 + s2,
			Description: strings.Repeat(s2, 2), TextBytes: int(n), NoIndex: flags&1 != 0, NoFollow: flags&2 != 0, Unchanged: flags&4 != 0}
		if flags&8 != 0 {
			d.Links = []Link{{URL: s1, Anchor: s2, NoFollow: flags&16 != 0}, {URL: url}}
		}
		d.Revisit = flags&32 != 0
		if flags&64 != 0 {
			d.RecordID, d.RecordDate, d.PayloadDigest = s1, s2, url
		}
		checkAppendDoc(t, d)
	})
}
