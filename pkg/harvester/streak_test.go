package harvester

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
)

// TestStreak follows a host's count of responses cut in a row through
// sequences of outcomes: what adds, what resets, what leaves it, and when
// the host is given up as streaming.
func TestStreak(t *testing.T) {
	const page, robotsURL = "http://a.cl/x.html", "http://a.cl/robots.txt"
	capped := func() (*fetch.Response, error) {
		return &fetch.Response{Status: 200, Truncated: fetch.TruncatedLength}, nil
	}
	slow := func() (*fetch.Response, error) {
		return &fetch.Response{Status: 200, Truncated: fetch.TruncatedTime},
			&fetch.Error{Kind: fetch.KindTimeout, Detail: "transfer slower than 512 bytes/s over 5s"}
	}
	whole := func() (*fetch.Response, error) { return &fetch.Response{Status: 200}, nil }
	notFound := func() (*fetch.Response, error) { return &fetch.Response{Status: 404}, nil }
	refused := func() (*fetch.Response, error) {
		return nil, &fetch.Error{Kind: fetch.KindConnect, Detail: "connection refused"}
	}
	reset := func() (*fetch.Response, error) {
		return &fetch.Response{Status: 200, Truncated: fetch.TruncatedDisconnect}, &fetch.Error{Kind: fetch.KindReset}
	}
	skipped := func() (*fetch.Response, error) {
		return &fetch.Response{Status: 200, Truncated: fetch.TruncatedOther, Skipped: "media type image/png not accepted"}, nil
	}
	type step struct {
		url string
		do  func() (*fetch.Response, error)
	}
	p := func(do func() (*fetch.Response, error)) step { return step{page, do} }
	tests := []struct {
		name   string
		start  int // the count from the batch's servers.jsonl
		steps  []step
		streak int
		gaveUp string // prefix of the reason, "" if not given up
	}{
		{"three capped", 0, []step{p(capped), p(capped), p(capped)}, 3, "streaming: 3 responses in a row cut (last: body cap 1048576 bytes)"},
		{"rate floor counts", 0, []step{p(slow), p(capped), p(slow)}, 3, "streaming: 3 responses in a row cut (last: timeout: transfer slower than"},
		{"two are not enough", 0, []step{p(capped), p(capped)}, 2, ""},
		{"a whole page resets", 0, []step{p(capped), p(capped), p(whole), p(capped), p(capped)}, 2, ""},
		{"an error status is an answer", 0, []step{p(capped), p(capped), p(notFound), p(capped)}, 1, ""},
		{"no response leaves it", 0, []step{p(capped), p(refused), p(capped), p(reset), p(skipped), p(capped)}, 3, "streaming: 3"},
		{"robots.txt aside", 0, []step{p(capped), {robotsURL, capped}, p(capped), {robotsURL, whole}}, 2, ""},
		{"carried over: the next cut gives up", 3, []step{p(capped)}, 4, "streaming: 4"},
		{"carried over: a whole answer clears", 3, []step{p(whole)}, 0, ""},
		{"carried over, nothing asked", 3, nil, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Harvester.MaxStreaming = 3
			cfg.Harvester.MaxFailures = 100 // the failure rule out of the way
			cfg.Harvester.MaxBodyBytes = 1 << 20
			h := &harvest{cfg: cfg, log: slog.New(slog.DiscardHandler), hosts: newHostTable(0)}
			srv := &Server{Host: "a.cl", streak: tt.start}
			for _, s := range tt.steps {
				resp, err := s.do()
				h.account(srv, s.url, resp, err, time.Now())
			}
			if srv.streak != tt.streak {
				t.Errorf("streak %d, want %d", srv.streak, tt.streak)
			}
			if tt.gaveUp == "" && srv.gaveUp != "" || !strings.HasPrefix(srv.gaveUp, tt.gaveUp) {
				t.Errorf("gave up %q, want %q", srv.gaveUp, tt.gaveUp)
			}
			l := serverLine(srv)
			if l.Streak != tt.streak || l.Streaming != (tt.gaveUp != "") {
				t.Errorf("servers line streak %d streaming %v, want %d %v", l.Streak, l.Streaming, tt.streak, tt.gaveUp != "")
			}
		})
	}
}

// TestStreamingBeforeFailures: a host cut by the rate floor is given up
// as streaming even when the failure rule would give it up at the same
// response.
func TestStreamingBeforeFailures(t *testing.T) {
	cfg := config.Defaults()
	cfg.Harvester.MaxStreaming, cfg.Harvester.MaxFailures = 3, 3
	h := &harvest{cfg: cfg, log: slog.New(slog.DiscardHandler), hosts: newHostTable(0)}
	srv := &Server{Host: "a.cl"}
	for range 3 {
		h.account(srv, "http://a.cl/", &fetch.Response{Status: 200, Truncated: fetch.TruncatedTime},
			&fetch.Error{Kind: fetch.KindTimeout, Detail: "transfer slower than 512 bytes/s over 5s"}, time.Now())
	}
	if !strings.HasPrefix(srv.gaveUp, GaveUpStreaming+": 3") {
		t.Errorf("gave up %q, want streaming", srv.gaveUp)
	}
}
