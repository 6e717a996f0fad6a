package main

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// partitionsCommand is `crawlcheck partitions`.
func partitionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "partitions",
		Usage: "how candidate partition keys split the test web's reachable pages over K collections (issue 36)",
		Description: `A crawl bigger than one machine splits the sites over K collections by a
key of each site, hashed (xxhash64 mod K). For each candidate key and each
K of --k, over the reachable allowed pages of the web (as crawlcheck
reachable lists them), prints:

  max/mean   the largest partition's pages over the mean (1: even)
  addresses  the servers (the web's own addresses, testweb.ServerOf) whose
             names land in more than one partition, of all servers: each
             would be asked by two partitions' harvesters unless they
             share its rate
  units      the politeness units (names on one address sharing a
             registrable domain) split the same way: two partitions would
             hold one unit's connection at once

The keys: "domain" (the registrable domain: keeps a site's aliases and
subdomains together), "host" (the host name without a leading www.:
spreads a domain's subdomains), "address" (the server's address, the key
once a name is resolved: keeps every name of a server together).`,
		Flags: append(webFlags(), &cli.StringFlag{Name: "k", Value: "2,4,8", Usage: "partition counts, comma-separated"}),
		Action: func(c *cli.Context) error {
			web, cfg, seeds, err := loadCrawl(c)
			if err != nil {
				return err
			}
			var ks []int
			for _, f := range strings.Split(c.String("k"), ",") {
				k, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || k < 1 || k > 1024 {
					return fmt.Errorf("--k %q: want counts from 1 to 1024, comma-separated", c.String("k"))
				}
				ks = append(ks, k)
			}
			pages := map[string]int{}
			for _, u := range reachablePages(web, cfg, seeds) {
				p, err := url.Parse(u)
				if err != nil {
					return fmt.Errorf("reachable page %q: %w", u, err)
				}
				pages[strings.ToLower(p.Hostname())]++
			}
			printPartitions(c.App.Writer, web, pages, ks)
			return nil
		},
	}
}

// partitionKeys are the candidate keys of a host, in the order printed.
var partitionKeys = []struct {
	name string
	key  func(web *testweb.Web, host string) string
}{
	{"domain", func(_ *testweb.Web, h string) string { return urlnorm.Registrable(h) }},
	{"host", func(_ *testweb.Web, h string) string { return strings.TrimPrefix(h, "www.") }},
	{"address", func(web *testweb.Web, h string) string { return web.ServerOf(h) }},
}

// printPartitions writes the balance and the splits of each key and K.
func printPartitions(w io.Writer, web *testweb.Web, pages map[string]int, ks []int) {
	hosts := make([]string, 0, len(pages))
	total := 0
	for h, n := range pages {
		hosts = append(hosts, h)
		total += n
	}
	slices.Sort(hosts)
	servers, units := map[string]bool{}, map[string]bool{}
	for _, h := range hosts {
		servers[web.ServerOf(h)] = true
		units[web.ServerOf(h)+" "+urlnorm.Registrable(h)] = true
	}
	fmt.Fprintf(w, "%d reachable pages on %d hosts, %d servers, %d politeness units\n", total, len(hosts), len(servers), len(units))
	fmt.Fprintf(w, "%-8s %4s  %8s  %-16s  %s\n", "key", "K", "max/mean", "addresses split", "units split")
	for _, pk := range partitionKeys {
		for _, k := range ks {
			load := make([]int, k)
			byServer, byUnit := map[string]map[int]bool{}, map[string]map[int]bool{}
			for _, h := range hosts {
				p := int(xxhash.Sum64String(pk.key(web, h)) % uint64(k))
				load[p] += pages[h]
				s, u := web.ServerOf(h), web.ServerOf(h)+" "+urlnorm.Registrable(h)
				if byServer[s] == nil {
					byServer[s] = map[int]bool{}
				}
				if byUnit[u] == nil {
					byUnit[u] = map[int]bool{}
				}
				byServer[s][p], byUnit[u][p] = true, true
			}
			ratio := 0.0
			if total > 0 {
				ratio = float64(slices.Max(load)) / (float64(total) / float64(k))
			}
			fmt.Fprintf(w, "%-8s %4d  %8.2f  %-16s  %s\n", pk.name, k, ratio,
				fmt.Sprintf("%d of %d", splitCount(byServer), len(byServer)), fmt.Sprintf("%d of %d", splitCount(byUnit), len(byUnit)))
		}
	}
}

// splitCount counts the groups found in more than one partition.
func splitCount(groups map[string]map[int]bool) int {
	n := 0
	for _, parts := range groups {
		if len(parts) > 1 {
			n++
		}
	}
	return n
}
