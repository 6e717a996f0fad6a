package warcio

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestAppendStored: a stored member of any size, split over any parts
// (empty ones included), is one gzip member that the standard library's
// reader decodes to the parts' concatenation, with the right CRC-32 and
// size, and a member ends exactly where the next begins.
func TestAppendStored(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 9000) // 144,000 bytes: three stored blocks
	cases := [][][]byte{
		{[]byte("WARC/1.1\r\n")},
		{nil, []byte("a"), nil},
		{[]byte("head"), big, []byte("\r\n\r\n")},
		{big[:maxStoredBlock]},
		{big[:maxStoredBlock-1], big[:2]},
		{big[:maxStoredBlock], nil, big[:maxStoredBlock]},
	}
	for i, parts := range cases {
		want := bytes.Join(parts, nil)
		out := appendStored([]byte("prefix"), parts...)
		out = appendStored(out, []byte("second"))
		if !bytes.HasPrefix(out, []byte("prefix")) {
			t.Fatalf("case %d: prefix lost", i)
		}
		zr, err := stdgzip.NewReader(bytes.NewReader(out[len("prefix"):]))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("case %d: decoded %d bytes, want %d", i, len(got), len(want))
		}
		if err := zr.Reset(bytes.NewReader(out[len("prefix")+storedSize(len(want)):])); err != nil {
			t.Fatalf("case %d: second member: %v", i, err)
		}
		if got, err := io.ReadAll(zr); err != nil || string(got) != "second" {
			t.Errorf("case %d: second member %q, %v", i, got, err)
		}
		if crc := crc32.ChecksumIEEE(want); crc != le32(out[len("prefix")+storedSize(len(want))-8:]) {
			t.Errorf("case %d: crc %08x", i, crc)
		}
	}
}

// storedSize is the size of a stored member of n bytes.
func storedSize(n int) int {
	return len(storedHeader) + 5*max(1, (n+maxStoredBlock-1)/maxStoredBlock) + n + 8
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// TestWriterBuffer: with SetBuffer, appended records reach the file only
// on Flush (or Sync and Close), at the offsets Append returned; FlushDue
// says when the buffer is full; an append that finds four buffers' worth
// unflushed writes it; Size counts buffered records.
func TestWriterBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf.warc.gz")
	w, err := CreateWithInfo(path, Info{{"software", "test"}})
	if err != nil {
		t.Fatal(err)
	}
	onDisk := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	start := onDisk()
	if err := w.SetBuffer(8 << 10); err != nil {
		t.Fatal(err)
	}
	type rec struct {
		off, n int64
		url    string
	}
	var recs []rec
	write := func(url string, body []byte) {
		t.Helper()
		off, n, err := w.Write(exchange(url, body))
		if err != nil {
			t.Fatal(err)
		}
		if off < start || off+n > w.Size() {
			t.Fatalf("record %s at %d+%d, writer size %d", url, off, n, w.Size())
		}
		recs = append(recs, rec{off, n, url})
	}
	write("http://a.example/", []byte("small page"))
	if onDisk() != start || w.FlushDue() {
		t.Fatalf("a small buffered record reached the file (%d bytes, started at %d) or filled the buffer", onDisk(), start)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if onDisk() != w.Size() {
		t.Fatalf("after Flush the file has %d bytes, the writer counts %d", onDisk(), w.Size())
	}
	noise := make([]byte, 12<<10) // incompressible: its member is larger than the buffer
	rand.NewChaCha8([32]byte{1}).Read(noise)
	write("http://a.example/1", noise)
	if !w.FlushDue() || onDisk() == w.Size() {
		t.Fatalf("a record larger than the buffer: due %v, file %d, writer %d", w.FlushDue(), onDisk(), w.Size())
	}
	for i := 2; i < 6; i++ { // past four buffers' worth: the append writes
		write(fmt.Sprintf("http://a.example/%d", i), noise)
	}
	if onDisk() <= recs[1].off {
		t.Fatalf("nobody flushed and the buffer kept growing: file %d bytes", onDisk())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		resp, err := ReadResponse(path, r.off, r.n, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", r.url, err)
		}
		if resp.URL != r.url {
			t.Errorf("record at %d is %s, want %s", r.off, resp.URL, r.url)
		}
	}
	if _, err := Verify(path); err != nil {
		t.Fatal(err)
	}
}

// TestWriterBufferConcurrent: appends, flushes (which write outside the
// appends' lock) and syncs from many goroutines leave every record at the
// offset its Append returned, and a Flush returns only once the records
// appended before it are in the file.
func TestWriterBufferConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conc.warc.gz")
	w, err := CreateWithInfo(path, Info{{"software", "test"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	type rec struct {
		off, n int64
		url    string
	}
	var mu sync.Mutex
	var recs []rec
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				url := fmt.Sprintf("http://h%d.example/%d", g, i)
				off, n, err := w.Write(exchange(url, bytes.Repeat([]byte{byte('a' + i%26)}, 100*i)))
				if err != nil {
					t.Error(err)
					return
				}
				if w.FlushDue() || i%7 == 0 {
					if err := w.Flush(); err != nil {
						t.Error(err)
						return
					}
					if st, err := os.Stat(path); err != nil || st.Size() < off+n {
						t.Errorf("after Flush the file ends before %s (%d+%d)", url, off, n)
					}
				}
				if i%13 == 0 {
					if err := w.Sync(); err != nil {
						t.Error(err)
					}
				}
				mu.Lock()
				recs = append(recs, rec{off, n, url})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		resp, err := ReadResponse(path, r.off, r.n, 1<<20)
		if err != nil || resp.URL != r.url {
			t.Fatalf("record %s at %d: %v %v", r.url, r.off, resp, err)
		}
	}
	infos, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 2*len(recs); len(infos) != want { // warcinfo, then request and response
		t.Errorf("%d records in the file, want %d", len(infos), want)
	}
}

// TestWarcDateAndNotModified: the hand-made date format matches the
// layout's, and a 304 is recognised as before.
func TestWarcDateAndNotModified(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 22, 5, 4, 3, 999, time.UTC),
		time.Date(1999, 1, 2, 23, 59, 59, 0, time.FixedZone("x", -5*3600)),
		time.Date(12, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, want := warcDate(tm), tm.UTC().Format("2006-01-02T15:04:05Z"); got != want {
			t.Errorf("warcDate(%v) = %s, want %s", tm, got, want)
		}
	}
	for line, want := range map[string]bool{
		"HTTP/1.1 304 Not Modified": true, "HTTP/1.0  304": true, " HTTP/1.1 304 x": true,
		"HTTP/1.1 200 OK": false, "HTTX/1.1 304 Not Modified": false, "HTTP/1.1": false, "": false, "HTTP/1.1 3040": false,
	} {
		if got := (&Exchange{StatusLine: line}).NotModified(); got != want {
			t.Errorf("NotModified(%q) = %v, want %v", line, got, want)
		}
	}
}

// BenchmarkEncodeSmall: an exchange of a 2.5 KB page (the test web's
// median) with its metadata, all three records stored uncompressed.
func BenchmarkEncodeSmall(b *testing.B) {
	x := exchange("http://www.example.cl/a/b.html", bytes.Repeat([]byte("hola mundo "), 230))
	x.Metadata = []Field{{"fetchTimeMs", "1"}, {"firstByteMs", "0"}}
	b.ReportAllocs()
	b.SetBytes(int64(len(x.Body)))
	for b.Loop() {
		e, err := Encode(x)
		if err != nil {
			b.Fatal(err)
		}
		e.Release()
	}
}
