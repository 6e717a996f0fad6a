package seeder

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Rejection reasons of the seeder itself, next to those of urlnorm
// (unparsable, scheme, too-long, no-host, bad-host, bad-port) and scope
// (ip-host, out-of-scope, extension, excluded, not-included).
const (
	// ReasonSiteCap: the URL's site already holds scope.max_pages_per_site
	// URLs.
	ReasonSiteCap = "site-cap"
	// ReasonNoFollow: a new URL seen only through a nofollow link.
	ReasonNoFollow = "nofollow"
	// ReasonTooDeep: a new URL deeper than the manager would ever
	// schedule (manager.max_depth_static, or manager.max_depth_dynamic
	// for URLs with a query).
	ReasonTooDeep = "too-deep"
	// ReasonBudget: a new URL over seeder.frontier_budget, forgotten
	// (seeder.frontier_overflow = "drop").
	ReasonBudget = "frontier-budget"
)

// Anchor texts kept per document (representational quality).
const (
	MaxAnchors     = 5
	MaxAnchorBytes = 100
)

// ExcludedRobots is the Reason of documents that robots.txt forbids.
const ExcludedRobots = "robots"

// intake is the part of a graph.db transaction that takes URLs in: it
// normalises them, checks the scope, caches the sites it has seen,
// applies their stored robots.txt rules and the frontier limits, and
// writes the links it parks. One intake lives for one transaction.
type intake struct {
	resolver
	tx       *linkgraph.Tx
	token    string
	cap      int
	maxDepth [2]int // static, dynamic
	batch    int
	frontier config.Seeder
	parkDir  string
	sites    map[string]*siteEntry
	byID     map[uint64]*siteEntry
	counts   intakeCounts

	park    *parkWriter // open park file, created on the first parked link
	parkSeq uint64

	// part is the collection's partition of the web (crawl.partition);
	// outs are the open exchange files, by destination partition
	// (exchange.go), created on the first line for it.
	part partition.Partition
	outs map[int]*exchangeWriter
	// remote counts the transaction's page links to other partitions'
	// sites, by source site id and target site key (the cross-partition
	// part of the site graph, linkgraph's sitelinks_remote).
	remote map[uint64]map[string]uint32

	// known is set while the URLs given to create are known to be new
	// (looked up in a snapshot from before the transaction and in
	// CreatedURL): create then skips its own lookup.
	known bool

	// decorate, if set, completes each new URL's record before it is
	// added (sitemaps: the source, the sitemap flag).
	decorate func(u string, d *linkgraph.Doc)

	// Reused by create for each new URL's record.
	doc    linkgraph.Doc
	anchor [1]string
}

// intakeCounts are the counters an intake keeps.
type intakeCounts struct {
	newURLs     int
	newSites    int
	newExcluded int
	parked      int
	sent        int // links and URLs written for other partitions
	located     int // new URLs routed by the address the locator found
	rejected    map[string]int
}

// siteEntry is a cached site record.
type siteEntry struct {
	rec   *linkgraph.Site
	dirty bool
	rules *robots.Rules // parsed lazily from rec.RobotsBody
}

// newIntake starts taking URLs into tx; parked links go to park files in
// parkDir (COLLECTION/frontier).
func newIntake(tx *linkgraph.Tx, cfg config.Config, batch int, res resolver, parkDir string) *intake {
	return &intake{
		tx:       tx,
		resolver: res,
		token:    cfg.Crawl.ProductToken,
		cap:      cfg.Scope.MaxPagesPerSite,
		maxDepth: [2]int{cfg.Manager.MaxDepthStatic, cfg.Manager.MaxDepthDynamic},
		batch:    batch,
		frontier: cfg.Seeder,
		parkDir:  parkDir,
		part:     cfg.Crawl.PartitionOf(),
		sites:    map[string]*siteEntry{},
		byID:     map[uint64]*siteEntry{},
		counts:   intakeCounts{rejected: map[string]int{}},
	}
}

