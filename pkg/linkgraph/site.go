package linkgraph

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Site is what the crawl knows of one site (scheme, host and port).
type Site struct {
	ID            uint64    `json:"id"`
	Key           string    `json:"key"` // scheme://host[:port]
	Pages         int       `json:"pages"`
	RobotsStatus  int       `json:"robotsStatus,omitempty"`
	RobotsBody    string    `json:"robotsBody,omitempty"`
	RobotsErr     string    `json:"robotsErr,omitempty"`
	RobotsFetched time.Time `json:"robotsFetched,omitzero"`
	// Server estimates measured by the harvester (Cao et al.: EWMA with
	// alpha 0.8), kept so the next batch can rank servers from the start.
	ConnectMs       float64   `json:"connectMs,omitempty"`
	ResponseMs      float64   `json:"responseMs,omitempty"`
	RequestsPerConn float64   `json:"requestsPerConn,omitempty"`
	EstimatesAt     time.Time `json:"estimatesAt,omitzero"`
	// IP is the address the harvester last dialled for the site's host
	// (servers.jsonl): with the registrable domain it names the
	// politeness unit the manager budgets a batch's time by.
	IP string `json:"ip,omitempty"`
	// Streak is its host's count of page responses in a row cut at the
	// body cap or by a time limit, as the last harvest of the site left
	// it (servers.jsonl); the manager gives it to the next batch's
	// harvester, which counts on from it.
	Streak int `json:"streak,omitempty"`
	// Streaming is set while the site is flagged as streaming: a harvest
	// gave its host up because Streak reached harvester.max_streaming.
	// The seeder clears it when a harvest gets a whole response from the
	// host again (Streak below max_streaming).
	Streaming *Streaming `json:"streaming,omitempty"`
	// MirrorOf is the id of the site this one mirrors: in the last batch
	// that fetched at least 3 of its pages with text, half or more of them
	// were near-duplicates of pages of that site (docs/seeder.md,
	// "Near-duplicates"); 0 for none. The manager lowers the value of a
	// mirror's pages, fetched or not.
	MirrorOf uint64 `json:"mirrorOf,omitempty"`
	// Upgrade is, for an http site whose pages redirect permanently (301
	// or 308) to the same URL on https, that https site's key: the
	// seeder writes the site's new links on it (docs/seeder.md). A page
	// of the site answered without such a redirect clears it.
	Upgrade string `json:"upgrade,omitempty"`
	// Partition is, in a collection that is one partition of a web split
	// over K (crawl.partition), the partition the site was handed over
	// to: its server's address belongs there. 0: this collection's.
	Partition int `json:"partition,omitempty"`
	// Validators counts, over the site's revisits that brought a text,
	// how often its dates (Last-Modified, a sitemap's lastmod) and the
	// text hash agreed on whether the page had changed since the last
	// visit (docs/seeder.md, "Validators the site can be trusted with");
	// nil until a revisit could check one.
	Validators *Validators `json:"validators,omitempty"`
}

// Validators is the seeder's check of a site's dates against the text
// hash: a date after the last visit says the page changed, one before it
// that it did not; the hash says whether it did.
type Validators struct {
	// Agree counts the dates that said what the hash said.
	Agree int `json:"agree,omitempty"`
	// Disagree counts those that did not: Last-Modified after the last
	// visit (or the time of the request, as a server that lies sends it)
	// on a text the hash says is unchanged, or a changed text with a
	// date before the last visit.
	Disagree int `json:"disagree,omitempty"`
}

// Validator trust: a site's dates are untrusted once at least
// UntrustedMin of the checks disagreed and they are more than
// 1/UntrustedShare of all checks. The counts are halved whenever they add
// up to ValidatorWindow, so that old checks weigh less and a site that
// mends its server is trusted again.
const (
	UntrustedMin    = 3
	UntrustedShare  = 4
	ValidatorWindow = 256
)

// Trusted tells whether the manager's estimator may read the site's
// dates: true until the checks show them wrong (see UntrustedMin); a
// nil record (nothing checked yet) is trusted.
func (v *Validators) Trusted() bool {
	return v == nil || v.Disagree < UntrustedMin || v.Disagree*UntrustedShare <= v.Agree+v.Disagree
}

// Add counts one check (agree: the date and the hash said the same),
// halving both counts once they add up to ValidatorWindow.
func (v *Validators) Add(agree bool) {
	if agree {
		v.Agree++
	} else {
		v.Disagree++
	}
	if v.Agree+v.Disagree >= ValidatorWindow {
		v.Agree, v.Disagree = v.Agree/2, v.Disagree/2
	}
}

