package faulttest

import (
	"fmt"
	"sort"
	"time"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// PolitenessReport is what the server's records say about politeness.
type PolitenessReport struct {
	// Requests, Hosts and Conns count what was checked.
	Requests, Hosts, Conns int
	// MinGap is the shortest gap seen between two requests to one host
	// (end of one to start of the next), and MinGapHost its host.
	MinGap     time.Duration
	MinGapHost string
	// Refetched counts URLs (robots.txt aside) requested more than once:
	// a harvester killed with requests in flight asks them again when it
	// resumes, which the fetch log cannot show.
	Refetched int
	// Problems are the violations found.
	Problems []string
}

// streaming tells whether a hostile host's answer outlives the client's
// patience: the server records the end of a drip, endless or huge answer
// when it notices the client has gone, which may be long after the client
// gave up and started to wait, so for these the gap is measured from the
// start of the request plus the client's total time limit instead.
func streaming(k testweb.HostileKind) bool {
	return k == testweb.HostileDrip || k == testweb.HostileEndless || k == testweb.HostileHuge
}

// CheckPoliteness reads the server's records of a whole crawl, across
// every restart of the harvester: never less than wait between the end of
// one request to a host and the start of the next, and never two open
// connections to one host. totalTimeout is the harvester's limit for one
// request (used for the hostile streaming hosts, see streaming).
//
// deaths are the moments killed harvesters were reaped (see
// KillReport.Deaths). A request in flight when its harvester died ends,
// for the client, at that moment; the server may notice later (a handler
// blocked writing a large body to a socket the kernel has not reset yet,
// or not scheduled on a busy machine), so such a request counts as ended
// at the death. What is checked across a restart is therefore what the
// restarted harvester can know: the time since the previous one died.
func CheckPoliteness(web *testweb.Web, wait, totalTimeout time.Duration, deaths []time.Time) PolitenessReport {
	var rep PolitenessReport
	add := func(format string, args ...any) {
		if len(rep.Problems) < maxProblems {
			rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
		}
	}
	byHost := map[string][]testweb.Request{}
	seen := map[string]int{}
	for _, r := range web.Requests() {
		byHost[r.Host] = append(byHost[r.Host], r)
		rep.Requests++
		if r.Path != "/robots.txt" {
			seen[r.Host+r.Path]++
		}
	}
	for _, n := range seen {
		if n > 1 {
			rep.Refetched++
		}
	}
	rep.Hosts = len(byHost)
	rep.MinGap = -1
	for host, reqs := range byHost {
		kind, hostile := web.IsHostile(host)
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
		for i := 1; i < len(reqs); i++ {
			prevEnd := reqs[i-1].End
			if hostile && streaming(kind) {
				prevEnd = minTime(prevEnd, reqs[i-1].Start.Add(totalTimeout))
			}
			if d, ok := deathDuring(deaths, reqs[i-1]); ok {
				prevEnd = minTime(prevEnd, d)
			}
			gap := reqs[i].Start.Sub(prevEnd)
			if rep.MinGap < 0 || gap < rep.MinGap {
				rep.MinGap, rep.MinGapHost = gap, host
			}
			if gap < wait {
				add("host %s: %s requested %v after %s ended (wait %v; connections %d and %d; %s)", host, reqs[i].Path,
					gap.Round(time.Microsecond), reqs[i-1].Path, wait, reqs[i-1].ConnID, reqs[i].ConnID, span(reqs[i-1], reqs[i]))
			}
		}
	}
	conns := map[string][]testweb.Conn{}
	for _, c := range web.Conns() {
		if c.Host != "" {
			conns[c.Host] = append(conns[c.Host], c)
			rep.Conns++
		}
	}
	for host, cs := range conns {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Opened.Before(cs[j].Opened) })
		for i := 1; i < len(cs); i++ {
			prev := cs[i-1].Closed
			if d, ok := deathDuring(deaths, testweb.Request{Start: cs[i-1].Opened, End: prev}); ok && (prev.IsZero() || d.Before(prev)) {
				prev = d
			}
			// The server may notice a close a little after the client
			// dialled the next connection (scheduling lag on a loaded
			// machine); more than that is two connections at once.
			if prev.IsZero() || prev.Sub(cs[i].Opened) > 100*time.Millisecond {
				add("host %s: connection %d opened at %s while connection %d (opened %s) was open until %s", host, cs[i].ID,
					cs[i].Opened.Format("15:04:05.000000"), cs[i-1].ID, cs[i-1].Opened.Format("15:04:05.000000"), prev.Format("15:04:05.000000"))
			}
		}
	}
	return rep
}

// deathDuring returns the first death after r started, if it came before
// r ended (or r never ended).
func deathDuring(deaths []time.Time, r testweb.Request) (time.Time, bool) {
	for _, d := range deaths {
		if d.After(r.Start) && (r.End.IsZero() || d.Before(r.End)) {
			return d, true
		}
	}
	return time.Time{}, false
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// span describes the times of two requests relative to the first one's
// start, for problem reports.
func span(a, b testweb.Request) string {
	ms := func(t time.Time) string { return fmt.Sprintf("%.1fms", float64(t.Sub(a.Start).Microseconds())/1000) }
	return fmt.Sprintf("first 0-%s status %d, second %s-%s status %d", ms(a.End), a.Status, ms(b.Start), ms(b.End), b.Status)
}
