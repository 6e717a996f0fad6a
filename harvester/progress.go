package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/harvester"
	"github.com/wirecrawl/wire/pkg/tally"
)

// statusLine draws the run's progress as one line on a terminal, redrawn
// in place: URLs logged, pages, bytes, pages/s, hosts active / waiting /
// done, errors. Log lines written through it (it is the logger's writer)
// go above the line. It implements harvester.Progress and io.Writer.
type statusLine struct {
	mu    sync.Mutex
	w     io.Writer
	what  string // "batch 000001", "batch 000001 shard 2/4"
	line  string // the status line on screen, "" if none
	total int
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
	s.line = formatStats(s.what, st)
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

// formatStats is the text of the status line.
func formatStats(what string, st harvester.Stats) string {
	return fmt.Sprintf("%s: %d/%d URLs, %d pages, %s, %.1f pages/s, hosts %d active %d waiting %d done, %d errors, %s",
		what, st.Logged, st.Total, st.Pages, tally.Bytes(st.Bytes), st.PagesPerSecond(),
		st.HostsActive, st.HostsWaiting, st.HostsDone, st.Errors, st.Elapsed.Round(time.Second))
}
