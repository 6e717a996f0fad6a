// Package benchgen generates a collection with one gathered batch of the
// size of a real crawl's batch (by default 100,000 fetched pages with 2
// million links), for the seeder's benchmarks, its crash test and
// scripts/bench-seeder.sh. Everything is a pure function of the Spec.
package benchgen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/seeder"
)

// Spec describes the generated batch.
type Spec struct {
	Pages        int    // fetched pages in the batch (all known: seeded first)
	LinksPerPage int    // average links per page (5 to 2×average−5 each)
	Sites        int    // sites the pages belong to (Zipf-distributed sizes)
	Seed         uint64 // generator seed
	// NoSimhash leaves the pages without a simhash (the seeder then
	// groups no near-duplicates); otherwise each page has one, a tenth of
	// them within 3 bits of an earlier page's (NearDupShare).
	NoSimhash bool
}

// NearDupShare is the share of generated pages that are near-duplicates
// of an earlier page.
const NearDupShare = 0.1

// Default is the batch of the issue: 100,000 pages, 2 million links.
var Default = Spec{Pages: 100000, LinksPerPage: 20, Sites: 2000, Seed: 1}

// Info is what Generate made.
type Info struct {
	Dir   string // the collection
	Links int    // links written in docs.jsonl
}

// Config is the configuration of generated collections: no site cap,
// depth limits that keep every generated link.
func Config() config.Config {
	cfg := config.Defaults()
	cfg.Scope.Domains = []string{"cl"}
	cfg.Scope.MaxPagesPerSite = 0
	cfg.Manager.MaxDepthStatic, cfg.Manager.MaxDepthDynamic = 1000, 1000
	return cfg
}

// gen draws the web: page p of the batch is page pageOf[p] of site
// siteOf[p].
type gen struct {
	spec   Spec
	rng    *rand.Rand
	zipf   *rand.Zipf
	siteOf []int
	pageOf []int
	size   []int // batch pages per site
}

func newGen(spec Spec) *gen {
	g := &gen{spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, 7))}
	g.zipf = rand.NewZipf(g.rng, 1.2, 4, uint64(spec.Sites-1))
	g.size = make([]int, spec.Sites)
	for range spec.Pages {
		s := int(g.zipf.Uint64())
		g.siteOf = append(g.siteOf, s)
		g.pageOf = append(g.pageOf, g.size[s])
		g.size[s]++
	}
	return g
}

func host(site int) string { return fmt.Sprintf("www%d.sitio%d.cl", site, site%97) }

// pageURL is the normal URL of page j of a site.
func pageURL(site, j int) string {
	switch {
	case j == 0:
		return "http://" + host(site) + "/"
	case j%11 == 0:
		return fmt.Sprintf("http://%s/catalogo.php?id=%d&cat=%d", host(site), j, j%7)
	}
	return fmt.Sprintf("http://%s/seccion%d/pagina-%d.html", host(site), j%13, j)
}

// link draws one out-link of page p: mostly to the same site (a known
// page or a new one), some to other sites, a few spelled in a
// non-normal way, out of scope or to an image.
func (g *gen) link(p, i int) parsed.Link {
	site := g.siteOf[p]
	r := g.rng.IntN(100)
	var u string
	switch {
	case r < 3:
		u = fmt.Sprintf("http://www.empresa%d.com/", g.rng.IntN(500))
	case r < 5:
		u = fmt.Sprintf("http://%s/img/foto%d.jpg", host(site), g.rng.IntN(200))
	case r < 85:
		// Internal: a page of the site, among 4 times as many as the
		// batch fetches (a quarter are known), near this one.
		n := 4*g.size[site] + 8
		j := (g.pageOf[p]*4 + g.rng.IntN(40) - 10 + n) % n
		u = pageURL(site, j)
	default:
		other := int(g.zipf.Uint64())
		if g.rng.IntN(2) == 0 {
			u = pageURL(other, 0)
		} else {
			u = pageURL(other, g.rng.IntN(4*g.size[other]+8))
		}
	}
	switch g.rng.IntN(20) {
	case 0:
		u = strings.Replace(u, "http://www", "HTTP://WWW", 1)
	case 1:
		u += "#seccion"
	case 2:
		u = strings.Replace(u, ".cl/", ".cl:80/./", 1)
	}
	return parsed.Link{URL: u, Anchor: fmt.Sprintf("enlace %d de la página", (p+i)%50)}
}

