package harvester

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
)

// HoldingHosts is how many of the hosts holding a batch up Stats names.
const HoldingHosts = 3

// pendingHosts counts the URLs each host still has to log, for the
// progress displays (Stats.Holding). Its own lock: it is filled by run
// before the scheduler starts, decremented by counted under the output
// lock, read by the progress goroutine.
type pendingHosts struct {
	mu     sync.Mutex
	left   map[string]int
	gaveUp map[string]bool // hosts with a URL logged host-gave-up
}

// init counts the URLs left of every server of the run.
func (p *pendingHosts) init(servers []*Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.left = make(map[string]int, len(servers))
	for _, srv := range servers {
		p.left[srv.Host] += srv.left
	}
}

// logged counts one line logged for rawURL, with its error kind.
func (p *pendingHosts) logged(rawURL, kind string) {
	host := hostOf(siteOf(rawURL))
	p.mu.Lock()
	defer p.mu.Unlock()
	if kind == ErrGaveUp {
		if p.gaveUp == nil {
			p.gaveUp = map[string]bool{}
		}
		p.gaveUp[host] = true
	}
	if n, ok := p.left[host]; ok {
		if n <= 1 {
			delete(p.left, host)
		} else {
			p.left[host] = n - 1
		}
	}
}

// givenUp is the number of hosts given up so far.
func (p *pendingHosts) givenUp() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.gaveUp)
}

// top returns the n hosts with the most URLs left, most first (ties by
// name).
func (p *pendingHosts) top(n int) []fetchlog.HostLeft {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]fetchlog.HostLeft, 0, n+1)
	for h, left := range p.left {
		c := fetchlog.HostLeft{Host: h, Left: left}
		if len(out) == n && !before(c, out[n-1]) {
			continue
		}
		i := sort.Search(len(out), func(i int) bool { return before(c, out[i]) })
		out = slices.Insert(out, i, c)
		if len(out) > n {
			out = out[:n]
		}
	}
	return out
}

// before tells whether a ranks before b: more URLs left, or as many and
// an earlier name.
func before(a, b fetchlog.HostLeft) bool {
	return a.Left > b.Left || a.Left == b.Left && a.Host < b.Host
}

// Recent measures a run's rate over the last few seconds from its
// progress snapshots (Stats), and the time left at that rate. The zero
// value uses a 10-second window. Not safe for concurrent use.
type Recent struct {
	Window  time.Duration // 0: 10 s
	samples []Stats
}

// Add records a snapshot.
func (r *Recent) Add(st Stats) {
	w := r.window()
	r.samples = append(r.samples, st)
	// Keep one sample at or before the window's start.
	for len(r.samples) > 2 && st.Elapsed-r.samples[1].Elapsed >= w {
		r.samples = r.samples[1:]
	}
}

func (r *Recent) window() time.Duration {
	if r.Window <= 0 {
		return 10 * time.Second
	}
	return r.Window
}

// Rates returns URLs logged and pages fetched per second over the
// window (or since the first snapshot, if shorter), and that span.
func (r *Recent) Rates() (urls, pages float64, span time.Duration) {
	if len(r.samples) < 2 {
		return 0, 0, 0
	}
	a, b := r.samples[0], r.samples[len(r.samples)-1]
	span = b.Elapsed - a.Elapsed
	if span <= 0 {
		return 0, 0, 0
	}
	s := span.Seconds()
	return float64(b.Logged-a.Logged) / s, float64(b.Pages-a.Pages) / s, span
}

// ETA is the time left to log every URL at the recent rate; -1 when
// unknown (nothing logged in the window).
func (r *Recent) ETA() time.Duration {
	urls, _, _ := r.Rates()
	if len(r.samples) == 0 || urls <= 0 {
		return -1
	}
	last := r.samples[len(r.samples)-1]
	return time.Duration(float64(last.Total-last.Logged) / urls * float64(time.Second))
}

// progressFile writes fetchlog.ProgressFile into the partial harvest
// directory every progressFileEvery while the run goes on, and removes
// it at the end. It is a Progress; run calls it beside Options.Progress.
type progressFile struct {
	path    string
	started time.Time
	recent  Recent
	last    time.Time
	every   time.Duration
}

// progressFileEvery is how often the progress file is rewritten.
const progressFileEvery = 5 * time.Second

func newProgressFile(dir string) *progressFile {
	return &progressFile{path: filepath.Join(dir, fetchlog.ProgressFile), started: time.Now(), every: progressFileEvery}
}

// Start implements Progress.
func (p *progressFile) Start(int) {}

// Update implements Progress.
func (p *progressFile) Update(st Stats) {
	p.recent.Add(st)
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.write(st)
	}
}

// Done implements Progress: the file goes (it is never published).
func (p *progressFile) Done(Stats) {
	if err := os.Remove(p.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return
	}
}

// write writes the file; a failure only loses a status line.
func (p *progressFile) write(st Stats) {
	urls, pages, span := p.recent.Rates()
	eta := -1.0
	if d := p.recent.ETA(); d >= 0 {
		eta = d.Seconds()
	}
	data, err := json.Marshal(fetchlog.Progress{
		At: time.Now().UTC(), Started: p.started.UTC(), PID: os.Getpid(),
		Total: st.Total, Logged: st.Logged, Pages: st.Pages, Bytes: st.Bytes, Errors: st.Errors,
		URLRate: urls, PageRate: pages, RateWindow: span.Seconds(), ETASeconds: eta,
		HostsActive: st.HostsActive, HostsWaiting: st.HostsWaiting, HostsDone: st.HostsDone,
		Holding: st.Holding,
	})
	if err != nil {
		return
	}
	_ = collection.WriteFileAtomic(p.path, append(data, '\n'))
}

// progressTee passes a run's progress to several displays.
type progressTee []Progress

func (t progressTee) Start(total int) {
	for _, p := range t {
		p.Start(total)
	}
}

func (t progressTee) Update(st Stats) {
	for _, p := range t {
		p.Update(st)
	}
}

func (t progressTee) Done(st Stats) {
	for _, p := range t {
		p.Done(st)
	}
}

// nonNil is p as a list: empty when p is nil.
func nonNil(p Progress) []Progress {
	if p == nil {
		return nil
	}
	return []Progress{p}
}
