package parsed

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	docs := []*Doc{
		{DocID: 1, URL: "http://a.cl/", Status: 200, Fetched: time.Unix(1700000000, 0).UTC(), MIME: "text/html", Charset: "utf-8", Bytes: 10, Title: "Inicio <b>", Hash: "00ff",
			Links: []Link{{URL: "http://a.cl/x", Anchor: "x & y"}, {URL: "http://b.cl/", NoFollow: true}}},
		{DocID: 2, URL: "http://a.cl/old", Status: 301, Fetched: time.Unix(1700000001, 0).UTC(), Redirect: "http://a.cl/new"},
		{DocID: 3, URL: "http://a.cl/down", Err: "timeout", Fetched: time.Unix(1700000002, 0).UTC()},
	}
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, d := range docs {
		if err := w.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if !strings.Contains(b.String(), "Inicio <b>") {
		t.Error("HTML in titles should not be escaped in the file")
	}
	r := NewReader(&b, "test")
	for i := range docs {
		got, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, docs[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, docs[i])
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after last: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	for name, data := range map[string]string{
		"not json":       "hello\n",
		"future version": `{"v":2,"docid":1}` + "\n",
		"torn":           `{"v":1,"docid":1,"url":"http://a.cl/"` + "\n",
	} {
		_, err := NewReader(strings.NewReader(data), "x.jsonl").Next()
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "x.jsonl record 1") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzReader: damaged parsed output never panics the reader.
func FuzzReader(f *testing.F) {
	seed, _ := os.ReadFile("testdata/docs.jsonl")
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz")
		for i := 0; i < 1000; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	})
}
