package faulttest

import (
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/testweb/politeaudit"
)

// PolitenessReport is what the server's records say about politeness.
type PolitenessReport struct {
	// Requests, Hosts and Conns count what was checked.
	Requests, Hosts, Conns int
	// MinGap is the shortest gap seen between two requests to one
	// politeness unit (end of one to start of the next), and MinGapHost
	// its unit.
	MinGap     time.Duration
	MinGapHost string
	// Refetched counts URLs (robots.txt aside) requested more than once:
	// a harvester killed with requests in flight asks them again when it
	// resumes, which the fetch log cannot show.
	Refetched int
	// Audit is the whole audit (package politeaudit).
	Audit politeaudit.Report
	// Problems are the violations found.
	Problems []string
}

// faultSlack is the server scheduling lag the fault run's audit forgives
// (see CheckPoliteness).
const faultSlack = 10 * time.Millisecond

// CheckPoliteness audits the server's records of a whole crawl, across
// every restart of the harvester, by server (package politeaudit): one
// request at a time to a politeness unit (the names of one registrable
// domain on one address), never less than the wait or the Crawl-delay
// between two of its requests, at most connections_per_ip requests in
// flight to an address and starts on one address address_wait apart,
// never two connections to one host name. h are the harvester settings
// of the crawl.
//
// deaths are the moments killed harvesters were reaped (see
// KillReport.Deaths). A request in flight when its harvester died ends,
// for the client, at that moment; the server may notice later (a handler
// blocked writing a large body to a socket the kernel has not reset yet,
// or not scheduled on a busy machine), so such a request counts as ended
// at the death. What is checked across a restart is therefore what the
// restarted harvester can know: the wait since the previous one died.
//
// The server's clock lags more here than in a quiet crawl: the stages
// are killed and restarted on a loaded machine beside the test web, and a
// request's handler started up to 9 ms after the harvester had sent it
// (two starts 1.1 ms apart at the server with a 5 ms floor, claimed
// 10 ms apart). The check forgives faultSlack of it.
func CheckPoliteness(web *testweb.Web, h config.Harvester, deaths []time.Time) PolitenessReport {
	reqs := web.Requests()
	rules := politeaudit.FromConfig(h)
	rules.Slack = max(rules.Slack, faultSlack)
	a := politeaudit.Audit(web, rules, politeaudit.Log{Requests: reqs, Conns: web.Conns(), Deaths: deaths})
	rep := PolitenessReport{Requests: a.Requests, Hosts: a.Hosts, Conns: a.Conns,
		MinGap: a.MinGap, MinGapHost: a.MinGapUnit, Audit: a}
	rep.Problems = append(rep.Problems, a.Problems...)
	seen := map[string]int{}
	for _, r := range reqs {
		if r.Path != "/robots.txt" {
			seen[r.Host+r.Path]++
		}
	}
	for _, n := range seen {
		if n > 1 {
			rep.Refetched++
		}
	}
	return rep
}
