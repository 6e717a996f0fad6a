// Package wacz packs the WARC files of harvested batches into one WACZ
// file (Web Archive Collection Zipped 1.1.1): the WARC files stored as
// they are, one merged CDXJ index, a list of pages and a manifest with
// the SHA-256 of every file, which replay tools (ReplayWeb.page, pywb)
// open as they are. docs/format/wacz.md is the format.
package wacz

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Version is the WACZ version written (datapackage.json wacz_version).
const Version = "1.1.1"

// Paths inside a WACZ file (WACZ 1.1.1, "Directory Layout").
const (
	ArchiveDir     = "archive/"
	IndexPath      = "indexes/index.cdxj"
	PagesPath      = "pages/pages.jsonl"
	PackagePath    = "datapackage.json"
	DigestPath     = "datapackage-digest.json"
	pagesFormat    = "json-pages-1.0"
	packageProfile = "data-package"
)

// Batch is one harvested batch to pack: its directory, holding
// harvest/ (and parsed/, whose titles the page list takes if present).
type Batch struct {
	Name string // the batch directory's name (six digits)
	Dir  string
}

// Options are what Write needs besides the batches.
type Options struct {
	Title       string // datapackage.json title (one line)
	Description string // datapackage.json description (Markdown), optional
	Software    string // datapackage.json software
	// Now gives the created time (time.Now if nil).
	Now    func() time.Time
	Logger *slog.Logger // nil = discard
}

// Summary is what Write packed.
type Summary struct {
	Batches    int   `json:"batches"`
	WARCFiles  int   `json:"warc_files"`
	WARCBytes  int64 `json:"warc_bytes"`
	IndexLines int   `json:"index_lines"`
	Pages      int   `json:"pages"`
	Bytes      int64 `json:"bytes"` // of the WACZ file
}

func (s *Summary) String() string {
	return fmt.Sprintf("packed %d batches: %d WARC files (%d bytes), %d index lines, %d pages; %d bytes in all",
		s.Batches, s.WARCFiles, s.WARCBytes, s.IndexLines, s.Pages, s.Bytes)
}

// Resource is one file of the package as datapackage.json lists it.
type Resource struct {
	Name  string `json:"name"`  // the file's name, lower case
	Path  string `json:"path"`  // its path in the ZIP file
	Hash  string `json:"hash"`  // sha256:HEX of its bytes
	Bytes int64  `json:"bytes"` // its size
}

// Package is datapackage.json.
type Package struct {
	Profile      string     `json:"profile"`
	WACZVersion  string     `json:"wacz_version"`
	Title        string     `json:"title,omitempty"`
	Description  string     `json:"description,omitempty"`
	Created      string     `json:"created"`
	Software     string     `json:"software,omitempty"`
	MainPageURL  string     `json:"mainPageUrl,omitempty"`
	MainPageDate string     `json:"mainPageDate,omitempty"`
	Resources    []Resource `json:"resources"`
}

// Digest is datapackage-digest.json.
type Digest struct {
	Path string `json:"path"`
	Hash string `json:"hash"`
}

// warcFile is a WARC file to pack and its name in archive/.
type warcFile struct {
	batch   Batch
	name    string // in the harvest directory
	archive string // in archive/
}

// ArchiveName is the name under archive/ of the WARC file name of the
// batch batchName: the name itself when it is a unique one
// (warcio.ParseName), else (an old data-00001.warc.gz, the same in every
// batch) the batch's name, a dash and the name.
func ArchiveName(batchName, name string) string {
	if _, ok := warcio.ParseName(name); ok {
		return name
	}
	return batchName + "-" + name
}

// Write packs the harvests of batches into a new WACZ file at path,
// written under a temporary name and renamed when complete. The
// resources are stored, not compressed (the WARC files are gzip members
// already, and a replay tool reads a record at its offset). A batch
// without a harvest directory, or two WARC files packed under one name,
// is an error; a WARC file without its index is indexed in memory (and
// logged: harvester index writes it). A cancelled ctx stops it, leaving
// no file.
func Write(ctx context.Context, path string, batches []Batch, opts Options) (*Summary, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	files, err := listWARCs(batches)
	if err != nil {
		return nil, err
	}
	f, err := collection.CreateAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("write wacz: %w", err)
	}
	defer f.Abort()
	p := &packer{ctx: ctx, zw: zip.NewWriter(f), created: now().UTC().Truncate(time.Second), log: log,
		sum: Summary{Batches: len(batches), WARCFiles: len(files)}}
	if err := p.pack(batches, files, opts); err != nil {
		return nil, fmt.Errorf("write wacz %s: %w", path, err)
	}
	if err := p.zw.Close(); err != nil {
		return nil, fmt.Errorf("write wacz %s: %w", path, err)
	}
	if st, err := f.Stat(); err == nil {
		p.sum.Bytes = st.Size()
	}
	if err := f.Commit(); err != nil {
		return nil, fmt.Errorf("write wacz: %w", err)
	}
	return &p.sum, nil
}

