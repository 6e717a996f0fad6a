package testweb

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html/charset"
)

// changeOrigin is the time origin of the changing webs of these tests.
var changeOrigin = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// testClock is a clock the tests set by hand: the web's now.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *testClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// startClocked builds a web whose clock the test sets (at the web's
// origin to begin with) and starts it.
func startClocked(t testing.TB, cfg Config) (*Web, *testClock) {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c := &testClock{}
	c.set(w.Origin())
	w.now = c.now
	serve(t, w)
	return w, c
}

// TestChangeConfig: the fields of the changing web, the validators and
// the codings take their defaults, and bad values are refused with the
// field's name.
func TestChangeConfig(t *testing.T) {
	w, err := New(Config{Seed: 1, Hosts: 5, Change: true, TimeOrigin: changeOrigin.Add(1500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	c := w.cfg
	if c.ChangeShare != DefaultChangeShare || c.ChangeIntervalMin != 30*time.Second || c.ChangeIntervalMax != 50*time.Minute ||
		c.ChangeLinkShare != DefaultChangeLinkShare || c.HonestShare != 0.6 || c.LyingShare != 0.2 ||
		!w.Origin().Equal(changeOrigin.Add(time.Second)) || c.CompressShare != 0 || c.ChunkedShare != 0 {
		t.Errorf("defaults: %+v, origin %v", c, w.Origin())
	}
	before := time.Now().Truncate(time.Second)
	w, err = New(Config{Seed: 1, Hosts: 5, HonestShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if o := w.Origin(); o.Before(before) || o.After(time.Now()) || o.Nanosecond() != 0 || w.cfg.Change || w.cfg.LyingShare != 0 {
		t.Errorf("validators on a static web: origin %v (built after %v), config %+v", o, before, w.cfg)
	}
	if w, err := New(Config{Seed: 1, Hosts: 5}); err != nil || !w.Origin().IsZero() {
		t.Errorf("plain web: origin %v, %v", w.Origin(), err)
	}
	if w, err := New(Config{Seed: 1, Hosts: 5, Change: true, HonestShare: -1, LyingShare: -1, ChangeShare: -1}); err != nil ||
		w.cfg.HonestShare != 0 || w.cfg.LyingShare != 0 || w.cfg.ChangeShare != 0 {
		t.Errorf("negative shares: %+v, %v", w.cfg, err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"share without Change", Config{ChangeShare: 0.5}, "need Change"},
		{"interval without Change", Config{ChangeIntervalMax: time.Minute}, "need Change"},
		{"link share without Change", Config{ChangeLinkShare: 0.1}, "need Change"},
		{"origin without time", Config{TimeOrigin: changeOrigin}, "TimeOrigin needs Change, HonestShare or LyingShare"},
		{"share above 1", Config{Change: true, ChangeShare: 1.5}, "ChangeShare must be at most 1"},
		{"NaN share", Config{HonestShare: math.NaN()}, "HonestShare must be at most 1"},
		{"shares above 1 together", Config{HonestShare: 0.7, LyingShare: 0.4}, "add up to more than 1"},
		{"shares above 1 with defaults", Config{Change: true, HonestShare: 0.9}, "add up to more than 1"},
		{"fraction of a second", Config{Change: true, ChangeIntervalMin: 1500 * time.Millisecond}, "ChangeIntervalMin must be a whole number of seconds"},
		{"under a second", Config{Change: true, ChangeIntervalMin: time.Millisecond}, "at least 1s"},
		{"min above max", Config{Change: true, ChangeIntervalMin: time.Hour, ChangeIntervalMax: time.Minute}, "must not exceed"},
		{"negative compression", Config{CompressShare: -0.1}, "CompressShare and ChunkedShare must be between 0 and 1"},
		{"chunked above 1", Config{ChunkedShare: 2}, "ChunkedShare must be at most 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%+v): %v, want an error with %q", tc.cfg, err, tc.want)
			}
		})
	}
}

// TestVersionAt: the version live at a time is the number of the page's
// changes up to it, a page that does not change is always at version 0,
// and the rule depends on the seed and the origin only.
func TestVersionAt(t *testing.T) {
	cfg := Config{Seed: 8, Hosts: 30, MaxPages: 60, Change: true, TimeOrigin: changeOrigin}
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var changing, still, pdf string
	for _, u := range w.URLs() {
		mean, _ := w.ChangeInterval(u)
		info, _ := w.PageAt(u, changeOrigin)
		switch {
		case mean > 0 && changing == "":
			changing = u
		case mean == 0 && still == "" && info.MIME != mimePDF && info.Status == 200 && info.Title != "":
			still = u
		case info.MIME == mimePDF && pdf == "":
			pdf = u
		}
	}
	if changing == "" || still == "" || pdf == "" {
		t.Fatalf("no changing, still or PDF page: %q %q %q", changing, still, pdf)
	}
	times := w.ChangeTimes(changing, changeOrigin.Add(24*time.Hour))
	if len(times) < 3 {
		t.Fatalf("%s: %d changes in a day", changing, len(times))
	}
	c1, c2 := times[0], times[1]
	cases := []struct {
		name string
		url  string
		at   time.Time
		want int
	}{
		{"before the origin", changing, changeOrigin.Add(-time.Hour), 0},
		{"at the origin", changing, changeOrigin, 0},
		{"a second before the first change", changing, c1.Add(-time.Second), 0},
		{"at the first change", changing, c1, 1},
		{"between the first two changes", changing, c1.Add(c2.Sub(c1) / 2), slices.Index(times, c2)},
		{"at the second change", changing, c2, 2 + countEqual(times[2:], c2)},
		{"after a day", changing, changeOrigin.Add(24 * time.Hour), len(times)},
		{"a page that does not change", still, changeOrigin.Add(24 * time.Hour), 0},
		{"a PDF", pdf, changeOrigin.Add(24 * time.Hour), 0},
		{"not a page of the web", "http://www.nowhere.example/", changeOrigin.Add(time.Hour), 0},
		{"a broken URL", "http://%zz/", changeOrigin.Add(time.Hour), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, since := w.VersionAt(tc.url, tc.at)
			if v != tc.want {
				t.Errorf("VersionAt(%s, %v) = %d, want %d", tc.url, tc.at, v, tc.want)
			}
			wantSince := changeOrigin
			if v > 0 {
				wantSince = times[v-1]
			}
			if !since.Equal(wantSince) {
				t.Errorf("VersionAt(%s, %v) live since %v, want %v", tc.url, tc.at, since, wantSince)
			}
			if info, _ := w.PageAt(tc.url, tc.at); info.Version != v {
				t.Errorf("PageAt says version %d, VersionAt %d", info.Version, v)
			}
		})
	}
	for k, ct := range times {
		if ct.Nanosecond() != 0 || !ct.After(changeOrigin) || k > 0 && ct.Before(times[k-1]) {
			t.Fatalf("change times not whole seconds after the origin, in order: %v", times)
		}
	}

	// The same seed and origin: the same versions; another origin: the
	// same changes shifted; another seed: other changes.
	again, _ := New(cfg)
	if got := again.ChangeTimes(changing, changeOrigin.Add(24*time.Hour)); !slices.Equal(got, times) {
		t.Errorf("rebuilt web: other change times")
	}
	later := cfg
	later.TimeOrigin = changeOrigin.Add(time.Hour)
	lw, _ := New(later)
	for k, ct := range lw.ChangeTimes(changing, later.TimeOrigin.Add(24*time.Hour)) {
		if !ct.Equal(times[k].Add(time.Hour)) {
			t.Fatalf("change %d with the origin an hour later at %v, want %v", k, ct, times[k].Add(time.Hour))
		}
	}
	other := cfg
	other.Seed = 9
	ow, _ := New(other)
	if mean, _ := ow.ChangeInterval(changing); mean > 0 && slices.Equal(ow.ChangeTimes(changing, changeOrigin.Add(24*time.Hour)), times) {
		t.Errorf("another seed gave the same change times")
	}
}

// countEqual counts the times equal to t (changes in one second).
func countEqual(times []time.Time, t time.Time) int {
	n := 0
	for _, x := range times {
		if x.Equal(t) {
			n++
		}
	}
	return n
}

// TestChangeRates: with the defaults, about 70 % of the HTML pages
// change, their mean intervals spread log-uniformly over the two decades
// from 30 s to 50 min, and over a long time each changes as a Poisson
// process of its rate.
func TestChangeRates(t *testing.T) {
	w, err := New(Config{Seed: 2, Hosts: 200, Change: true, TimeOrigin: changeOrigin})
	if err != nil {
		t.Fatal(err)
	}
	html, changing, links := 0, 0, 0
	var logs []float64
	var events, expected float64
	horizon := 48 * time.Hour
	for _, u := range w.URLs() {
		info, _ := w.PageAt(u, changeOrigin)
		if !strings.HasPrefix(info.MIME, "text/html") || info.Status != 200 || info.Title == "" || strings.HasPrefix(info.Title, "404") {
			continue
		}
		html++
		mean, l := w.ChangeInterval(u)
		if mean == 0 {
			continue
		}
		changing++
		if l {
			links++
		}
		if mean < DefaultChangeIntervalMin || mean > DefaultChangeIntervalMax {
			t.Fatalf("%s: mean interval %v outside [30s, 50m]", u, mean)
		}
		logs = append(logs, math.Log10(mean.Seconds()/30)/2) // 0 .. 1 over the two decades
		events += float64(len(w.ChangeTimes(u, changeOrigin.Add(horizon))))
		expected += horizon.Seconds() / mean.Seconds()
	}
	share := float64(changing) / float64(html)
	if html < 500 || math.Abs(share-DefaultChangeShare) > 0.05 {
		t.Errorf("%d of %d HTML pages change (%.3f), want about %.2f", changing, html, share, DefaultChangeShare)
	}
	if ls := float64(links) / float64(changing); math.Abs(ls-DefaultChangeLinkShare) > 0.06 {
		t.Errorf("links change on %.3f of the changing pages, want about %.2f", ls, DefaultChangeLinkShare)
	}
	// Log-uniform: each fifth of the range holds about a fifth of them.
	var bins [5]int
	for _, x := range logs {
		bins[min(int(x*5), 4)]++
	}
	for b, n := range bins {
		if f := float64(n) / float64(len(logs)); math.Abs(f-0.2) > 0.05 {
			t.Errorf("fifth %d of the log range holds %.3f of the rates (%v), want about 0.2", b, f, bins)
		}
	}
	// Poisson: as many events as rate x time, to within 2 %.
	if r := events / expected; math.Abs(r-1) > 0.02 {
		t.Errorf("%.0f changes in %v, %.0f expected (ratio %.4f)", events, horizon, expected, r)
	}
}

// TestVersionsServed: a changing page is served in the version live at
// the time of the request, its text and, on some pages, its links
// changing with the version, as PageAt says; version 0 is the page of the
// web without Change, byte for byte.
func TestVersionsServed(t *testing.T) {
	cfg := Config{Seed: 8, Hosts: 30, MaxPages: 60, Change: true, TimeOrigin: changeOrigin, ChangeIntervalMin: 10 * time.Second,
		ChangeIntervalMax: 1000 * time.Second}
	w, clock := startClocked(t, cfg)
	plain, err := New(Config{Seed: 8, Hosts: 30, MaxPages: 60})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, w)
	checked, linkChanges := 0, 0
	for _, u := range w.URLs() {
		mean, links := w.ChangeInterval(u)
		if mean == 0 || !links || checked == 6 {
			continue
		}
		checked++
		si, _, _, _ := w.changingPage(u)
		// Version 0 against the web without Change (same port: the
		// bodies hold absolute URLs).
		plain.port.Store(w.port.Load())
		r0, _, _ := w.respondAt(si, w.origin(si), hostPath(t, u), false, changeOrigin)
		p0, _, _ := plain.respond(si, hostPath(t, u), false)
		if !bytes.Equal(r0.body, p0.body) {
			t.Errorf("%s: version 0 differs from the page of the web without Change", u)
		}
		times := w.ChangeTimes(u, changeOrigin.Add(2*time.Hour))
		if len(times) < 3 {
			continue
		}
		var prevLinks []string
		p0info, _ := w.PageAt(u, changeOrigin)
		links0 := p0info.Links
		for k := 0; k <= 2; k++ {
			at := changeOrigin
			if k > 0 {
				at = times[k-1]
			}
			clock.set(at)
			v, _ := w.VersionAt(u, at)
			got := fetch(t, c, u)
			truth, _ := w.PageAt(u, at)
			ex, err := extract(got.body, got.header.Get("Content-Type"), u)
			if err != nil {
				t.Fatal(err)
			}
			marker := "Actualización " + strconv.Itoa(v) + "</h2>"
			if got.status != 200 || truth.Version != v || (v > 0) != strings.Contains(pageText(got), marker) {
				t.Errorf("%s at %v: status %d, truth version %d, want version %d (marker %q in body: %v)", u, at, got.status,
					truth.Version, v, marker, strings.Contains(pageText(got), marker))
			}
			if !slices.Equal(ex.links, truth.Links) || !slices.Equal(ex.anchors, truth.Anchors) {
				t.Errorf("%s version %d: served links %q, truth %q", u, v, ex.links, truth.Links)
			}
			for _, l := range added(truth.Links, links0) {
				if info, ok := w.PageAt(l, at); !ok || hostOf(t, l) != hostOf(t, u) || info.Status != 200 {
					t.Errorf("%s version %d links %s: not a page of its site (%d)", u, v, l, info.Status)
				}
			}
			if k > 0 && !slices.Equal(ex.links, prevLinks) {
				linkChanges++
			}
			prevLinks = ex.links
		}
	}
	if checked < 6 || linkChanges == 0 {
		t.Errorf("checked %d pages whose links change, saw %d link changes", checked, linkChanges)
	}
	// Reachable is the same at any time: a version's links stay in its
	// site's pages.
	seeds := w.SeedURLs(3)
	clock.set(changeOrigin)
	r0 := w.Reachable(seeds, "wirebot")
	clock.set(changeOrigin.Add(3 * time.Hour))
	if r1 := w.Reachable(seeds, "wirebot"); !slices.Equal(r0, r1) {
		t.Errorf("Reachable changed with time: %d then %d URLs", len(r0), len(r1))
	}
}

