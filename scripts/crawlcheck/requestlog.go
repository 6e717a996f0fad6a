package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// requestLine is one line of the test web's request log, as
// scripts/testweb --log writes it: TSV without a header, one request per
// line in arrival order.
type requestLine struct {
	conn       uint64
	host, path string
	// addr is the local IP address that answered ("" in logs written
	// before the field existed).
	addr string
	// tls tells whether the request came over TLS (false in logs written
	// before the field existed).
	tls bool
	// conditional tells whether the request carried If-None-Match or
	// If-Modified-Since (false in logs written before the field existed).
	conditional bool
	// status is the HTTP status answered; 0 when the connection was reset
	// before any response.
	status     int
	start, end time.Time
}

// maxRequestLine bounds one line of the log: a request URI longer than
// the HTTP server's header limit (1 MB) never reaches the log.
const maxRequestLine = 2 << 20

// readRequestLogFile reads a request log file.
func readRequestLogFile(path string) ([]requestLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open request log: %w", err)
	}
	defer f.Close()
	lines, err := readRequestLog(f)
	if err != nil {
		return nil, fmt.Errorf("request log %s: %w", path, err)
	}
	return lines, nil
}

// readRequestLog parses a request log. Empty lines are skipped; any other
// malformed line is an error naming its number. Host names and addresses
// are shared between lines (a million requests to a thousand hosts hold a
// thousand strings).
func readRequestLog(r io.Reader) ([]requestLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRequestLine)
	hosts := map[string]string{}
	var out []requestLine
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" {
			continue
		}
		l, err := parseRequestLine(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		l.host = intern(hosts, l.host)
		l.addr = intern(hosts, l.addr)
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return out, nil
}

// intern returns the copy of s held in m, adding s if it is new.
func intern(m map[string]string, s string) string {
	if v, ok := m[s]; ok {
		return v
	}
	m[s] = s
	return s
}

// parseRequestLine parses one line: connection id, host, path, status,
// start and end (RFC 3339 with nanoseconds), the IP address that
// answered and "tls" or "tcp", tab-separated, then "cond" on a
// conditional request. Lines of logs written before the address was
// recorded have the first six fields only (their address is ""), before
// the scheme the first seven (tcp). The end must not be before the start.
func parseRequestLine(text string) (requestLine, error) {
	f := strings.Split(text, "\t")
	if len(f) < 6 || len(f) > 9 {
		return requestLine{}, fmt.Errorf("%d tab-separated fields, want 8, or 9 on a conditional request (6 or 7 in old logs)", len(f))
	}
	var l requestLine
	if len(f) == 9 {
		if f[8] != "cond" {
			return requestLine{}, fmt.Errorf("ninth field %q: want cond", f[8])
		}
		l.conditional = true
		f = f[:8]
	}
	var err error
	if l.conn, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return requestLine{}, fmt.Errorf("connection id %q: %w", f[0], err)
	}
	l.host, l.path = f[1], f[2]
	if l.status, err = strconv.Atoi(f[3]); err != nil || l.status < 0 || l.status > 999 {
		return requestLine{}, fmt.Errorf("status %q: not a number from 0 to 999", f[3])
	}
	if l.start, err = time.Parse(time.RFC3339Nano, f[4]); err != nil {
		return requestLine{}, fmt.Errorf("start: %w", err)
	}
	if l.end, err = time.Parse(time.RFC3339Nano, f[5]); err != nil {
		return requestLine{}, fmt.Errorf("end: %w", err)
	}
	if l.end.Before(l.start) {
		return requestLine{}, errors.New("end before start")
	}
	if len(f) == 8 {
		switch f[7] {
		case "tls":
			l.tls = true
		case "tcp":
		default:
			return requestLine{}, fmt.Errorf("transport %q: want tls or tcp", f[7])
		}
	}
	if len(f) >= 7 {
		a, err := netip.ParseAddr(f[6])
		if err != nil {
			return requestLine{}, fmt.Errorf("address: %w", err)
		}
		l.addr = a.String()
	}
	return l, nil
}

// duration is how long the server took to answer.
func (l requestLine) duration() time.Duration { return l.end.Sub(l.start) }
