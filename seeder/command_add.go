package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func addCommand() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "add seed URLs from FILE (- for standard input), or a sitemap (--sitemap URL|FILE)",
		ArgsUsage: "FILE|-|URL",
		Description: `Reads one URL per line; blank lines and lines starting with # are
ignored. Each URL is normalised and checked against the scope; new ones are
added at depth 0, pending. Lines kept out are reported on standard error as
FILE:LINE: reason: "url" (the line quoted, cut to 80 bytes), and the others are still added: the exit code is 0
even then. It is nonzero when FILE cannot be read (nothing is added).
Adding the same list twice adds nothing the second time.

With --sitemap, the argument is a sitemap (docs/sitemaps.md): an http(s) URL
is added as a sitemap for the next batches to fetch; a local file (sitemap,
index, gzip or not, text, RSS or Atom) is read at once, its pages added as
seeds found in that sitemap, the sitemaps it lists added to be fetched.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags:  command.WithSettings(&cli.BoolFlag{Name: "sitemap", Usage: "the argument is a sitemap URL or file"}),
		Action: command.Action(parseAdd, runAdd),
	}
}

// addOptions is what `seeder add` needs.
type addOptions struct {
	Collection *collection.Collection
	Config     config.Config
	File       string // the seed list, "-" for standard input (Std.In)
	Sitemap    bool   // File is a sitemap URL or file (--sitemap)
	Std        command.Std
}

func parseAdd(c *cli.Context) (addOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return addOptions{}, err
	}
	return addOptions{Collection: col, Config: cfg, File: c.Args().First(), Sitemap: c.Bool("sitemap"), Std: command.StdFrom(c)}, nil
}

// runAdd adds the seeds of o.File, reports the lines kept out on
// o.Std.Err and the summary on out.
func runAdd(ctx context.Context, o addOptions, out io.Writer) error {
	if o.Sitemap {
		s, err := seeder.AddSitemap(seeder.SeedOptions{Collection: o.Collection, Config: o.Config, Logger: o.Std.Log()}, o.File, o.Std.Err)
		if err != nil {
			return err
		}
		s.WriteText(out)
		return nil
	}
	name, r := o.File, o.Std.In
	if name == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("read seeds: %w", err)
		}
		defer f.Close()
		r = f
	}
	s, err := seeder.AddSeeds(seeder.SeedOptions{Collection: o.Collection, Config: o.Config, Logger: o.Std.Log()}, r, name, o.Std.Err)
	if err != nil {
		return err
	}
	s.WriteText(out)
	return nil
}
