package harvester

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Fetch log error texts of URLs that were not requested.
const (
	ErrRobots = "robots"       // disallowed by robots.txt
	ErrGaveUp = "host-gave-up" // the host failed too often, asked for too long a pause or only streams
	// ErrDeferred starts the line of a URL the harvester did not request
	// because it ended the batch (its deadline, or its straggling tail):
	// "deferred: tail", "deferred: deadline" or "deferred: waits". The seeder gives such a
	// URL back to the frontier as it was, with no failure counted.
	ErrDeferred = "deferred"
	// ErrMIME starts the error of a response whose body was not
	// downloaded because its media type is not in harvester.accept_mime
	// (the response, headers only, is stored).
	ErrMIME = "mime"
	// ErrStore starts the error of a response that could not be made
	// into a WARC record (warcio.BuildError), and of a site whose
	// robots.txt response could not be, which then counts as
	// unreachable.
	ErrStore = "store"
)

// GaveUpStreaming starts the reason a host was given up for when its
// page responses were cut at harvester.max_body_bytes or by a time limit
// harvester.max_streaming times in a row: "streaming: 3 responses in a
// row cut (last: body cap 2097152 bytes)". The servers file says it with
// the host's streaming field too.
const GaveUpStreaming = "streaming"

// borrowLimit bounds how long a robots.txt redirect waits for another
// host of the batch to be free before the robots.txt counts as
// unreachable.
const borrowLimit = 2 * time.Minute

// errStopped says the harvester is stopping: nothing more is started, and
// what was in flight is not logged (a resumed run fetches it).
var errStopped = errors.New("harvester stopping")

// siteRules is a site's robots.txt as the harvester obeys it.
type siteRules struct {
	rec   fetchlog.Robots
	rules *robots.Rules
}

// conn is one connection of a server: its session and what it fetched.
type conn struct {
	h      *harvest
	srv    *Server
	client *fetch.Host
	reqs   int // requests on the last connection used
	// w is the page request's place among the requests waiting for the
	// address's floor (hostTable.want), nil when none.
	w *waiter
}

// serve gives srv its turn on a connection: robots.txt where needed, then
// up to P URLs (Cao et al. §3.2, non-preemptive), and P more each time
// they are done unless a server ready for a connection ranks before it
// (turnOver), one request at a time with the host's wait between them. It returns early when the next wait
// is longer than harvester.max_idle (the connection would sit idle; the
// server goes back to the queue), when the queue is empty, and when the
// harvester stops.
func (h *harvest) serve(srv *Server) error {
	c := &conn{h: h, srv: srv, client: h.client.NewHost()}
	defer c.close()
	p := srv.P()
	served := 0 // URLs requested on this connection
	for done := 0; ; {
		if done > 0 && h.eng.olderWaits(srv, h.batch) {
			return nil // an older batch's server waits for this unit or address (follow.go)
		}
		if done >= p {
			if h.turnOver(srv) {
				return nil
			}
			done = 0
		}
		if h.startCtx.Err() != nil {
			return errStopped
		}
		if h.end.ended() {
			return nil // the batch is over: the rest is deferred
		}
		e, sq, ok := srv.next()
		if !ok {
			return nil
		}
		sr := srv.rules[sq.Site]
		if srv.gaveUp == "" && srv.dnsErr == "" && sr == nil {
			var err error
			if sr, err = c.robotsOf(sq.Site); err != nil {
				if errors.Is(err, errIdle) || errors.Is(err, errEnded) {
					return nil
				}
				return err
			}
		}
		switch {
		case srv.dnsErr != "":
			if err := h.awaitDNS(srv, sq.Site); err != nil {
				if errors.Is(err, errEnded) {
					return nil
				}
				return err
			}
			if err := h.skip(srv, e, srv.dnsErr); err != nil {
				return err
			}
		case srv.gaveUp != "":
			if err := h.skip(srv, e, ErrGaveUp+": "+srv.gaveUp); err != nil {
				return err
			}
		default:
			if denial := robotsDenial(sr.rec, sr.rules, e.URL); denial != "" {
				if err := h.skip(srv, e, denial); err != nil {
					return err
				}
				break
			}
			if g := h.gate; g != nil && served > 0 && !g.allows(e.Score, g.need(srv, h.hosts.unitCrawlDelay(srv.Host))) {
				return nil // the value clock holds the next URL back (valuegate.go)
			}
			c.w = h.hosts.want(srv.Host, h.batch, e.Score, time.Now())
			if err := c.waitTurn(); err != nil {
				c.leave()
				if errors.Is(err, errIdle) || errors.Is(err, errEnded) {
					return nil
				}
				return err
			}
			served++
			err := c.page(e)
			c.leave()
			if err != nil {
				if errors.Is(err, errHeld) {
					return nil // tried again later (outage.go)
				}
				return err
			}
			done++
		}
		srv.pop()
	}
}

