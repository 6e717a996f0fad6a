// Package simstages gives the simulator's batch model (pkg/simulate,
// ModelBatch) the crawler's own stages: the seeder creates the
// collection, adds the seeds and takes each batch in, the manager writes
// the batches and imports the historical PageRank. It lives on the
// stages' side of pkg/layers_test.go, so that pkg/simulate, a library,
// does not import the stage packages.
package simstages

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager"
	"github.com/wirecrawl/wire/pkg/seeder"
	"github.com/wirecrawl/wire/pkg/simulate"
)

// Crawler returns the stages of the batch model: pkg/seeder's Init,
// AddSeeds and Run, pkg/manager's Run and ImportHistory, each with a
// logger that discards (the simulation runs them thousands of times).
// AddSeeds fails when no seed was added, with the first line kept out.
func Crawler() simulate.Stages {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return simulate.Stages{
		Init: func(dir string, cfg config.Config) error {
			_, err := seeder.Init(dir, cfg)
			return err
		},
		AddSeeds: func(ctx context.Context, col *collection.Collection, cfg config.Config, urls []string) (int, error) {
			var problems strings.Builder
			s, err := seeder.AddSeeds(seeder.SeedOptions{Collection: col, Config: cfg, Logger: quiet}, strings.NewReader(strings.Join(urls, "\n")), "seeds", &problems)
			if err != nil {
				return 0, err
			}
			if s.Added == 0 {
				return 0, fmt.Errorf("no seed was added: %s", firstLine(problems.String()))
			}
			return s.Added, nil
		},
		Manage: func(ctx context.Context, col *collection.Collection, cfg config.Config, now time.Time) (int, error) {
			r, err := manager.Run(ctx, col, manager.Options{Config: cfg, Logger: quiet, Now: func() time.Time { return now }})
			if err != nil {
				return 0, err
			}
			return r.Batch, nil
		},
		Seed: func(ctx context.Context, col *collection.Collection, cfg config.Config, id int) (int, error) {
			s, err := seeder.Run(ctx, seeder.RunOptions{Collection: col, Config: cfg, Batch: id, Logger: quiet})
			if err != nil {
				return 0, err
			}
			return s.NewURLs, nil
		},
		ImportHistory: func(ctx context.Context, col *collection.Collection, cfg config.Config, file string) error {
			_, err := manager.ImportHistory(ctx, col, file, manager.HistoryOptions{Config: cfg, Logger: quiet})
			return err
		},
	}
}

// firstLine is the first line of s, or a word for an empty list.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if s == "" {
		return "the list was empty"
	}
	return s
}