// reasonOf names the reason of a urlnorm or scope rejection.
func reasonOf(err error) string {
	if r := urlnorm.ReasonOf(err); r != "" {
		return string(r)
	}
	if r := scope.ReasonOf(err); r != "" {
		return string(r)
	}
	return "unparsable"
}

// rejection is a URL kept out of the crawl, with its reason.
type rejection struct {
	reason string
	err    error
}

func (r *rejection) Error() string {
	if r.err != nil {
		return r.err.Error()
	}
	return r.reason
}

// resolver normalises URLs and checks them against the scope. It needs
// no database and is safe for concurrent use.
type resolver struct {
	norm  *urlnorm.Normalizer
	scope *scope.Scope
	// loc, when not nil, looks up the names of new sites of a
	// partitioned collection (locate.go): prepare starts the lookups,
	// route waits for them.
	loc *locator
}

func newResolver(cfg config.Config) (resolver, error) {
	sc, err := scope.Compile(cfg.Scope)
	if err != nil {
		return resolver{}, err
	}
	return resolver{norm: cfg.Scope.Normalizer(), scope: sc}, nil
}

// resolve normalises raw and checks it against the scope.
func (r resolver) resolve(raw string) (string, *rejection) {
	u, err := r.norm.Normalize(raw)
	if err == nil {
		err = r.scope.Check(u)
	}
	if err != nil {
		return "", &rejection{reason: reasonOf(err), err: err}
	}
	return u, nil
}

// reject counts a rejection.
func (in *intake) reject(r *rejection) { in.counts.rejected[r.reason]++ }

// site returns the cached record of a site key, creating the site if
// create is set and it is new; nil if it does not exist and create is not
// set.
func (in *intake) site(key string, create bool) (*siteEntry, error) {
	if s, ok := in.sites[key]; ok {
		return s, nil
	}
	id, ok := in.tx.SiteID(key)
	if !ok {
		if !create {
			return nil, nil
		}
		var err error
		if id, _, err = in.tx.AddSite(key); err != nil {
			return nil, err
		}
		in.counts.newSites++
	}
	rec, err := in.tx.Site(id)
	if err != nil {
		return nil, err
	}
	s := &siteEntry{rec: rec}
	// key may be a substring of a long URL (urlnorm.SiteKey): keep a copy.
	in.sites[strings.Clone(key)] = s
	in.byID[id] = s
	return s, nil
}

// siteOf returns the site id of a URL that graph.db knows.
func (in *intake) siteOf(u string) (uint64, error) {
	s, err := in.site(urlnorm.SiteKey(u), false)
	if err != nil {
		return 0, err
	}
	if s == nil {
		return 0, fmt.Errorf("url %s is known but its site %s is not", u, urlnorm.SiteKey(u))
	}
	return s.rec.ID, nil
}

// rules returns the site's known robots.txt rules: those of the body of
// its last 2xx robots.txt, or allow-all when there is none (never
// fetched, 3xx, 4xx or an empty file).
func (in *intake) rules(s *siteEntry) *robots.Rules {
	if s.rules == nil {
		s.rules = knownRules(s.rec.RobotsBody, in.token)
	}
	return s.rules
}

// allowed tells whether the site's known rules allow u (without parsing
// u when the site has no rules).
func (in *intake) allowed(s *siteEntry, u string) bool {
	return s.rec.RobotsBody == "" || in.rules(s).Allowed(u)
}

func knownRules(body, token string) *robots.Rules {
	if body == "" {
		return robots.AllowAll()
	}
	return robots.Parse([]byte(body), token)
}

