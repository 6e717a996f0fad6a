package harvester

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/robots"
)

// Politeness limits (docs/harvester.md).
const (
	// MaxCrawlDelay caps a robots.txt Crawl-delay: a site asking for more
	// is still visited every MaxCrawlDelay.
	MaxCrawlDelay = 60 * time.Second
	// MaxRetryAfter is the longest Retry-After the harvester waits for; a
	// host asking for more is given up for the rest of the batch.
	MaxRetryAfter = 10 * time.Minute
	// MaxFailures consecutive failures (5xx, timeouts, connection errors)
	// make the harvester give up the rest of a host for the batch.
	MaxFailures = 3
)

// Fetch log error texts of URLs that were not requested.
const (
	ErrRobots = "robots"       // disallowed by robots.txt
	ErrGaveUp = "host-gave-up" // the host failed too often or asked for too long a pause
)

// worker serves one Server: its sites one after the other, each site's
// robots.txt first, then its URLs one request at a time.
type worker struct {
	h      *harvest
	srv    *Server
	client *fetch.Host
	// next is the earliest start of the next request to the host.
	next time.Time
	// delay is the pause after each response for the current site: the
	// larger of harvester.wait and the site's capped Crawl-delay.
	delay time.Duration
	// lastEnd is when the last response to the host ended.
	lastEnd time.Time
	fails   int
	gaveUp  string
}

func (w *worker) run(ctx context.Context) error {
	defer w.client.Close()
	for i, sq := range w.srv.Sites {
		if i > 0 {
			// Another site of the same host name (other scheme or
			// port): close the idle connection first, so the host never
			// sees two.
			w.client.CloseIdle()
		}
		if err := w.site(ctx, sq); err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) site(ctx context.Context, sq *SiteQueue) error {
	var rec fetchlog.Robots
	var rules *robots.Rules
	if w.gaveUp == "" {
		var ok bool
		rec, ok = w.h.knownRobots(sq.Site)
		if !ok {
			var err error
			if rec, err = w.fetchRobots(ctx, sq.Site); err != nil {
				return err
			}
		}
		rules = w.h.rulesOf(rec)
		w.delay = w.h.wait
		if d := min(rules.CrawlDelay(), MaxCrawlDelay); d > w.delay {
			w.delay = d
		}
		// The Crawl-delay counts from the robots.txt request too.
		if t := w.lastEnd.Add(w.delay); t.After(w.next) {
			w.next = t
		}
	}
	for _, e := range sq.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.gaveUp != "" {
			if err := w.h.skip(e, ErrGaveUp+": "+w.gaveUp); err != nil {
				return err
			}
			continue
		}
		if denial := robotsDenial(rec, rules, e.URL); denial != "" {
			if err := w.h.skip(e, denial); err != nil {
				return err
			}
			continue
		}
		if err := w.page(ctx, e); err != nil {
			return err
		}
	}
	return nil
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
		case fetch.KindDNS, fetch.KindBlocked, fetch.KindBadURL:
			// The site cannot be reached at all: say why, as a page
			// fetch would have.
			return rec.Err
		}
		return fmt.Sprintf("%s: robots.txt unreachable (%s)", ErrRobots, rec.Err)
	}
	return fmt.Sprintf("%s: robots.txt unreachable (status %d)", ErrRobots, rec.Status)
}

