// Package partition names the part of a national web one collection
// crawls when the sites are split over K collections (docs/operations.md,
// "Partitioned collections"): a site belongs to the partition of its
// server's address once its address is known, and until then to the
// partition of its registrable domain's name. The hash is part of the
// collection format: every partition, and every harvester shard, must
// agree on it.
package partition

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Partition is partition I of K (1 ≤ I ≤ K ≤ 1024); the zero value is the
// whole web, one collection.
type Partition struct {
	I, K int
}

// Parse reads "i/K"; the empty string is the whole web.
func Parse(s string) (Partition, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Partition{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	k, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || k < 1 || k > 1024 || i < 1 || i > k {
		return Partition{}, fmt.Errorf("partition %s: want i/K with 1 ≤ i ≤ K ≤ 1024, e.g. 1/4", excerpt.Quote(s))
	}
	return Partition{I: i, K: k}, nil
}

// Whole tells whether the collection crawls the whole web.
func (p Partition) Whole() bool { return p.K <= 1 }

// String is "i/K", or "" for the whole web.
func (p Partition) String() string {
	if p.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", p.I, p.K)
}

// Hash returns the part (1..n) of a key: xxhash64 of the lower-case key,
// modulo n, plus one. Harvester shards and partitions share it.
func Hash(key string, n int) int {
	if n <= 1 {
		return 1
	}
	return int(xxhash.Sum64String(strings.ToLower(key))%uint64(n)) + 1
}

// OfName is the partition of a host whose address is not known: its
// registrable domain's (a site's names and subdomains stay together).
func (p Partition) OfName(host string) int {
	if p.Whole() {
		return 1
	}
	return Hash(urlnorm.Registrable(strings.ToLower(host)), p.K)
}

// OfAddress is the partition of a server address: every name served from
// it belongs there, so that one partition's harvester asks it.
func (p Partition) OfAddress(ip netip.Addr) int {
	if p.Whole() {
		return 1
	}
	return Hash(ip.Unmap().String(), p.K)
}

// Mine tells whether part (1..K) is this partition's (always, for the
// whole web).
func (p Partition) Mine(part int) bool { return p.Whole() || part == p.I }
