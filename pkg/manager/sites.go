package manager

import (
	"fmt"
	"math"
	"time"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// siteInfo is what a plan reads of one site record (about 64 bytes):
// the passes that need a site — mirrors, streaming sites, the revisit
// policy's politeness room, batch_duration's budget — take it from here
// instead of decoding the record again each (docs/manager.md,
// "Incremental planning": at a million pages and 75,000 sites, four
// passes of random lookups and JSON decoding were a tenth of a run).
type siteInfo struct {
	unit     string        // its politeness unit (unitOf)
	ip       string        // the address the harvester last dialled for it
	response time.Duration // the harvester's measured response time, if measured
	// robots is the part of the record storedCrawlDelay reads, kept
	// only for a site whose robots.txt mentions Crawl-delay (few do).
	robots    *linkgraph.Site
	streaming *linkgraph.Streaming // set while the site is flagged as streaming
	measured  bool                 // response was measured (measuredResponse)
	mirror    bool                 // it mirrors another site (MirrorOf ≠ 0)
	// robotsFresh tells whether its stored robots.txt goes into the
	// batch's robots.jsonl (robotsCopy at the plan's time).
	robotsFresh bool
	read        bool // a record was read
}

// planSites is every site record of graph.db as a plan needs it, read
// in one pass (readSites), indexed by site id.
type planSites struct {
	info []siteInfo
}

// readSites reads every site record once, in id order (a sequential
// scan of the sites bucket): what the plan's passes need of each
// (siteInfo), at time now with robots.txt copies kept for maxAge, and the
// sites whose dates the estimator must not read
// (linkgraph.Validators.Trusted; nil when there are none).
func readSites(tx *linkgraph.Tx, now time.Time, maxAge time.Duration) (*planSites, *siteSet, error) {
	ps := &planSites{}
	// Site ids are counted out from 1 (linkgraph), so the last one
	// sizes the table; the reserve is capped so that a damaged counter
	// cannot reserve more than 16 M sites' worth.
	ps.info = make([]siteInfo, 0, min(tx.LastSiteID(), 1<<24)+1)
	var untrusted *siteSet
	err := tx.ForEachSite(func(s *linkgraph.Site) error {
		if !s.Validators.Trusted() {
			if untrusted == nil {
				untrusted = &siteSet{ids: map[uint64]bool{}}
			}
			untrusted.ids[s.ID] = true
		}
		if s.ID > math.MaxUint32 {
			return nil // no document of the view can be on it (checkIDs)
		}
		for uint64(len(ps.info)) <= s.ID {
			ps.info = append(ps.info, siteInfo{})
		}
		si := &ps.info[s.ID]
		si.read = true
		si.unit, si.ip = unitOf(s), s.IP
		si.response, si.measured = measuredResponse(s)
		if !s.RobotsFetched.IsZero() && containsFold(s.RobotsBody, "crawl-delay") {
			si.robots = &linkgraph.Site{RobotsStatus: s.RobotsStatus, RobotsBody: s.RobotsBody, RobotsErr: s.RobotsErr, RobotsFetched: s.RobotsFetched}
		}
		si.streaming = s.Streaming
		si.mirror = s.MirrorOf != 0
		_, si.robotsFresh = robotsCopy(s, now, maxAge)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("site records: %w", err)
	}
	return ps, untrusted, nil
}

// site returns what the plan read of site id, an error wrapping
// linkgraph.ErrNotFound if graph.db has no record of it.
func (ps *planSites) site(id uint32) (*siteInfo, error) {
	if int(id) >= len(ps.info) || !ps.info[id].read {
		return nil, fmt.Errorf("site %d: %w", id, linkgraph.ErrNotFound)
	}
	return &ps.info[id], nil
}

// crawlDelay is storedCrawlDelay of the site for the product token.
func (si *siteInfo) crawlDelay(token string) time.Duration {
	if si.robots == nil {
		return 0
	}
	return storedCrawlDelay(si.robots, token)
}
