package seeder

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/simhash"
)

// TestNearDuplicates: a page whose simhash is within 3 bits of a page
// fetched before it (on another site too) gets NearDup; the first page
// does not, even when it is fetched again; rel=canonical to a fetched page
// counts the same; a far fingerprint is no near-duplicate. The table
// survives from batch to batch and a forced rerun changes nothing.
func TestNearDuplicates(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	urls := []string{"http://a.cl/", "http://b.cl/", "http://c.cl/", "http://a.cl/print", "http://a.cl/other"}
	mirror := []string{"http://espejo.cl/", "http://espejo.cl/print", "http://espejo.cl/other"}
	addSeeds(t, col, cfg, append(urls, mirror...)...)
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	doc := func(u, simhash, canonical string, i int) *parsed.Doc {
		return &parsed.Doc{URL: u, Status: 200, Fetched: at.Add(time.Duration(i) * time.Second), MIME: "text/html", Hash: simhash, Simhash: simhash, Canonical: canonical, TextBytes: 100}
	}
	writeBatch(t, col, 1, testBatch{urls: urls[:1], docs: []*parsed.Doc{doc("http://a.cl/", "00000000ffff0000", "", 0)}})
	runBatch(t, col, cfg, 1, false)
	writeBatch(t, col, 2, testBatch{urls: urls[1:], docs: []*parsed.Doc{
		doc("http://b.cl/", "00000000ffff0007", "", 1),                         // 3 bits from a.cl/: a mirror's page
		doc("http://c.cl/", "ffffffff00000000", "", 2),                         // far
		doc("http://a.cl/print", "0000ffff00000000", "http://a.cl/", 3),        // far, but canonical to a.cl/
		doc("http://a.cl/other", "00000000ffff000f", "http://x.cl/unknown", 4), // 4 bits from a.cl/, 1 from b.cl/
	}})
	s := runBatch(t, col, cfg, 2, false)
	if s.NearDuplicates != 2 || s.Canonical != 1 {
		t.Errorf("summary: %d near-duplicates, %d canonical; want 2, 1", s.NearDuplicates, s.Canonical)
	}
	check := func() {
		t.Helper()
		g := readGraph(t, col)
		id := func(u string) uint64 { return g.doc(t, u).ID }
		want := map[string]uint64{"http://a.cl/": 0, "http://b.cl/": id("http://a.cl/"), "http://c.cl/": 0, "http://a.cl/print": id("http://a.cl/"), "http://a.cl/other": id("http://b.cl/")}
		for u, w := range want {
			if d := g.doc(t, u); d.NearDup != w || d.Simhash == 0 {
				t.Errorf("%s: near-duplicate of %d (simhash %x), want %d", u, d.NearDup, d.Simhash, w)
			}
		}
	}
	check()
	runBatch(t, col, cfg, 2, true)
	check()
	// a.cl/ fetched again keeps its value: b.cl/ came after it.
	writeBatch(t, col, 3, testBatch{urls: urls[:1], docs: []*parsed.Doc{doc("http://a.cl/", "00000000ffff0000", "", 10)}})
	runBatch(t, col, cfg, 3, false)
	check()
	// A site whose three pages copy a.cl's is a mirror of a.cl.
	writeBatch(t, col, 4, testBatch{urls: mirror, docs: []*parsed.Doc{
		doc("http://espejo.cl/", "00000000ffff0001", "", 20),
		doc("http://espejo.cl/print", "0000ffff00000001", "", 21),
		doc("http://espejo.cl/other", "00000000ffff000e", "", 22),
	}})
	if s := runBatch(t, col, cfg, 4, false); s.Mirrors != 1 || s.NearDuplicates != 3 {
		t.Errorf("batch 4: %d mirrors, %d near-duplicates", s.Mirrors, s.NearDuplicates)
	}
	g := readGraph(t, col)
	if m, a := g.sites["http://espejo.cl"], g.sites["http://a.cl"]; m.MirrorOf != a.ID || a.MirrorOf != 0 || g.sites["http://b.cl"].MirrorOf != 0 {
		t.Errorf("espejo.cl mirrors site %d, want %d (a.cl); a.cl mirrors %d", m.MirrorOf, a.ID, a.MirrorOf)
	}
	st, err := os.Stat(filepath.Join(col.Dir, NearDupFile))
	if err != nil || st.Size() != int64(len(nearDupHeader)+16*8) {
		t.Errorf("near-duplicate table: %v, %v", st, err)
	}
	// A damaged table stops the seeder with ErrDamaged.
	os.WriteFile(filepath.Join(col.Dir, NearDupFile), []byte("# wire-neardup 2\nxyz"), 0o644)
	if _, err := loadNearDups(filepath.Join(col.Dir, NearDupFile)); err == nil || !isDamaged(err) {
		t.Errorf("damaged table: %v", err)
	}
}

func isDamaged(err error) bool { return errors.Is(err, collection.ErrDamaged) }

