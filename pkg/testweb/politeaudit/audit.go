// Package politeaudit checks a crawl's politeness from the server side,
// grouped by server rather than by host name: every request the test web
// saw (testweb.Request, from (*testweb.Web).Requests or a request log),
// checked against the rules the harvester promises (docs/harvester.md,
// "Politeness by server").
//
// A politeness unit is the set of host names that answered on one IP
// address and share a registrable domain (the public-suffix list's
// eTLD+1 of the name; the name itself when it has none): www.x.cl, x.cl
// and m.x.cl on one address are one unit, one server as its webmaster
// sees it. The audit checks, per unit:
//
//   - at most one request in flight at a time;
//   - between the end of one request and the start of the next to any
//     name of the unit, at least Rules.Wait and at least the largest
//     robots.txt Crawl-delay (cut to Rules.MaxCrawlDelay) among the
//     unit's names whose robots.txt had been fetched (answered 2xx)
//     before that next request;
//
// per IP address (shared hosting: names of several registrable domains
// on one address):
//
//   - at most Rules.ConnectionsPerIP requests in flight (0: no cap);
//   - the starts of two requests at least Rules.AddressWait apart;
//
// per host name (given the connections): never two connections open at
// once; and per hostile host of the web: how many requests it got, at
// most Rules.MaxCutRequests pages for the hosts whose answers a crawler
// must cut (drip, endless, huge, gzip bomb), when that is set.
//
// Server-side times are not the client's: the server records the end of
// a streaming answer (drip, endless, huge) when it notices the client
// has gone, which may be long after the client gave up, so such a
// request counts as ended at its start plus Rules.TotalTimeout, the
// client's limit. A request in flight when its harvester was killed
// (Log.Deaths) ends, for the client, at the kill; across a kill only
// what the restarted harvester can know is required: the wait since the
// kill, not a Crawl-delay nor the address floor (the new process does not
// know when the old one last asked). Rules.Slack forgives the server's
// own scheduling lag on a loaded machine.
package politeaudit

