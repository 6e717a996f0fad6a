package manager

import (
	"strings"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// crawlDelaySites returns a servers.jsonl line for every site of the
// batch's registrable domains, in the batch or not, whose stored
// robots.txt asks for a Crawl-delay and whose address graph.db knows
// (Site.IP, the address the harvester dialled last): its host, address
// and Crawl-delay (in seconds, uncapped; the harvester caps it at
// max_crawl_delay).
//
// The manager does not decide units: a politeness unit is the names of
// one registrable domain on one address, and only the harvester knows
// where a name resolves now. It gives the harvester what graph.db knows
// of the Crawl-delays by (domain, address), and the harvester gives that
// Crawl-delay to the unit of every name of the domain that resolves to
// the address, from its first request: a Crawl-delay of www.x.cl holds
// for docs.x.cl on the same server in a batch without www.x.cl, and a
// subdomain on another server is not slowed by it. A site whose address
// is not known yet has no line; its Crawl-delay holds once its robots.txt
// is read (the batch's robots.jsonl copy or the harvester's fetch).
//
// It reads every site key once (a few map look-ups per key, no public
// suffix look-up but for the keys under a batch domain) and the record of
// each site of the batch's domains outside the batch.
func crawlDelaySites(tx *linkgraph.Tx, batchSites []*linkgraph.Site, token string) ([]fetchlog.Server, error) {
	inBatch := map[uint64]bool{}
	domains := map[string]bool{}
	for _, s := range batchSites {
		inBatch[s.ID] = true
		domains[urlnorm.Registrable(hostOf(s.Key))] = true
	}
	var out []fetchlog.Server
	add := func(s *linkgraph.Site) {
		if s.IP == "" {
			return
		}
		if cd := storedCrawlDelay(s, token); cd > 0 {
			out = append(out, fetchlog.Server{Host: hostOf(s.Key), IP: s.IP, CrawlDelay: cd.Seconds()})
		}
	}
	for _, s := range batchSites {
		add(s)
	}
	err := tx.ForEachSiteKey(func(key []byte, id uint64) error {
		if inBatch[id] {
			return nil
		}
		host := hostOf(string(key))
		if !endsInOneOf(host, domains) || !domains[urlnorm.Registrable(host)] {
			return nil // cheap: most sites are of other domains
		}
		s, err := tx.Site(id)
		if err != nil {
			return err
		}
		add(s)
		return nil
	})
	return out, err
}

// endsInOneOf tells whether host is one of the domains of set or under
// one of them (a suffix after a dot): the only hosts whose registrable
// domain can be in set.
func endsInOneOf[V any](host string, set map[string]V) bool {
	for h := host; ; {
		if _, ok := set[h]; ok {
			return true
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return false
		}
		h = h[i+1:]
	}
}
