package warcio

import (
	"bytes"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.warc.gz")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{[]byte("<html><title>x</title>hola</html>"), bytes.Repeat([]byte("ñ"), 100000), {}}
	type pos struct{ off, n int64 }
	var ps []pos
	for i, b := range bodies {
		h := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
		off, n, err := w.Write(&Exchange{URL: "http://a.cl/" + string(rune('a'+i)), Date: time.Unix(1700000000, 0), IP: "127.0.0.1",
			Request: []byte("GET / HTTP/1.1\r\nHost: a.cl\r\n\r\n"), StatusLine: "HTTP/1.1 200 OK", Header: h, Body: b})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, pos{off, n})
	}
	w.Sync()
	w.Close()
	for i, p := range ps {
		r, err := ReadResponse(path, p.off, p.n, 1<<30)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if r.Status != 200 || !bytes.Equal(r.Body, bodies[i]) || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("record %d: status %d, body %d bytes, header %v", i, r.Status, len(r.Body), r.Header)
		}
		if r.URL != "http://a.cl/"+string(rune('a'+i)) {
			t.Errorf("record %d: url %q", i, r.URL)
		}
	}
	// A damaged offset is an error, not a panic.
	if _, err := ReadResponse(path, ps[1].off+7, ps[1].n-7, 1<<30); err == nil {
		t.Error("read at a damaged offset succeeded")
	}
	if _, err := ReadResponse(path, ps[1].off, ps[1].n/2, 1<<30); err == nil {
		t.Error("read of a truncated record succeeded")
	}
}
