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
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// previousHarvest returns the harvest directory of the batch harvested
// before b: the newest sibling batch directory (NNNNNN, a smaller id) that
// is marked harvested. With overlapping cycles the seeder may not have
// taken that batch in yet when b is harvested, so graph.db, and the
// manager's sidecars of b, do not know what it left; the harvester reads
// it itself. "" when there is none (the first batch, a bare batch
// directory without siblings).
func previousHarvest(b *collection.Batch) string {
	if b.ID <= 1 {
		return ""
	}
	parent := filepath.Dir(b.Dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return ""
	}
	// Newest first: the search stops at the first batch harvested, so a
	// collection of thousands of batches costs one marker look-up or two.
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		id, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || id <= 0 || id >= b.ID || collection.BatchName(id) != e.Name() {
			continue
		}
		prev := &collection.Batch{ID: id, Dir: filepath.Join(parent, e.Name())}
		if prev.Done(collection.StageHarvested) {
			return filepath.Join(prev.Dir, collection.HarvestDir)
		}
	}
	return ""
}

// carryOver takes from the previous harvest (its harvest/ directory) what
// the next one must respect or may reuse (docs/harvester.md, "From one
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
func (h *harvest) carryOver(dir string, entries []batch.Entry, now time.Time) {
	if dir == "" {
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
	servers, err := fetchlog.ReadServers(filepath.Join(dir, fetchlog.ServersFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		h.log.Warn("previous harvest's servers.jsonl read up to a bad line", "dir", dir, "err", err, "kept", len(servers))
	}
	later := 0
	for _, l := range servers {
		host := strings.ToLower(l.Host)
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
	reused := 0
	if maxAge > 0 {
		lines, err := fetchlog.ReadRobots(filepath.Join(dir, fetchlog.RobotsFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			h.log.Warn("previous harvest's robots.jsonl read up to a bad line", "dir", dir, "err", err, "kept", len(lines))
		}
		for _, l := range lines {
			definite := l.Err == "" && (l.Status >= 200 && l.Status < 300 || l.Status >= 400 && l.Status < 500 && l.Status != 429)
			if _, known := h.known[l.Site]; known || !sites[l.Site] || !definite || now.Sub(l.Fetched) >= maxAge {
				continue
			}
			h.known[l.Site] = l
			reused++
		}
	}
	h.log.Info("carried over from the previous harvest", "dir", dir, "hosts_not_yet", later, "robots", reused)
}
