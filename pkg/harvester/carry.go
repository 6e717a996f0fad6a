package harvester

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// previousHarvests returns the harvest directories of the batches
// harvested before b, newest first: the newest sibling batch directory
// (NNNNNN, a smaller id) marked harvested, and every older one whose servers file was written less than horizon
// before now. A pause (a Crawl-delay, a Retry-After) can outlast the
// batch after the one that set it: a host asked at the end of batch 5,
// not in batch 6 (harvested in half a second), and asked again in batch
// 7 must still wait, and only batch 5's servers file knows it (the
// overlapped-crawl test in CI saw a 1 s Crawl-delay kept as 0.62 s that
// way). The search stops at the first harvest older than horizon, so it
// costs a few look-ups in a collection of thousands of batches.
func previousHarvests(b *collection.Batch, horizon time.Duration, now time.Time) []string {
	if b.ID <= 1 {
		return nil
	}
	parent := filepath.Dir(b.Dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		id, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || id <= 0 || id >= b.ID || collection.BatchName(id) != e.Name() {
			continue
		}
		prev := &collection.Batch{ID: id, Dir: filepath.Join(parent, e.Name())}
		if !prev.Done(collection.StageHarvested) {
			continue
		}
		dir := filepath.Join(prev.Dir, collection.HarvestDir)
		if len(out) > 0 {
			fi, err := os.Stat(filepath.Join(dir, fetchlog.ServersFile))
			if err != nil || fi.ModTime().Before(now.Add(-horizon)) {
				break
			}
		}
		out = append(out, dir)
	}
	return out
}

// carryHorizon is how long a pause a harvest left can last: the longest
// wait, Crawl-delay or Retry-After the settings allow.
func (h *harvest) carryHorizon() time.Duration { return carryHorizon(h.cfg.Harvester) }

// carryHorizon is harvest.carryHorizon of the settings hc.
func carryHorizon(hc config.Harvester) time.Duration {
	return max(hc.Wait.D(), hc.MaxWait.D(), hc.MaxCrawlDelay.D(), hc.MaxRetryAfter.D(), hc.AddressWait.D())
}

// carryOver takes from the previous harvests (their harvest/
// directories, newest first: previousHarvests) what the next one must
// respect or may reuse (docs/harvester.md, "From one
// batch to the next"):
//
//   - each host's earliest next request (servers.jsonl, notBefore: the end
//     of its last request plus its wait or Crawl-delay), so that a batch
//     that starts right after the previous one ended cannot ask a host
//     early;
//   - its server estimates, when newer than those the batch came with;
//   - its robots.txt answers for sites the batch has no copy of, when
//     they are definite (2xx or 4xx) and younger than
//     manager.robots_max_age, as the manager itself would have sent them.
//
// A missing or unreadable file is skipped with a warning: it only makes
// the run more cautious (the start floor of one wait still holds).
//
// Only the hosts and sites of entries (the URLs this run fetches) are
// taken, so that memory follows the batch, not the previous one — and the
// next request of the units they belong to: a host of the previous
// batch whose registrable domain is in this batch and that may not be
// asked yet holds back its unit (its domain on its address).
func (h *harvest) carryOver(dirs []string, entries []batch.Entry, now time.Time) {
	if len(dirs) == 0 {
		return
	}
	sites, hosts, domains := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if !sites[e.Site] {
			sites[e.Site] = true
			host := hostOf(e.Site)
			if !hosts[host] {
				hosts[host] = true
				domains[urlnorm.Registrable(host)] = true
			}
		}
	}
	later, reused := 0, 0
	for _, dir := range dirs {
		l, r := h.carryFrom(dir, sites, hosts, domains, now)
		later += l
		reused += r
	}
	h.log.Info("carried over from the previous harvests", "dirs", len(dirs), "newest", dirs[0], "hosts_not_yet", later, "robots", reused)
}