// turnOver tells whether srv, having served its P URLs, gives its
// connection back: when a server ready for a connection (its turn come,
// resolved, in the scheduler's ready queue; or its lookup under way, for
// which a free connection waits: holdFor), or one parked on srv's
// address (for its connections_per_ip, or for srv's unit), ranks before
// srv would on its return to the queue, that is at least as high (a tie
// goes to the server queued first). Otherwise the scheduler would give the freed
// connection back to srv at once: the turn goes on, on the same
// connection, rather than close it to open another to the same server
// (and a big host, ranked first, keeps its connection to its end, as a
// plain client's would). Before 2026-12-07 the turn ended whenever any
// server was not done and held no connection, even one not resolved
// yet or waiting for its own turn. (In a following harvester, serve ends
// the turn sooner for an older batch's server: engine.olderWaits.)
func (h *harvest) turnOver(srv *Server) bool {
	rank := h.rank.Rank(srv)
	if top, ok := h.readyTop.get(); ok && top >= rank {
		return true
	}
	top, ok := h.parkedTop.get(srv.ip)
	return ok && top >= rank
}

// close ends the connection; if the server never closed it, it served at
// least this many requests, which raises a lower estimate.
func (c *conn) close() {
	c.client.Close()
	now := time.Now()
	for _, n := range c.client.ServerCloses() {
		c.srv.Est.observeRPC(n, now)
	}
	if c.reqs > 0 && float64(c.reqs) > c.srv.Est.RequestsPerConn {
		c.srv.Est.observeRPC(c.reqs, now)
	}
}

// leave takes the connection's page request off its address's waiters.
func (c *conn) leave() {
	c.h.hosts.leave(c.w)
	c.w = nil
}

// errIdle: the host's next turn is further away than harvester.max_idle.
var errIdle = errors.New("wait longer than max_idle")

// errEnded: the harvester ended the batch (deadline or tail) while the
// host waited for its turn.
var errEnded = errors.New("batch ended")

// waitTurn sleeps until the host may be asked again, unless that is
// further away than harvester.max_idle or the batch ends meanwhile.
func (c *conn) waitTurn() error {
	d := time.Until(c.h.hosts.notBefore(c.srv.Host))
	if d <= 0 {
		if c.h.end.ended() {
			return errEnded
		}
		return c.h.startCtx.Err()
	}
	if d > c.h.cfg.Harvester.MaxIdle.D() {
		return errIdle
	}
	if b := c.h.batchDuration; b > 0 && d > b/4 {
		// The scheduler looks again: the batch may have nothing left
		// but waits (waitsOut, which a shorter sleep cannot make true).
		c.h.hosts.wake()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		if c.h.end.ended() {
			return errEnded
		}
		return nil
	case <-c.h.end.done():
		return errEnded
	case <-c.h.startCtx.Done():
		return errStopped
	}
}

// claim returns the hook that waits, if need be, right before a request
// to host is written on its open connection (fetch.Request.BeforeSend:
// the moment the server sees it start), until the unit's turn (waitTurn
// saw to that) and the address's floor (see address.next) have come; it
// then claims the address and sets *seq to the request's number there,
// for answered. Claiming after the connection is open, not before, keeps
// a connection's set-up from eating into the floor as the server sees
// it. The wait is short: the floor, or another unit of the address that
// started first. Only stopping the harvester ends it.
func (h *harvest) claim(host string, seq *uint64, w *waiter) func() error {
	return func() error {
		for {
			ok, n, at, heard := h.hosts.start(host, time.Now(), w)
			if ok {
				*seq = n
				return nil
			}
			t := time.NewTimer(time.Until(at))
			select {
			case <-t.C:
			case <-heard:
				t.Stop()
			case <-h.startCtx.Done():
				t.Stop()
				return errStopped
			}
		}
	}
}