import (
	"container/heap"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// MaxProblems is how many problems a Report describes; the counts cover
// them all.
const MaxProblems = 50

// connSlack is how much later than the client's next dial the server may
// notice a connection close (scheduling lag on a loaded machine); more
// is two connections at once.
const connSlack = 100 * time.Millisecond

// Rules are the politeness settings the crawl ran with.
type Rules struct {
	// Wait is harvester.wait: the least time between the end of one
	// request to a unit and the start of the next.
	Wait time.Duration
	// MaxCrawlDelay is harvester.max_crawl_delay: longer robots.txt
	// Crawl-delays are cut to it (0: not cut).
	MaxCrawlDelay time.Duration
	// ConnectionsPerIP is harvester.connections_per_ip: the most
	// requests in flight to one address (0: no cap).
	ConnectionsPerIP int
	// AddressWait is harvester.address_wait: the least time between the
	// starts of two requests to one address (0: no floor).
	AddressWait time.Duration
	// TotalTimeout is harvester.total_timeout, the client's limit for one
	// request: a streaming hostile answer counts as ended at its start
	// plus this (0: as the server recorded it).
	TotalTimeout time.Duration
	// Slack is the server's scheduling lag forgiven: a gap or a floor is
	// short only when below its minimum minus Slack, and two requests
	// overlap only when by more than Slack.
	Slack time.Duration
	// MaxCutRequests, when positive, is the most page requests
	// (robots.txt aside) a hostile host whose answers must be cut (see
	// Cut) may get in the whole log.
	MaxCutRequests int
}

// ServerSlack is the Slack FromConfig gives: the server reads its clock
// when its handler starts, some time after the request reached it, and
// that time varies with the scheduling of its goroutines (seen up to
// 0.8 ms on a loaded 2-core machine between two requests the harvester
// sent exactly address_wait apart). harvestertest.CheckWait allows the
// same 3 ms.
const ServerSlack = 3 * time.Millisecond

// FromConfig returns the rules of a crawl run with the harvester
// settings h: wait, max_crawl_delay, connections_per_ip, address_wait
// and total_timeout, with ServerSlack (MaxCutRequests is left zero).
func FromConfig(h config.Harvester) Rules {
	return Rules{
		Wait:             h.Wait.D(),
		MaxCrawlDelay:    h.MaxCrawlDelay.D(),
		ConnectionsPerIP: h.ConnectionsPerIP,
		AddressWait:      h.AddressWait.D(),
		TotalTimeout:     h.TotalTimeout.D(),
		Slack:            ServerSlack,
	}
}

// Web is what the audit needs to know about the web besides its log;
// *testweb.Web is one.
type Web interface {
	// CrawlDelay is the Crawl-delay of host's robots.txt in seconds, ""
	// for none.
	CrawlDelay(host string) string
	// HostileHosts lists the hostile hosts.
	HostileHosts() []testweb.HostileHost
}

// Log is what the server saw.
type Log struct {
	// Requests are the requests served (any order).
	Requests []testweb.Request
	// Conns are the connections accepted, if known (nil: the connection
	// check is skipped).
	Conns []testweb.Conn
	// Deaths are the moments killed harvesters were reaped, if any.
	Deaths []time.Time
}

// Shortfall is the worst case of a rule: the gap seen and the gap
// wanted, and where.
type Shortfall struct {
	// Where names the unit or address and the requests.
	Where string
	// Gap is the gap seen and Want the least allowed.
	Gap, Want time.Duration
}

// String describes the shortfall ("" when there was none).
func (s Shortfall) String() string {
	if s.Where == "" {
		return ""
	}
	return fmt.Sprintf("%v instead of %v: %s", roundDur(s.Gap), s.Want, s.Where)
}

// HostileCount is the requests one hostile host got.
type HostileCount struct {
	// Host and Kind name the host.
	Host string
	Kind testweb.HostileKind
	// Requests counts every request, Pages those that were not for
	// /robots.txt.
	Requests, Pages int
}

// Report is the audit's result. The counts of violations (UnitOverlaps,
// AddressOverCap, ShortGaps, FloorViolations, ConnOverlaps, HostileOver)
// must all be zero for a polite crawl; OK says whether they are.
type Report struct {
	// Requests, Hosts, Units and Addresses count what was checked;
	// SharedUnits the units of more than one host name, SharedAddresses
	// the addresses of more than one unit, NoAddress the requests whose
	// log has no address (checked per host name, not per address).
	Requests, Hosts, Units, Addresses       int
	SharedUnits, SharedAddresses, NoAddress int
	// MaxInFlightUnit is the most requests seen in flight to one unit,
	// at MaxInFlightUnitAt; UnitOverlaps counts requests that started
	// while another of their unit was in flight.
	MaxInFlightUnit   int
	MaxInFlightUnitAt string
	UnitOverlaps      int
	// MaxInFlightAddress is the most requests seen in flight to one
	// address, at MaxInFlightAddressAt; AddressOverCap counts requests
	// that started while ConnectionsPerIP were in flight there.
	MaxInFlightAddress   int
	MaxInFlightAddressAt string
	AddressOverCap       int
	// ShortGaps counts gaps under the wait or the Crawl-delay, on
	// ShortGapUnits units; WorstGap is the one furthest under.
	ShortGaps, ShortGapUnits int
	// AfterStream counts gaps not checked because they follow a streaming
	// hostile answer (drip, endless, huge) that ended before its total
	// time limit: the client cut it, and the server, which records the
	// end when it notices the client has gone, cannot tell when.
	AfterStream int
	WorstGap    Shortfall
	// DelayGaps counts the gaps that a Crawl-delay longer than the wait
	// governed; MinGap is the shortest gap of all, on MinGapUnit.
	DelayGaps  int
	MinGap     time.Duration
	MinGapUnit string
	// FloorViolations counts starts closer than AddressWait to the
	// previous start on their address, on FloorAddresses addresses;
	// WorstFloor is the one furthest under. MinStartGap is the shortest
	// time between two starts on one address.
	FloorViolations, FloorAddresses int
	WorstFloor                      Shortfall
	MinStartGap                     time.Duration
	// Conns counts the connections checked; ConnOverlaps those opened
	// while another to their host name was open.
	Conns, ConnOverlaps int
	// Hostile are the requests per hostile host, in the web's order;
	// HostileOver counts the hosts over Rules.MaxCutRequests.
	Hostile     []HostileCount
	HostileOver int
	// Problems describe the first MaxProblems violations.
	Problems []string
}

// OK reports whether every politeness count is zero.
func (r *Report) OK() bool {
	return r.UnitOverlaps == 0 && r.AddressOverCap == 0 && r.ShortGaps == 0 &&
		r.FloorViolations == 0 && r.ConnOverlaps == 0 && r.HostileOver == 0
}

// Violations is the sum of the politeness counts.
func (r *Report) Violations() int {
	return r.UnitOverlaps + r.AddressOverCap + r.ShortGaps + r.FloorViolations + r.ConnOverlaps + r.HostileOver
}

// Streaming reports whether a hostile host of kind k streams its answer
// until the client goes away (drip, endless, huge): the server's end of
// such a request is not the client's.
func Streaming(k testweb.HostileKind) bool {
	return k == testweb.HostileDrip || k == testweb.HostileEndless || k == testweb.HostileHuge
}

// Cut reports whether the answers of a hostile host of kind k are cut by
// a polite crawler's limits (the body cap or the transfer-rate floor):
// the streaming ones and the gzip bomb.
func Cut(k testweb.HostileKind) bool {
	return Streaming(k) || k == testweb.HostileGzipBomb
}

// req is a request as the audit sees it.
type req struct {
	r        *testweb.Request
	end      time.Time // the client's end (see the package comment)
	unit     string
	robotsOK bool // a /robots.txt answered 2xx
	cut      bool // a streaming answer cut by the client: its end is the server's guess
}

// Audit checks the log against the rules.
func Audit(web Web, rules Rules, log Log) Report {
	rep := Report{MinGap: -1, MinStartGap: -1}
	a := auditor{web: web, rules: rules, deaths: sortedTimes(log.Deaths), rep: &rep, delays: map[string]time.Duration{}}
	streaming := map[string]bool{}
	for _, h := range web.HostileHosts() {
		streaming[h.Name] = Streaming(h.Kind)
	}
	reqs := make([]*req, 0, len(log.Requests))
	byUnit := map[string][]*req{}
	byAddr := map[string][]*req{}
	hosts := map[string]bool{}
	unitNames := map[string]map[string]bool{}
	addrUnits := map[string]map[string]bool{}
	for i := range log.Requests {
		r := &log.Requests[i]
		q := &req{r: r, end: r.End, robotsOK: r.Path == "/robots.txt" && r.Status >= 200 && r.Status < 300}
		if streaming[r.Host] && rules.TotalTimeout > 0 {
			q.end = minTime(q.end, r.Start.Add(rules.TotalTimeout))
		}
		q.cut = streaming[r.Host] && r.Path != "/robots.txt" && q.end.Before(r.Start.Add(rules.TotalTimeout))
		if d, ok := a.deathIn(r.Start, q.end); ok {
			q.end = d
		}
		reg := urlnorm.Registrable(r.Host) // the harvester's own grouping
		if r.Addr == "" {
			rep.NoAddress++
			q.unit = reg + " (" + r.Host + ", address unknown)"
		} else {
			q.unit = reg + "@" + r.Addr
			byAddr[r.Addr] = append(byAddr[r.Addr], q)
			if addrUnits[r.Addr] == nil {
				addrUnits[r.Addr] = map[string]bool{}
			}
			addrUnits[r.Addr][q.unit] = true
		}
		if unitNames[q.unit] == nil {
			unitNames[q.unit] = map[string]bool{}
		}
		unitNames[q.unit][r.Host] = true
		byUnit[q.unit] = append(byUnit[q.unit], q)
		hosts[r.Host] = true
		reqs = append(reqs, q)
	}
	rep.Requests, rep.Hosts, rep.Units, rep.Addresses = len(reqs), len(hosts), len(byUnit), len(byAddr)
	for _, names := range unitNames {
		if len(names) > 1 {
			rep.SharedUnits++
		}
	}
	for _, units := range addrUnits {
		if len(units) > 1 {
			rep.SharedAddresses++
		}
	}
	for _, unit := range sortedKeys(byUnit) {
		a.unit(unit, byStart(byUnit[unit]))
	}
	for _, addr := range sortedKeys(byAddr) {
		a.address(addr, byStart(byAddr[addr]))
	}
	if log.Conns != nil {
		a.conns(log.Conns)
	}
	a.hostile(reqs)
	if rep.MinGap < 0 {
		rep.MinGap = 0
	}
	if rep.MinStartGap < 0 {
		rep.MinStartGap = 0
	}
	return rep
}

// auditor holds the state of one audit.
type auditor struct {
	web    Web
	rules  Rules
	deaths []time.Time
	rep    *Report
	delays map[string]time.Duration // Crawl-delay by host, cut, memoised
}

// problem adds a problem description, up to MaxProblems.
func (a *auditor) problem(format string, args ...any) {
	if len(a.rep.Problems) < MaxProblems {
		a.rep.Problems = append(a.rep.Problems, fmt.Sprintf(format, args...))
	}
}

// crawlDelay is host's Crawl-delay, cut to MaxCrawlDelay.
func (a *auditor) crawlDelay(host string) time.Duration {
	if d, ok := a.delays[host]; ok {
		return d
	}
	var d time.Duration
	if s := a.web.CrawlDelay(host); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 {
			d = time.Duration(f * float64(time.Second))
		}
		if a.rules.MaxCrawlDelay > 0 {
			d = min(d, a.rules.MaxCrawlDelay)
		}
	}
	a.delays[host] = d
	return d
}

