package manager

import (
	"fmt"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Batches sized in time (manager.batch_duration, docs/manager.md,
// "Candidates and limits"): each host gets at most the URLs the harvester
// can fetch from it politely within the batch's duration, so that no host
// holds the batch up long after the others are done.

// defaultResponseTime is the response time of a host the harvester never
// measured: the harvester's own default for an unknown server
// (harvester.DefaultResponseTime, pkg/harvester/schedule.go), kept here
// so that the manager does not depend on the harvester;
// TestDefaultResponseTime checks that they agree.
const defaultResponseTime = 500 * time.Millisecond

// pace holds the harvester's politeness settings that decide how long a
// URL occupies its host.
type pace struct {
	wait          time.Duration // harvester.wait
	waitFactor    float64       // harvester.wait_factor
	maxWait       time.Duration // harvester.max_wait
	maxCrawlDelay time.Duration // harvester.max_crawl_delay
}

func paceOf(h *config.Harvester) pace {
	return pace{wait: h.Wait.D(), waitFactor: h.WaitFactor, maxWait: h.MaxWait.D(), maxCrawlDelay: h.MaxCrawlDelay.D()}
}

// waitAfter is the harvester's pause after a response that took resp:
// harvester.wait, or with wait_factor > 0 the adaptive wait, wait_factor
// × resp between wait and max_wait (the harvester's delay,
// pkg/harvester/worker.go).
func (p pace) waitAfter(resp time.Duration) time.Duration {
	w := p.wait
	if p.waitFactor > 0 {
		w = max(w, min(time.Duration(p.waitFactor*float64(resp)), p.maxWait))
	}
	return w
}

// urlCost is how long one URL occupies its host: the response time, then
// the pause before the next request, the wait or the site's robots.txt
// Crawl-delay (capped at max_crawl_delay), whichever is longer.
func (p pace) urlCost(resp, crawlDelay time.Duration) time.Duration {
	return resp + max(p.waitAfter(resp), min(crawlDelay, p.maxCrawlDelay))
}

// siteTime is what the budget knows of one site (24 bytes).
type siteTime struct {
	cost        time.Duration // time one URL of the site occupies its host
	host        int32         // index in budget.hosts; −1 for a site without candidates
	addr        int32         // index in budget.addrs; −1 while its address is not known
	robotsFetch bool          // its robots.txt is not in robots.jsonl: the harvester fetches it first
}

// addrTime is the time taken so far in the batch on one address (a
// server that may host many politeness units): the starts of two
// requests there are at least harvester.address_wait apart, and at most
// connections_per_ip of its units are served at once.
type addrTime struct {
	ip    string
	floor time.Duration // address_wait per request taken so far
	conns time.Duration // the time of its URLs taken so far over connections_per_ip
	urls  int32
}

// hostTime is the time taken so far in the batch on one politeness unit
// (unitOf: the names of a site on its address, with http and https and
// every port, are one server for the harvester's politeness).
type hostTime struct {
	name     string
	response time.Duration // the largest measured response time of its sites, else defaultResponseTime
	measured bool
	// crawlDelay is the longest stored Crawl-delay (uncapped) of its
	// sites with candidates: the harvester keeps a unit's longest
	// Crawl-delay between any two requests to its names.
	crawlDelay time.Duration
	used       time.Duration // time of the URLs taken so far
	urls       int32         // URLs taken so far
	// pause is the pause after its last URL taken (its cost less its
	// response time): time the host is not busy, that ends no later
	// than the batch would (the next batch's first request waits it).
	pause time.Duration
}

// budget gives each host at most the URLs it can serve within limit. Its
// arrays are indexed by site id and host index, made once per run, so a
// candidate costs O(1).
type budget struct {
	limit  time.Duration
	pace   pace
	sites  []siteTime               // site id → its cost and host
	hosts  []hostTime               //
	addrs  []addrTime               //
	delays map[uint32]time.Duration // site id → robots.txt Crawl-delay (uncapped), for the few sites that have one
	// addrWait and perIP are harvester.address_wait and
	// connections_per_ip (0: no floor, no cap).
	addrWait time.Duration
	perIP    int
	// deadline is the harvester's deadline for the batch
	// (config.Harvester.DeadlineFor): filling never plans past it.
	deadline time.Duration
}

// newBudget takes, from the plan's site records (readSites), what it
// needs of every site that has candidates (in site id order, so host
// indices are the same on the same graph): its host,
// the host's measured response time (the largest of its sites'), the
// site's Crawl-delay for the product token and whether its robots.txt goes
// into the batch. It returns nil when batch_duration is 0.
func newBudget(v *graphView, cfg *config.Config, now time.Time) (*budget, error) {
	limit := cfg.Manager.BatchDuration.D()
	if limit <= 0 {
		return nil, nil
	}
	b := &budget{limit: limit, pace: paceOf(&cfg.Harvester), sites: make([]siteTime, len(v.held)), delays: map[uint32]time.Duration{},
		addrWait: cfg.Harvester.AddressWait.D(), perIP: cfg.Harvester.ConnectionsPerIP, deadline: cfg.Harvester.DeadlineFor(limit)}
	const unread, wanted = -1, -2
	for i := range b.sites {
		b.sites[i].host = unread
	}
	for i := range v.cands {
		b.sites[v.cands[i].site].host = wanted
	}
	hostIndex := map[string]int32{}
	addrIndex := map[string]int32{}
	for id := range b.sites {
		st := &b.sites[id]
		if st.host != wanted {
			continue
		}
		s, err := v.sites.site(uint32(id))
		if err != nil {
			return nil, fmt.Errorf("batch_duration: %w", err)
		}
		name := s.unit
		h, ok := hostIndex[name]
		if !ok {
			h = int32(len(b.hosts))
			hostIndex[name] = h
			b.hosts = append(b.hosts, hostTime{name: name, response: defaultResponseTime})
		}
		st.host = h
		st.addr = -1
		if s.ip != "" && (b.addrWait > 0 || b.perIP > 0) {
			a, ok := addrIndex[s.ip]
			if !ok {
				a = int32(len(b.addrs))
				addrIndex[s.ip] = a
				b.addrs = append(b.addrs, addrTime{ip: s.ip})
			}
			st.addr = a
		}
		if r, ok := s.response, s.measured; ok {
			ht := &b.hosts[h]
			if !ht.measured || r > ht.response {
				ht.response, ht.measured = r, true
			}
		}
		st.robotsFetch = !s.robotsFresh // read at the plan's time (readSites)
		if d := s.crawlDelay(cfg.Crawl.ProductToken); d > 0 {
			b.delays[uint32(id)] = d
		}
	}
	for id, d := range b.delays {
		h := &b.hosts[b.sites[id].host]
		h.crawlDelay = max(h.crawlDelay, d)
	}
	for id := range b.sites {
		st := &b.sites[id]
		if st.host >= 0 {
			h := &b.hosts[st.host]
			st.cost = b.pace.urlCost(h.response, h.crawlDelay)
		}
	}
	return b, nil
}

// unitOf names the politeness unit of a site, which the harvester serves
// one request at a time: the host names of one registrable domain on one
// address (www.x.cl and x.cl), once the harvester has told the address
// (servers.jsonl, kept in the site record); the host name before that.
func unitOf(s *linkgraph.Site) string {
	host := hostOf(s.Key)
	if s.IP == "" {
		return host
	}
	return urlnorm.Registrable(host) + " at " + s.IP
}

// measuredResponse is the site's response time as the harvester measured
// it (the estimate the seeder stores and servers.jsonl carries).
func measuredResponse(s *linkgraph.Site) (time.Duration, bool) {
	if s.EstimatesAt.IsZero() || s.ResponseMs <= 0 {
		return 0, false
	}
	return time.Duration(s.ResponseMs * float64(time.Millisecond)), true
}

// storedCrawlDelay is the Crawl-delay of the site's stored robots.txt for
// the product token, whatever its age (a copy too old for robots.jsonl is
// fetched again by the harvester, but is still the best guess of what it
// will say), uncapped; 0 without one. Only a body that mentions
// Crawl-delay is parsed.
func storedCrawlDelay(s *linkgraph.Site, token string) time.Duration {
	if s.RobotsFetched.IsZero() || !containsFold(s.RobotsBody, "crawl-delay") {
		return 0
	}
	return robots.ForFetch(s.RobotsStatus, s.RobotsBody, s.RobotsErr, token).CrawlDelay()
}

// containsFold tells whether s contains the lower-case ASCII word sub,
// ignoring ASCII case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// need is the time the next URL of site takes on its host: its cost, twice
// for the site's first URL in the batch when the harvester must fetch its
// robots.txt first.
func (b *budget) need(site uint32, first bool) time.Duration {
	return time.Duration(b.requests(site, first)) * b.sites[site].cost
}

// fits tells whether the next URL of site fits in its host's time: a
// host gets URLs while the time they take is below the limit, so the last
// one may end past it. A host is then busy for the whole batch rather
// than idle at its end while slower hosts finish: with overlapping cycles
// the next batch takes over at once, and a host bound by its Crawl-delay
// is asked every Crawl-delay from one batch to the next. (Seen in a crawl
// log of the test web with the earlier rule, URLs ending within the
// budget: a 4 s Crawl-delay host got 2 URLs per 10 s batch, 8 s of work
// in batches of 9.6 s harvested back to back.)
//
// The site's address has its own time (addrTime): a URL fits while the
// address's floor time (address_wait per request) and its connection time
// (its URLs' time over connections_per_ip) are both below the limit. A
// shared server hosting many sites serves them all within the batch's
// duration, so a batch is no larger than its servers can serve politely
// in that time: a recrawl, whose frontier holds every page of the last
// crawl, is cut into batches of the best pages each server can serve in
// batch_duration rather than one batch of everything (docs/manager.md,
// "Candidates and limits").
func (b *budget) fits(site uint32, first bool) bool {
	st := &b.sites[site]
	if b.hosts[st.host].used >= b.limit {
		return false
	}
	if st.addr < 0 {
		return true
	}
	a := &b.addrs[st.addr]
	return a.floor < b.limit && a.conns < b.limit
}

// requests is how many requests the next URL of site costs: two for the
// site's first URL in the batch when the harvester must fetch its
// robots.txt first.
func (b *budget) requests(site uint32, first bool) int {
	if first && b.sites[site].robotsFetch {
		return 2
	}
	return 1
}

// take charges the next URL of site to its host and its address.
func (b *budget) take(site uint32, first bool) {
	st := &b.sites[site]
	h := &b.hosts[st.host]
	need := b.need(site, first)
	h.used += need
	h.urls++
	h.pause = st.cost - h.response
	if st.addr >= 0 {
		a := &b.addrs[st.addr]
		a.floor += time.Duration(b.requests(site, first)) * b.addrWait
		if b.perIP > 0 {
			a.conns += need / time.Duration(b.perIP)
		}
		a.urls++
	}
}

// makespan is how long the batch chosen so far keeps its busiest server
// busy: the latest end of a host's last response (its time less the
// pause after its last URL), or of an address's floor or connection
// time, at most the harvester's deadline. Hosts get URLs while their time
// is below batch_duration, so the last URL of a slow host (a long
// Crawl-delay, a slow server) ends past it, and the batch lasts that
// long whatever the others do.
func (b *budget) makespan() time.Duration {
	var m time.Duration
	for i := range b.hosts {
		m = max(m, b.hosts[i].used-b.hosts[i].pause)
	}
	for i := range b.addrs {
		m = max(m, b.addrs[i].floor, b.addrs[i].conns)
	}
	return min(m, b.deadline)
}

// fitsWithin tells whether the next URL of site ends within until on its
// host and its address: filling a batch up to its makespan (selectBatch)
// takes only URLs that do not make it last longer.
func (b *budget) fitsWithin(site uint32, first bool, until time.Duration) bool {
	st := &b.sites[site]
	h := &b.hosts[st.host]
	if h.used+b.need(site, first)-(st.cost-h.response) > until {
		return false
	}
	if st.addr < 0 {
		return true
	}
	a := &b.addrs[st.addr]
	if a.floor+time.Duration(b.requests(site, first))*b.addrWait > until {
		return false
	}
	return b.perIP == 0 || a.conns+b.need(site, first)/time.Duration(b.perIP) <= until
}

// heldBack says why a URL of site does not fit (explain).
func (b *budget) heldBack(site uint32, first bool) string {
	st := &b.sites[site]
	h := &b.hosts[st.host]
	if h.used < b.limit && st.addr >= 0 {
		a := &b.addrs[st.addr]
		if a.floor >= b.limit {
			return fmt.Sprintf("held back by the batch's time budget: its address %s already has %d URLs in this batch, which its floor (address_wait %s between two requests) spreads over %s of batch_duration %s; it waits for the next batch",
				a.ip, a.urls, b.addrWait, secs(a.floor), b.limit)
		}
		return fmt.Sprintf("held back by the batch's time budget: its address %s already has %d URLs in this batch, taking %s of batch_duration %s on its connections_per_ip %d connections; it waits for the next batch",
			a.ip, a.urls, secs(a.conns), b.limit, b.perIP)
	}
	resp := "response " + secs(h.response)
	if !h.measured {
		resp += " (not measured: the harvester's default)"
	}
	pause := "wait " + secs(b.pace.waitAfter(h.response))
	if cd := min(h.crawlDelay, b.pace.maxCrawlDelay); cd > 0 {
		pause = fmt.Sprintf("the longer of %s and Crawl-delay %s", pause, secs(cd))
		if b.delays[site] < h.crawlDelay {
			pause += " (another site of its server's)"
		}
	}
	extra := ""
	if first && st.robotsFetch {
		extra = fmt.Sprintf(", and as its site's first URL %s more for the robots.txt fetch", secs(st.cost))
	}
	return fmt.Sprintf("held back by the batch's time budget: its server %s already has %d URLs in this batch taking %s of batch_duration %s, and one more of its site takes %s (%s + %s)%s; it waits for the next batch",
		h.name, h.urls, secs(h.used), b.limit, secs(st.cost), resp, pause, extra)
}

// secs writes a duration in seconds, as in "2.5 s".
func secs(d time.Duration) string {
	return fmt.Sprintf("%s s", g4(d.Seconds()))
}