// politely sets the hooks of a request to host that keep the address
// floor: BeforeSend claims the address (claim, in w's place among the
// requests waiting for it; nil: none), Answered tells the politeness
// table when the answer began. The caller calls ended once the request
// is over.
func (h *harvest) politely(req *fetch.Request, host string, seq *uint64, w *waiter) {
	req.BeforeSend = h.claim(host, seq, w)
	req.Answered = func(at time.Time) {
		if !at.IsZero() {
			h.hosts.answered(host, *seq, at)
		}
	}
}

// ended tells the politeness table that a request to host ended at end:
// if no answer began, the address's floor counts from there.
func (h *harvest) ended(host string, seq uint64, end time.Time) {
	h.hosts.answered(host, seq, end)
}

// attempt is the outcome of one request: a response, an error, or both
// (a response cut short), as fetch.Host.Do returns them.
type attempt struct {
	resp       *fetch.Response
	err        error
	start, end time.Time
}

// do makes one request to the server's host over the connection and
// updates the politeness state and the estimates from the outcome. It
// fails only when the harvester is stopping: what was in flight is then
// not logged, so that a resumed run fetches it.
func (c *conn) do(req fetch.Request, site string) (attempt, error) {
	srv := c.srv
	var seq uint64
	w := c.w
	if w == nil {
		// A request of the server's own (robots.txt) waits in the
		// place of the server's best URL, which it comes before.
		w = c.h.hosts.want(hostOf(req.URL), c.h.batch, srv.Quality(), time.Now())
		defer c.h.hosts.leave(w)
	}
	c.h.politely(&req, hostOf(req.URL), &seq, w)
	a := attempt{start: time.Now()}
	a.resp, a.err = c.client.Do(c.h.fetchCtx, req)
	a.end = time.Now()
	c.h.ended(hostOf(req.URL), seq, a.end)
	if c.h.fetchCtx.Err() != nil || errors.Is(a.err, errStopped) {
		return attempt{}, errStopped
	}
	srv.requests++
	c.h.stats.requests.Add(1)
	if a.resp != nil {
		c.reqs = a.resp.ConnRequests
		if a.resp.Connect > 0 {
			srv.Est.observeConnect(a.resp.Connect, a.end)
		}
		srv.Est.observeResponse(a.resp.Duration-a.resp.Connect, a.end)
		srv.lastDur = a.resp.Duration
	} else if reached(a.err) {
		srv.Est.observeResponse(a.end.Sub(a.start), a.end)
		srv.lastDur = a.end.Sub(a.start)
	}
	srv.lastEnd = a.end
	c.h.hosts.after(srv.Host, a.end, c.h.delay(srv, site))
	c.h.account(srv, req.URL, a.resp, a.err, a.end)
	return a, nil
}

// reached tells whether a failed request got as far as the server (a
// timeout or a reset says something about its speed; a DNS failure does
// not).
func reached(err error) bool {
	switch fetch.Kind(fetch.KindOf(fetch.Text(err))) {
	case fetch.KindTimeout, fetch.KindReset, fetch.KindProtocol:
		return true
	}
	return false
}

// delay is the pause after a request to site: harvester.wait, or the
// adaptive wait (wait_factor times the last response time, between wait
// and max_wait), and at least the site's robots.txt Crawl-delay (capped
// at max_crawl_delay).
func (h *harvest) delay(srv *Server, site string) time.Duration {
	hc := h.cfg.Harvester
	d := hc.Wait.D()
	if hc.WaitFactor > 0 {
		d = max(d, min(time.Duration(hc.WaitFactor*float64(srv.lastDur)), hc.MaxWait.D()))
	}
	if sr := srv.rules[site]; sr != nil {
		d = max(d, min(sr.rules.CrawlDelay(), hc.MaxCrawlDelay.D()))
	}
	return d
}