// hostPath is the request URI of an absolute URL.
func hostPath(t testing.TB, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

// added returns the links of got that are not in base, counted as a
// multiset.
func added(got, base []string) []string {
	left := map[string]int{}
	for _, l := range base {
		left[l]++
	}
	var out []string
	for _, l := range got {
		if left[l] > 0 {
			left[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

// pageText decodes a fetched HTML body by its declared charset.
func pageText(f fetched) string {
	enc, _, _ := charset.DetermineEncoding(f.body, f.header.Get("Content-Type"))
	text, err := enc.NewDecoder().Bytes(f.body)
	if err != nil {
		return string(f.body)
	}
	return string(text)
}

// pickPage returns a page of w (200, HTML) on a site of validator policy
// p that changes or not; it fails the test when there is none.
func pickPage(t testing.TB, w *Web, p ValidatorPolicy, changing bool) string {
	t.Helper()
	for _, u := range w.URLs() {
		if w.Validators(hostOf(t, u)) != p {
			continue
		}
		if mean, _ := w.ChangeInterval(u); (mean > 0) != changing {
			continue
		}
		if info, ok := w.Page(u); ok && info.Status == 200 && strings.HasPrefix(info.MIME, "text/html") && info.Title != "" {
			return u
		}
	}
	t.Fatalf("no %v page (changing %v)", p, changing)
	return ""
}

// TestValidators: over real loopback HTTP, an honest site sends the
// change time of the live version as Last-Modified and a tag of the body
// as ETag, and answers 304 while the client's copy is the live one (RFC
// 9110 §13.1.1, §13.1.3, §13.2.2) and 200 with the new version after a
// change; a lying site's Last-Modified is the time of the request and it
// never answers 304; the other sites send no validators.
func TestValidators(t *testing.T) {
	cfg := Config{Seed: 4, Hosts: 40, MaxPages: 40, Change: true, TimeOrigin: changeOrigin,
		ChangeIntervalMin: 60 * time.Second, ChangeIntervalMax: 600 * time.Second}
	w, clock := startClocked(t, cfg)
	c := newClient(t, w)
	t0 := changeOrigin.Add(time.Hour)
	clock.set(t0)
	honest := pickPage(t, w, ValidatorsHonest, true)
	still := pickPage(t, w, ValidatorsHonest, false)
	lying := pickPage(t, w, ValidatorsLying, true)
	none := pickPage(t, w, ValidatorsNone, true)

	k, since := w.VersionAt(honest, t0)
	base := fetch(t, c, honest)
	e0, lm0 := base.header.Get("ETag"), base.header.Get("Last-Modified")
	if base.status != 200 || e0 == "" || lm0 != since.Format(http.TimeFormat) {
		t.Fatalf("%s at version %d: %d, ETag %q, Last-Modified %q, want the change time %v", honest, k, base.status, e0, lm0, since)
	}
	var next time.Time
	for _, ct := range w.ChangeTimes(honest, t0.Add(24*time.Hour)) {
		if ct.After(t0) {
			next = ct
			break
		}
	}
	kNext, _ := w.VersionAt(honest, next)
	lmSecondEarlier := since.Add(-time.Second).Format(http.TimeFormat)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	const (
		noValidator = "-" // the header must be absent
		sameTag     = "=" // the ETag of the base fetch
		newTag      = "+" // an ETag other than the base fetch's
		requestTime = "t" // Last-Modified is the clock of the request
	)
	cases := []struct {
		name    string
		url     string
		at      time.Time
		method  string
		h       http.Header
		status  int
		lm      string // Last-Modified wanted, or noValidator, or requestTime
		etag    string // noValidator, sameTag or newTag
		version int    // the version the body must be of (-1: no body)
	}{
		{"matching If-None-Match at version k", honest, t0, "GET", hdr("If-None-Match", e0), 304, lm0, sameTag, -1},
		{"weak If-None-Match", honest, t0, "GET", hdr("If-None-Match", "W/"+e0), 304, lm0, sameTag, -1},
		{"If-None-Match *", honest, t0, "GET", hdr("If-None-Match", "*"), 304, lm0, sameTag, -1},
		{"If-None-Match in a list", honest, t0, "GET", hdr("If-None-Match", `"0123", `+e0), 304, lm0, sameTag, -1},
		{"If-None-Match of another tag", honest, t0, "GET", hdr("If-None-Match", `"0123"`), 200, lm0, sameTag, k},
		{"If-Modified-Since the Last-Modified", honest, t0, "GET", hdr("If-Modified-Since", lm0), 304, lm0, sameTag, -1},
		{"If-Modified-Since a second earlier", honest, t0, "GET", hdr("If-Modified-Since", lmSecondEarlier), 200, lm0, sameTag, k},
		{"If-None-Match decides over If-Modified-Since", honest, t0, "GET", hdr("If-None-Match", `"0123"`, "If-Modified-Since", lm0), 200, lm0, sameTag, k},
		{"If-Modified-Since not a date", honest, t0, "GET", hdr("If-Modified-Since", "yesterday"), 200, lm0, sameTag, k},
		{"two If-Modified-Since", honest, t0, "GET", hdr("If-Modified-Since", lm0, "If-Modified-Since", lm0), 200, lm0, sameTag, k},
		{"HEAD with If-None-Match", honest, t0, "HEAD", hdr("If-None-Match", e0), 304, lm0, sameTag, -1},
		{"a second before the next change", honest, next.Add(-time.Second), "GET", hdr("If-None-Match", e0), 304, lm0, sameTag, -1},
		{"after the change: the new version", honest, next, "GET", hdr("If-None-Match", e0), 200, next.Format(http.TimeFormat), newTag, kNext},
		{"after the change, If-Modified-Since the old date", honest, next, "GET", hdr("If-Modified-Since", lm0), 200, next.Format(http.TimeFormat), newTag, kNext},
		{"a page that never changes dates from the origin", still, t0, "GET", hdr("If-Modified-Since", changeOrigin.Format(http.TimeFormat)), 304, changeOrigin.Format(http.TimeFormat), newTag, -1},
		{"lying: Last-Modified is the request time", lying, t0.Add(17 * time.Second), "GET", nil, 200, requestTime, noValidator, -2},
		{"lying: If-Modified-Since its own date", lying, t0.Add(17 * time.Second), "GET", hdr("If-Modified-Since", t0.Add(17*time.Second).Format(http.TimeFormat)), 200, requestTime, noValidator, -2},
		{"lying: If-None-Match *", lying, t0.Add(50 * time.Second), "GET", hdr("If-None-Match", "*"), 200, requestTime, noValidator, -2},
		{"none: no validators", none, t0, "GET", nil, 200, noValidator, noValidator, -2},
		{"none: If-None-Match *", none, t0, "GET", hdr("If-None-Match", "*"), 200, noValidator, noValidator, -2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock.set(tc.at)
			got := doHeader(t, c, tc.method, tc.url, tc.h)
			if got.status != tc.status {
				t.Fatalf("%s %s at %v: status %d, want %d", tc.method, tc.url, tc.at, got.status, tc.status)
			}
			lm, etag := got.header.Get("Last-Modified"), got.header.Get("ETag")
			switch tc.lm {
			case noValidator:
				if _, ok := got.header["Last-Modified"]; ok {
					t.Errorf("Last-Modified %q, want none", lm)
				}
			case requestTime:
				if want := tc.at.Format(http.TimeFormat); lm != want {
					t.Errorf("Last-Modified %q, want the request time %q", lm, want)
				}
			default:
				if lm != tc.lm {
					t.Errorf("Last-Modified %q, want %q", lm, tc.lm)
				}
			}
			switch {
			case tc.etag == noValidator && etag != "":
				t.Errorf("ETag %q, want none", etag)
			case tc.etag == sameTag && etag != e0:
				t.Errorf("ETag %q, want %q", etag, e0)
			case tc.etag == newTag && (etag == "" || etag == e0):
				t.Errorf("ETag %q, want a new one (not %q)", etag, e0)
			}
			switch {
			case tc.version == -1 && len(got.body) != 0:
				t.Errorf("%d bytes of body, want none", len(got.body))
			case tc.version >= 0:
				v, _ := w.VersionAt(tc.url, tc.at)
				marker := "Actualización " + strconv.Itoa(tc.version) + "</h2>"
				if v != tc.version || (v > 0) != strings.Contains(pageText(got), marker) {
					t.Errorf("body of version %d wanted (live: %d); marker %q found: %v", tc.version, v, marker,
						strings.Contains(pageText(got), marker))
				}
			}
		})
	}
	// The request log says what the server saw.
	reqs := w.Requests()
	var n304, cond int
	for _, r := range reqs {
		if r.Status == 304 {
			n304++
			if !r.Conditional || r.Version != 0 {
				t.Errorf("304 recorded as %+v", r)
			}
		}
		if r.Conditional {
			cond++
		}
	}
	if n304 != 8 || cond != len(cases)-2 {
		t.Errorf("request log: %d answers 304 and %d conditional requests, want 8 and %d", n304, cond, len(cases)-2)
	}
}

// TestLyingLastModifiedRealClock: on the web's own clock, a lying site's
// Last-Modified is the time the request was answered.
func TestLyingLastModifiedRealClock(t *testing.T) {
	w := startWeb(t, Config{Seed: 4, Hosts: 40, MaxPages: 40, Change: true})
	c := newClient(t, w)
	u := pickPage(t, w, ValidatorsLying, false)
	for i := 0; i < 2; i++ {
		before := time.Now().Truncate(time.Second)
		got := fetch(t, c, u)
		after := time.Now()
		lm, err := http.ParseTime(got.header.Get("Last-Modified"))
		if err != nil || lm.Before(before) || lm.After(after) {
			t.Errorf("%s: Last-Modified %q (%v), want between %v and %v", u, got.header.Get("Last-Modified"), err, before, after)
		}
		if i == 0 {
			time.Sleep(1100 * time.Millisecond)
		}
	}
}

// TestSitemapLastmod: an honest site's sitemap gives each page the time
// its live version appeared, a lying site's the time of the request, and
// the other sites' none; all as W3C datetimes to the second.
func TestSitemapLastmod(t *testing.T) {
	w, clock := startClocked(t, Config{Seed: 3, Hosts: 80, MaxPages: 40, Sitemaps: true, Change: true, TimeOrigin: changeOrigin})
	c := newClient(t, w)
	now := changeOrigin.Add(90*time.Minute + 7*time.Second)
	clock.set(now)
	named, probe := w.SitemapSites()
	seen := map[ValidatorPolicy]int{}
	entry := regexp.MustCompile(`<url><loc>([^<]*)</loc>(?:<lastmod>([^<]*)</lastmod>)?`)
	changed := 0
	for _, host := range append(named, probe...) {
		p := w.Validators(host)
		var origin string
		for _, s := range w.SeedURLs(w.nIn) {
			if hostOf(t, s) == host {
				origin = strings.TrimSuffix(s, "/")
			}
		}
		got := fetch(t, c, origin+sitemapPagesPath)
		zr, err := gzip.NewReader(bytes.NewReader(got.body))
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		text, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range entry.FindAllStringSubmatch(string(text), -1) {
			seen[p]++
			loc, lastmod := strings.ReplaceAll(m[1], "&amp;", "&"), m[2]
			_, since := w.VersionAt(loc, now)
			want := ""
			switch p {
			case ValidatorsHonest:
				want = since.Format(time.RFC3339)
				if since.After(changeOrigin) {
					changed++
				}
			case ValidatorsLying:
				want = "2026-12-01T01:30:07Z"
			}
			if lastmod != want {
				t.Errorf("%s (%v): lastmod %q, want %q", loc, p, lastmod, want)
			}
		}
	}
	if seen[ValidatorsHonest] == 0 || seen[ValidatorsLying] == 0 || seen[ValidatorsNone] == 0 || changed == 0 {
		t.Errorf("sitemap entries by policy %v, %d honest ones changed: want every policy and some changes", seen, changed)
	}
}

// TestCompressedAndChunked: a site that compresses answers with the
// coding Accept-Encoding allows, a chunked site without Content-Length,
// and every answer decodes to the body of the plain answer; a coded
// answer has an ETag of its own, which a conditional request of either
// coding matches; the request log records the coding and the chunking.
func TestCompressedAndChunked(t *testing.T) {
	w := startWeb(t, Config{Seed: 6, Hosts: 40, MaxPages: 30, CompressShare: 0.7, ChunkedShare: 0.5, HonestShare: 1})
	c := newClient(t, w)
	seen := map[string]int{}
	for _, home := range w.SeedURLs(40) {
		host := hostOf(t, home)
		prefs, chunked := w.Encodings(host), w.Chunked(host)
		for _, u := range []string{home, home + "robots.txt", home + "img/logo.png"} {
			plain := fetch(t, c, u)
			if plain.header.Get("Content-Encoding") != "" || plain.chunked != chunked || (plain.length < 0) != chunked {
				t.Fatalf("%s without Accept-Encoding: Content-Encoding %q, chunked %v, length %d (site chunks: %v)", u,
					plain.header.Get("Content-Encoding"), plain.chunked, plain.length, chunked)
			}
			text := compressible(plain.header.Get("Content-Type"))
			for _, ae := range []string{"gzip", "br", "gzip, br", "identity"} {
				want := ""
				for _, p := range prefs {
					if text && strings.Contains(ae, p) {
						want = p
						break
					}
				}
				got := doHeader(t, c, "GET", u, http.Header{"Accept-Encoding": {ae}})
				ce := got.header.Get("Content-Encoding")
				if ce != want || got.status != plain.status || got.chunked != chunked {
					t.Errorf("%s, Accept-Encoding %q: %d, Content-Encoding %q, chunked %v; want %d, %q, %v (site: %v)", u, ae,
						got.status, ce, got.chunked, plain.status, want, chunked, prefs)
					continue
				}
				if body := decode(t, ce, got.body); !bytes.Equal(body, plain.body) {
					t.Errorf("%s, Content-Encoding %q: decodes to %d bytes unlike the %d of the plain answer", u, ce, len(body), len(plain.body))
				}
				if (got.header.Get("Vary") == "Accept-Encoding") != (prefs != nil && text) {
					t.Errorf("%s: Vary %q", u, got.header.Get("Vary"))
				}
				seen[ce]++
				if plain.status != 200 {
					continue
				}
				tag := got.header.Get("ETag")
				if (tag == plain.header.Get("ETag")) != (ce == "") {
					t.Errorf("%s, Content-Encoding %q: ETag %q, plain %q", u, ce, tag, plain.header.Get("ETag"))
				}
				// The coded tag matches, asked without coding too.
				if again := doHeader(t, c, "GET", u, http.Header{"If-None-Match": {tag}}); again.status != 304 {
					t.Errorf("%s: If-None-Match %s: %d, want 304", u, tag, again.status)
				}
			}
			if chunked {
				seen["chunked"]++
			} else {
				seen["length"]++
			}
		}
	}
	if seen["gzip"] == 0 || seen["br"] == 0 || seen[""] == 0 || seen["chunked"] == 0 || seen["length"] == 0 {
		t.Errorf("answers seen: %v, want gzip, br, identity, chunked and with a length", seen)
	}
	recorded := map[string]int{}
	for _, r := range w.Requests() {
		recorded[r.Encoding]++
		if r.Chunked != w.Chunked(r.Host) {
			t.Errorf("request %+v recorded chunked %v", r, r.Chunked)
		}
	}
	if recorded["gzip"] != seen["gzip"] || recorded["br"] != seen["br"] {
		t.Errorf("request log codings %v, answers %v", recorded, seen)
	}
}

// decode undoes content coding ce.
func decode(t testing.TB, ce string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	switch ce {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	default:
		t.Fatalf("unknown coding %q", ce)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", ce, err)
	}
	return out
}

// TestNegotiate: the coding picked for an Accept-Encoding (the examples
// of RFC 9110 §12.5.3 and the forms crawlers and browsers send).
func TestNegotiate(t *testing.T) {
	gz, br, both := []string{"gzip"}, []string{"br"}, []string{"br", "gzip"}
	for _, tc := range []struct {
		values []string
		prefs  []string
		want   string
	}{
		{nil, both, ""},                          // no Accept-Encoding: identity, as servers do
		{[]string{""}, both, ""},                 // §12.5.3: an empty value: identity only
		{[]string{"compress, gzip"}, gz, "gzip"}, // §12.5.3 example
		{[]string{"compress, gzip"}, br, ""},
		{[]string{"*"}, both, "br"},                                    // §12.5.3 example
		{[]string{"compress;q=0.5, gzip;q=1.0"}, both, "gzip"},         // §12.5.3 example
		{[]string{"gzip;q=1.0, identity; q=0.5, *;q=0"}, both, "gzip"}, // §12.5.3 example
		{[]string{"gzip, br"}, both, "br"},
		{[]string{"gzip, deflate, br, zstd"}, gz, "gzip"}, // a browser's
		{[]string{"br;q=0.8, gzip;q=0.9"}, both, "gzip"},
		{[]string{"gzip;q=0"}, gz, ""},
		{[]string{"*;q=0"}, both, ""},
		{[]string{"x-gzip"}, gz, "gzip"},
		{[]string{"GZIP"}, gz, "gzip"},
		{[]string{"gzip;Q=0.5"}, gz, "gzip"},
		{[]string{"gzip;q=0.5, identity"}, gz, ""},
		{[]string{"gzip;q=abc"}, gz, ""},
		{[]string{"gzip;q=2"}, gz, ""},
		{[]string{"gzip;q=0.3, gzip;q=0"}, gz, "gzip"},
		{[]string{"deflate", "br"}, both, "br"}, // two field lines
		{[]string{"g zip, ,;,"}, gz, ""},
	} {
		if got := negotiate(tc.values, tc.prefs); got != tc.want {
			t.Errorf("negotiate(%q, %v) = %q, want %q", tc.values, tc.prefs, got, tc.want)
		}
	}
}

// TestParseETags: the entity-tags of If-None-Match (RFC 9110 §13.1.2,
// §8.8.3).
func TestParseETags(t *testing.T) {
	for _, tc := range []struct {
		values []string
		tags   []string
		star   bool
	}{
		{[]string{`"xyzzy"`}, []string{"xyzzy"}, false},
		{[]string{`W/"xyzzy"`}, []string{"xyzzy"}, false},
		{[]string{`"xyzzy", "r2d2xxxx", "c3piozzzz"`}, []string{"xyzzy", "r2d2xxxx", "c3piozzzz"}, false}, // §13.1.2 example
		{[]string{`W/"xyzzy", W/"r2d2xxxx"`}, []string{"xyzzy", "r2d2xxxx"}, false},
		{[]string{"*"}, nil, true},
		{[]string{`""`}, []string{""}, false},
		{[]string{`"a`}, nil, false},
		{[]string{`xyzzy`}, nil, false},
		{[]string{`"a",garbage,"b"`}, []string{"a"}, false},
		{[]string{`"a"`, `"b"`}, []string{"a", "b"}, false},
		{[]string{`W/`}, nil, false},
	} {
		tags, star := parseETags(tc.values)
		if !slices.Equal(tags, tc.tags) || star != tc.star {
			t.Errorf("parseETags(%q) = %q, %v; want %q, %v", tc.values, tags, star, tc.tags, tc.star)
		}
	}
}

// FuzzNegotiate feeds arbitrary Accept-Encoding values (outside input):
// parsing never panics, weights are between 0 and 1 and keyed by tokens,
// and the coding picked is one the site has, or identity.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"gzip, br", "*;q=0", "gzip;q=0.5, identity", "br;q=0.8, gzip;q=0.9", "x-gzip", ";;q=", "gzip;q=1e400", "gzip;q=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for c, q := range parseAcceptEncoding([]string{v}) {
			if !isToken(c) || !(q >= 0 && q <= 1) {
				t.Fatalf("parseAcceptEncoding(%q): %q weighs %v", v, c, q)
			}
		}
		if got := negotiate([]string{v}, []string{"br", "gzip"}); got != "" && got != "br" && got != "gzip" {
			t.Fatalf("negotiate(%q) = %q", v, got)
		}
	})
}