// waitTurn sleeps until the host may be asked again.
func (w *worker) waitTurn(ctx context.Context) error {
	d := time.Until(w.next)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// attempt is the outcome of one request: a response, an error, or both
// (a response cut short), as fetch.Host.Get returns them.
type attempt struct {
	resp       *fetch.Response
	err        error
	start, end time.Time
}

// get makes one request to the host, in its turn, and updates the
// politeness state from the outcome. It fails only when ctx is done: what
// was in flight is then not logged, so that a resumed run fetches it.
func (w *worker) get(ctx context.Context, rawURL string, maxBody int64) (attempt, error) {
	if err := w.waitTurn(ctx); err != nil {
		return attempt{}, err
	}
	a := attempt{start: time.Now()}
	a.resp, a.err = w.client.Get(ctx, rawURL, maxBody)
	a.end = time.Now()
	if ctx.Err() != nil {
		return attempt{}, ctx.Err()
	}
	w.lastEnd = a.end
	w.next = a.end.Add(w.delay)
	w.account(rawURL, a.resp, a.err, a.end)
	return a, nil
}

// account counts consecutive failures and applies Retry-After.
func (w *worker) account(rawURL string, resp *fetch.Response, ferr error, end time.Time) {
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
		w.fails++
	} else if resp != nil {
		w.fails = 0
	}
	if w.fails >= MaxFailures && w.gaveUp == "" {
		why := "5xx"
		if ferr != nil {
			why = fetch.KindOf(fetch.Text(ferr))
		} else if resp != nil {
			why = strconv.Itoa(resp.Status)
		}
		w.gaveUp = fmt.Sprintf("%d consecutive failures (last: %s)", w.fails, why)
		w.h.log.Info("giving up host", "host", w.srv.Host, "reason", w.gaveUp)
	}
	if resp != nil && (resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable) {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), end); ok {
			if d > MaxRetryAfter {
				if w.gaveUp == "" {
					w.gaveUp = fmt.Sprintf("Retry-After %s exceeds %s", d.Round(time.Second), MaxRetryAfter)
					w.h.log.Info("giving up host", "host", w.srv.Host, "reason", w.gaveUp)
				}
			} else if t := end.Add(d); t.After(w.next) {
				w.next = t
				w.h.log.Debug("backing off", "host", w.srv.Host, "url", rawURL, "for", d)
			}
		}
	}
}

// retryAfter parses a Retry-After value: seconds or an HTTP date (RFC
// 9110 §10.2.3).
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
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// fetchRobots fetches SITE/robots.txt, following up to
// robots.MaxRedirects redirects to any host (RFC 9309 §2.3.1.2), stores
// each response in the WARC file and appends the outcome to the robots
// file.
func (w *worker) fetchRobots(ctx context.Context, site string) (fetchlog.Robots, error) {
	rec := fetchlog.Robots{Site: site}
	target := site + robots.Path
	maxBytes := w.h.cfg.Harvester.MaxRobotsBytes
	for hop := 0; ; hop++ {
		a, err := w.get(ctx, target, maxBytes)
		if err != nil {
			return rec, err
		}
		resp, ferr := a.resp, a.err
		if hop == 0 {
			rec.Fetched = a.start.UTC()
		}
		if resp == nil {
			rec.Status, rec.Err = 0, fetch.Text(ferr)
			break
		}
		if err := w.h.out.robotsResponse(resp); err != nil {
			return rec, w.h.fatal(err)
		}
		rec.Status = resp.Status
		if ferr != nil {
			// Cut by a time limit or a reset: an incomplete file is
			// not trusted (RFC 9309 §2.3.1.4, unreachable).
			rec.Err = fetch.Text(ferr)
			break
		}
		if loc := resp.Location(); loc != "" && hop < robots.MaxRedirects {
			next, ok := resolveRedirect(target, loc)
			if ok {
				target = next
				continue
			}
		}
		if resp.Status >= 200 && resp.Status < 300 {
			rec.Body = string(robots.Clip(resp.Body, maxBytes, resp.Truncated != ""))
		}
		break
	}
	if err := w.h.out.robots(rec); err != nil {
		return rec, w.h.fatal(err)
	}
	w.h.log.Debug("robots.txt", "site", site, "status", rec.Status, "err", rec.Err)
	return rec, nil
}

func resolveRedirect(from, loc string) (string, bool) {
	base, err := url.Parse(from)
	if err != nil {
		return "", false
	}
	ref, err := url.Parse(strings.TrimSpace(loc))
	if err != nil {
		return "", false
	}
	u := base.ResolveReference(ref)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Fragment = ""
	return u.String(), true
}

// page fetches one URL of the batch and logs it.
func (w *worker) page(ctx context.Context, e batch.Entry) error {
	a, err := w.get(ctx, e.URL, w.h.cfg.Harvester.MaxBodyBytes)
	if err != nil {
		return err
	}
	resp, ferr := a.resp, a.err
	rec := fetchlog.Record{DocID: e.DocID, URL: e.URL, Fetched: a.start.UTC(), Millis: a.end.Sub(a.start).Milliseconds()}
	if resp != nil {
		rec.Status = resp.Status
		rec.Bytes = int64(len(resp.Body))
		rec.MIME = resp.MIME()
		rec.Millis = resp.Duration.Milliseconds()
		rec.Location = resp.Location()
	}
	if ferr != nil {
		rec.Err = fetch.Text(ferr)
	}
	if err := w.h.out.page(resp, rec); err != nil {
		return w.h.fatal(err)
	}
	return nil
}
