package fetchlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func sample() []Record {
	t0 := time.Date(2026, 11, 22, 1, 2, 3, 456789000, time.UTC)
	return []Record{
		{DocID: 1, URL: "http://a.cl/", Status: 200, Bytes: 1234, MIME: "text/html", Fetched: t0, Millis: 12, WARC: "data-00001.warc.gz", Offset: 0, Length: 400},
		{DocID: 2, URL: "http://a.cl/old", Status: 301, MIME: "text/html", Fetched: t0, Millis: 3, WARC: "data-00001.warc.gz", Offset: 400, Length: 300, Location: "/new"},
		{DocID: 3, URL: "http://a.cl/private/x", Fetched: t0, Err: "robots"},
		{DocID: 4, URL: "http://b.cl/", Fetched: t0, Millis: 10000, Err: "timeout:\tread\nbody"},
	}
}

func TestRoundTrip(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(Header())
	for _, r := range sample() {
		b.WriteString(r.Format())
	}
	got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()
	want[3].Err = "timeout: read body" // tabs and newlines become spaces
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if !got[0].OK() || got[2].OK() || got[3].OK() {
		t.Error("OK() wrong")
	}
}

// TestTornLastLine: a harvester killed mid-write leaves a last line
// without its newline; it is ignored, not an error.
func TestTornLastLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(Header())
	b.WriteString(sample()[0].Format())
	line := sample()[1].Format()
	b.WriteString(line[:len(line)/2])
	got, err := Read(&b)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %d records, %v", len(got), err)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"no header", "1\thttp://a.cl/\n", "line 1"},
		{"few fields", Header() + "1\thttp://a.cl/\t200\n", "line 3"},
		{"bad number", Header() + strings.Replace(sample()[0].Format(), "1234", "12x4", 1), "bytes"},
		{"bad time", Header() + strings.Replace(sample()[0].Format(), "2026-11-22", "yesterday", 1), "fetched"},
	}
	for _, tc := range tests {
		_, err := Read(strings.NewReader(tc.data))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrFormat mentioning %q", tc.name, err, tc.want)
		}
	}
}

// A newer version is ErrVersion, not damage; every version from
// OldestVersion up is read.
func TestVersions(t *testing.T) {
	for v := OldestVersion; v <= Version; v++ {
		recs, err := Read(strings.NewReader(fmt.Sprintf("# wire-fetchlog %d\n", v) + sample()[0].Format()))
		if err != nil || len(recs) != 1 {
			t.Errorf("version %d: %d records, %v", v, len(recs), err)
		}
	}
	next := Version + 1
	_, err := Read(strings.NewReader(fmt.Sprintf("# wire-fetchlog %d\n", next)))
	if !errors.Is(err, ErrVersion) || errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", next)) {
		t.Errorf("%v, want ErrVersion naming version %d", err, next)
	}
	for _, bad := range []string{"0", "-1", "02", "x", "2.0"} {
		if _, err := Read(strings.NewReader("# wire-fetchlog " + bad + "\n")); !errors.Is(err, ErrFormat) {
			t.Errorf("version %q: %v, want ErrFormat", bad, err)
		}
	}
}

func TestRobotsFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), RobotsFile)
	rs := []Robots{
		{Site: "http://a.cl", Status: 200, Fetched: time.Unix(1, 0).UTC(), Body: "User-agent: *\nDisallow: /private/\n"},
		{Site: "http://b.cl", Fetched: time.Unix(2, 0).UTC(), Err: "connection refused"},
	}
	var data []byte
	for _, r := range rs {
		line, err := FormatRobots(r)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, line...)
	}
	data = append(data, `{"site":"http://c.cl","sta`...) // torn last line
	os.WriteFile(p, data, 0o644)
	got, err := ReadRobots(p)
	if err != nil || !reflect.DeepEqual(got, rs) {
		t.Errorf("got %+v, %v", got, err)
	}
	if got, err := ReadRobotsFrom(bytes.NewReader(data), p); err != nil || !reflect.DeepEqual(got, rs) {
		t.Errorf("from a reader: got %+v, %v", got, err)
	}
	os.WriteFile(p, []byte("{bad json}\n"), 0o644)
	if _, err := ReadRobots(p); !errors.Is(err, ErrFormat) {
		t.Errorf("bad json: %v", err)
	}
}

