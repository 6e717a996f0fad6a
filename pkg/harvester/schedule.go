package harvester

import (
	"net/url"
	"sort"
	"strings"

	"github.com/wirecrawl/wire/pkg/batch"
)

// Server is one host name's share of a batch: the server level of the
// two-level scheduler of Cao, Jiang and Singh (§3.2). Its sites, each with
// its queue of URLs, are the URL level. One worker serves a Server from
// start to end, one request at a time, so the host never sees two
// connections from the harvester at once.
type Server struct {
	// Host is the host name (lower-case, without port). Sites that share
	// it (http and https, other ports) are served by the same worker.
	Host string
	// Sites are the host's sites, ordered by their best score.
	Sites []*SiteQueue
	// First is the batch position of the server's first URL.
	First int
	// Best is the highest score of the server's URLs (its quality in the
	// paper's quality ranking).
	Best float64
	// Total is the sum of the scores of the server's URLs.
	Total float64
	// URLs is the number of URLs to fetch.
	URLs int
}

// SiteQueue is the URL queue of one site: its URLs still to be done, in
// batch order (highest score first).
type SiteQueue struct {
	Site    string // scheme://host[:port]
	Entries []batch.Entry
	Best    float64
	First   int
}

// Ranking orders the server queue. The harvester sorts the servers with
// it once, at the start of a batch; workers take them in that order.
//
// This is the seam for the server rankings of Cao et al. §4 (FIFO,
// performance R = P/T, quality, crawl-ability C = AQ/T): the ones that
// need per-server measurements (connection and response times) will
// need them from an earlier batch.
type Ranking interface {
	// Name identifies the ranking in logs.
	Name() string
	// Less reports whether server a should be served before server b.
	Less(a, b *Server) bool
}

// QualityRanking serves first the server whose best URL has the highest
// score (the manager's estimate of its value), ties in batch order. It is
// the default.
type QualityRanking struct{}

// Name implements Ranking.
func (QualityRanking) Name() string { return "quality" }

// Less implements Ranking.
func (QualityRanking) Less(a, b *Server) bool {
	if a.Best != b.Best {
		return a.Best > b.Best
	}
	return a.First < b.First
}

// FIFORanking serves servers in the order their first URL appears in the
// batch (the paper's breadth-first baseline).
type FIFORanking struct{}

// Name implements Ranking.
func (FIFORanking) Name() string { return "fifo" }

// Less implements Ranking.
func (FIFORanking) Less(a, b *Server) bool { return a.First < b.First }

// hostOf returns the host name of a site ("http://a.cl:8080" → "a.cl").
func hostOf(site string) string {
	u, err := url.Parse(site)
	if err != nil || u.Hostname() == "" {
		return strings.ToLower(site)
	}
	return strings.ToLower(u.Hostname())
}

// plan groups the entries still to be done (todo[i] true) by host and
// site, and orders the servers by the ranking.
func plan(entries []batch.Entry, todo []bool, rank Ranking) []*Server {
	servers := map[string]*Server{}
	sites := map[string]*SiteQueue{}
	var order []*Server
	for i, e := range entries {
		if !todo[i] {
			continue
		}
		sq := sites[e.Site]
		if sq == nil {
			host := hostOf(e.Site)
			srv := servers[host]
			if srv == nil {
				srv = &Server{Host: host, First: i, Best: e.Score}
				servers[host] = srv
				order = append(order, srv)
			}
			sq = &SiteQueue{Site: e.Site, Best: e.Score, First: i}
			sites[e.Site] = sq
			srv.Sites = append(srv.Sites, sq)
		}
		sq.Entries = append(sq.Entries, e)
		sq.Best = max(sq.Best, e.Score)
		srv := servers[hostOf(e.Site)]
		srv.Best = max(srv.Best, e.Score)
		srv.Total += e.Score
		srv.URLs++
	}
	for _, srv := range order {
		sort.SliceStable(srv.Sites, func(i, j int) bool {
			a, b := srv.Sites[i], srv.Sites[j]
			if a.Best != b.Best {
				return a.Best > b.Best
			}
			return a.First < b.First
		})
	}
	sort.SliceStable(order, func(i, j int) bool { return rank.Less(order[i], order[j]) })
	return order
}