// BenchmarkNearDupTable: the near-duplicate table's cost for a batch of
// 100,000 pages in a collection that has fingerprinted a million: load
// the file, look up and add every page of the batch, write the file.
func BenchmarkNearDupTable(b *testing.B) {
	path := filepath.Join(b.TempDir(), NearDupFile)
	r := rand.New(rand.NewPCG(1, 2))
	n, err := loadNearDups(path)
	if err != nil {
		b.Fatal(err)
	}
	for id := uint64(1); id <= 1000000; id++ {
		n.put(id, r.Uint64())
	}
	if err := n.save(); err != nil {
		b.Fatal(err)
	}
	fps := make([]uint64, 100000)
	for i := range fps {
		fps[i] = r.Uint64()
		if i%10 == 0 {
			fps[i] = n.fps[r.IntN(1000000)] ^ 1<<r.IntN(64)
		}
	}
	for b.Loop() {
		n, err := loadNearDups(path)
		if err != nil {
			b.Fatal(err)
		}
		found := 0
		for i, fp := range fps {
			id := uint64(2000000 + i)
			if _, ok := n.nearest(fp, id, n.put(id, fp)); ok {
				found++
			}
		}
		if found < len(fps)/10 {
			b.Fatalf("%d near-duplicates found", found)
		}
		if err := n.save(); err != nil {
			b.Fatal(err)
		}
		os.Remove(path + ".tmp")
	}
}

// TestNearDuplicatesOldVersion: fingerprints of another version of the
// scheme (simhash.Version) are never compared with the current ones. A
// near-duplicate table of version 1 is set aside (and written anew as
// version 2); a batch gathered before the change (docs.jsonl records of
// format version 2, whose simhash is of version 1) stores its pages'
// fingerprints with their version and compares none of them; a page
// fetched again with a current fingerprint is compared again.
func TestNearDuplicatesOldVersion(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	urls := []string{"http://a.cl/", "http://b.cl/", "http://c.cl/", "http://d.cl/"}
	addSeeds(t, col, cfg, urls...)
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	doc := func(u, simhash string, i int) *parsed.Doc {
		return &parsed.Doc{URL: u, Status: 200, Fetched: at.Add(time.Duration(i) * time.Second), MIME: "text/html", Hash: simhash, Simhash: simhash, TextBytes: 100}
	}
	table := filepath.Join(col.Dir, NearDupFile)
	writeBatch(t, col, 1, testBatch{urls: urls[:1], docs: []*parsed.Doc{doc("http://a.cl/", "00000000ffff0000", 0)}})
	runBatch(t, col, cfg, 1, false)
	// The table as a seeder of before the change wrote it.
	b, err := os.ReadFile(table)
	if err != nil || !strings.HasPrefix(string(b), nearDupHeader) {
		t.Fatalf("table: %q, %v", b, err)
	}
	os.WriteFile(table, append([]byte(nearDupHeaderV1), b[len(nearDupHeader):]...), 0o644)
	writeBatch(t, col, 2, testBatch{urls: urls[1:2], docs: []*parsed.Doc{doc("http://b.cl/", "00000000ffff0001", 1)}})
	s := runBatch(t, col, cfg, 2, false)
	if s.OldTable != 1 || s.NearDuplicates != 0 {
		t.Errorf("batch 2: %d fingerprints set aside, %d near-duplicates; want 1, 0", s.OldTable, s.NearDuplicates)
	}
	if b, err := os.ReadFile(table); err != nil || string(b[:len(nearDupHeader)]) != nearDupHeader || len(b) != len(nearDupHeader)+16 {
		t.Errorf("table after batch 2: %d bytes, %v", len(b), err)
	}
	// A batch gathered before the change: records of format version 2.
	writeBatch(t, col, 3, testBatch{urls: urls[2:3], docs: []*parsed.Doc{doc("http://c.cl/", "00000000ffff0001", 2)}})
	docs := filepath.Join(col.Batch(3).ParsedPath(), parsed.DocsFile)
	b, err = os.ReadFile(docs)
	if err != nil || !strings.Contains(string(b), `"v":4,`) {
		t.Fatalf("docs.jsonl: %q, %v", b, err)
	}
	os.WriteFile(docs, []byte(strings.ReplaceAll(string(b), `"v":4,`, `"v":2,`)), 0o644)
	s = runBatch(t, col, cfg, 3, false)
	if s.OldSimhashes != 1 || s.NearDuplicates != 0 {
		t.Errorf("batch 3: %d old fingerprints, %d near-duplicates; want 1, 0", s.OldSimhashes, s.NearDuplicates)
	}
	g := readGraph(t, col)
	if d := g.doc(t, "http://c.cl/"); d.Simhash != 0xffff0001 || d.SimhashVersion != 1 || d.NearDup != 0 {
		t.Errorf("c.cl/: simhash %x of version %d, near-duplicate of %d", d.Simhash, d.SimhashVersion, d.NearDup)
	}
	if d := g.doc(t, "http://b.cl/"); d.SimhashVersion != simhash.Version {
		t.Errorf("b.cl/: simhash of version %d", d.SimhashVersion)
	}
	// Fetched again with a current fingerprint, c.cl/ is compared: a
	// near-duplicate of b.cl/ (a.cl/ left the table with version 1).
	writeBatch(t, col, 4, testBatch{urls: urls[2:], docs: []*parsed.Doc{doc("http://c.cl/", "00000000ffff0001", 3), doc("http://d.cl/", "00000000ffff0000", 4)}})
	s = runBatch(t, col, cfg, 4, false)
	g = readGraph(t, col)
	if d := g.doc(t, "http://c.cl/"); s.NearDuplicates != 2 || d.NearDup != g.doc(t, "http://b.cl/").ID || d.SimhashVersion != simhash.Version {
		t.Errorf("batch 4: %d near-duplicates; c.cl/ near-duplicate of %d, version %d", s.NearDuplicates, d.NearDup, d.SimhashVersion)
	}
}