// carryFrom carries over what one previous harvest (dir) left for the
// sites, hosts and registrable domains of this batch (see carryOver). It
// returns how many hosts may not be asked yet and how many robots.txt
// answers it reused. Called newest harvest first: a robots.txt answer
// already known is kept, the newest estimates win, and pauses take the
// latest.
func (h *harvest) carryFrom(dir string, sites, hosts, domains map[string]bool, now time.Time) (later, reused int) {
	servers, err := fetchlog.ReadServers(filepath.Join(dir, fetchlog.ServersFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		h.log.Warn("previous harvest's servers.jsonl read up to a bad line", "dir", dir, "err", err, "kept", len(servers))
	}
	for _, l := range servers {
		host := strings.ToLower(l.Host)
		if ip, err := netip.ParseAddr(l.IP); err == nil && l.CrawlDelay > 0 && domains[urlnorm.Registrable(host)] {
			// The unit's Crawl-delay as that harvest kept it (a robots.txt
			// it read, which graph.db may not hold yet): every name of this
			// batch that joins the unit keeps it from its first request.
			h.hosts.crawlDelayAt(ip, host, min(time.Duration(l.CrawlDelay*float64(time.Second)), h.cfg.Harvester.MaxCrawlDelay.D()))
		}
		if !hosts[host] {
			// Another name of a unit of this batch (www.x.cl, asked at
			// the end of the previous batch, beside docs.x.cl in this
			// one): its unit's next request holds for the unit.
			if ip, err := netip.ParseAddr(l.IP); err == nil && l.NotBefore.After(now) && domains[urlnorm.Registrable(host)] {
				h.hosts.laterUnit(ip, host, l.NotBefore)
				h.held = append(h.held, heldUnit{host: host, ip: ip, notBefore: l.NotBefore})
				later++
			}
			continue
		}
		if l.NotBefore.After(now) {
			h.hosts.later(host, l.NotBefore)
			if ip, err := netip.ParseAddr(l.IP); err == nil {
				// And its unit's, for the name of it that resolves
				// first in this batch, which may be another
				// (TestQuietStartUnitHold).
				h.hosts.laterUnit(ip, host, l.NotBefore)
			}
			later++
		}
		if l.ConnectMs <= 0 && l.ResponseMs <= 0 {
			continue
		}
		if old, ok := h.est[host]; !ok || l.Measured.After(old.Measured) {
			h.est[host] = l
		}
	}
	maxAge := h.cfg.Manager.RobotsMaxAge.D()
	if maxAge > 0 {
		lines, err := fetchlog.ReadRobots(filepath.Join(dir, fetchlog.RobotsFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			h.log.Warn("previous harvest's robots.jsonl read up to a bad line", "dir", dir, "err", err, "kept", len(lines))
		}
		for _, l := range lines {
			if _, known := h.known[l.Site]; known || !sites[l.Site] || !definiteRobots(l) || now.Sub(l.Fetched) >= maxAge {
				continue
			}
			h.known[l.Site] = l
			reused++
		}
	}
	return later, reused
}

// quietSince tells whether a run of batch b may start without a floor of
// a whole wait, and from when: the end of the newest harvest before it.
// It may when everything that asked a server since the carry horizon
// left what it held in a file the run has carried (dirs, from
// previousHarvests, newest first):
//
//   - the run is of the whole batch (shards may run at once, on other
//     machines) and not a resume (a killed run of this batch may have had
//     requests in flight it never logged);
//   - no other batch of the collection holds a harvest being written
//     (a harvester running, or killed and not resumed) nor is harvested
//     after b (its requests came later than those of dirs[0]);
//   - each harvest in dirs was a whole-batch run that wrote a line for
//     every name it held (Summary.Holds).
//
// With no harvest before b at all, nothing was asked: the time is zero.
func quietSince(b *collection.Batch, s Shard, resuming bool, dirs []string) (time.Time, bool) {
	if resuming || !s.Whole() || b.ID <= 0 {
		return time.Time{}, false
	}
	parent := filepath.Dir(b.Dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return time.Time{}, false
	}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || id <= 0 || id == b.ID || collection.BatchName(id) != e.Name() {
			continue
		}
		other := &collection.Batch{ID: id, Dir: filepath.Join(parent, e.Name())}
		if id > b.ID && other.Done(collection.StageHarvested) {
			return time.Time{}, false
		}
		if writing, err := filepath.Glob(filepath.Join(other.Dir, collection.HarvestDir+"*"+collection.PartialSuffix)); err != nil || len(writing) > 0 {
			return time.Time{}, false
		}
	}
	var quiet time.Time
	for _, dir := range dirs {
		var sum struct {
			Finished time.Time `json:"finished"`
			Shard    string    `json:"shard"`
			Holds    bool      `json:"holds"`
		}
		prev := &collection.Batch{Dir: filepath.Dir(dir)}
		if err := prev.Summary(collection.StageHarvested, &sum); err != nil || !sum.Holds || sum.Shard != "" || sum.Finished.IsZero() {
			return time.Time{}, false
		}
		if sum.Finished.After(quiet) {
			quiet = sum.Finished
		}
	}
	return quiet, true
}
