package fetchlog

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestServersFile: the servers file of docs/format/harvest.md reads, and
// what is written reads back the same.
func TestServersFile(t *testing.T) {
	got, err := ReadServers("testdata/servers.jsonl")
	if err != nil || len(got) != 3 {
		t.Fatalf("%d lines, %v", len(got), err)
	}
	if s := got[0]; s.Host != "www.uchile.cl" || s.ConnectMs != 31.5 || s.RequestsPerConn != 48.2 || s.Pages != 120 || !s.Measured.Equal(time.Date(2026, 11, 22, 2, 10, 0, 0, time.UTC)) {
		t.Errorf("line 1: %+v", s)
	}
	if got[1].DNSError != "dns: no such host www.caido.cl" || got[2].GaveUp == "" {
		t.Errorf("lines 2, 3: %+v %+v", got[1], got[2])
	}
	path := filepath.Join(t.TempDir(), ServersFile)
	var buf bytes.Buffer
	if err := WriteLines(&buf, got, FormatServer); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != len(got) {
		t.Errorf("WriteLines wrote %d lines for %d servers", n, len(got))
	}
	os.WriteFile(path, append(buf.Bytes(), `{"host":"torn`...), 0o644)
	again, err := ReadServers(path)
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Errorf("round trip (torn last line ignored): %v\n%+v\n%+v", err, again, got)
	}
}

// FuzzReadServers: no servers file panics the reader, and every line it
// accepts formats back to a line it reads the same.
func FuzzReadServers(f *testing.F) {
	seed, _ := os.ReadFile("testdata/servers.jsonl")
	f.Add(seed)
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ParseServers(data, "fuzz")
		if err != nil {
			return
		}
		for _, s := range lines {
			b, err := FormatServer(s)
			if err != nil {
				continue // e.g. a NaN cannot be written back
			}
			again, err := ParseServers(b, "again")
			if err != nil || len(again) != 1 || !reflect.DeepEqual(again[0], s) {
				t.Fatalf("%+v does not read back: %+v %v", s, again, err)
			}
		}
	})
}