// account counts consecutive failures and streamed responses and
// applies Retry-After.
func (h *harvest) account(srv *Server, rawURL string, resp *fetch.Response, ferr error, end time.Time) {
	if h.outage.request(srv.Host, resp, ferr) {
		return // may be the network's: not the host's failure (outage.go)
	}
	hc := h.cfg.Harvester
	h.countStreak(srv, rawURL, resp, ferr)
	failed := false
	if ferr != nil {
		switch fetch.Kind(fetch.KindOf(fetch.Text(ferr))) {
		case fetch.KindTimeout, fetch.KindConnect, fetch.KindReset, fetch.KindTLS, fetch.KindProtocol:
			failed = true
		}
	}
	if resp != nil && resp.Status >= 500 {
		failed = true
	}
	if failed {
		srv.fails++
	} else if resp != nil {
		srv.fails = 0
	}
	if srv.fails >= hc.MaxFailures && srv.gaveUp == "" {
		why := "5xx"
		if ferr != nil {
			why = fetch.KindOf(fetch.Text(ferr))
		} else if resp != nil {
			why = strconv.Itoa(resp.Status)
		}
		srv.gaveUp = fmt.Sprintf("%d consecutive failures (last: %s)", srv.fails, why)
		h.log.Debug("giving up host", "host", srv.Host, "reason", srv.gaveUp)
	}
	if resp != nil && (resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable) {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), end); ok {
			if d > hc.MaxRetryAfter.D() {
				if srv.gaveUp == "" {
					srv.gaveUp = fmt.Sprintf("Retry-After %s exceeds %s", d.Round(time.Second), hc.MaxRetryAfter)
					h.log.Debug("giving up host", "host", srv.Host, "reason", srv.gaveUp)
				}
			} else {
				h.hosts.later(srv.Host, end.Add(d))
				h.log.Debug("backing off", "host", srv.Host, "url", rawURL, "for", d)
			}
		}
	}
}

// countStreak counts the host's page responses cut in a row: a body cut
// at harvester.max_body_bytes (WARC-Truncated "length") or, after the
// headers came, by a time limit (the transfer-rate floor above all, or
// the total or read time limit: "time") adds one; a whole response (not
// truncated, not failed, any status) sets the count back to 0; anything
// else (no response, a reset mid-body, a media type not downloaded)
// leaves it. robots.txt answers are left out (their own cap is
// max_robots_bytes, and a long robots.txt is no stream). Once the count
// reaches harvester.max_streaming the host is given up as streaming:
// before the failure rule, so that a host cut by the rate floor is
// recorded as streaming rather than as failing. The count starts from the
// batch's servers.jsonl (the host's count at the end of its last harvest),
// so a host that was given up is given up again after one more cut
// response: that request is its probe.
func (h *harvest) countStreak(srv *Server, rawURL string, resp *fetch.Response, ferr error) {
	if resp == nil || rawURL == siteOf(rawURL)+robots.Path {
		return
	}
	var why string
	switch {
	case resp.Truncated == fetch.TruncatedLength:
		why = fmt.Sprintf("body cap %d bytes", h.cfg.Harvester.MaxBodyBytes)
	case resp.Truncated == fetch.TruncatedTime && ferr != nil:
		why = fetch.Text(ferr)
	case resp.Truncated == "" && ferr == nil:
		srv.streak = 0
		return
	default:
		return
	}
	srv.streak++
	if srv.streak >= h.cfg.Harvester.MaxStreaming && srv.gaveUp == "" {
		srv.gaveUp = fmt.Sprintf("%s: %d responses in a row cut (last: %s)", GaveUpStreaming, srv.streak, why)
		h.log.Debug("giving up host", "host", srv.Host, "reason", srv.gaveUp)
	}
}

// retryAfter parses a Retry-After value: seconds or an HTTP date (RFC
// 9110 §10.2.3), capped at a day (any value past max_retry_after gives
// the host up anyway).
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		if s > int64(24*time.Hour/time.Second) {
			s = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), 24*time.Hour), true
	}
	return 0, false
}

// robotsOf returns the site's rules: from the batch's robots.jsonl or an
// earlier run, else fetched now (in the host's turn).
func (c *conn) robotsOf(site string) (*siteRules, error) {
	h, srv := c.h, c.srv
	rec, ok := h.knownRobots(site)
	if !ok {
		if err := c.waitTurn(); err != nil {
			return nil, err
		}
		var err error
		if rec, err = c.fetchRobots(site); err != nil {
			return nil, err
		}
	}
	if err := h.keepRobots(rec); err != nil {
		return nil, err
	}
	sr := &siteRules{rec: rec, rules: h.rulesOf(rec)}
	srv.rules[site] = sr
	// The unit (every name of this site on its address) waits the
	// longest Crawl-delay of its sites.
	h.hosts.crawlDelay(srv.Host, min(sr.rules.CrawlDelay(), h.cfg.Harvester.MaxCrawlDelay.D()))
	if !ok && !srv.lastEnd.IsZero() {
		// The Crawl-delay counts from the robots.txt request too.
		h.hosts.after(srv.Host, srv.lastEnd, h.delay(srv, site))
	}
	if rec.Err != "" {
		switch fetch.Kind(fetch.KindOf(rec.Err)) {
		case fetch.KindDNS, fetch.KindBlocked:
			srv.dnsErr = rec.Err
		}
	}
	return sr, nil
}

