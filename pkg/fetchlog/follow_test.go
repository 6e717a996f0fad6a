package fetchlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFollowerReadsCompleteLines(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "harvest.partial")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, LogFile)
	fl := NewFollower(path)
	defer fl.Close()
	if recs, err := fl.Next(); err != nil || len(recs) != 0 {
		t.Fatalf("before the file exists: %v, %v", recs, err)
	}
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	rec := func(i int) Record {
		return Record{DocID: uint64(i), URL: "http://a.cl/" + string(rune('a'+i)), Status: 200, Fetched: at, WARC: "data-00001.warc.gz", Offset: int64(100 * i), Length: 100}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		t.Helper()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(Header())
	r1, r2 := rec(1), rec(2)
	line2 := r2.Format()
	write(r1.Format() + line2[:10]) // the second line torn
	recs, err := fl.Next()
	if err != nil || len(recs) != 1 || recs[0] != r1 {
		t.Fatalf("first read: %v, %v", recs, err)
	}
	write(line2[10:])
	if recs, err = fl.Next(); err != nil || len(recs) != 1 || recs[0] != r2 {
		t.Fatalf("second read: %v, %v", recs, err)
	}
	if recs, err = fl.Next(); err != nil || len(recs) != 0 {
		t.Fatalf("nothing new: %v, %v", recs, err)
	}
	// Published: the directory renamed; the open file goes on.
	if err := os.Rename(sub, filepath.Join(dir, "harvest")); err != nil {
		t.Fatal(err)
	}
	r3 := rec(3)
	write(r3.Format())
	if recs, err = fl.Next(); err != nil || len(recs) != 1 || recs[0] != r3 {
		t.Fatalf("after the rename: %v, %v", recs, err)
	}
}

func TestFollowerSeesReplacement(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFile)
	if err := os.WriteFile(path, []byte(Header()), 0o644); err != nil {
		t.Fatal(err)
	}
	fl := NewFollower(path)
	defer fl.Close()
	if _, err := fl.Next(); err != nil {
		t.Fatal(err)
	}
	// A resumed harvest repairs its log by writing a new file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(Header()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if _, err := fl.Next(); !errors.Is(err, ErrReplaced) {
		t.Fatalf("got %v, want ErrReplaced", err)
	}
}

func TestFollowerRefusesBadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFile)
	if err := os.WriteFile(path, []byte(Header()+"not a record\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fl := NewFollower(path)
	defer fl.Close()
	if _, err := fl.Next(); !errors.Is(err, ErrFormat) {
		t.Fatalf("got %v, want ErrFormat", err)
	}
}