// screen tells whether a new URL at depth may be taken in now, without
// creating anything: it is refused when it is deeper than the manager's
// depth limit or when its site is full. It also says whether the site's
// known robots.txt rules forbid it (such URLs are taken in as excluded
// and never enter the frontier).
func (in *intake) screen(u string, depth int) (forbidden bool, rej *rejection, err error) {
	limit := in.maxDepth[0]
	if urlnorm.IsDynamic(u) {
		limit = in.maxDepth[1]
	}
	if depth > limit {
		return false, &rejection{reason: ReasonTooDeep, err: fmt.Errorf("url %s at depth %d, limit %d", u, depth, limit)}, nil
	}
	s, err := in.site(urlnorm.SiteKey(u), false)
	if err != nil || s == nil {
		return false, nil, err
	}
	if in.cap > 0 && s.rec.Pages >= in.cap {
		return false, &rejection{reason: ReasonSiteCap, err: fmt.Errorf("site %s already has %d urls (scope.max_pages_per_site)", s.rec.Key, s.rec.Pages)}, nil
	}
	return !in.allowed(s, u), nil, nil
}

// create gives the new, normalised, in-scope URL u an id, with depth
// depth, found = the intake's batch and anchor (if any) as its first
// anchor text; it is pending, or excluded if its site's known robots
// rules forbid it. It counts against its site's cap: a full site refuses
// it. site is the site id.
func (in *intake) create(u string, depth int, anchor string) (id, site uint64, rej *rejection, err error) {
	s, err := in.site(urlnorm.SiteKey(u), true)
	if err != nil {
		return 0, 0, nil, err
	}
	if in.cap > 0 && s.rec.Pages >= in.cap {
		return 0, 0, &rejection{reason: ReasonSiteCap, err: fmt.Errorf("site %s already has %d urls (scope.max_pages_per_site)", s.rec.Key, s.rec.Pages)}, nil
	}
	// The record is encoded when added: one Doc serves every new URL.
	d := &in.doc
	*d = linkgraph.Doc{Site: s.rec.ID, Depth: depth, State: linkgraph.StatePending, Found: in.batch}
	if anchor != "" {
		in.anchor[0] = anchor
		d.Anchors = in.anchor[:]
	}
	excluded := !in.allowed(s, u)
	if excluded {
		d.State, d.Reason = linkgraph.StateExcluded, ExcludedRobots
	}
	if in.decorate != nil {
		in.decorate(u, d)
	}
	add := in.tx.AddURLDoc
	if in.known {
		add = in.tx.AddNewURLDoc
	}
	id, created, err := add(u, d)
	if err != nil {
		return 0, 0, nil, err
	}
	if !created {
		return id, s.rec.ID, nil, nil
	}
	s.rec.Pages++
	s.dirty = true
	in.counts.newURLs++
	if excluded {
		in.counts.newExcluded++
	}
	return id, s.rec.ID, nil, nil
}

// take makes sure the normalised, in-scope URL u has an id, as a seed: a
// new URL gets depth depth (subject to the site cap, not to the frontier
// limits). With follow false a new URL is not created (nofollow links).
// It returns the id, whether the URL was created, and the rejection if it
// was refused.
func (in *intake) take(u string, depth int, follow bool) (uint64, bool, *rejection, error) {
	if id, ok := in.tx.LookupURL(u); ok {
		return id, false, nil, nil
	}
	if !follow {
		return 0, false, &rejection{reason: ReasonNoFollow}, nil
	}
	id, _, rej, err := in.create(u, depth, "")
	return id, rej == nil && err == nil, rej, err
}

// budgetFull tells whether the frontier has reached seeder.frontier_budget.
func (in *intake) budgetFull() (bool, error) {
	if in.frontier.FrontierBudget <= 0 {
		return false, nil
	}
	n, err := in.tx.FrontierSize()
	return n >= uint64(in.frontier.FrontierBudget), err
}

// parkLink writes a link to the transaction's park file, creating the
// file on first use.
func (in *intake) parkLink(l parkedLink) error {
	if in.park == nil {
		in.parkSeq = in.tx.NewParkSeq()
		w, err := createPark(in.parkDir, in.parkSeq)
		if err != nil {
			return err
		}
		in.park = w
	}
	in.counts.parked++
	return in.park.Write(l)
}

