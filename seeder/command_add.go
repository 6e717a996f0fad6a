package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
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
		Action: runAdd,
	}
}

func runAdd(c *cli.Context) error {
	col, cfg, err := command.Open(c)
	if err != nil {
		return err
	}
	name := c.Args().First()
	if c.Bool("sitemap") {
		s, err := seeder.AddSitemap(seeder.SeedOptions{Collection: col, Config: cfg, Logger: command.Logger(c)}, name, c.App.ErrWriter)
		if err != nil {
			return err
		}
		s.WriteText(c.App.Writer)
		return nil
	}
	var r io.Reader = c.App.Reader
	if r == nil {
		r = os.Stdin
	}
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
	s, err := seeder.AddSeeds(seeder.SeedOptions{Collection: col, Config: cfg, Logger: command.Logger(c)}, r, name, c.App.ErrWriter)
	if err != nil {
		return err
	}
	s.WriteText(c.App.Writer)
	return nil
}