// FuzzRead: no fetch log, however damaged, panics the reader, and every
// record it accepts formats back to a line it reads the same.
func FuzzRead(f *testing.F) {
	seed, _ := os.ReadFile("testdata/fetch.log")
	f.Add(seed)
	f.Add([]byte(Header()))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range recs {
			again, err := Read(strings.NewReader(Header() + r.Format()))
			if err != nil || len(again) != 1 {
				t.Fatalf("record %+v does not read back: %v", r, err)
			}
		}
	})
}

// FuzzReadRobots checks the robots file reader on damaged files: a read
// error is ErrFormat and keeps fewer records than there are lines; the
// text after the last newline (a line torn by a crash) changes nothing;
// every record it accepts writes back, alone and with the others, to lines
// that read the same; a reader that fails gives its error and no record.
func FuzzReadRobots(f *testing.F) {
	for _, s := range []string{
		`{"site":"http://www.uchile.cl","status":200,"fetched":"2026-11-22T01:02:03.456789Z","body":"User-agent: *\nDisallow: /private/\n"}` + "\n" +
			`{"site":"http://www.caido.cl","status":0,"fetched":"2026-11-22T01:02:04Z","error":"dns: no such host www.caido.cl"}` + "\n" +
			`{"site":"https://www.puc.cl:8443","status":404,"fetched":"2026-11-22T01:02:05-03:00"}` + "\n",
		`{"site":"http://a.cl","status":200,"fetched":"1970-01-01T00:00:01Z","body":"User-agent: wirebot\r\nDisallow:\r\n"}` + "\n" + `{"site":"http://c.cl","sta`,
		`{"site":"http://a.cl","status":200,"fetched":"2026-11-22T01:02:03Z"}` + "\r\n\n  \n",
		`{"site":"http://a.cl","body":"ca\u00f1a \ud800 \u0000","extra":[1,2],"SITE":"http://b.cl"}` + "\n",
		"{\"site\":\"http://a.cl\",\"body\":\"\xff\xfe\"}\n",
		`{"site":"http://a.cl","status":"200"}` + "\n",
		`{"site":"http://a.cl","status":2e2}` + "\n",
		`{"site":"http://a.cl","fetched":"yesterday"}` + "\n",
		"null\n[]\n",
		"{bad json}\n",
		"\n",
		"",
	} {
		f.Add([]byte(s))
	}
	errBoom := errors.New("disk gone")
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadRobotsFrom(bytes.NewReader(data), "robots.jsonl")
		lines := bytes.Count(data, []byte("\n"))
		if err != nil && (!errors.Is(err, ErrFormat) || len(got) >= lines) {
			t.Fatalf("error %v with %d records of %d lines", err, len(got), lines)
		}
		if len(got) > lines {
			t.Fatalf("%d records from %d lines", len(got), lines)
		}
		head := data[:bytes.LastIndexByte(data, '\n')+1]
		got2, err2 := ReadRobotsFrom(bytes.NewReader(head), "robots.jsonl")
		if !sameRobots(got, got2) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("torn last line changed the result: %+v, %v; without it %+v, %v", got, err, got2, err2)
		}
		var all []byte
		for _, r := range got {
			line, err := FormatRobots(r)
			if err != nil {
				t.Fatalf("%+v does not format: %v", r, err)
			}
			again, err := ReadRobotsFrom(bytes.NewReader(line), "again")
			if err != nil || !sameRobots(again, []Robots{r}) {
				t.Fatalf("%+v does not read back: %+v, %v", r, again, err)
			}
			all = append(all, line...)
		}
		if again, err := ReadRobotsFrom(bytes.NewReader(all), "again"); err != nil || !sameRobots(again, got) {
			t.Fatalf("records do not read back together: %+v, %v", again, err)
		}
		failing := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errBoom))
		if rs, err := ReadRobotsFrom(failing, "robots.jsonl"); !errors.Is(err, errBoom) || rs != nil {
			t.Fatalf("failing reader: %+v, %v", rs, err)
		}
	})
}

// sameRobots compares robots records, their times by the instant (a time
// read back may carry another *time.Location for the same offset).
func sameRobots(a, b []Robots) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !x.Fetched.Equal(y.Fetched) {
			return false
		}
		_, ox := x.Fetched.Zone()
		_, oy := y.Fetched.Zone()
		x.Fetched, y.Fetched = time.Time{}, time.Time{}
		if x != y || ox != oy {
			return false
		}
	}
	return true
}