// finishPark publishes the park file, if any, and records it in graph.db
// (the record commits with the transaction; a file without a record is
// removed by the next run). batch is the batch whose links it holds.
func (in *intake) finishPark(batch int) error {
	if in.park == nil {
		return nil
	}
	if err := in.park.Commit(); err != nil {
		return err
	}
	return in.tx.PutParked(linkgraph.Parked{Seq: in.parkSeq, File: parkName(in.parkSeq), Batch: batch, Links: in.park.n, Created: time.Now().UTC()})
}

// abortPark discards an unpublished park file.
func (in *intake) abortPark() {
	if in.park != nil {
		in.park.Abort()
	}
}

// flushSites writes the site records changed during the transaction.
func (in *intake) flushSites() error {
	keys := make([]uint64, 0, len(in.byID))
	for id, s := range in.byID {
		if s.dirty {
			keys = append(keys, id)
		}
	}
	slices.Sort(keys)
	for _, id := range keys {
		if err := in.tx.PutSite(in.byID[id].rec); err != nil {
			return err
		}
		in.byID[id].dirty = false
	}
	return nil
}

// targetUpdate is what one link of a batch proposes for its target: a
// depth through the link and an anchor text. Proposals are logged while
// the batch is read and applied grouped by target at the end, so each
// target's record is decoded once, not once per in-link; a log grouped
// once by a counting sort on the target id costs less than a map updated
// for every link of the batch.
type targetUpdate struct {
	id     uint32
	depth  int32     // -1: none
	anchor anchorRef // cleaned, in the log's texts; 0: none
}

// anchorBlock is the size of the blocks of an anchorArena.
const anchorBlock = 1 << 20

// An anchor text's length fits in the low byte of an anchorRef.
const _ = uint8(MaxAnchorBytes)

// anchorArena holds the anchor texts of a log of proposals, copied out of
// the parsed records' lines (which a substring would keep alive) into
// blocks without pointers: the GC does not scan them, and a batch's
// million texts are not a million allocations. Blocks never move.
type anchorArena struct {
	blocks [][]byte
}

// anchorRef locates a text in an anchorArena: its block << 28 | its
// offset in the block << 8 | its length; 0 is no text.
type anchorRef uint64

// add copies s (a cleaned anchor text, at most MaxAnchorBytes) into the
// arena.
func (a *anchorArena) add(s string) anchorRef {
	if s == "" {
		return 0
	}
	last := len(a.blocks) - 1
	if last < 0 || len(a.blocks[last])+len(s) > anchorBlock {
		a.blocks = append(a.blocks, make([]byte, 0, anchorBlock))
		last++
	}
	off := len(a.blocks[last])
	a.blocks[last] = append(a.blocks[last], s...)
	return anchorRef(uint64(last)<<28 | uint64(off)<<8 | uint64(len(s)))
}

// text is the text of r, sharing the arena's memory.
func (a *anchorArena) text(r anchorRef) string {
	if r == 0 {
		return ""
	}
	b := a.blocks[r>>28]
	return unsafe.String(&b[int(r>>8)&(anchorBlock-1)], int(r&0xff))
}

// updateBlock is the number of proposals per block of the log: the log
// grows by blocks, never copying what it holds.
const updateBlock = 1 << 14

// targetUpdates is the log of proposals, in the order they were made
// (anchors are kept first found first).
type targetUpdates struct {
	blocks [][]targetUpdate
	n      int
	maxID  uint32
	text   anchorArena // the proposals' anchor texts
}

func (m *targetUpdates) add(u targetUpdate) {
	if len(m.blocks) == 0 || len(m.blocks[len(m.blocks)-1]) == updateBlock {
		m.blocks = append(m.blocks, make([]targetUpdate, 0, updateBlock))
	}
	last := &m.blocks[len(m.blocks)-1]
	*last = append(*last, u)
	m.n++
	m.maxID = max(m.maxID, u.id)
}