// deathIn returns the first death strictly between from and to.
func (a *auditor) deathIn(from, to time.Time) (time.Time, bool) {
	i := sort.Search(len(a.deaths), func(i int) bool { return a.deaths[i].After(from) })
	if i < len(a.deaths) && a.deaths[i].Before(to) {
		return a.deaths[i], true
	}
	return time.Time{}, false
}

// unit checks one unit's requests, sorted by start: in flight, gaps.
func (a *auditor) unit(unit string, reqs []*req) {
	rep := a.rep
	var ends endHeap
	var lastEnd time.Time // latest client end of the requests before
	var last *req         // the request that ended last
	known := map[string]bool{}
	var delay time.Duration // largest Crawl-delay of the names whose robots.txt was fetched
	short := 0
	for i, q := range reqs {
		start := q.r.Start
		for ends.Len() > 0 && !ends[0].After(start.Add(a.rules.Slack)) {
			heap.Pop(&ends)
		}
		if n := ends.Len() + 1; n > rep.MaxInFlightUnit {
			rep.MaxInFlightUnit, rep.MaxInFlightUnitAt = n, unit
		}
		if ends.Len() > 0 {
			rep.UnitOverlaps++
			a.problem("unit %s: %s%s started while %d request(s) were in flight (%s)", unit, q.r.Host, q.r.Path, ends.Len(), span(last, q))
		}
		heap.Push(&ends, q.end)
		if i > 0 && last.cut {
			// The client cut the stream when its body cap was reached;
			// the server noticed later. (Fault run: drip.hostil.cl asked
			// 9.8 ms after huge.hostil.cl's recorded end, their unit's
			// wait 20 ms.)
			rep.AfterStream++
		} else if i > 0 {
			want := a.rules.Wait
			_, killed := a.deathIn(reqs[i-1].r.Start, start)
			if !killed && delay > want {
				want = delay
				rep.DelayGaps++
			}
			gap := start.Sub(lastEnd)
			if rep.MinGap < 0 || gap < rep.MinGap {
				rep.MinGap, rep.MinGapUnit = gap, unit
			}
			if gap < want-a.rules.Slack {
				rep.ShortGaps++
				short++
				if want-gap > rep.WorstGap.Want-rep.WorstGap.Gap || rep.WorstGap.Where == "" {
					rep.WorstGap = Shortfall{Where: unit + ": " + span(last, q), Gap: gap, Want: want}
				}
				a.problem("unit %s: %s%s requested %v after %s%s ended (want %v; %s)", unit, q.r.Host, q.r.Path,
					roundDur(gap), last.r.Host, last.r.Path, want, span(last, q))
			}
		}
		if q.end.After(lastEnd) || last == nil {
			lastEnd, last = q.end, q
		}
		if q.robotsOK && !known[q.r.Host] {
			known[q.r.Host] = true
			delay = max(delay, a.crawlDelay(q.r.Host))
		}
	}
	if short > 0 {
		rep.ShortGapUnits++
	}
}

