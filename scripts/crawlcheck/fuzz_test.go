package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzReadRequestLog feeds arbitrary text to the request log parser (the
// log is outside input): it never panics, and every line it accepts has a
// status from 0 to 999 and does not end before it starts; a log it
// accepts reads the same once written back.
func FuzzReadRequestLog(f *testing.F) {
	f.Add(logLine(1, "a.cl", "/", 200, 0, time.Second))
	f.Add(logLine(1, "a.cl", "/x?y=1", 0, time.Second, time.Second) + "\n" + logLine(2, "b.cl", "/robots.txt", 404, 0, 1))
	f.Add("1\ta.cl\t/\t200\t2024-05-01T12:00:00Z\t2024-05-01T11:00:00Z\n")
	f.Add("x\t\t\t\t\t\n\n")
	f.Add(strings.TrimSuffix(logLine(1, "a.cl", "/", 200, 0, time.Second), "\n") + "\t127.77.0.3\n")
	f.Add(strings.TrimSuffix(logLine(1, "a.cl", "/", 200, 0, time.Second), "\n") + "\t::1%x\n")
	f.Add(strings.TrimSuffix(logLine(1, "a.cl", "/", 304, 0, time.Second), "\n") + "\t127.0.0.1\ttls\tcond\n")
	f.Fuzz(func(t *testing.T, text string) {
		lines, err := readRequestLog(strings.NewReader(text))
		if err != nil {
			return
		}
		var b strings.Builder
		for _, l := range lines {
			if l.status < 0 || l.status > 999 || l.end.Before(l.start) {
				t.Fatalf("accepted %+v", l)
			}
			f := []string{strconv.FormatUint(l.conn, 10), l.host, l.path, strconv.Itoa(l.status),
				l.start.Format(time.RFC3339Nano), l.end.Format(time.RFC3339Nano)}
			if l.addr != "" {
				f = append(f, l.addr, map[bool]string{false: "tcp", true: "tls"}[l.tls])
				if l.conditional {
					f = append(f, "cond")
				}
			}
			b.WriteString(strings.Join(f, "\t") + "\n")
		}
		again, err := readRequestLog(strings.NewReader(b.String()))
		if err != nil || len(again) != len(lines) {
			t.Fatalf("written back: %d lines, error %v, want %d", len(again), err, len(lines))
		}
		for i := range again {
			a, l := again[i], lines[i]
			if a.conn != l.conn || a.host != l.host || a.path != l.path || a.status != l.status || a.addr != l.addr || a.tls != l.tls || a.conditional != l.conditional || !a.start.Equal(l.start) || !a.end.Equal(l.end) {
				t.Fatalf("line %d: %+v, written back %+v", i+1, l, a)
			}
		}
	})
}
