package manager

import (
	"strings"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// unitCrawlDelays returns, for the host of each site of the batch, the
// longest robots.txt Crawl-delay (in seconds, uncapped; the harvester
// caps it at max_crawl_delay) that graph.db stores among the sites of
// the host's politeness unit: its registrable domain on its address
// (Site.IP; a site whose address is not known yet counts as on every
// address of its domain). The harvester keeps the longest Crawl-delay of
// a unit between any two requests to its names, but it knows only the
// robots.txt of the batch's sites: a Crawl-delay on www.x.cl would not
// hold for docs.x.cl on the same server in a batch without www.x.cl.
// Hosts with no Crawl-delay in their unit are left out.
//
// It reads every site key once (a few map look-ups per key, no public
// suffix look-up but for the keys under a batch domain) and the record of
// each site of the batch's domains outside the batch.
func unitCrawlDelays(tx *linkgraph.Tx, batchSites []*linkgraph.Site, token string) (map[string]float64, error) {
	type delay struct {
		ip string
		cd float64
	}
	inBatch := map[uint64]bool{}
	delays := map[string][]delay{} // registrable domain → Crawl-delays of its sites
	for _, s := range batchSites {
		inBatch[s.ID] = true
		delays[urlnorm.Registrable(hostOf(s.Key))] = nil
	}
	add := func(s *linkgraph.Site, dom string) {
		if cd := storedCrawlDelay(s, token); cd > 0 {
			delays[dom] = append(delays[dom], delay{s.IP, cd.Seconds()})
		}
	}
	for _, s := range batchSites {
		add(s, urlnorm.Registrable(hostOf(s.Key)))
	}
	err := tx.ForEachSiteKey(func(key []byte, id uint64) error {
		if inBatch[id] {
			return nil
		}
		host := hostOf(string(key))
		if !endsInOneOf(host, delays) {
			return nil // cheap: most sites are of other domains
		}
		dom := urlnorm.Registrable(host)
		if _, ok := delays[dom]; !ok {
			return nil
		}
		s, err := tx.Site(id)
		if err != nil {
			return err
		}
		add(s, dom)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range batchSites {
		host := hostOf(s.Key)
		for _, d := range delays[urlnorm.Registrable(host)] {
			if (s.IP == "" || d.ip == "" || s.IP == d.ip) && d.cd > out[host] {
				out[host] = d.cd
			}
		}
	}
	return out, nil
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
