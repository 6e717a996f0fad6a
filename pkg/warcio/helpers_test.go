package warcio

import (
	"bytes"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// gunzip decodes every gzip member of data.
func gunzip(t testing.TB, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func recompress(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	err := zw.Close()
	return b.Bytes(), err
}
