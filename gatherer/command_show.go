package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/gatherer"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/textstore"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print what the gatherer recorded about a page",
		ArgsUsage: "URL|DOCID",
		Description: `Prints the page's entry in the text store (title, charset, language, status,
text hash, text length, the segment it is in) and its document record with
its out-links; the language line sets the one the page declares beside
the one told from its text, from the record ("lang  declared es, detected
en (confidence 97): disagree"), and for an https page the TLS facts the harvester recorded
(protocol, cipher, whether the certificate was valid for the name and why
not). The record comes from the newest parsed/docs.jsonl that has
the page: first the batch named by the text store entry, then every batch
of the collection from the newest down (with --batch-dir, that directory
first). A URL is normalised first; digits only are a doc id. Exits 1 when
neither the text store nor any docs.jsonl has the page.

` + command.ExitCodes(command.ExitOK),
		Flags: command.WithSections([]string{"scope"},
			&cli.StringFlag{Name: "text-dir", Usage: "text store directory (default: COLLECTION/text)"},
			&cli.StringFlag{Name: "batch-dir", Usage: "batch directory whose parsed/docs.jsonl to search first"},
		),
		Action: command.Action(parseShow, runShow),
	}
}

// showOptions is what `gatherer show` needs.
type showOptions struct {
	lookupOptions
	BatchDir string // a batch directory to search first
}

func parseShow(c *cli.Context) (showOptions, error) {
	o, err := parseLookup(c)
	return showOptions{lookupOptions: o, BatchDir: c.String("batch-dir")}, err
}

// runShow prints the page's text store entry and document record on out.
func runShow(ctx context.Context, o showOptions, out io.Writer) error {
	store, m, merr, err := o.lookup()
	if err != nil {
		return err
	}
	defer store.Close()
	if merr != nil && !errors.Is(merr, textstore.ErrNotFound) {
		return merr
	}
	doc, path, searched, derr := o.findRecord(o.BatchDir, m, merr)
	if derr != nil && !errors.Is(derr, gatherer.ErrNoDoc) {
		return derr
	}
	if merr != nil && derr != nil {
		return merr
	}
	if merr == nil {
		writeMeta(out, store, m, doc)
	} else {
		fmt.Fprintf(out, "text store: no entry\n")
	}
	if derr == nil {
		writeDoc(out, doc, path)
		writeTLS(out, path, doc)
	} else {
		fmt.Fprintf(out, "record: none found in %d batch directories\n", searched)
	}
	return nil
}

// writeMeta writes the text store entry m, with the language detected
// in its document record d (nil: none found) beside the declared one.
func writeMeta(w io.Writer, s *textstore.Store, m textstore.Meta, d *parsed.Doc) {
	seg := fmt.Sprintf("%06d", m.Segment)
	if g, ok := s.Segment(m.Segment); ok {
		seg += fmt.Sprintf(" (text_mode %s", g.Mode)
		if g.Compacted {
			seg += fmt.Sprintf(", compacted: batches %d to %d", g.FirstBatch, g.ID)
		}
		seg += ")"
	}
	fmt.Fprintf(w, "url          %s\n", m.URL)
	fmt.Fprintf(w, "docid        %d\n", m.DocID)
	fmt.Fprintf(w, "batch        %06d\n", m.Batch)
	fmt.Fprintf(w, "segment      %s\n", seg)
	fmt.Fprintf(w, "status       %d\n", m.Status)
	fmt.Fprintf(w, "fetched      %s\n", m.Fetched.Format(time.RFC3339))
	fmt.Fprintf(w, "mime         %s\n", m.MIME)
	fmt.Fprintf(w, "charset      %s\n", m.Charset)
	fmt.Fprintf(w, "lang         %s\n", langLine(m.Lang, d))
	fmt.Fprintf(w, "title        %s\n", m.Title)
	if m.Description != "" {
		fmt.Fprintf(w, "description  %s\n", m.Description)
	}
	fmt.Fprintf(w, "hash         %s\n", extract.HashHex(m.Hash))
	kept := ""
	switch {
	case m.Flags&textstore.FlagSummary != 0:
		kept = " (summary)"
	case m.Flags&textstore.FlagNoText != 0:
		kept = " (text_mode none)"
	}
	fmt.Fprintf(w, "text         %d bytes, %d stored%s\n", m.TextBytes, m.StoredBytes, kept)
	if m.HasText() && m.RecordSegment != m.Segment {
		fmt.Fprintf(w, "stored in    segment %06d (the same text was stored there first)\n", m.RecordSegment)
	}
	if m.Flags&textstore.FlagNoIndex != 0 {
		fmt.Fprintf(w, "robots       noindex\n")
	}
	if m.Flags&textstore.FlagNoFollow != 0 {
		fmt.Fprintf(w, "robots       nofollow\n")
	}
	if len(m.Headings) > 0 {
		fmt.Fprintf(w, "headings     %d\n", len(m.Headings))
		for _, h := range m.Headings {
			fmt.Fprintf(w, "    h%d %s%s\n", h.Level, strings.Repeat("  ", max(h.Level-1, 0)), h.Text)
		}
	}
}

// writeDoc writes the document record d, read from path.
func writeDoc(w io.Writer, d *parsed.Doc, path string) {
	fmt.Fprintf(w, "record       %s\n", path)
	fmt.Fprintf(w, "  url        %s (doc %d, status %d)\n", d.URL, d.DocID, d.Status)
	if d.Err != "" {
		fmt.Fprintf(w, "  error      %s\n", d.Err)
	}
	if d.Title != "" {
		fmt.Fprintf(w, "  title      %s\n", d.Title)
	}
	if d.Hash != "" {
		fmt.Fprintf(w, "  hash       %s (%d bytes of text)\n", d.Hash, d.TextBytes)
	}
	if d.Lang != "" || d.DetectedLang != "" {
		fmt.Fprintf(w, "  lang       %s\n", langLine(d.Lang, d))
	}
	for _, kv := range [][2]string{{"charset", d.Charset}, {"duplicate", d.DuplicateOf}, {"modified", d.LastModified}, {"etag", d.ETag}, {"redirect", d.Redirect}, {"canonical", d.Canonical}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "  %-10s %s\n", kv[0], kv[1])
		}
	}
	if d.Unchanged {
		fmt.Fprintf(w, "  unchanged  yes\n")
	}
	if d.NoFollow {
		fmt.Fprintf(w, "  links      none kept: the page asked for nofollow\n")
		return
	}
	fmt.Fprintf(w, "  links      %d\n", len(d.Links))
	for _, l := range d.Links {
		nf := ""
		if l.NoFollow {
			nf = " [nofollow]"
		}
		fmt.Fprintf(w, "    %s  %q%s\n", l.URL, l.Anchor, nf)
	}
}
