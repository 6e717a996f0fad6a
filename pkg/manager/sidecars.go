package manager

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Beside batch.tsv the manager writes two files for the harvester
// (docs/format/batch.md): robots.jsonl, the stored robots.txt of the
// batch's sites that are young enough to use without fetching them again,
// and servers.jsonl, the server estimates measured in earlier batches.
// Both are written before batch.tsv, whose appearance marks the batch
// managed, so a batch never lacks them.

// robotsCopy returns the stored robots.txt of site s as a robots.jsonl
// line, if it was fetched less than maxAge before now and is a definite
// answer: a 2xx (its rules) or a 4xx (no rules: everything allowed, RFC
// 9309 §2.3.1.3). A copy that is missing, older, an error or a 5xx gets no
// line: the harvester fetches robots.txt again before the site's pages.
func robotsCopy(s *linkgraph.Site, now time.Time, maxAge time.Duration) (fetchlog.Robots, bool) {
	if maxAge <= 0 || s.RobotsFetched.IsZero() || s.RobotsErr != "" {
		return fetchlog.Robots{}, false
	}
	if age := now.Sub(s.RobotsFetched); age >= maxAge || age < -time.Hour {
		return fetchlog.Robots{}, false
	}
	if s.RobotsStatus < 200 || s.RobotsStatus >= 500 || (s.RobotsStatus >= 300 && s.RobotsStatus < 400) {
		return fetchlog.Robots{}, false
	}
	return fetchlog.Robots{Site: s.Key, Status: s.RobotsStatus, Fetched: s.RobotsFetched, Body: s.RobotsBody}, true
}

// serverEstimate returns the harvester's last estimates for site s, its
// host's streak of cut responses (the harvester counts on from it) and
// the address it was last served from (harvester shards split a batch
// by it, docs/harvester.md) as a servers.jsonl line, if there are any.
func serverEstimate(s *linkgraph.Site) (fetchlog.Server, bool) {
	if (s.EstimatesAt.IsZero() || (s.ConnectMs <= 0 && s.ResponseMs <= 0)) && s.Streak == 0 && s.IP == "" {
		return fetchlog.Server{}, false
	}
	l := fetchlog.Server{Host: hostOf(s.Key), Streak: s.Streak, IP: s.IP}
	if !s.EstimatesAt.IsZero() && (s.ConnectMs > 0 || s.ResponseMs > 0) {
		l.ConnectMs, l.ResponseMs, l.RequestsPerConn, l.Measured = s.ConnectMs, s.ResponseMs, s.RequestsPerConn, s.EstimatesAt
	}
	return l, true
}

// writeSidecars writes robots.jsonl and servers.jsonl of batch b
// atomically (both, possibly empty).
func writeSidecars(b *collection.Batch, p *plan) error {
	err := collection.WriteAtomic(b.RobotsPath(), func(w io.Writer) error {
		return fetchlog.WriteLines(w, p.robots, fetchlog.FormatRobots)
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", b.RobotsPath(), err)
	}
	err = collection.WriteAtomic(b.ServersPath(), func(w io.Writer) error {
		return fetchlog.WriteLines(w, p.servers, fetchlog.FormatServer)
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", b.ServersPath(), err)
	}
	return nil
}

// unwrittenFile tells whether name, inside a batch directory without
// batch.tsv, is something a killed manager leaves: a temporary file or a
// side file written before batch.tsv.
func unwrittenFile(name string) bool {
	for _, f := range []string{collection.BatchFile, collection.BatchRobotsFile, collection.BatchServersFile} {
		if name == f && f != collection.BatchFile || strings.HasPrefix(name, "."+f+".tmp-") {
			return true
		}
	}
	return false
}
