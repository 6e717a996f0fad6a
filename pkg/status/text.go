package status

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/tally"
)

// WriteText prints the status for people, in one screen.
func (s *Status) WriteText(w io.Writer) error {
	p := &printer{w: w}
	p.line("collection", "%s, %d batches", s.Collection, s.Batches)
	if s.Last == nil {
		p.line("last batch", "none yet: run 'manager run' (or scripts/cron.sh)")
	} else {
		p.line("last batch", "%s", describe(s.Last))
		if h := s.Last.Harvest; h != nil {
			p.line("", "%s", describeHarvest(h))
		}
	}
	if len(s.InProgress) == 0 {
		p.line("unfinished", "none: every batch is seeded")
	} else {
		parts := make([]string, len(s.InProgress))
		for i := range s.InProgress {
			b := &s.InProgress[i]
			parts[i] = fmt.Sprintf("%s %s", collection.BatchName(b.ID), b.Stage)
			if len(b.Partial) > 0 {
				parts[i] += " [" + strings.Join(b.Partial, ", ") + "]"
			}
			if b.Stopped != nil {
				parts[i] += " (" + describeStopped(b.Stopped) + ")"
			}
			parts[i] += " → " + b.Next
		}
		p.line("unfinished", "%s", strings.Join(parts, "; "))
	}
	if len(s.Running) == 0 {
		p.line("running", "nothing")
	} else {
		parts := make([]string, len(s.Running))
		for i, h := range s.Running {
			parts[i] = fmt.Sprintf("%s (pid %d)", h.Name, h.PID)
		}
		p.line("running", "%s", strings.Join(parts, ", "))
		for i := range s.InProgress {
			if b := &s.InProgress[i]; b.Progress != nil && b.Stopped == nil && harvesting(s.Running) {
				p.line("harvest", "%s: %s", collection.BatchName(b.ID), describeProgress(b.Progress))
			}
		}
	}
	switch {
	case s.Pages != nil:
		pg := s.Pages
		p.line("pages", "%d known: %d fetched, %d pending, %d scheduled, %d failed, %d excluded; %d sites",
			pg.Known, pg.Fetched, pg.Pending, pg.Scheduled, pg.Failed, pg.Excluded, pg.Sites)
	case s.GraphError != "":
		p.line("pages", "unknown: %s", s.GraphError)
	}
	if s.Partition != nil && p.err == nil {
		p.err = s.Partition.WriteText(w)
	}
	if c := s.Cron; c != nil {
		text := fmt.Sprintf("pid %d started %s", c.PID, stamp(c.Started))
		switch {
		case c.Running:
			text += ", running"
		case !c.Ended.IsZero():
			text += fmt.Sprintf(", ended %s: %s", stamp(c.Ended), c.Result)
		default:
			text += ", did not finish (killed?)"
		}
		p.line("cron", "%s", text)
	} else {
		p.line("cron", "no run logged in logs/%s", CronLogFile)
	}
	if len(s.Errors) == 0 {
		p.line("errors", "none in logs/")
	} else {
		p.line("errors", "last %d in logs/:", len(s.Errors))
		for _, e := range s.Errors {
			fmt.Fprintf(w, "  %s:%d: %s\n", e.File, e.Line, clip(e.Text, 200))
		}
	}
	return p.err
}

// describe is a batch's one-line state.
func describe(b *Batch) string {
	text := fmt.Sprintf("%s %s", collection.BatchName(b.ID), b.Stage)
	if b.Next != "" {
		text += ", next: " + b.Next
	}
	switch {
	case b.Stopped != nil:
		text += " (" + strings.Join(b.Partial, ", ") + " present: " + describeStopped(b.Stopped) + ")"
	case len(b.Partial) > 0:
		text += " (" + strings.Join(b.Partial, ", ") + " present: running or interrupted)"
	}
	if len(b.ShardsDone) > 0 {
		text += " (shards done: " + strings.Join(b.ShardsDone, ", ") + ")"
	}
	if !b.Created.IsZero() {
		text += ", created " + stamp(b.Created)
	}
	return text
}

// harvesting tells whether a harvester holds a lock now.
func harvesting(running []Holder) bool {
	for _, h := range running {
		if strings.HasPrefix(h.Name, "harvester") {
			return true
		}
	}
	return false
}

// describeProgress is a running harvest's progress.json in one line, as
// the harvester's status line shows it on a terminal.
func describeProgress(pr *fetchlog.Progress) string {
	eta := "?"
	if pr.ETASeconds >= 0 {
		eta = (time.Duration(pr.ETASeconds) * time.Second).String()
	}
	text := fmt.Sprintf("%d/%d URLs, %d pages, %s, %.1f pages/s (last %.0fs), ETA %s, hosts %d active %d waiting %d done, %d errors",
		pr.Logged, pr.Total, pr.Pages, tally.Bytes(pr.Bytes), pr.PageRate, pr.RateWindow, eta,
		pr.HostsActive, pr.HostsWaiting, pr.HostsDone, pr.Errors)
	if len(pr.Holding) > 0 {
		parts := make([]string, len(pr.Holding))
		for i, h := range pr.Holding {
			parts[i] = fmt.Sprintf("%s %d", h.Host, h.Left)
		}
		text += "; most left: " + strings.Join(parts, ", ")
	}
	return text + "; as of " + stamp(pr.At)
}

// describeHarvest is a harvest summary in one line.
func describeHarvest(h *Harvest) string {
	text := fmt.Sprintf("%d URLs, %d fetched (%.1f MB), %d excluded by robots.txt", h.URLs, h.Fetched, float64(h.Bytes)/1e6, h.RobotsExcluded)
	if len(h.Errors) == 0 {
		text += ", no fetch errors"
	} else {
		text += ", fetch errors: " + counts(h.Errors)
	}
	if h.PagesPerSecond > 0 {
		text += fmt.Sprintf("; %.1f pages/s", h.PagesPerSecond)
	}
	return text
}

// counts prints a map as "k n, k n", largest first.
func counts(m map[string]int) string { return tally.Format(m) }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// clip shortens s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// printer writes "label  text" lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(label, format string, args ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, "%-11s %s\n", label, fmt.Sprintf(format, args...))
}

// describeStopped says how a harvester run stopped (stopped.json).
func describeStopped(st *Stopped) string {
	how := "harvest interrupted"
	switch st.Why {
	case "network-down":
		how = "harvest stopped, network down"
	case "disk-full":
		how = "harvest stopped, disk full (collection.min_free)"
	}
	return fmt.Sprintf("%s at %s; a rerun resumes it", how, stamp(st.At))
}