// FuzzParseETags feeds arbitrary If-None-Match values (outside input):
// parsing never panics and a tag never holds a quote.
func FuzzParseETags(f *testing.F) {
	for _, s := range []string{`"a", W/"b"`, "*", `W/`, `"`, `"a",x`, `,,, "b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tags, _ := parseETags([]string{v})
		for _, tag := range tags {
			if strings.Contains(tag, `"`) {
				t.Fatalf("parseETags(%q) gave %q", v, tag)
			}
		}
	})
}

// TestResponseAt: what ResponseAt says the web answers at a time is what
// it serves over loopback at that time (decoded from gzip or br,
// de-chunked), for a changing page at several versions, a page in
// ISO-8859-1, a redirect, robots.txt and a 404 (and 421 for an unknown
// host); the
// hostile hosts, the streamed sitemaps and bad URLs are not answered.
func TestResponseAt(t *testing.T) {
	cfg := Config{Seed: 8, Hosts: 30, MaxPages: 60, Change: true, TimeOrigin: changeOrigin, ChangeIntervalMin: 10 * time.Second,
		ChangeIntervalMax: 1000 * time.Second, CompressShare: 0.6, ChunkedShare: 0.5, Hostile: true, Sitemaps: true}
	w, clock := startClocked(t, cfg)
	c := newClient(t, w)
	var changing, latin1, redirect string
	for _, u := range w.URLs() {
		info, _ := w.Page(u)
		switch {
		case changing == "" && len(w.ChangeTimes(u, changeOrigin.Add(time.Hour))) >= 2:
			changing = u
		case latin1 == "" && strings.Contains(info.MIME, "iso-8859-1"):
			latin1 = u
		case redirect == "" && info.Status/100 == 3:
			redirect = u
		}
	}
	if changing == "" || latin1 == "" || redirect == "" {
		t.Fatalf("the web lacks a page: changing %q, latin-1 %q, redirect %q", changing, latin1, redirect)
	}
	home := w.SeedURLs(1)[0]
	times := w.ChangeTimes(changing, changeOrigin.Add(time.Hour))
	type probe struct {
		url string
		at  time.Time
	}
	probes := []probe{{changing, changeOrigin}, {changing, times[0]}, {changing, times[1].Add(-time.Millisecond)}, {changing, times[1]},
		{latin1, changeOrigin.Add(time.Minute)}, {redirect, changeOrigin}, {home + "robots.txt", changeOrigin},
		{home + "no-such-page.html", changeOrigin}}
	versions := map[int]bool{}
	for _, p := range probes {
		clock.set(p.at)
		status, ctype, body, ok := w.ResponseAt(p.url, p.at)
		got := doHeader(t, c, "GET", p.url, http.Header{"Accept-Encoding": {"gzip, br"}})
		served := decode(t, got.header.Get("Content-Encoding"), got.body)
		if !ok || status != got.status || ctype != got.header.Get("Content-Type") || !bytes.Equal(body, served) {
			t.Errorf("%s at %v: ResponseAt %v %d %q (%d bytes), served %d %q (%d bytes, equal %v)", p.url, p.at, ok, status, ctype, len(body),
				got.status, got.header.Get("Content-Type"), len(served), bytes.Equal(body, served))
		}
		if p.url == changing {
			v, _ := w.VersionAt(p.url, p.at)
			versions[v] = true
		}
	}
	if len(versions) != 3 {
		t.Errorf("the changing page was probed at versions %v, want 0, 1 and 2 or more", versions)
	}
	// A name the web does not know (its DNS does not answer it either).
	if status, _, _, ok := w.ResponseAt("http://unknown.cl:"+strconv.Itoa(w.Port())+"/", changeOrigin); !ok || status != http.StatusMisdirectedRequest {
		t.Errorf("ResponseAt of an unknown host: %d (%v), want 421", status, ok)
	}
	noAnswer := []string{"ftp://" + hostOf(t, home) + "/", "http://%zz/"}
	for _, h := range w.HostileHosts() {
		noAnswer = append(noAnswer, h.Entries...)
	}
	streamed := 0
	for _, u := range w.HostileSitemaps() {
		if strings.HasSuffix(u, hostileHuge) || strings.HasSuffix(u, hostileBig) {
			noAnswer = append(noAnswer, u)
			streamed++
		} else if _, _, body, ok := w.ResponseAt(u, changeOrigin); !ok || len(body) == 0 {
			t.Errorf("ResponseAt(%q): no answer (%v) or an empty body", u, ok)
		}
	}
	if streamed != 2 || len(noAnswer) < 12 {
		t.Fatalf("%d streamed sitemaps, %d URLs without an answer: the web lacks hostile hosts or sitemaps", streamed, len(noAnswer))
	}
	for _, u := range noAnswer {
		if status, _, _, ok := w.ResponseAt(u, changeOrigin); ok {
			t.Errorf("ResponseAt(%q) answered %d, want no answer", u, status)
		}
	}
}
