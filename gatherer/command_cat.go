package main

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
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

` + command.ExitCodes(command.ExitOK),
		Flags:  command.WithSections([]string{"scope"}, &cli.StringFlag{Name: "text-dir", Usage: "text store directory (default: COLLECTION/text)"}),
		Action: runCat,
	}
}

// target is what cat and show were asked about: a URL or a doc id.
type target struct {
	url   string
	docID uint64
}

func parseTarget(c *cli.Context, cfg config.Config) (target, error) {
	arg := c.Args().First()
	if id, err := strconv.ParseUint(arg, 10, 64); err == nil {
		return target{docID: id}, nil
	}
	if n, err := cfg.Scope.Normalizer().Normalize(arg); err == nil {
		arg = n
	}
	return target{url: arg}, nil
}

// openStore opens the text store named by --text-dir, or the collection's.
// col is nil with --text-dir.
func openStore(c *cli.Context) (*textstore.Store, *collection.Collection, config.Config, error) {
	if dir := c.String("text-dir"); dir != "" {
		cfg, err := command.LoadConfig(c)
		if err != nil {
			return nil, nil, cfg, err
		}
		s, err := textstore.Open(dir)
		return s, nil, cfg, err
	}
	col, cfg, err := command.Open(c)
	if err != nil {
		return nil, nil, cfg, err
	}
	s, err := textstore.Open(col.TextPath())
	return s, col, cfg, err
}

func (t target) lookup(s *textstore.Store) (textstore.Meta, error) {
	if t.url != "" {
		return s.Lookup(t.url)
	}
	return s.LookupDocID(t.docID)
}

// lookupArg is what cat and show begin with: the store opened, the one
// argument (URL or doc id) parsed, and its entry looked up (lookupErr).
// The caller closes the store when err is nil.
func lookupArg(c *cli.Context, what string) (store *textstore.Store, col *collection.Collection, t target, m textstore.Meta, lookupErr, err error) {
	store, col, cfg, err := openStore(c)
	if err != nil {
		return nil, nil, t, m, nil, err
	}
	if t, err = parseTarget(c, cfg); err != nil {
		store.Close()
		return nil, nil, t, m, nil, err
	}
	m, lookupErr = t.lookup(store)
	return store, col, t, m, lookupErr, nil
}

func runCat(c *cli.Context) error {
	store, _, _, m, lookupErr, err := lookupArg(c, "cat")
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
	if text == "" && m.TextBytes > 0 {
		fmt.Fprintf(c.App.ErrWriter, "gatherer: %s: %s\n", m.URL, whyNoText(store, m))
		return nil
	}
	fmt.Fprintln(c.App.Writer, text)
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