// fetchRobots fetches SITE/robots.txt, following up to
// robots.MaxRedirects redirects to any host (RFC 9309 §2.3.1.2), stores
// each response in the WARC file and returns the outcome. A redirect to
// another host waits until that host has no connection open from this
// harvester and its turn has come; if that does not happen within
// borrowLimit, the robots.txt counts as unreachable.
func (c *conn) fetchRobots(site string) (fetchlog.Robots, error) {
	h := c.h
	rec := fetchlog.Robots{Site: site}
	target := site + robots.Path
	maxBytes := h.cfg.Harvester.MaxRobotsBytes
	for hop := 0; ; hop++ {
		a, err := c.robotsHop(target)
		if err != nil {
			return rec, err
		}
		if err := h.outage.after(h, c.srv); err != nil {
			a.resp.Release()
			return rec, err
		}
		c.srv.robotsReq++
		resp, ferr := a.resp, a.err
		if hop == 0 {
			rec.Fetched = a.start.UTC()
		}
		if resp == nil {
			rec.Status, rec.Err = 0, fetch.Text(ferr)
			break
		}
		rec.Status = resp.Status
		if err := h.out.robotsResponse(resp); err != nil {
			var be *warcio.BuildError
			if !errors.As(err, &be) {
				return rec, h.fatal(err)
			}
			// Not in the archive, so it decides nothing: the
			// robots.txt counts as unreachable.
			h.log.Warn("robots.txt response not stored: robots.txt unreachable", "site", site, "url", resp.URL, "err", err)
			rec.Err = ErrStore + ": " + be.Reason
			resp.Release()
			break
		}
		if ferr != nil {
			// Cut by a time limit or a reset: an incomplete file is
			// not trusted (RFC 9309 §2.3.1.4, unreachable).
			rec.Err = fetch.Text(ferr)
			resp.Release()
			break
		}
		if loc := resp.Location(); loc != "" && hop < robots.MaxRedirects {
			// The target as the project spells URLs (user info dropped,
			// spaces and other bytes escaped), as a page's redirect
			// becomes a link: it is what is requested and archived.
			next, err := h.norm.ResolveString(target, loc)
			if err == nil {
				target = next
				resp.Release()
				continue
			}
			h.log.Warn("robots.txt redirect not followed", "site", site, "url", target, "err", err)
		}
		if resp.Status >= 200 && resp.Status < 300 {
			// The file as decoded (a raw-mode body keeps its content
			// coding); a body that does not decode to its end is cut
			// where it stops, as a truncated one.
			content, err := resp.Content(maxBytes)
			rec.Body = string(robots.Clip(content, maxBytes, resp.Truncated != "" || err != nil)) // a copy
		}
		resp.Release()
		break
	}
	h.log.Debug("robots.txt", "site", site, "status", rec.Status, "err", rec.Err)
	return rec, nil
}

// robotsHop makes one request of a robots.txt fetch: on the server's own
// connection if target is on its host, else on a connection of its own
// to the other host, borrowed from the politeness table.
func (c *conn) robotsHop(target string) (attempt, error) {
	h := c.h
	req := fetch.Request{URL: target, MaxBody: h.cfg.Harvester.MaxRobotsBytes}
	other := hostOf(target)
	if other != c.srv.Host {
		// Another name of the same unit (a bare name redirecting to
		// www on the same address) is asked on this server's turn;
		// another unit is borrowed. The name is looked up first so
		// that the table knows its unit.
		if ip, err := h.client.Resolve(h.end.ctx, other); err == nil {
			h.hosts.join(other, ip)
		}
	}
	if other == c.srv.Host || h.hosts.sameUnit(other, c.srv.Host) {
		if err := c.waitTurnForRobots(); err != nil {
			return attempt{}, err
		}
		return c.do(req, siteOf(target))
	}
	if h.end.ended() {
		return attempt{}, errEnded
	}
	if err := h.hosts.borrow(h.end.ctx, other, c.srv.Host, borrowLimit); err != nil {
		if h.startCtx.Err() != nil {
			return attempt{}, errStopped
		}
		if h.end.ended() {
			return attempt{}, errEnded
		}
		now := time.Now()
		return attempt{err: &fetch.Error{URL: target, Kind: fetch.KindConnect, Detail: err.Error()}, start: now, end: now}, nil
	}
	fh := h.client.NewHost()
	var seq uint64
	h.politely(&req, other, &seq, nil)
	a := attempt{start: time.Now()}
	a.resp, a.err = fh.Do(h.fetchCtx, req)
	a.end = time.Now()
	fh.Close()
	h.ended(other, seq, a.end)
	h.hosts.giveBack(other, a.end, h.cfg.Harvester.Wait.D())
	if h.fetchCtx.Err() != nil || errors.Is(a.err, errStopped) {
		return attempt{}, errStopped
	}
	h.stats.requests.Add(1)
	return a, nil
}

