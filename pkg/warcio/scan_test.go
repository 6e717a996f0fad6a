package warcio

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/fetchlog"
)

// writeScanFile writes a file with a warcinfo record and three
// exchanges (a page with metadata, a large compressed page, a 304 stored
// as a revisit) and returns the response members' offsets and lengths.
func writeScanFile(t *testing.T, path string) [][2]int64 {
	t.Helper()
	w, err := CreateWithInfo(path, Info{{"software", "wire test"}})
	if err != nil {
		t.Fatal(err)
	}
	page := exchange("http://a.cl/", []byte("<html>hola</html>"))
	page.Metadata = []Field{{"fetchTimeMs", "12"}}
	big := exchange("http://a.cl/big", bytes.Repeat([]byte("<p>lorem ipsum</p>\n"), 5000))
	big.Truncated = "length"
	notMod := exchange("http://a.cl/old", nil)
	notMod.StatusLine, notMod.Header = "HTTP/1.1 304 Not Modified", http.Header{"Etag": {`"x"`}}
	var pos [][2]int64
	for _, x := range []*Exchange{page, big, notMod} {
		off, n, err := w.Write(x)
		if err != nil {
			t.Fatal(err)
		}
		pos = append(pos, [2]int64{off, n})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return pos
}

// TestScan reads a file record by record: every member's offset and
// length, in order and back to back, the response members where the
// writer put them, and the fields an index needs.
func TestScan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.warc.gz")
	pos := writeScanFile(t, path)
	var recs []ScannedRecord
	torn, err := Scan(path, func(r *ScannedRecord) error { recs = append(recs, *r); return nil })
	if err != nil || torn != -1 {
		t.Fatalf("scan: torn %d, %v", torn, err)
	}
	var types []string
	next := int64(0)
	byOff := map[int64]ScannedRecord{}
	for _, r := range recs {
		types = append(types, r.Type)
		if r.Offset != next || r.Length <= 0 {
			t.Errorf("%s record at %d+%d, want it at %d", r.Type, r.Offset, r.Length, next)
		}
		next = r.Offset + r.Length
		byOff[r.Offset] = r
	}
	if st, _ := os.Stat(path); next != st.Size() {
		t.Errorf("records end at %d, the file at %d", next, st.Size())
	}
	if got, want := strings.Join(types, " "), "warcinfo request response metadata request response request revisit"; got != want {
		t.Errorf("types %s, want %s", got, want)
	}
	for i, want := range []struct {
		typ, url, ctype, profile, truncated string
		status                              int
		digest                              bool
	}{
		{TypeResponse, "http://a.cl/", "text/html; charset=utf-8", "", "", 200, true},
		{TypeResponse, "http://a.cl/big", "text/html; charset=utf-8", "", "length", 200, true},
		{TypeRevisit, "http://a.cl/old", "", ProfileServerNotModified, "", 304, false},
	} {
		r, ok := byOff[pos[i][0]]
		if !ok || r.Length != pos[i][1] {
			t.Fatalf("exchange %d: no record at %d+%d (%+v)", i, pos[i][0], pos[i][1], r)
		}
		if r.Type != want.typ || r.TargetURI != want.url || r.ContentType != want.ctype || r.Status != want.status || r.Profile != want.profile ||
			r.Truncated != want.truncated || (r.PayloadDigest != "") != want.digest || !r.Date.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("exchange %d: %+v", i, r)
		}
	}

	// A torn last member (a killed run) ends the scan quietly, at its
	// offset; the records before it are all there.
	data, _ := os.ReadFile(path)
	last := pos[2][0]
	tornPath := filepath.Join(t.TempDir(), "torn.warc.gz")
	os.WriteFile(tornPath, data[:last+pos[2][1]/2], 0o644)
	n := 0
	torn, err = Scan(tornPath, func(r *ScannedRecord) error { n++; return nil })
	if err != nil || torn != last || n != len(recs)-1 {
		t.Errorf("torn file: %d records, torn at %d (want %d), %v", n, torn, last, err)
	}

	// A flipped byte inside a member is damage: an error naming the file
	// and the member, not a torn tail.
	bad := bytes.Clone(data)
	bad[pos[1][0]+pos[1][1]/2] ^= 0xff
	badPath := filepath.Join(t.TempDir(), "bad.warc.gz")
	os.WriteFile(badPath, bad, 0o644)
	_, err = Scan(badPath, func(*ScannedRecord) error { return nil })
	if !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), badPath) || !strings.Contains(err.Error(), " at ") {
		t.Errorf("damaged member: %v", err)
	}
	// fn's error stops the scan.
	stop := errors.New("stop")
	if _, err := Scan(path, func(*ScannedRecord) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
}

// TestScanFixture scans the harvester's frozen file (an old
// data-00001.warc.gz): every fetch log line's record is found where the
// line says.
func TestScanFixture(t *testing.T) {
	dir := filepath.Join("testdata", "harvest")
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	found := map[[2]int64]ScannedRecord{}
	if _, err := Scan(filepath.Join(dir, recs[0].WARC), func(r *ScannedRecord) error {
		found[[2]int64{r.Offset, r.Length}] = *r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		r, ok := found[[2]int64{rec.Offset, rec.Length}]
		if !ok || r.TargetURI != rec.URL || r.Status != rec.Status || r.Type != TypeResponse {
			t.Errorf("%s: scanned %+v, want a response at %d+%d", rec.URL, r, rec.Offset, rec.Length)
		}
	}
}

// FuzzScan: no file, however damaged, panics or hangs the scan, and the
// records it reports lie back to back from the file's start.
func FuzzScan(f *testing.F) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "harvest", "data-00001.warc.gz"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	f.Add(fixture[:len(fixture)/2])
	f.Add(mustGzip(f, []byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 3\r\n\r\nHTTP")))
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			next := int64(0)
			torn, _ := scan(bytes.NewReader(data), "fuzz", func(r *ScannedRecord) error {
				if r.Offset != next || r.Length <= 0 || r.Offset+r.Length > int64(len(data)) {
					t.Errorf("record at %d+%d, want it at %d within %d bytes", r.Offset, r.Length, next, len(data))
				}
				next = r.Offset + r.Length
				return nil
			})
			if torn >= 0 && torn != next {
				t.Errorf("torn at %d, the records end at %d", torn, next)
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("scan hangs on %d bytes", len(data))
		}
	})
}
