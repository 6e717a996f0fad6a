package faulttest

import (
	"context"
	"fmt"
	"sort"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// HostRequests is what one host of the test web was asked, from the
// web's own request records (testweb.Web.Requests, the records
// CheckPoliteness reads).
type HostRequests struct {
	Host string
	Kind testweb.HostileKind
	// Pages counts the requests for anything but /robots.txt; Robots
	// those for /robots.txt.
	Pages, Robots int
}

// HostileRequests counts the requests of every hostile host of web, in
// the order of testweb.Web.HostileHosts.
func HostileRequests(web *testweb.Web) []HostRequests {
	byHost := map[string]*HostRequests{}
	var out []*HostRequests
	for _, h := range web.HostileHosts() {
		hr := &HostRequests{Host: h.Name, Kind: h.Kind}
		byHost[h.Name] = hr
		out = append(out, hr)
	}
	for _, r := range web.Requests() {
		hr := byHost[r.Host]
		if hr == nil {
			continue
		}
		if r.Path == "/robots.txt" {
			hr.Robots++
		} else {
			hr.Pages++
		}
	}
	res := make([]HostRequests, len(out))
	for i, hr := range out {
		res[i] = *hr
	}
	return res
}

// CrawlCycles runs up to cycles serial crawl cycles (manager, harvester,
// gatherer, seeder, no kills), stopping early when the manager has
// nothing to schedule. It returns the number of batches written.
func CrawlCycles(ctx context.Context, r *Runner, cycles int) (int, error) {
	batches := 0
	for c := 1; c <= cycles; c++ {
		for _, name := range Stages() {
			res, err := r.Stage(ctx, name)
			if err != nil {
				return batches, err
			}
			switch {
			case res.Code == exitNothing && name == "manager":
				return batches, nil
			case res.Code != exitOK:
				return batches, fmt.Errorf("cycle %d: %s", c, res)
			case name == "manager":
				batches++
			}
		}
	}
	return batches, nil
}

// sortedPaths returns the paths a host was asked for, robots.txt aside,
// in the order of the requests (for failure messages).
func sortedPaths(web *testweb.Web, host string) []string {
	reqs := web.Requests()
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
	var out []string
	for _, r := range reqs {
		if r.Host == host && r.Path != "/robots.txt" {
			out = append(out, r.Path)
		}
	}
	return out
}