// waitTurnForRobots waits for the host's turn within a robots.txt fetch
// (redirect hops included), however long: a robots.txt is never left
// half-fetched for max_idle.
func (c *conn) waitTurnForRobots() error {
	d := time.Until(c.h.hosts.notBefore(c.srv.Host))
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.h.end.done():
		return errEnded
	case <-c.h.startCtx.Done():
		return errStopped
	}
}

// robotsDenial returns the fetch log error of a URL that robots.txt
// keeps the harvester from requesting, or "".
func robotsDenial(rec fetchlog.Robots, rules *robots.Rules, rawURL string) string {
	if rules.Allowed(rawURL) {
		return ""
	}
	if rules.Mode() != robots.ModeDisallowAll {
		return ErrRobots
	}
	if rec.Err != "" {
		switch fetch.Kind(fetch.KindOf(rec.Err)) {
		case fetch.KindDNS, fetch.KindBlocked, fetch.KindBadURL, fetch.KindTLS:
			// The site cannot be reached at all (no TLS session either):
			// say why, as a page fetch would have.
			return rec.Err
		}
		return fmt.Sprintf("%s: robots.txt unreachable (%s)", ErrRobots, rec.Err)
	}
	return fmt.Sprintf("%s: robots.txt unreachable (status %d)", ErrRobots, rec.Status)
}

// page fetches one URL of the batch (conditionally for a revisit with
// validators) and logs it.
func (c *conn) page(e batch.Entry) error {
	h := c.h
	req := fetch.Request{URL: e.URL, MaxBody: h.cfg.Harvester.MaxBodyBytes, Accept: h.accept}
	if e.Kind == batch.KindSitemap {
		// A sitemap is read whatever its media type (XML, text, gzip) up
		// to its own cap (docs/sitemaps.md).
		req.MaxBody, req.Accept = h.cfg.Harvester.MaxSitemapBytes, nil
	}
	if e.Kind == batch.KindRevisit {
		req.IfModifiedSince, req.IfNoneMatch = e.LastModified, e.ETag
	}
	a, err := c.do(req, e.Site)
	if err != nil {
		return err
	}
	if err := h.outage.after(h, c.srv); err != nil {
		a.resp.Release()
		return err
	}
	resp, ferr := a.resp, a.err
	rec := fetchlog.Record{DocID: e.DocID, URL: e.URL, Fetched: a.start.UTC(), Millis: a.end.Sub(a.start).Milliseconds()}
	var meta []warcio.Field
	if resp != nil {
		rec.Status = resp.Status
		rec.Bytes = resp.Size
		rec.MIME = resp.MIME()
		rec.Millis = resp.Duration.Milliseconds()
		rec.Location = resp.Location()
		meta = []warcio.Field{{Name: "fetchTimeMs", Value: strconv.FormatInt(resp.Duration.Milliseconds(), 10)},
			{Name: "firstByteMs", Value: strconv.FormatInt(resp.FirstByte.Milliseconds(), 10)}}
		if resp.Connect > 0 {
			meta = append(meta, warcio.Field{Name: "connectMs", Value: strconv.FormatInt(resp.Connect.Milliseconds(), 10)})
		}
		meta = append(meta, tlsFields(resp.TLS)...)
		if resp.Dechunked {
			meta = append(meta, warcio.Field{Name: "transferEncoding", Value: "chunked"})
		}
		if resp.Skipped != "" {
			rec.Err = ErrMIME + ": " + resp.Skipped
			meta = append(meta, warcio.Field{Name: "wire-not-stored", Value: resp.Skipped})
		}
	}
	if ferr != nil {
		rec.Err = fetch.Text(ferr)
		if resp != nil {
			meta = append(meta, warcio.Field{Name: "wire-error", Value: rec.Err})
		}
	}
	err = h.out.page(resp, meta, rec, e.Capture)
	resp.Release() // stored (copied into the WARC records) or failed: the body is done with
	if err != nil {
		return h.fatal(err)
	}
	return nil
}
