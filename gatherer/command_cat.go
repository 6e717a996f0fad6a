package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/gatherer"
	"github.com/wirecrawl/wire/pkg/langid"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/textstore"
)

func catCommand() *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print the stored text of a page",
		ArgsUsage: "URL|DOCID",
		Description: `Prints the text the text store keeps for the page, from the newest segment
that has it. A URL is normalised first (docs/urlnorm.md); an argument of
digits only is a doc id. Prints nothing (and says why on standard error)
when the segment keeps no text: text_mode none, or a noindex page. Exits 1
when no segment has the page.

With --lang it also prints, on standard error, the language the page
declares and the one told from its text, marking a disagreement:
"gatherer: URL: lang declared es, detected en (confidence 97): disagree".
The detected language is in the page's document record, looked up as
show looks it up (--batch-dir, the batch of the text store entry, then
every batch of the collection).

` + command.ExitCodes(command.ExitOK),
		Flags: command.WithSections([]string{"scope"},
			&cli.StringFlag{Name: "text-dir", Usage: "text store directory (default: COLLECTION/text)"},
			&cli.BoolFlag{Name: "lang", Usage: "also print the declared and the detected language on standard error"},
			&cli.StringFlag{Name: "batch-dir", Usage: "with --lang: batch directory whose parsed/docs.jsonl to search first"},
		),
		Action: command.Action(parseCat, runCat),
	}
}

// target is what cat and show were asked about: a URL or a doc id.
type target struct {
	url   string
	docID uint64
}

// parseTarget reads the argument of cat and show: digits only are a doc
// id, anything else a URL, normalised with the scope's rules when it
// can be.
func parseTarget(arg string, cfg config.Config) target {
	if id, err := strconv.ParseUint(arg, 10, 64); err == nil {
		return target{docID: id}
	}
	if n, err := cfg.Scope.Normalizer().Normalize(arg); err == nil {
		arg = n
	}
	return target{url: arg}
}

func (t target) lookup(s *textstore.Store) (textstore.Meta, error) {
	if t.url != "" {
		return s.Lookup(t.url)
	}
	return s.LookupDocID(t.docID)
}

// lookupOptions is what cat and show look up, and where.
type lookupOptions struct {
	TextDir    string                 // the text store: --text-dir, or the collection's
	Collection *collection.Collection // nil with --text-dir
	Target     target                 // the argument
}

// parseLookup reads what cat and show share: the text store named by
// --text-dir or the collection's, the settings, and the argument (a URL
// or a doc id).
func parseLookup(c *cli.Context) (lookupOptions, error) {
	var (
		o   lookupOptions
		cfg config.Config
		err error
	)
	if o.TextDir = c.String("text-dir"); o.TextDir != "" {
		cfg, err = command.LoadConfig(c)
	} else if o.Collection, cfg, err = command.Open(c); err == nil {
		o.TextDir = o.Collection.TextPath()
	}
	if err != nil {
		return lookupOptions{}, err
	}
	o.Target = parseTarget(c.Args().First(), cfg)
	return o, nil
}

// lookup is what cat and show begin with: the store opened and the
// target's entry looked up (lookupErr). The caller closes the store when
// err is nil.
func (o lookupOptions) lookup() (store *textstore.Store, m textstore.Meta, lookupErr, err error) {
	if store, err = textstore.Open(o.TextDir); err != nil {
		return nil, m, nil, err
	}
	m, lookupErr = o.Target.lookup(store)
	return store, m, lookupErr, nil
}

// findRecord looks for the target's document record, in this order:
// batchDir (if given), the batch of the text store entry m (when
// lookupErr is nil), then every batch of the collection from the newest
// down. It returns the record and its file, or gatherer.ErrNoDoc, and
// how many batch directories it searched.
func (o lookupOptions) findRecord(batchDir string, m textstore.Meta, lookupErr error) (*parsed.Doc, string, int, error) {
	var dirs []string
	seen := map[string]bool{}
	add := func(dir string) {
		if dir != "" && !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	add(batchDir)
	if col := o.Collection; col != nil {
		if lookupErr == nil {
			add(col.Batch(m.Batch).Dir)
		}
		ids, err := col.BatchIDs()
		if err != nil {
			return nil, "", 0, err
		}
		for i := len(ids) - 1; i >= 0; i-- {
			add(col.Batch(ids[i]).Dir)
		}
	}
	t := o.Target
	if lookupErr == nil {
		t.url = m.URL // the exact spelling the records use
	}
	doc, path, err := gatherer.FindDoc(dirs, t.url, t.docID)
	return doc, path, len(dirs), err
}

// langLine says what a page's language is: the declared one (its
// <html lang>), the one told from its text in its document record d and
// the detector's confidence, and whether they agree ("declared es,
// detected en (confidence 97): disagree"; langid.Agree). d is nil when
// no record was found.
func langLine(declared string, d *parsed.Doc) string {
	s := "declared " + declared
	if declared == "" {
		s = "declared none"
	}
	switch {
	case d == nil:
		return s + "; detected: no record found"
	case d.DetectedLang == "":
		return s + "; detected: not recorded (gatherer.language_sample 0, or gathered before detection)"
	}
	s += fmt.Sprintf(", detected %s (confidence %d)", d.DetectedLang, d.LangConf)
	if agree, known := langid.Agree(declared, d.DetectedLang); known && agree {
		s += ": agree"
	} else if known {
		s += ": disagree"
	}
	return s
}

// catOptions is what `gatherer cat` needs.
type catOptions struct {
	lookupOptions
	Lang     bool   // print the declared and detected language on Std.Err
	BatchDir string // with Lang: a batch directory to search first
	Std      command.Std
}

func parseCat(c *cli.Context) (catOptions, error) {
	o, err := parseLookup(c)
	return catOptions{lookupOptions: o, Lang: c.Bool("lang"), BatchDir: c.String("batch-dir"), Std: command.StdFrom(c)}, err
}

// runCat prints the page's stored text on out, or on o.Std.Err why there
// is none.
func runCat(ctx context.Context, o catOptions, out io.Writer) error {
	store, m, lookupErr, err := o.lookup()
	if err != nil {
		return err
	}
	defer store.Close()
	if lookupErr != nil {
		return lookupErr
	}
	text, err := store.Text(m)
	if err != nil {
		return err
	}
	if o.Lang {
		doc, _, _, err := o.findRecord(o.BatchDir, m, nil)
		if err != nil && !errors.Is(err, gatherer.ErrNoDoc) {
			return err
		}
		fmt.Fprintf(o.Std.Err, "gatherer: %s: lang %s\n", m.URL, langLine(m.Lang, doc))
	}
	if text == "" && m.TextBytes > 0 {
		fmt.Fprintf(o.Std.Err, "gatherer: %s: %s\n", m.URL, whyNoText(store, m))
		return nil
	}
	fmt.Fprintln(out, text)
	return nil
}

// whyNoText explains an entry without stored text.
func whyNoText(s *textstore.Store, m textstore.Meta) string {
	if m.NoIndex() {
		return "no text kept: the page asked not to be indexed"
	}
	if m.Flags&textstore.FlagNoText != 0 {
		return fmt.Sprintf("no text kept: batch %06d was gathered with text_mode none", m.Batch)
	}
	if g, ok := s.Segment(m.Segment); ok && g.Mode == textstore.ModeNone && g.Version == 1 {
		return fmt.Sprintf("no text kept: segment %06d was written with text_mode none", g.ID)
	}
	return "no text kept"
}