// listWARCs lists the WARC files of the batches' harvest directories,
// batch by batch in name order, with their names in archive/.
func listWARCs(batches []Batch) ([]warcFile, error) {
	var out []warcFile
	seen := map[string]string{}
	for _, b := range batches {
		dir := filepath.Join(b.Dir, collection.HarvestDir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", b.Name, err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), warcio.Suffix) {
				continue
			}
			w := warcFile{batch: b, name: e.Name(), archive: ArchiveName(b.Name, e.Name())}
			if other, dup := seen[w.archive]; dup {
				return nil, fmt.Errorf("batch %s: WARC file %s has the name of one of batch %s: rename one (a copied file?)", b.Name, w.name, other)
			}
			seen[w.archive] = b.Name
			out = append(out, w)
		}
	}
	return out, nil
}

// packer writes the entries of one WACZ file, in order: archive/, the
// index, the pages, the manifest and its digest.
type packer struct {
	ctx       context.Context
	zw        *zip.Writer
	created   time.Time
	log       *slog.Logger
	resources []Resource
	sum       Summary
}

// pack writes every entry.
func (p *packer) pack(batches []Batch, files []warcFile, opts Options) error {
	for _, w := range files {
		if err := p.archive(w); err != nil {
			return err
		}
	}
	if err := p.index(files); err != nil {
		return err
	}
	main, err := p.pages(batches)
	if err != nil {
		return err
	}
	pkg := Package{Profile: packageProfile, WACZVersion: Version, Title: opts.Title, Description: opts.Description,
		Created: p.created.Format(time.RFC3339), Software: opts.Software, Resources: p.resources}
	if main != nil {
		pkg.MainPageURL, pkg.MainPageDate = main.URL, main.TS
	}
	manifest, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		return err
	}
	manifest = append(manifest, '\n')
	if err := p.entry(PackagePath, p.created, false, func(w io.Writer) error {
		_, err := w.Write(manifest)
		return err
	}); err != nil {
		return err
	}
	sum := sha256.Sum256(manifest)
	digest, err := json.MarshalIndent(Digest{Path: PackagePath, Hash: "sha256:" + hex.EncodeToString(sum[:])}, "", "  ")
	if err != nil {
		return err
	}
	return p.entry(DigestPath, p.created, false, func(w io.Writer) error {
		_, err := w.Write(append(digest, '\n'))
		return err
	})
}

// entry writes one stored entry with the content write gives; with
// listed, it is a resource of the manifest (its SHA-256 and size).
func (p *packer) entry(name string, mod time.Time, listed bool, write func(io.Writer) error) error {
	zf, err := p.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: mod})
	if err != nil {
		return fmt.Errorf("add %s: %w", name, err)
	}
	h := &hashCount{h: sha256.New()}
	if err := write(io.MultiWriter(zf, h)); err != nil {
		return fmt.Errorf("add %s: %w", name, err)
	}
	if listed {
		p.resources = append(p.resources, Resource{Name: strings.ToLower(filepath.Base(name)), Path: name,
			Hash: "sha256:" + hex.EncodeToString(h.h.Sum(nil)), Bytes: h.n})
	}
	return nil
}

// hashCount hashes and counts what is written to it.
type hashCount struct {
	h hash.Hash
	n int64
}

func (h *hashCount) Write(b []byte) (int, error) {
	h.n += int64(len(b))
	return h.h.Write(b)
}