// Generate creates the collection dir (which must not exist) with the
// spec's pages as seeds and batch 1 gathered: batch.tsv, an empty
// harvest and parsed/docs.jsonl.
func Generate(dir string, spec Spec) (*Info, error) {
	cfg := Config()
	if _, err := seeder.Init(dir, cfg); err != nil {
		return nil, err
	}
	col, err := collection.Open(dir)
	if err != nil {
		return nil, err
	}
	g := newGen(spec)
	var seeds strings.Builder
	for p := range spec.Pages {
		seeds.WriteString(pageURL(g.siteOf[p], g.pageOf[p]))
		seeds.WriteByte('\n')
	}
	if _, err := seeder.AddSeeds(seeder.SeedOptions{Collection: col, Config: cfg}, strings.NewReader(seeds.String()), "seeds", io.Discard); err != nil {
		return nil, err
	}
	ids, err := lookupIDs(col, g)
	if err != nil {
		return nil, err
	}
	b := col.Batch(1)
	entries := make([]batch.Entry, spec.Pages)
	for p := range entries {
		u := pageURL(g.siteOf[p], g.pageOf[p])
		entries[p] = batch.Entry{DocID: ids[p], Site: "http://" + host(g.siteOf[p]), Score: 1, Kind: batch.KindNew, URL: u}
	}
	// A batch comes in profit order and its pages are fetched in any
	// order: not in id order.
	order := g.rng.Perm(spec.Pages)
	h := batch.Header{Batch: 1, Created: time.Now().UTC(), Strategy: "breadth-first", Counts: map[string]int{"urls": spec.Pages}}
	if err := collection.WriteAtomic(b.File(), func(w io.Writer) error { return batch.Write(w, h, entries) }); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.HarvestPath(), 0o755); err != nil {
		return nil, err
	}
	info := &Info{Dir: dir}
	fetched := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	// Fingerprints come from a generator of their own, so that the rest
	// of the batch is the same with or without them.
	fr := rand.New(rand.NewPCG(spec.Seed, 0x51))
	var fps []uint64
	err = collection.WriteAtomic(filepath.Join(b.ParsedPath(), parsed.DocsFile), func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		pw := parsed.NewWriter(bw)
		for _, p := range order {
			e := entries[p]
			n := 5 + g.rng.IntN(2*spec.LinksPerPage-9)
			d := &parsed.Doc{DocID: e.DocID, URL: e.URL, Status: 200, Fetched: fetched.Add(time.Duration(p) * time.Millisecond), MIME: "text/html",
				Bytes: 20000, Title: fmt.Sprintf("Página %d", p), Hash: fmt.Sprintf("%016x", g.rng.Uint64()), Links: make([]parsed.Link, n)}
			for i := range d.Links {
				d.Links[i] = g.link(p, i)
			}
			if !spec.NoSimhash {
				fp := fr.Uint64()
				if len(fps) > 0 && fr.Float64() < NearDupShare {
					fp = fps[fr.IntN(len(fps))]
					for k := fr.IntN(4); k > 0; k-- {
						fp ^= 1 << fr.IntN(64)
					}
				}
				fps = append(fps, fp)
				d.Simhash = fmt.Sprintf("%016x", fp)
			}
			info.Links += n
			if err := pw.Write(d); err != nil {
				return err
			}
		}
		if err := pw.Flush(); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return nil, err
	}
	for _, s := range []collection.Stage{collection.StageHarvested, collection.StageGathered} {
		if err := b.MarkDone(s, map[string]string{"by": "benchgen"}); err != nil {
			return nil, err
		}
	}
	return info, nil
}

func lookupIDs(col *collection.Collection, g *gen) ([]uint64, error) {
	lg, err := linkgraph.Open(col.GraphPath(), true, time.Second)
	if err != nil {
		return nil, err
	}
	defer lg.Close()
	ids := make([]uint64, len(g.siteOf))
	err = lg.View(func(tx *linkgraph.Tx) error {
		for p := range ids {
			u := pageURL(g.siteOf[p], g.pageOf[p])
			id, ok := tx.LookupURL(u)
			if !ok {
				return fmt.Errorf("seed %s has no id", u)
			}
			ids[p] = id
		}
		return nil
	})
	return ids, err
}
