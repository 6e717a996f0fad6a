package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/wacz"
)

// waczCommand is `harvester wacz`: pack harvested batches into a WACZ
// file.
func waczCommand() *cli.Command {
	return &cli.Command{
		Name:      "wacz",
		Usage:     "pack the WARC files of harvested batches into one WACZ file, for replay",
		ArgsUsage: "OUT.wacz",
		UsageText: "harvester wacz [--batches RANGE] [--title TEXT] [-c COLLECTION] OUT.wacz\n   harvester wacz --batch-dir DIR [--title TEXT] OUT.wacz",
		Description: `Writes OUT.wacz, a Web Archive Collection Zipped file (WACZ 1.1.1) that
ReplayWeb.page and pywb open as it is: archive/ holds the WARC files of every
harvested batch of the collection (or of --batches N, N-M or N-; or of the bare
batch directory --batch-dir), stored as they are; indexes/index.cdxj their
CDXJ indexes merged into one, sorted; pages/pages.jsonl a line per HTML page
stored with a 2xx status (url, ts, and the title when the batch is gathered);
datapackage.json the SHA-256 and size of every file, and
datapackage-digest.json the SHA-256 of datapackage.json. WARC files keep their
names, unique since issue 37; an old data-NNNNN.warc.gz is stored as
BATCH-data-NNNNN.warc.gz. A WARC file without its index is indexed in memory
(harvester index writes the indexes). The file is written under a temporary
name and renamed when complete. Nothing in the collection is changed. See
docs/format/wacz.md.

` + command.ExitCodes(command.ExitNothingToDo, command.ExitDamaged),
		Flags: append(command.CommonFlags(),
			&cli.StringFlag{Name: "batches", Usage: "pack the batches of `RANGE` only: N, N-M or N- (default: every harvested batch)"},
			&cli.StringFlag{Name: "batch-dir", Usage: "pack the bare batch directory `DIR` (no collection needed)"},
			&cli.StringFlag{Name: "title", Usage: "the archive's title in datapackage.json (default: wire crawl of NAME[, batches RANGE])"},
		),
		Action: command.Action(parseWACZ, runWACZ),
	}
}

// waczOptions is what `harvester wacz` needs.
type waczOptions struct {
	Collection string
	Batches    collection.BatchRange
	BatchDir   string
	Title      string
	Output     string // OUT.wacz
	Std        command.Std
}

func parseWACZ(c *cli.Context) (waczOptions, error) {
	o := waczOptions{Collection: c.String(command.FlagCollection), BatchDir: c.String("batch-dir"), Title: c.String("title"),
		Output: c.Args().First(), Std: command.StdFrom(c)}
	if !strings.HasSuffix(o.Output, ".wacz") {
		return o, command.Usage("wacz: the output file must end in .wacz (the WACZ specification's extension), got %q", o.Output)
	}
	r, err := parseBatchesFlag(c, o.BatchDir)
	o.Batches = r
	return o, err
}

// runWACZ packs the batches and prints what it packed on out.
func runWACZ(ctx context.Context, o waczOptions, out io.Writer) error {
	batches, err := harvestedBatches(o.Collection, o.BatchDir, o.Batches)
	if err != nil {
		return err
	}
	var in []wacz.Batch
	for _, b := range batches {
		name := b.Name()
		if o.BatchDir != "" && b.ID == 0 {
			name = filepath.Base(b.Dir)
		}
		in = append(in, wacz.Batch{Name: name, Dir: b.Dir})
	}
	title := o.Title
	if title == "" {
		title = defaultTitle(o)
	}
	sum, err := wacz.Write(ctx, o.Output, in, wacz.Options{Title: title, Software: "wire harvester wacz", Logger: o.Std.Log()})
	if err != nil {
		return asDamage(err)
	}
	_, err = fmt.Fprintf(out, "%s: %s\n", o.Output, sum)
	return err
}

// defaultTitle is the archive's title without --title: "wire crawl of
// NAME", the collection's (or batch directory's) name, and the range of
// batches when it is not every batch.
func defaultTitle(o waczOptions) string {
	dir := o.BatchDir
	if dir == "" {
		dir = o.Collection
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	title := "wire crawl of " + filepath.Base(dir)
	if r := o.Batches.String(); o.BatchDir == "" && r != "all" {
		title += ", batches " + r
	}
	return title
}