// archive stores one WARC file under archive/.
func (p *packer) archive(w warcFile) error {
	path := filepath.Join(w.batch.Dir, collection.HarvestDir, w.name)
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("batch %s: %w", w.batch.Name, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("batch %s: %w", w.batch.Name, err)
	}
	err = p.entry(ArchiveDir+w.archive, st.ModTime(), true, func(out io.Writer) error {
		n, err := io.Copy(out, &ctxReader{ctx: p.ctx, r: in})
		if err == nil && n != st.Size() {
			err = fmt.Errorf("%s changed while it was packed (%d bytes, then %d)", path, st.Size(), n)
		}
		p.sum.WARCBytes += n
		return err
	})
	return err
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// index writes indexes/index.cdxj: the WARC files' indexes merged, each
// line naming its file as archive/ does.
func (p *packer) index(files []warcFile) error {
	var sources []cdxj.Source
	for _, w := range files {
		dir := filepath.Join(w.batch.Dir, collection.HarvestDir)
		src, closeSrc, err := p.source(dir, w)
		if err != nil {
			return err
		}
		defer closeSrc()
		sources = append(sources, src)
	}
	return p.entry(IndexPath, p.created, true, func(out io.Writer) error {
		n, err := cdxj.Merge(out, sources)
		p.sum.IndexLines = n
		return err
	})
}

// source is the index of one WARC file, read from its index file, or
// made from the file when it has none; its lines are checked to be of
// that file and renamed to its name in archive/.
func (p *packer) source(dir string, w warcFile) (cdxj.Source, func(), error) {
	path := filepath.Join(dir, cdxj.IndexName(w.name))
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		p.log.Warn("WARC file without an index, indexed in memory ('harvester index' writes it)", "batch", w.batch.Name, "warc", w.name)
		lines, torn, err := cdxj.FromWARC(filepath.Join(dir, w.name), w.name)
		if err != nil {
			return nil, nil, fmt.Errorf("batch %s: %w", w.batch.Name, err)
		}
		if torn >= 0 {
			p.log.Warn("torn last record left out of the index", "batch", w.batch.Name, "warc", w.name, "offset", torn)
		}
		return &renamed{src: cdxj.Lines(w.name, lines), from: w.name, to: w.archive}, func() {}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("batch %s: %w", w.batch.Name, err)
	}
	return &renamed{src: cdxj.NewReader(f, path), from: w.name, to: w.archive}, func() { f.Close() }, nil
}

// renamed is a WARC file's index with its lines' filename changed to the
// file's name in archive/.
type renamed struct {
	src      cdxj.Source
	from, to string
}

func (r *renamed) Next() (cdxj.Line, error) {
	l, err := r.src.Next()
	if err != nil {
		return l, err
	}
	if l.Filename != r.from {
		return cdxj.Line{}, fmt.Errorf("index %s: %w: a line of %s, not %s (rebuild it with harvester index --force)", r.src.Name(), cdxj.ErrFormat, l.Filename, r.from)
	}
	l.Filename = r.to
	return l, nil
}

func (r *renamed) Name() string { return r.src.Name() }

// Page is one line of pages/pages.jsonl.
type Page struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	TS    string `json:"ts"` // RFC 3339, UTC, seconds
	Title string `json:"title,omitempty"`
}

// pagesHeader is the first line of pages.jsonl (WACZ 1.1.1, "pages.jsonl").
type pagesHeader struct {
	Format string `json:"format"`
	ID     string `json:"id"`
	Title  string `json:"title"`
}

// pages writes pages/pages.jsonl: a line per HTML page of the batches
// stored with a 2xx status, in fetch log order, with its title when the
// batch was gathered. It returns the first page (the collection's main
// page), nil if none.
func (p *packer) pages(batches []Batch) (*Page, error) {
	var first *Page
	err := p.entry(PagesPath, p.created, true, func(out io.Writer) error {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(pagesHeader{Format: pagesFormat, ID: "pages", Title: "All Pages"}); err != nil {
			return err
		}
		for _, b := range batches {
			recs, err := fetchlog.ReadFile(filepath.Join(b.Dir, collection.HarvestDir, fetchlog.LogFile))
			if err != nil {
				return fmt.Errorf("batch %s: %w", b.Name, err)
			}
			titles := p.titles(b)
			for _, r := range recs {
				if !r.OK() || r.WARC == "" || r.Status < 200 || r.Status > 299 || !IsHTML(r.MIME) {
					continue
				}
				pg := Page{ID: fmt.Sprintf("%s-%d", b.Name, r.DocID), URL: r.URL, TS: r.Fetched.UTC().Truncate(time.Second).Format(time.RFC3339), Title: titles[r.URL]}
				if err := enc.Encode(pg); err != nil {
					return err
				}
				if first == nil {
					first = &pg
				}
				p.sum.Pages++
			}
		}
		return nil
	})
	return first, err
}

// IsHTML tells whether a media type is an HTML page's.
func IsHTML(mime string) bool { return mime == "text/html" || mime == "application/xhtml+xml" }

// titles are the page titles the gatherer found in a batch, by URL;
// none when the batch is not gathered, or its parsed output cannot be
// read (logged: the titles are optional).
func (p *packer) titles(b Batch) map[string]string {
	path := filepath.Join(b.Dir, collection.ParsedDir, parsed.DocsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]string{}
	r := parsed.NewReader(f, path)
	for {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			p.log.Warn("page titles left out", "batch", b.Name, "err", err)
			return out
		}
		if d.Title != "" {
			out[d.URL] = d.Title
		}
	}
}
