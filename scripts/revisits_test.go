package scripts_test

// The revisit records of a recrawl (issue 37, "An archive that replays"):
// what TestRecrawlChangingWeb checks of the WARC files and indexes the
// real binaries wrote on the changing test web.

import (
	"archive/zip"
	"bytes"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// storedRecord is a response or revisit record of a collection's WARC
// files.
type storedRecord struct {
	batch int
	file  string
	rec   warcio.ScannedRecord
}

// scanBatch reads every record of a batch's WARC files, by offset in
// each file, and its fetch log.
func scanBatch(t *testing.T, b *collection.Batch) (map[string]map[int64]storedRecord, []fetchlog.Record) {
	t.Helper()
	dir := b.HarvestPath()
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	out := map[string]map[int64]storedRecord{}
	for _, f := range files {
		m := map[int64]storedRecord{}
		if _, err := warcio.Scan(f, func(r *warcio.ScannedRecord) error {
			m[r.Offset] = storedRecord{batch: b.ID, file: filepath.Base(f), rec: *r}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = m
	}
	return out, recs
}

// checkRevisits checks the recrawl batch (the collection's last) against
// the batches before it (the first crawl): a page the test web served
// unchanged — a 304, or a 200 of the version the crawler stored — is a
// revisit record (server-not-modified, identical-payload-digest) whose
// WARC-Refers-To is the record id of the first crawl's response record
// for the URL, with that record's date and payload digest, and whose
// index line is marked warc/revisit; a page served at a new version is
// written whole; a WACZ of the collection resolves each revisit to its
// record (checkWACZRevisits). It returns the counts of each.
func checkRevisits(t *testing.T, bin, colDir string, web *testweb.Web, second []testweb.Request, last map[string]int) (notModified, identical, whole int) {
	t.Helper()
	col, err := collection.Open(colDir)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := col.BatchIDs()
	if err != nil {
		t.Fatal(err)
	}
	recrawl := ids[len(ids)-1]
	// The first crawl's response records, by record id, and each URL's
	// last one stored whole.
	responses := map[string]storedRecord{}
	stored := map[string]storedRecord{}
	for _, id := range ids[:len(ids)-1] {
		records, recs := scanBatch(t, col.Batch(id))
		for _, r := range recs {
			s, ok := records[r.WARC][r.Offset]
			if ok && s.rec.Type == warcio.TypeResponse && r.OK() && r.Status >= 200 && r.Status < 300 {
				stored[r.URL] = s
			}
		}
		for _, m := range records {
			for _, s := range m {
				if s.rec.Type == warcio.TypeResponse {
					responses[s.rec.ID] = s
				}
			}
		}
	}

	records, recs := scanBatch(t, col.Batch(recrawl))
	logged := map[string]fetchlog.Record{}
	for _, r := range recs {
		logged[r.URL] = r
	}
	index := map[string]map[int64]cdxj.Line{}
	for file := range records {
		lines, err := cdxj.ReadFile(filepath.Join(col.Batch(recrawl).HarvestPath(), cdxj.IndexName(file)))
		if err != nil {
			t.Fatal(err)
		}
		index[file] = map[int64]cdxj.Line{}
		for _, l := range lines {
			index[file][l.Offset] = l
		}
	}
	// Every revisit of the recrawl refers to a response record of the
	// first crawl for its URL, with its date and digest.
	for _, m := range records {
		for _, s := range m {
			if s.rec.Type != warcio.TypeRevisit {
				continue
			}
			ref, ok := responses[s.rec.RefersTo]
			if !ok || ref.rec.TargetURI != s.rec.TargetURI || s.rec.RefersToDate != ref.rec.Date.UTC().Format("2006-01-02T15:04:05Z") || s.rec.PayloadDigest != ref.rec.PayloadDigest {
				t.Errorf("%s: revisit (%s) refers to %s of %s with digest %s; the first crawl's record is %+v",
					s.rec.TargetURI, s.rec.Profile, s.rec.RefersTo, s.rec.RefersToDate, s.rec.PayloadDigest, ref.rec)
			}
		}
	}

	var revisitBytes, wholeBytes int64
	for _, r := range second {
		pageURL := "http://" + r.Host + ":" + strconv.Itoa(web.Port()) + r.Path
		l, ok := logged[pageURL]
		if !ok || l.WARC == "" || !l.OK() || (r.Status != 200 && r.Status != 304) {
			continue // robots.txt, redirects, errors
		}
		s := records[l.WARC][l.Offset]
		first, known := stored[pageURL]
		line := index[l.WARC][l.Offset]
		prev, seen := last[r.Host+" "+r.Path]
		switch {
		case !known:
			// Not stored whole by the first crawl (cut short, a 304
			// without a copy): nothing to refer to.
		case r.Status == 304 || seen && r.Version == prev:
			want := warcio.ProfileIdenticalPayloadDigest
			if r.Status == 304 {
				want = warcio.ProfileServerNotModified
				notModified++
			} else {
				identical++
				revisitBytes += s.rec.Length
				wholeBytes += first.rec.Length
			}
			if s.rec.Type != warcio.TypeRevisit || s.rec.Profile != want || s.rec.RefersTo != first.rec.ID {
				t.Errorf("%s: unchanged (%d, version %d) written as %s %q referring to %q; want a revisit %q referring to %s (batch %d)",
					pageURL, r.Status, r.Version, s.rec.Type, s.rec.Profile, s.rec.RefersTo, want, first.rec.ID, first.batch)
			}
			if line.MIME != cdxj.MIMERevisit || "sha1:"+line.Digest != first.rec.PayloadDigest {
				t.Errorf("%s: index line %s", pageURL, line.String())
			}
		default:
			whole++
			if s.rec.Type != warcio.TypeResponse || s.rec.PayloadDigest == first.rec.PayloadDigest {
				t.Errorf("%s: version %d after %d written as %s with digest %s (the first crawl's %s)", pageURL, r.Version, prev, s.rec.Type, s.rec.PayloadDigest, first.rec.PayloadDigest)
			}
		}
	}
	t.Logf("the identical-payload-digest revisits take %d bytes of WARC, the same pages stored whole %d", revisitBytes, wholeBytes)
	checkWACZRevisits(t, bin, colDir, records, responses)
	return notModified, identical, whole
}

// checkWACZRevisits packs the whole collection with harvester wacz and
// checks its merged index as a replay tool reads it: every warc/revisit
// line has, in a WARC file the package holds, an earlier line of the
// same URL and digest that is a response, and that line's record is the
// one the revisit's WARC-Refers-To names.
// responses are the first crawl's response records by record id.
func checkWACZRevisits(t *testing.T, bin, colDir string, recrawl map[string]map[int64]storedRecord, responses map[string]storedRecord) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "crawl.wacz")
	run(t, nil, filepath.Join(bin, "harvester"), "wacz", "--collection", colDir, out)
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	archived := map[string]bool{}
	var index []byte
	for _, f := range zr.File {
		if name, ok := strings.CutPrefix(f.Name, "archive/"); ok {
			archived[name] = true
		}
		if f.Name == "indexes/index.cdxj" {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			index, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	byURL := map[string][]cdxj.Line{}
	var revisits []cdxj.Line
	for _, raw := range bytes.Split(bytes.TrimSuffix(index, []byte("\n")), []byte("\n")) {
		l, err := cdxj.Parse(raw)
		if err != nil {
			t.Fatalf("the WACZ's index: %v", err)
		}
		byURL[l.URL] = append(byURL[l.URL], l)
		if l.MIME == cdxj.MIMERevisit {
			revisits = append(revisits, l)
		}
	}
	for _, rv := range revisits {
		s, ok := recrawl[rv.Filename][rv.Offset]
		if !ok || !archived[rv.Filename] {
			t.Errorf("%s: revisit line %s names a record not in the package", rv.URL, rv.String())
			continue
		}
		ref := responses[s.rec.RefersTo]
		found := false
		for _, l := range byURL[rv.URL] {
			if l.MIME != cdxj.MIMERevisit && l.Digest == rv.Digest && l.Timestamp <= rv.Timestamp && archived[l.Filename] &&
				l.Filename == ref.file && l.Offset == ref.rec.Offset {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: revisit %s (refers to %s) has no response line for its record and digest in the package's index", rv.URL, rv.String(), s.rec.RefersTo)
		}
	}
	t.Logf("WACZ of the whole collection: %d revisit lines, each resolved to the response record it refers to", len(revisits))
}
