package seeder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/parsed"
)

// failingReader returns its data, then err.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// TestPrepareDocsChunks: the records come in file order, in chunks of
// chunkSize (the next chunk read while one is prepared), whatever the
// count (a multiple of chunkSize or not, blank lines skipped); a record
// that does not decode ends them with an error naming its line, and a
// read error comes after the records read before it.
func TestPrepareDocsChunks(t *testing.T) {
	res, err := newResolver(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	lines := func(n int) []string {
		var buf bytes.Buffer
		w := parsed.NewWriter(&buf)
		for i := range n {
			if err := w.Write(&parsed.Doc{DocID: uint64(i + 1), URL: fmt.Sprintf("http://a.cl/p%d", i), Status: 200, Fetched: t0,
				Links: []parsed.Link{{URL: fmt.Sprintf("http://a.cl/q%d", i)}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n")
	}
	run := func(r io.Reader) (ids []uint64, sizes []int, err error) {
		out := make(chan chunk)
		go prepareDocs(context.Background(), r, "docs.jsonl", nil, res, out)
		for c := range out {
			sizes = append(sizes, len(c.docs))
			for _, d := range c.docs {
				ids = append(ids, d.doc.DocID)
				if len(d.links) != 1 || d.links[0].url != fmt.Sprintf("http://a.cl/q%d", d.doc.DocID-1) {
					t.Errorf("doc %d: links %+v", d.doc.DocID, d.links)
				}
			}
			if c.err != nil {
				err = c.err
			}
		}
		return ids, sizes, err
	}
	inOrder := func(ids []uint64, n int) bool {
		if len(ids) != n {
			return false
		}
		for i, id := range ids {
			if id != uint64(i+1) {
				return false
			}
		}
		return true
	}
	for _, n := range []int{0, 1, chunkSize, 2 * chunkSize, 3*chunkSize + 5} {
		l := lines(n)
		if n > 1 {
			l[1] = "\n" + l[1] // a blank line
		}
		ids, sizes, err := run(strings.NewReader(strings.Join(l, "")))
		if err != nil || !inOrder(ids, n) {
			t.Errorf("%d records: err %v, %d ids in order %v", n, err, len(ids), inOrder(ids, n))
		}
		for i, s := range sizes {
			if s != chunkSize && i != len(sizes)-1 {
				t.Errorf("%d records: chunk sizes %v", n, sizes)
			}
		}
	}
	// A bad record in the second chunk: the records before it, then the
	// error with its line.
	l := lines(2*chunkSize + 10)
	l[chunkSize+3] = "{not json\n"
	ids, _, err := run(strings.NewReader(strings.Join(l, "")))
	if !errors.Is(err, parsed.ErrFormat) || !strings.Contains(err.Error(), fmt.Sprintf("record %d", chunkSize+4)) || !inOrder(ids, chunkSize+3) {
		t.Errorf("bad record: %d ids, err %v", len(ids), err)
	}
	// A read error after a chunk and a half.
	boom := errors.New("boom")
	l = lines(chunkSize + chunkSize/2)
	ids, _, err = run(&failingReader{r: strings.NewReader(strings.Join(l, "")), err: boom})
	if !errors.Is(err, boom) || !inOrder(ids, len(l)) {
		t.Errorf("read error: %d ids, err %v", len(ids), err)
	}
}

// TestPrepareDocsCancel: cancelled after its first chunk, prepareDocs
// stops reading and closes its channel (its reader and workers gone).
func TestPrepareDocsCancel(t *testing.T) {
	res, err := newResolver(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := parsed.NewWriter(&buf)
	for i := range 20 * chunkSize {
		if err := w.Write(&parsed.Doc{DocID: uint64(i + 1), URL: fmt.Sprintf("http://a.cl/p%d", i), Status: 200, Fetched: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan chunk)
	go prepareDocs(ctx, &buf, "docs.jsonl", nil, res, out)
	if c := <-out; len(c.docs) != chunkSize || c.err != nil {
		t.Fatalf("first chunk: %d records, err %v", len(c.docs), c.err)
	}
	cancel()
	n := 0
	for range out {
		n++
	}
	if n > 2*runtime.GOMAXPROCS(0)+2 {
		t.Errorf("%d chunks after the cancel", n)
	}
}
