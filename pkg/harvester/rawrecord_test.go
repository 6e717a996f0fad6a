package harvester_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// rawAnswerHead is the head of a hand-made server's answer: header
// names in odd cases (server, content-encoding, X-Odd-CASE), in no
// canonical order, a repeated field, the body gzip-compressed and sent
// chunked.
const rawAnswerHead = "HTTP/1.1 200 OK\r\n" +
	"Date: Mon, 07 Dec 2026 10:00:00 GMT\r\n" +
	"server: hand-made/1.0\r\n" +
	"ETag: \"v1\"\r\n" +
	"Content-Type: text/html; charset=utf-8\r\n" +
	"content-encoding: gzip\r\n" +
	"Vary: Accept-Encoding\r\n" +
	"Transfer-Encoding: chunked\r\n" +
	"X-Odd-CASE: yes\r\n" +
	"Set-Cookie: a=1\r\n" +
	"Set-Cookie: b=2\r\n" +
	"\r\n"

// TestRawRecordGolden harvests a gzip-compressed, chunked answer of a
// server on loopback in each harvester.warc_mode and compares its
// response record with a golden file (record ids, dates and the port
// blanked out): raw mode keeps the status line and header fields as
// sent — names' case, order, the repeated field — but the
// Transfer-Encoding line, and stores the gzip body de-chunked, its
// payload digest (recomputed here) the SHA-1 of the entity body as
// WARC 1.1 §5.9 says; decoded mode stores the decoded page under
// net/http's canonical, sorted names. Both records name the file's
// warcinfo record. Run with -update to rewrite the golden files.
func TestRawRecordGolden(t *testing.T) {
	gz, err := os.ReadFile(filepath.Join("testdata", "page.html.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	web := ht.Start(t, &ht.Host{Name: "raw.test", Pages: map[string]*ht.Page{"/": ht.Hijack(func(c net.Conn) {
		var b bytes.Buffer
		b.WriteString(rawAnswerHead)
		for i := 0; i < len(gz); i += 200 {
			part := gz[i:min(i+200, len(gz))]
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(part), part)
		}
		b.WriteString("0\r\n\r\n")
		c.Write(b.Bytes())
	})}})
	for _, mode := range config.WARCModes() {
		t.Run(mode, func(t *testing.T) {
			cfg := web.Config(10 * time.Millisecond)
			cfg.Harvester.WARCMode = mode
			dir := filepath.Join(t.TempDir(), "000001")
			url := web.URL("raw.test", "/")
			ht.WriteBatch(t, dir, 1, ht.Entries(url))
			if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
				t.Fatal(err)
			}
			hdir := filepath.Join(dir, "harvest")
			r := readLog(t, hdir)[url]
			if r.Err != "" || r.Status != 200 || r.Bytes != int64(len(page)) {
				t.Fatalf("fetch log: status %d, %d bytes, error %q; want 200, the page's %d bytes", r.Status, r.Bytes, r.Err, len(page))
			}
			rec := member(t, filepath.Join(hdir, r.WARC), r.Offset, r.Length)

			// The payload digest, recomputed: the SHA-1 of the entity
			// body, the content coding kept in raw mode.
			entity := page
			if mode == config.WARCModeRaw {
				entity = gz
			}
			sum := sha1.Sum(entity)
			if want := "WARC-Payload-Digest: sha1:" + base32.StdEncoding.EncodeToString(sum[:]) + "\r\n"; !bytes.Contains(rec, []byte(want)) {
				t.Errorf("no %q in the record", want)
			}
			if !bytes.HasSuffix(rec, append(entity, "\r\n\r\n"...)) {
				t.Error("the record does not end with the entity body")
			}
			if mode == config.WARCModeRaw {
				if want := bytes.Replace([]byte(rawAnswerHead), []byte("Transfer-Encoding: chunked\r\n"), nil, 1); !bytes.Contains(rec, want) {
					t.Errorf("the head is not stored as sent:\n%s", rec[:min(len(rec), 1200)])
				}
			}
			info := warcinfoID(t, filepath.Join(hdir, r.WARC))
			if !bytes.Contains(rec, []byte("WARC-Warcinfo-ID: "+info+"\r\n")) {
				t.Errorf("the record does not name the file's warcinfo record %s", info)
			}
			if _, err := warcio.Verify(filepath.Join(hdir, r.WARC)); err != nil {
				t.Error(err)
			}

			normal := regexp.MustCompile(`<urn:uuid:[0-9a-f-]{36}>`).ReplaceAll(rec, []byte("<urn:uuid:ID>"))
			normal = regexp.MustCompile(`WARC-Date: [0-9TZ:-]+`).ReplaceAll(normal, []byte("WARC-Date: DATE"))
			normal = bytes.ReplaceAll(normal, []byte(":"+web.Port+"/"), []byte(":PORT/"))
			golden := filepath.Join("testdata", mode+"-gzip-chunked.warc")
			if *updateGolden {
				if err := os.WriteFile(golden, normal, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(normal, want) {
				t.Errorf("response record (normalised):\n%q\nwant (%s):\n%q", normal, golden, want)
			}
		})
	}
}

// member returns the uncompressed gzip member at off of the file.
func member(t *testing.T, path string, off, n int64) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(io.NewSectionReader(f, off, n))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// warcinfoID is the record id of the warcinfo record a WARC file starts
// with.
func warcinfoID(t *testing.T, path string) string {
	t.Helper()
	infos, err := warcio.Verify(path)
	if err != nil || len(infos) == 0 || infos[0].Type != warcio.TypeWarcinfo {
		t.Fatalf("%s: %v, %+v", path, err, infos)
	}
	return "<" + infos[0].ID + ">"
}

// TestGzipRobots: a robots.txt sent gzip-compressed decides the site's
// rules in both modes (raw mode stores it encoded and reads the rules
// from its decoded text), and robots.jsonl holds the decoded file.
func TestGzipRobots(t *testing.T) {
	const rules = "User-agent: *\nDisallow: /private\n"
	web := ht.Start(t, &ht.Host{Name: "gz.test",
		Robots: &ht.Page{Body: []byte(rules), Gzip: true, Header: http.Header{"Content-Type": {"text/plain"}}},
		Pages:  map[string]*ht.Page{"/": {Body: []byte("<p>home</p>")}, "/private": {Body: []byte("<p>secret</p>")}}})
	for _, mode := range config.WARCModes() {
		t.Run(mode, func(t *testing.T) {
			cfg := web.Config(5 * time.Millisecond)
			cfg.Harvester.WARCMode = mode
			dir := filepath.Join(t.TempDir(), "000001")
			home, private := web.URL("gz.test", "/"), web.URL("gz.test", "/private")
			ht.WriteBatch(t, dir, 1, ht.Entries(home, private))
			if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
				t.Fatal(err)
			}
			logged := readLog(t, filepath.Join(dir, "harvest"))
			if logged[home].Status != 200 || logged[private].Err != harvester.ErrRobots {
				t.Errorf("home %+v, private %+v: want the page fetched and /private excluded", logged[home], logged[private])
			}
			robots, err := os.ReadFile(filepath.Join(dir, "harvest", "robots.jsonl"))
			if err != nil || !bytes.Contains(robots, []byte(`"body":"User-agent: *\nDisallow: /private\n"`)) {
				t.Errorf("robots.jsonl: %s, %v", robots, err)
			}
		})
	}
}
