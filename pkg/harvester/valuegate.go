package harvester

import (
	"cmp"
	"math"
	"net/netip"
	"slices"
	"sort"
	"sync/atomic"
	"time"
)

// The value ranking (harvester.ranking = "value") makes the manager's
// value reach the wire: within a batch, pages are fetched in the order of
// their scores across all servers, as far as politeness allows, without
// making the batch longer than its slowest servers make it anyway.
//
// A ranking alone cannot do that. When there are more connections than
// ready servers, every server gets one, and a fast server fetches all of
// its pages, the worst included, before a slow one has fetched its best:
// the crawl's order follows server speed. So the value ranking also holds
// pages back. A value clock releases the batch's pages best first: a page
// may start once its score is at least the threshold (the score of the
// last page released). The clock runs so that, at the pace the servers'
// estimates predict, the last page is released well before the batch's
// predicted end: its speed is the pages left to release over half the
// predicted remaining time (harvester.value_clock, default 0.5), re-predicted every tick,
// so it follows the servers' real speed. A server that cannot wait, one
// whose remaining URLs need at least nine tenths of the predicted
// remaining time of the batch (criticalShare), is never held: holding it
// would make the batch longer. (The clock releases everything by half
// that time, so a held server's slack is at most a tenth short; with
// half instead of nine tenths, a recrawl's first batch, every server
// filled to its batch_duration budget, held almost no one: 0.934 of the
// sorted-PageRank bound against 0.941, docs/results.md.) The predicted remaining time is that of the slowest
// server, or of the busiest address under connections_per_ip, whichever
// is longer: what no order can shorten.
//
// Within what is released, servers are ranked by the score of their
// next URL (the quality ranking), and each server's URLs go by score.
type valueGate struct {
	scores   []float64 // the scores of the URLs to do at the start, best first
	released float64   // how many of them the clock has released
	last     time.Time // the clock's last tick
	// threshold is the least score released (math.Float64bits; -Inf
	// once everything is), and remaining the predicted remaining time
	// of the batch (ns): written by the scheduler's goroutine, read by
	// the connections' (allows).
	threshold atomic.Uint64
	remaining atomic.Int64
	// open, while the network may be down (outage.suspected), lets every
	// server go; the clock itself goes on.
	open  atomic.Bool
	wait  time.Duration
	perIP int
	share float64 // harvester.value_clock
	// tailHosts is how many servers may be left when the tail rule begins
	// (tail_fraction of the batch's hosts; -1 without the rule).
	tailHosts int
	needs     []time.Duration // tick's scratch
}

// Tuning of the value clock, see valueGate (its pace is
// harvester.value_clock).
const (
	// criticalShare: a server whose remaining URLs need at least this
	// share of the predicted remaining time is never held.
	criticalShare = 0.9
	// valueTick is how often the clock moves and the held servers are
	// looked at again.
	valueTick = 50 * time.Millisecond
)

// ValueRanking serves first the server whose next URL has the highest
// score, and releases the batch's URLs best first on a value clock
// (valueGate); URLs by score.
type ValueRanking struct{}

// Name implements Ranking.
func (ValueRanking) Name() string { return "value" }

// Rank implements Ranking.
func (ValueRanking) Rank(s *Server) float64 { return s.Quality() }

// ByScore implements Ranking.
func (ValueRanking) ByScore() bool { return true }

// newValueGate sets the clock up for the servers' URLs still to do, with
// first released at once (at least one URL per server, so that every
// server can show its speed).
func newValueGate(servers []*Server, wait time.Duration, perIP int, share, tailFraction float64, now time.Time) *valueGate {
	g := &valueGate{last: now, wait: wait, perIP: perIP, share: share, tailHosts: -1}
	if tailFraction > 0 {
		g.tailHosts = int(tailFraction * float64(len(servers)))
	}
	for _, s := range servers {
		s.upcoming(s.left, func(score float64) { g.scores = append(g.scores, score) })
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(g.scores)))
	g.released = float64(min(len(g.scores), len(servers)))
	g.setThreshold()
	g.remaining.Store(math.MaxInt64)
	return g
}

