package faulttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// Settings are the settings of a collection of the test web that matter
// to these tests.
type Settings struct {
	// Wait is harvester.wait.
	Wait time.Duration
	// AddressWait is harvester.address_wait (0: no floor, for a web
	// whose hosts all answer on one address).
	AddressWait time.Duration
	// TotalTimeout is harvester.total_timeout.
	TotalTimeout time.Duration
	// BatchSize is manager.batch_size.
	BatchSize int
	// Seeds is how many seed URLs (biggest sites first) are added.
	Seeds int
	// Extra are more setting flags for seeder init ("--section-key",
	// "value", ...).
	Extra []string
}

// InitCollection creates the runner's collection for web (seeder init
// with flags that point the harvester at the web's DNS server and allow
// loopback) and adds its seed URLs (seeder add).
func InitCollection(ctx context.Context, r *Runner, web *testweb.Web, s Settings) error {
	args := []string{"init", "--collection", r.Collection,
		"--harvester-allow-private", "--harvester-dns-server", web.DNSAddr(),
		"--harvester-wait", s.Wait.String(), "--harvester-total-timeout", s.TotalTimeout.String(),
		"--harvester-connect-timeout", "5s",
		"--harvester-address-wait", s.AddressWait.String(),
		"--harvester-connections", "100",
		"--manager-batch-size", strconv.Itoa(s.BatchSize), "--scope-domains", "cl"}
	args = append(args, s.Extra...)
	res, err := r.Run(ctx, "seeder", args...)
	if err != nil {
		return err
	}
	if res.Code != exitOK {
		return fmt.Errorf("init collection: %s", res)
	}
	seeds := filepath.Join(r.Collection, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(web.SeedURLs(s.Seeds), "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write seeds: %w", err)
	}
	if res, err = r.Run(ctx, "seeder", "add", "--collection", r.Collection, seeds); err != nil {
		return err
	}
	if res.Code != exitOK {
		return fmt.Errorf("add seeds: %s", res)
	}
	return nil
}