// Streaming is what graph.db keeps of a site flagged as streaming: when it
// was flagged and its probes since, from which the manager tells when to
// try it again (docs/manager.md, "Streaming sites").
type Streaming struct {
	// Since is the batch whose harvest gave the host up as streaming.
	Since int `json:"since"`
	// Last is the last batch whose harvest cut a response of the host
	// (Since, or the batch of the last probe).
	Last int `json:"last"`
	// At is when the harvest of batch Last measured the host (its
	// servers.jsonl line), from which later probes are timed.
	At time.Time `json:"at,omitzero"`
	// Probes counts the probes cut since Since.
	Probes int `json:"probes,omitempty"`
	// Reason is the harvester's reason ("streaming: 3 responses in a row
	// cut (last: body cap 2097152 bytes)"), as of Last.
	Reason string `json:"reason,omitempty"`
}

// SiteID returns the id of a site key.
func (t *Tx) SiteID(key string) (uint64, bool) {
	if id, ok := t.newSites[key]; ok {
		return id, true
	}
	v := t.tx.Bucket(bucketSites).Get([]byte(key))
	if v == nil {
		return 0, false
	}
	return getU64(v), true
}

// ForEachSiteKey calls fn with every site key and its id, in key order,
// without reading the site records (sites added in this transaction and
// not flushed yet are not seen).
func (t *Tx) ForEachSiteKey(fn func(key []byte, id uint64) error) error {
	return t.tx.Bucket(bucketSites).ForEach(func(k, v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("site key %q: %w: id of %d bytes", k, ErrCorrupt, len(v))
		}
		return fn(k, getU64(v))
	})
}

// AddSite gives a new site key an id; for a known key it returns the
// existing id.
func (t *Tx) AddSite(key string) (id uint64, created bool, err error) {
	if id, ok := t.SiteID(key); ok {
		return id, false, nil
	}
	id = t.counter(keyNextSite) + 1
	if id > 1<<32-1 {
		return 0, false, fmt.Errorf("add site %s: %w", key, ErrTooManyDocs)
	}
	t.next(keyNextSite)
	if t.newSites == nil {
		t.newSites = map[string]uint64{}
	}
	t.newSites[strings.Clone(key)] = id // written in key order at the end (flushNew)
	return id, true, t.PutSite(&Site{ID: id, Key: key})
}

// LastSiteID is the largest site id given so far.
func (t *Tx) LastSiteID() uint64 { return t.counter(keyNextSite) }

// Site reads a site record.
func (t *Tx) Site(id uint64) (*Site, error) {
	v := t.tx.Bucket(bucketSiteRec).Get(u64(id))
	if v == nil {
		return nil, fmt.Errorf("site %d: %w", id, ErrNotFound)
	}
	var s Site
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("site %d: %w: %w", id, ErrCorrupt, err)
	}
	return &s, nil
}

// PutSite writes a site record.
func (t *Tx) PutSite(s *Site) error {
	v, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("put site %d: %w", s.ID, err)
	}
	if err := t.tx.Bucket(bucketSiteRec).Put(u64(s.ID), v); err != nil {
		return fmt.Errorf("put site %d: %w", s.ID, err)
	}
	return nil
}

// ForEachSite calls fn for every site in id order.
func (t *Tx) ForEachSite(fn func(*Site) error) error {
	return t.tx.Bucket(bucketSiteRec).ForEach(func(k, v []byte) error {
		var s Site
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("site %d: %w: %w", getU64(k), ErrCorrupt, err)
		}
		return fn(&s)
	})
}

// BatchState records what has happened to a batch in graph.db.
type BatchState struct {
	ID      int       `json:"id"`
	URLs    int       `json:"urls"`
	Managed time.Time `json:"managed,omitzero"`
	Seeded  time.Time `json:"seeded,omitzero"`
}

// Batch reads what graph.db records of a batch.
func (t *Tx) Batch(id int) (BatchState, bool, error) {
	v := t.tx.Bucket(bucketBatches).Get(u64(uint64(id)))
	if v == nil {
		return BatchState{ID: id}, false, nil
	}
	var b BatchState
	if err := json.Unmarshal(v, &b); err != nil {
		return b, false, fmt.Errorf("batch %d state: %w", id, err)
	}
	return b, true, nil
}

// PutBatch records the state of a batch.
func (t *Tx) PutBatch(b BatchState) error {
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("batch %d state: %w", b.ID, err)
	}
	return t.tx.Bucket(bucketBatches).Put(u64(uint64(b.ID)), v)
}

// DeleteBatch forgets a batch (used when the manager cancels it).
func (t *Tx) DeleteBatch(id int) error {
	return t.tx.Bucket(bucketBatches).Delete(u64(uint64(id)))
}