// setThreshold publishes the least score released.
func (g *valueGate) setThreshold() {
	t := math.Inf(-1)
	if n := int(g.released); n < len(g.scores) && n > 0 {
		t = g.scores[n-1]
	} else if n == 0 && len(g.scores) > 0 {
		t = math.Inf(1)
	}
	g.threshold.Store(math.Float64bits(t))
}

// interval is the time one URL of s takes, politely: its response time
// (with its share of a connection's set-up), or its wait or the longest
// Crawl-delay its unit asked for, whichever is longer.
func (g *valueGate) interval(s *Server, crawlDelay time.Duration) time.Duration {
	d := s.Est.ResponseTime
	if rpc := s.Est.RequestsPerConn; rpc >= 1 {
		d += time.Duration(float64(s.Est.ConnectTime) / rpc)
	}
	return max(d, g.wait, crawlDelay)
}

// need is the time s needs for its remaining URLs.
func (g *valueGate) need(s *Server, crawlDelay time.Duration) time.Duration {
	return time.Duration(s.left) * g.interval(s, crawlDelay)
}

// allows tells whether s may start its next URL, of score: released by
// the clock, or s cannot wait (criticalShare). need is s's own need.
func (g *valueGate) allows(score float64, need time.Duration) bool {
	if g.open.Load() || score >= math.Float64frombits(g.threshold.Load()) {
		return true
	}
	rem := g.remaining.Load()
	return rem > 0 && float64(need) >= criticalShare*float64(rem)
}

// tick moves the clock to now: it predicts the batch's remaining time
// from the servers not done (each calls yield with what it needs and its
// address, invalid if not known), and releases URLs at the pace that
// releases the last at the clock's share of it. The batch ends, at the
// latest, at end (its deadline, or the tail's end; zero: none), and with
// the tail rule it is predicted to end when the tail begins, when only
// tailHosts servers are left: the time the server ranked tailHosts+1 by
// need still needs (the rule cuts the others). It reports whether it ran
// (at most every valueTick).
func (g *valueGate) tick(now, end time.Time, servers func(yield func(need time.Duration, ip netip.Addr))) bool {
	dt := now.Sub(g.last)
	if dt < valueTick {
		return false
	}
	g.last = now
	var rem time.Duration
	perAddr := map[netip.Addr]time.Duration{}
	g.needs = g.needs[:0]
	servers(func(need time.Duration, ip netip.Addr) {
		rem = max(rem, need)
		if g.tailHosts >= 0 {
			g.needs = append(g.needs, need)
		}
		if g.perIP > 0 && ip.IsValid() {
			perAddr[ip] += need
		}
	})
	for _, n := range perAddr {
		rem = max(rem, n/time.Duration(g.perIP))
	}
	if g.tailHosts >= 0 && g.tailHosts < len(g.needs) {
		slices.SortFunc(g.needs, func(a, b time.Duration) int { return cmp.Compare(b, a) })
		rem = min(rem, g.needs[g.tailHosts])
	}
	if !end.IsZero() {
		rem = max(0, min(rem, end.Sub(now)))
	}
	g.remaining.Store(int64(rem))
	n := float64(len(g.scores))
	if rem <= 0 {
		g.released = n
	} else {
		g.released = min(n, g.released+(n-g.released)*min(1, float64(dt)/(g.share*float64(rem))))
	}
	g.setThreshold()
	return true
}

// releaseTo releases at least every URL scoring score or more: the
// scheduler's way out when nothing runs and only held servers are left.
func (g *valueGate) releaseTo(score float64) {
	i := sort.Search(len(g.scores), func(i int) bool { return g.scores[i] < score })
	g.released = max(g.released, float64(i))
	g.setThreshold()
}
