package simulate

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager"
	"github.com/wirecrawl/wire/pkg/seeder"
)

// crawlerStages are the real stages, as pkg/manager/simstages gives
// them (that package imports this one, so an internal test cannot).
func crawlerStages() Stages {
	return Stages{
		Init: func(dir string, cfg config.Config) error {
			_, err := seeder.Init(dir, cfg)
			return err
		},
		AddSeeds: func(ctx context.Context, col *collection.Collection, cfg config.Config, urls []string) (int, error) {
			s, err := seeder.AddSeeds(seeder.SeedOptions{Collection: col, Config: cfg}, strings.NewReader(strings.Join(urls, "\n")), "seeds", io.Discard)
			if err != nil {
				return 0, err
			}
			return s.Added, nil
		},
		Manage: func(ctx context.Context, col *collection.Collection, cfg config.Config, now time.Time) (int, error) {
			r, err := manager.Run(ctx, col, manager.Options{Config: cfg, Now: func() time.Time { return now }})
			if err != nil {
				return 0, err
			}
			return r.Batch, nil
		},
		Seed: func(ctx context.Context, col *collection.Collection, cfg config.Config, id int) (int, error) {
			s, err := seeder.Run(ctx, seeder.RunOptions{Collection: col, Config: cfg, Batch: id})
			if err != nil {
				return 0, err
			}
			return s.NewURLs, nil
		},
		ImportHistory: func(ctx context.Context, col *collection.Collection, cfg config.Config, file string) error {
			_, err := manager.ImportHistory(ctx, col, file, manager.HistoryOptions{Config: cfg})
			return err
		},
	}
}
