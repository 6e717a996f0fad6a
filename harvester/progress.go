package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	"github.com/wirecrawl/wire/pkg/tally"
)

// statusLine draws the run's progress as one line on a terminal, redrawn
// in place: URLs logged, pages, bytes, pages/s over the last 10 s, the
// time left at that rate, hosts active / waiting / done, errors, and the
// hosts with the most URLs left. Log lines written through it (it is the logger's writer)
// go above the line. It implements harvester.Progress and io.Writer.
type statusLine struct {
	mu   sync.Mutex
	w    io.Writer
	what string // "batch 000001", "batch 000001 shard 2/4"
	// byBatch names the batch of each update (harvester run --follow:
	// several batches report in turn), each with its own rate.
	byBatch bool
	batches map[int]*harvester.Recent
	line    string // the status line on screen, "" if none
	total   int
	recent  harvester.Recent // the rate over the last 10 s
}

func newStatusLine(w io.Writer, what string) *statusLine { return &statusLine{w: w, what: what} }

// Write writes a log line above the status line.
func (s *statusLine) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line != "" {
		io.WriteString(s.w, "\r\033[K")
	}
	n, err := s.w.Write(p)
	if s.line != "" {
		io.WriteString(s.w, s.line)
	}
	return n, err
}

// Start implements harvester.Progress.
func (s *statusLine) Start(total int) {
	s.mu.Lock()
	s.total = total
	s.mu.Unlock()
}

// Update implements harvester.Progress.
func (s *statusLine) Update(st harvester.Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	what, recent := s.what, &s.recent
	if s.byBatch && st.Batch > 0 {
		what += " batch " + collection.BatchName(st.Batch)
		if s.batches == nil {
			s.batches = map[int]*harvester.Recent{}
		}
		if recent = s.batches[st.Batch]; recent == nil {
			recent = &harvester.Recent{}
			s.batches[st.Batch] = recent
		}
	}
	recent.Add(st)
	s.line = formatStats(what, st, recent)
	io.WriteString(s.w, "\r\033[K"+s.line)
}

// Done implements harvester.Progress: the line is removed (the summary
// paragraph follows on stdout).
func (s *statusLine) Done(harvester.Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.line != "" {
		io.WriteString(s.w, "\r\033[K")
		s.line = ""
	}
}

// formatStats is the text of the status line: the rate is the last 10
// seconds' (recent), the time left at that rate, and the hosts with the
// most URLs left, which hold the batch up.
func formatStats(what string, st harvester.Stats, recent *harvester.Recent) string {
	_, pages, _ := recent.Rates()
	eta := "?"
	if d := recent.ETA(); d >= 0 {
		eta = d.Round(time.Second).String()
	}
	line := fmt.Sprintf("%s: %d/%d URLs, %d pages, %s, %.1f pages/s, ETA %s, hosts %d active %d waiting %d done, %d errors, %s",
		what, st.Logged, st.Total, st.Pages, tally.Bytes(st.Bytes), pages, eta,
		st.HostsActive, st.HostsWaiting, st.HostsDone, st.Errors, st.Elapsed.Round(time.Second))
	if len(st.Holding) > 0 {
		line += "; most left: " + holding(st.Holding)
	}
	return line
}

// holding lists hosts with their URLs left: "www.a.cl 120, b.cl 80".
func holding(hosts []fetchlog.HostLeft) string {
	parts := make([]string, len(hosts))
	for i, h := range hosts {
		parts[i] = fmt.Sprintf("%s %d", h.Host, h.Left)
	}
	return strings.Join(parts, ", ")
}
