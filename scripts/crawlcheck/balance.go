package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// balanceCommand is `crawlcheck balance`.
func balanceCommand() *cli.Command {
	return &cli.Command{
		Name:  "balance",
		Usage: "how evenly the partition key splits a crawled web's expected fetch time over K collections (issue 36)",
		Description: `Reads one collection's crawl of a whole web (its batches' fetch logs and
harvest/servers.jsonl) and, per host name, takes its pages fetched, the
address it was fetched from, its response time and Crawl-delay (the
last the harvesters measured); its expected fetch time is pages x
max(harvester.wait, Crawl-delay, response time). For each K of --k it
prints, for the key partitioned collections use once an address is
known (xxhash64 of the address mod K, pkg/partition), the largest
partition's expected fetch time over the mean, and whether it is within
issue 36's bound, max(1.2 x the mean, the largest politeness unit's: the
names on one address that share a registrable domain); and, for
comparison, the same for the addresses dealt to K partitions by their
expected fetch time, largest first, each to the least loaded (a table
instead of a hash).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "collection", Required: true, Usage: "a collection that crawled the whole web"},
			&cli.StringFlag{Name: "k", Value: "2,4,8,16", Usage: "partition counts, comma-separated"},
		},
		Action: func(c *cli.Context) error {
			var ks []int
			for _, f := range strings.Split(c.String("k"), ",") {
				k, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || k < 1 || k > 1024 {
					return fmt.Errorf("--k %q: want counts from 1 to 1024, comma-separated", c.String("k"))
				}
				ks = append(ks, k)
			}
			hosts, err := readHostCosts(c.String("collection"))
			if err != nil {
				return err
			}
			printBalance(c.App.Writer, hosts, ks)
			return nil
		},
	}
}

// hostCost is one host name's share of a crawl.
type hostCost struct {
	addr  netip.Addr
	unit  string // address and registrable domain
	pages int
	cost  time.Duration // pages x its polite interval
}

// readHostCosts reads the hosts of the crawl in dir: pages fetched from
// the fetch logs, address, response time and Crawl-delay from the
// harvests' servers.jsonl (the last line of each host).
func readHostCosts(dir string) ([]hostCost, error) {
	cfg, err := config.Load(config.Sources{File: filepath.Join(dir, config.FileName), NoEnv: true})
	if err != nil {
		return nil, fmt.Errorf("collection %s: %w", dir, err)
	}
	col, err := collection.Open(dir)
	if err != nil {
		return nil, err
	}
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	pages := map[string]int{}
	servers := map[string]fetchlog.Server{}
	for _, id := range ids {
		b := col.Batch(id)
		recs, err := fetchlog.ReadFile(filepath.Join(b.HarvestPath(), fetchlog.LogFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("collection %s: %w", dir, err)
		}
		for _, r := range recs {
			if !r.OK() {
				continue
			}
			u, err := url.Parse(r.URL)
			if err != nil {
				return nil, fmt.Errorf("collection %s: fetch log url %q: %w", dir, r.URL, err)
			}
			pages[strings.ToLower(u.Hostname())]++
		}
		srvs, err := fetchlog.ReadServers(filepath.Join(b.HarvestPath(), fetchlog.ServersFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("collection %s: %w", dir, err)
		}
		for _, s := range srvs {
			if s.IP != "" {
				servers[strings.ToLower(s.Host)] = s
			}
		}
	}
	wait := cfg.Harvester.Wait.D()
	var out []hostCost
	for _, h := range slices.Sorted(maps.Keys(pages)) {
		s, ok := servers[h]
		if !ok {
			continue // fetched but never measured: no address known
		}
		ip, err := netip.ParseAddr(s.IP)
		if err != nil {
			return nil, fmt.Errorf("collection %s: host %s: address %q: %w", dir, h, s.IP, err)
		}
		iv := max(wait, time.Duration(s.CrawlDelay*float64(time.Second)), time.Duration(s.ResponseMs*float64(time.Millisecond)))
		n := pages[h]
		out = append(out, hostCost{addr: ip.Unmap(), unit: ip.Unmap().String() + " " + urlnorm.Registrable(h), pages: n, cost: time.Duration(n) * iv})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("collection %s: no host with pages fetched and a known address", dir)
	}
	return out, nil
}

// printBalance writes, per K, the address key's balance and a greedy
// table's.
func printBalance(w io.Writer, hosts []hostCost, ks []int) {
	units, addrs := map[string]time.Duration{}, map[netip.Addr]time.Duration{}
	var total time.Duration
	pages := 0
	for _, h := range hosts {
		units[h.unit] += h.cost
		addrs[h.addr] += h.cost
		total += h.cost
		pages += h.pages
	}
	var largestUnit, largestAddr time.Duration
	for _, c := range units {
		largestUnit = max(largestUnit, c)
	}
	for _, c := range addrs {
		largestAddr = max(largestAddr, c)
	}
	fmt.Fprintf(w, "%d pages on %d hosts, %d politeness units, %d addresses; expected fetch time %s in all, largest unit %s, largest address %s\n",
		pages, len(hosts), len(units), len(addrs), total.Round(time.Second), largestUnit.Round(time.Second), largestAddr.Round(time.Second))
	fmt.Fprintf(w, "%4s  %-22s  %-9s  %-9s  %s\n", "K", "key", "max/mean", "bound", "within max(1.2 x mean, largest unit)")
	order := slices.SortedFunc(maps.Keys(addrs), func(a, b netip.Addr) int {
		if c := cmp.Compare(addrs[b], addrs[a]); c != 0 {
			return c
		}
		return a.Compare(b)
	})
	for _, k := range ks {
		mean := total / time.Duration(k)
		bound := max(mean*12/10, largestUnit)
		hashed := make([]time.Duration, k)
		for a, c := range addrs {
			hashed[partition.Partition{I: 1, K: k}.OfAddress(a)-1] += c
		}
		dealt := make([]time.Duration, k)
		for _, a := range order {
			dealt[slices.Index(dealt, slices.Min(dealt))] += addrs[a]
		}
		for _, row := range []struct {
			name string
			load []time.Duration
		}{{"address hash (in use)", hashed}, {"addresses dealt (table)", dealt}} {
			mx := slices.Max(row.load)
			verdict := "yes"
			if mx > bound {
				verdict = "NO"
			}
			fmt.Fprintf(w, "%4d  %-22s  %9.3f  %9.3f  %s (largest %s, mean %s)\n", k, row.name, float64(mx)/float64(max(mean, 1)), float64(bound)/float64(max(mean, 1)), verdict, mx.Round(time.Second), mean.Round(time.Second))
		}
	}
}
