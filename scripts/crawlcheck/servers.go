package main

import (
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// serverRules are the harvester's politeness settings the polite bound
// and the discovery split count (docs/harvester.md, "Politeness by
// server"): the wait after each request to a politeness unit (and the
// unit's Crawl-delay, from the web's truth), and per IP address the
// connection cap and the floor between two starts.
type serverRules struct {
	// wait is harvester.wait.
	wait time.Duration
	// addressWait is harvester.address_wait (0: no floor).
	addressWait time.Duration
	// connectionsPerIP is harvester.connections_per_ip (0: no cap).
	connectionsPerIP int
}

// serverRuleFlags are the flags that override the collection's rules.
func serverRuleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "wait", Usage: "harvester.wait (default: the collection's, or the built-in default)"},
		&cli.DurationFlag{Name: "address-wait", Usage: "harvester.address_wait (default: the collection's, or the built-in default; 0: no floor)"},
		&cli.IntFlag{Name: "connections-per-ip", Usage: "harvester.connections_per_ip (default: the collection's, or the built-in default; 0: no cap)"},
	}
}

// rulesOf returns the rules of cfg (the collection's or the defaults),
// each overridden by its flag when given.
func rulesOf(c *cli.Context, cfg config.Config) (serverRules, error) {
	r := serverRules{wait: cfg.Harvester.Wait.D(), addressWait: cfg.Harvester.AddressWait.D(), connectionsPerIP: cfg.Harvester.ConnectionsPerIP}
	for name, p := range map[string]*time.Duration{"wait": &r.wait, "address-wait": &r.addressWait} {
		if c.IsSet(name) {
			if *p = c.Duration(name); *p < 0 {
				return r, command.Usage("--%s must not be negative", name)
			}
		}
	}
	if c.IsSet("connections-per-ip") {
		if r.connectionsPerIP = c.Int("connections-per-ip"); r.connectionsPerIP < 0 {
			return r, command.Usage("--connections-per-ip must not be negative")
		}
	}
	return r, nil
}

// servers says from which address each host name is served, and so
// which politeness unit it belongs to: the names on one address that
// share a registrable domain (urlnorm.Registrable), as
// pkg/testweb/politeaudit groups them. The address is the web's own
// (testweb.Web.ServerOf), so that every name is on its real server, the
// crawl's requests to it or not; without the web, the one of the name's
// first request in the log.
type servers struct {
	// of is the web's ServerOf (nil: the log's addresses).
	of func(host string) string
	// addr is the address of each host name (lower case) in the log: the
	// one of its first request. Logs written before the address was
	// recorded give "".
	addr map[string]string
}

// newServers reads the addresses of the log's host names; of, when not
// nil, gives every name's server instead.
func newServers(log []requestLine, of func(host string) string) servers {
	s := servers{of: of, addr: map[string]string{}}
	if of != nil {
		return s
	}
	for _, l := range log {
		h := strings.ToLower(l.host)
		if _, ok := s.addr[h]; !ok {
			s.addr[h] = l.addr
		}
	}
	return s
}

// address returns the server of host; without the web, a name that has
// no address in the log (never asked, or an old log) is an address of
// its own, "name:" + host, so that it shares neither its floor nor its
// cap with anyone.
func (s servers) address(host string) string {
	if s.of != nil {
		return s.of(host)
	}
	if a := s.addr[strings.ToLower(host)]; a != "" {
		return a
	}
	return "name:" + strings.ToLower(host)
}

// unit returns the politeness unit of host: its address and registrable
// domain.
func (s servers) unit(host string) string {
	return s.address(host) + " " + urlnorm.Registrable(host)
}

// reqSeq is the requests one unit or one address received, by start,
// as times from the start of the measure.
type reqSeq struct {
	start, end []time.Duration
	// maxEnd[i] is the latest end among the first i+1 requests.
	maxEnd []time.Duration
	// maxDur is the longest request.
	maxDur time.Duration
}

// add appends a request; call sort when all are in.
func (q *reqSeq) add(start, end time.Duration) {
	q.start = append(q.start, start)
	q.end = append(q.end, end)
}

// sort orders the requests by start and fills maxEnd and maxDur.
func (q *reqSeq) sort() {
	idx := make([]int, len(q.start))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return q.start[idx[a]] < q.start[idx[b]] })
	start, end := make([]time.Duration, len(idx)), make([]time.Duration, len(idx))
	q.maxEnd = make([]time.Duration, len(idx))
	for k, i := range idx {
		start[k], end[k] = q.start[i], q.end[i]
		q.maxEnd[k] = end[k]
		if k > 0 {
			q.maxEnd[k] = max(q.maxEnd[k], q.maxEnd[k-1])
		}
		q.maxDur = max(q.maxDur, end[k]-start[k])
	}
	q.start, q.end = start, end
}

// before returns how many requests started before t.
func (q *reqSeq) before(t time.Duration) int {
	return sort.Search(len(q.start), func(i int) bool { return q.start[i] >= t })
}

// earliestAllowed is the earliest time t >= from at which one more
// request to a unit would have kept the rules, given the requests its
// unit and its address actually received before t (the requests that
// started at t or later are not looked at):
//
//   - t >= end + gap for every request of the unit that started before
//     t (so none of them is in flight at t), gap being max(wait, the
//     unit's largest Crawl-delay);
//   - t >= start + address_wait for every request of the address that
//     started before t;
//   - fewer than connections_per_ip requests of the address in flight at
//     t (started before t, ending after it).
//
// unit or addr may be nil (no requests known). The result is found by
// moving t forward to the first time each rule allows until none moves
// it.
func earliestAllowed(from time.Duration, unit, addr *reqSeq, gap time.Duration, r serverRules) time.Duration {
	t := from
	for {
		next := t
		if unit != nil {
			if k := unit.before(t); k > 0 {
				next = max(next, unit.maxEnd[k-1]+gap)
			}
		}
		if addr != nil {
			k := addr.before(t)
			if k > 0 && r.addressWait > 0 {
				next = max(next, addr.start[k-1]+r.addressWait)
			}
			if r.connectionsPerIP > 0 {
				inFlight, firstEnd := 0, time.Duration(0)
				for j := k - 1; j >= 0 && addr.start[j] >= t-addr.maxDur; j-- {
					if e := addr.end[j]; e > t {
						if inFlight == 0 || e < firstEnd {
							firstEnd = e
						}
						inFlight++
					}
				}
				if inFlight >= r.connectionsPerIP {
					next = max(next, firstEnd)
				}
			}
		}
		if next == t {
			return t
		}
		t = next
	}
}
