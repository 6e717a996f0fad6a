package warcio

import (
	"errors"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestReadMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.warc.gz")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	meta := []Field{{"fetchTimeMs", "12"}, {"tlsProtocol", "TLS 1.3"}, {"tlsCertProblem", "wrong-name: valid for x.example"}}
	var offs, lens []int64
	for _, m := range [][]Field{meta, nil} {
		off, n, err := w.Write(&Exchange{URL: "https://a.cl/", Date: time.Now(), IP: "127.0.0.1", Request: []byte("GET / HTTP/1.1\r\n\r\n"),
			StatusLine: "HTTP/1.1 200 OK", Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<p>hola</p>"), Metadata: m})
		if err != nil {
			t.Fatal(err)
		}
		offs, lens = append(offs, off), append(lens, n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMetadata(path, offs[0]+lens[0])
	if err != nil || !reflect.DeepEqual(got, meta) {
		t.Fatalf("got %v, %v", got, err)
	}
	// After a response without metadata comes the next exchange's request
	// (or the end of the file): no metadata there.
	if _, err := ReadMetadata(path, offs[1]+lens[1]); !errors.Is(err, ErrRecord) {
		t.Errorf("past the last record: %v", err)
	}
	if _, err := ReadMetadata(path, offs[0]); !errors.Is(err, ErrRecord) {
		t.Errorf("at a response: %v", err)
	}
}