// propose records a link to a known target: its depth through the link,
// and its anchor text (if any).
func (m *targetUpdates) propose(id uint64, depth int, anchor string) {
	m.add(targetUpdate{id: uint32(id), depth: int32(depth), anchor: m.text.add(cleanAnchor(anchor))})
}

// proposeDepth records a depth for a target.
func (m *targetUpdates) proposeDepth(id uint64, depth int) {
	m.add(targetUpdate{id: uint32(id), depth: int32(depth)})
}

// addAnchor records an anchor text for a target.
func (m *targetUpdates) addAnchor(id uint64, text string) {
	if r := m.text.add(cleanAnchor(text)); r != 0 {
		m.add(targetUpdate{id: uint32(id), depth: -1, anchor: r})
	}
}

// grouped returns the log grouped by target id, in id order, each
// target's proposals in the order they were made, and empties the log
// but for its anchor texts (m.text), which the proposals refer to. A
// batch's log is about as long as the graph has ids (which are dense):
// a counting sort; a short log (a release of a few parked links) is
// sorted.
func (m *targetUpdates) grouped() []targetUpdate {
	if uint64(m.maxID) > 4*uint64(m.n)+1024 {
		out := make([]targetUpdate, 0, m.n)
		for _, b := range m.blocks {
			out = append(out, b...)
		}
		*m = targetUpdates{text: m.text}
		slices.SortStableFunc(out, func(a, b targetUpdate) int { return cmp.Compare(a.id, b.id) })
		return out
	}
	start := make([]int, int(m.maxID)+2)
	for _, b := range m.blocks {
		for _, u := range b {
			start[u.id+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := make([]targetUpdate, m.n)
	for i, b := range m.blocks {
		for _, u := range b {
			out[start[u.id]] = u
			start[u.id]++
		}
		m.blocks[i] = nil // the proposals' memory goes as soon as it is copied
	}
	*m = targetUpdates{text: m.text}
	return out
}

// cleanAnchor collapses white space and cuts the text at MaxAnchorBytes on
// a character boundary.
func cleanAnchor(s string) string {
	if clean(s) {
		return s
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxAnchorBytes {
		return s
	}
	cut := MaxAnchorBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut])
}

// clean tells whether cleanAnchor would return s unchanged: at most
// MaxAnchorBytes, and white space only as single ASCII spaces between
// words (FuzzCleanAnchor checks it against the slow path).
func clean(s string) bool {
	if len(s) > MaxAnchorBytes {
		return false
	}
	prevSpace := true // a leading space is not clean
	for _, r := range s {
		switch {
		case r == ' ':
			if prevSpace {
				return false
			}
			prevSpace = true
		case r < 0x80 && r > ' ' && r != 0x7f:
			prevSpace = false
		case r >= 0x80 && !unicode.IsSpace(r) && r != utf8.RuneError:
			prevSpace = false
		default:
			return false
		}
	}
	return !prevSpace || s == ""
}

// apply writes the logged updates, in id order. A depth only ever
// decreases; anchors are merged with the stored ones, the stored first,
// then in the order the batch found them, at most MaxAnchors distinct.
func (m *targetUpdates) apply(tx *linkgraph.Tx) (int, error) {
	log := m.grouped()
	text := m.text
	m.text = anchorArena{}
	var ids []uint64
	var starts []int // group i is log[starts[i]:starts[i+1]]
	for i, u := range log {
		if i == 0 || u.id != log[i-1].id {
			ids = append(ids, uint64(u.id))
			starts = append(starts, i)
		}
	}
	starts = append(starts, len(log))
	// The targets' records are decoded, merged and encoded on every core.
	return tx.UpdateDocs(ids, func(i int, d *linkgraph.Doc) bool {
		dirty := false
		for _, u := range log[starts[i]:starts[i+1]] {
			if u.depth >= 0 && int(u.depth) < d.Depth {
				d.Depth = int(u.depth)
				dirty = true
			}
			if u.anchor != 0 && len(d.Anchors) < MaxAnchors {
				// The text shares the arena's memory, which outlives
				// UpdateDocs (d is encoded before it returns).
				if a := text.text(u.anchor); !slices.Contains(d.Anchors, a) {
					d.Anchors = append(d.Anchors, a)
					dirty = true
				}
			}
		}
		return dirty
	})
}

// route returns the partition a new, normalised URL u belongs to, 0 when
// it is this collection's (always, for the whole web): a site graph.db
// knows is this collection's unless it was handed over (Site.Partition);
// a site it does not know goes by its server's address when the locator
// finds it (crawl.partition_lookup, locate.go), else by its registrable
// domain (partition.OfName) until a harvester resolves its name.
func (in *intake) route(u string) (int, error) {
	if in.part.Whole() {
		return 0, nil
	}
	s, err := in.site(urlnorm.SiteKey(u), false)
	if err != nil {
		return 0, err
	}
	if s != nil {
		if s.rec.Partition != 0 && s.rec.Partition != in.part.I {
			return s.rec.Partition, nil
		}
		return 0, nil
	}
	host := urlnorm.Host(u)
	to := in.part.OfName(host)
	if ip, ok := in.loc.addr(host); ok {
		to = in.part.OfAddress(ip)
		in.counts.located++
	}
	if to != in.part.I {
		return to, nil
	}
	return 0, nil
}

// send writes a line for partition to into the transaction's exchange
// file for it, creating the file on first use.
func (in *intake) send(to int, l exchangeLine) error {
	w := in.outs[to]
	if w == nil {
		if in.outs == nil {
			in.outs = map[int]*exchangeWriter{}
		}
		var err error
		if w, err = createExchange(filepath.Dir(in.parkDir), in.part, to, in.tx.NewExchangeSeq()); err != nil {
			return err
		}
		in.outs[to] = w
	}
	in.counts.sent++
	return w.Write(l)
}

// remoteLink counts a page link from site src to the site of url u, a
// site of another partition.
func (in *intake) remoteLink(src uint64, u string) {
	if in.remote == nil {
		in.remote = map[uint64]map[string]uint32{}
	}
	m := in.remote[src]
	if m == nil {
		m = map[string]uint32{}
		in.remote[src] = m
	}
	m[urlnorm.SiteKey(u)]++
}

// finishExchange commits the transaction's exchange files into their
// pending directories and records their numbers in graph.db (the
// record commits with the transaction; publishExchange moves them to
// their published names once it has), with the links to other
// partitions' sites the transaction counted and what it sent to each.
func (in *intake) finishExchange() error {
	for _, src := range slices.Sorted(maps.Keys(in.remote)) {
		if err := in.tx.AddRemoteSiteLinks(src, in.remote[src]); err != nil {
			return err
		}
	}
	in.remote = nil
	if len(in.outs) == 0 {
		return nil
	}
	seqs, err := in.tx.ExchangeOut()
	if err != nil {
		return err
	}
	stats, err := in.tx.ExchangeStats()
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for _, to := range slices.Sorted(maps.Keys(in.outs)) {
		w := in.outs[to]
		if err := w.Commit(); err != nil {
			return err
		}
		seqs = append(seqs, w.seq)
		st := stats[to]
		if st == nil {
			st = &linkgraph.ExchangePeer{}
			stats[to] = st
		}
		size := int64(0)
		if fi, err := os.Stat(w.path); err == nil {
			size = fi.Size()
		}
		st.Sent.Files++
		st.Sent.Lines += int64(w.n)
		st.Sent.Bytes += size
		st.LastSent = linkgraph.ExchangeCount{Files: 1, Lines: int64(w.n), Bytes: size, At: now}
	}
	in.outs = nil
	if err := in.tx.PutExchangeStats(stats); err != nil {
		return err
	}
	return in.tx.PutExchangeOut(seqs)
}

// abortExchange discards the exchange files not committed.
func (in *intake) abortExchange() {
	for _, w := range in.outs {
		w.Abort()
	}
	in.outs = nil
}