// address checks one address's requests, sorted by start: in flight
// against the cap, the floor between starts.
func (a *auditor) address(addr string, reqs []*req) {
	rep := a.rep
	var ends endHeap
	floor := 0
	for i, q := range reqs {
		start := q.r.Start
		for ends.Len() > 0 && !ends[0].After(start.Add(a.rules.Slack)) {
			heap.Pop(&ends)
		}
		if n := ends.Len() + 1; n > rep.MaxInFlightAddress {
			rep.MaxInFlightAddress, rep.MaxInFlightAddressAt = n, addr
		}
		if c := a.rules.ConnectionsPerIP; c > 0 && ends.Len() >= c {
			rep.AddressOverCap++
			a.problem("address %s: %s%s started while %d requests were in flight there (cap %d)", addr, q.r.Host, q.r.Path, ends.Len(), c)
		}
		heap.Push(&ends, q.end)
		if i == 0 {
			continue
		}
		prev := reqs[i-1]
		if _, killed := a.deathIn(prev.r.Start, start); killed {
			continue
		}
		d := start.Sub(prev.r.Start)
		if rep.MinStartGap < 0 || d < rep.MinStartGap {
			rep.MinStartGap = d
		}
		if w := a.rules.AddressWait; d < w-a.rules.Slack {
			rep.FloorViolations++
			floor++
			if w-d > rep.WorstFloor.Want-rep.WorstFloor.Gap || rep.WorstFloor.Where == "" {
				rep.WorstFloor = Shortfall{Where: fmt.Sprintf("address %s: %s%s then %s%s", addr, prev.r.Host, prev.r.Path, q.r.Host, q.r.Path), Gap: d, Want: w}
			}
			a.problem("address %s: %s%s started %v after %s%s started (address wait %v)", addr, q.r.Host, q.r.Path,
				roundDur(d), prev.r.Host, prev.r.Path, w)
		}
	}
	if floor > 0 {
		rep.FloorAddresses++
	}
}

// conns checks that no host name had two connections open at once.
func (a *auditor) conns(all []testweb.Conn) {
	byHost := map[string][]testweb.Conn{}
	for _, c := range all {
		if c.Host != "" {
			byHost[c.Host] = append(byHost[c.Host], c)
			a.rep.Conns++
		}
	}
	for _, host := range sortedKeys(byHost) {
		cs := byHost[host]
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Opened.Before(cs[j].Opened) })
		var open time.Time // when the connections before were all closed
		var openID uint64
		for i, c := range cs {
			if i > 0 && open.Sub(c.Opened) > connSlack {
				until := open.Format("15:04:05.000000")
				if open.Equal(farFuture) {
					until = "never closed"
				}
				a.rep.ConnOverlaps++
				a.problem("host %s: connection %d opened at %s while connection %d was open (until %s)", host, c.ID,
					c.Opened.Format("15:04:05.000000"), openID, until)
			}
			closed := c.Closed
			if closed.IsZero() {
				closed = farFuture
			}
			if d, ok := a.deathIn(c.Opened, closed); ok {
				closed = d // the client's end: its harvester died
			}
			if closed.After(open) {
				open, openID = closed, c.ID
			}
		}
	}
}

// farFuture stands for the close of a connection that never closed.
var farFuture = time.Unix(1<<40, 0)

// hostile counts the requests per hostile host.
func (a *auditor) hostile(reqs []*req) {
	n := map[string]*HostileCount{}
	for _, h := range a.web.HostileHosts() {
		a.rep.Hostile = append(a.rep.Hostile, HostileCount{Host: h.Name, Kind: h.Kind})
	}
	for i := range a.rep.Hostile {
		n[a.rep.Hostile[i].Host] = &a.rep.Hostile[i]
	}
	for _, q := range reqs {
		if c, ok := n[q.r.Host]; ok {
			c.Requests++
			if q.r.Path != "/robots.txt" {
				c.Pages++
			}
		}
	}
	for _, c := range a.rep.Hostile {
		if m := a.rules.MaxCutRequests; m > 0 && Cut(c.Kind) && c.Pages > m {
			a.rep.HostileOver++
			a.problem("hostile host %s (%s): %d page requests, want at most %d", c.Host, c.Kind, c.Pages, m)
		}
	}
}

// span describes two requests' times relative to the first one's start.
func span(a, b *req) string {
	if a == nil {
		return fmt.Sprintf("%s%s status %d", b.r.Host, b.r.Path, b.r.Status)
	}
	ms := func(t time.Time) string { return fmt.Sprintf("%.1fms", float64(t.Sub(a.r.Start).Microseconds())/1000) }
	return fmt.Sprintf("%s%s 0-%s status %d, then %s%s %s-%s status %d", a.r.Host, a.r.Path, ms(a.end), a.r.Status,
		b.r.Host, b.r.Path, ms(b.r.Start), ms(b.end), b.r.Status)
}

// roundDur rounds d for reading.
func roundDur(d time.Duration) time.Duration {
	if d > time.Second || d < -time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// byStart sorts requests by start, keeping the log's order for ties.
func byStart(reqs []*req) []*req {
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].r.Start.Before(reqs[j].r.Start) })
	return reqs
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sortedTimes returns a sorted copy of ts.
func sortedTimes(ts []time.Time) []time.Time {
	out := append([]time.Time(nil), ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// endHeap is a min-heap of end times.
type endHeap []time.Time

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].Before(h[j]) }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push adds an end time (heap.Interface).
func (h *endHeap) Push(x any) { *h = append(*h, x.(time.Time)) }

// Pop removes the last element (heap.Interface).
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
