package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Metrics says where the stages publish their Prometheus metrics
// (docs/operations.md, "Metrics").
type Metrics struct {
	Dir    string `toml:"dir" doc:"Directory where every stage run writes its metrics as STAGE.prom in Prometheus' text format, for node_exporter's textfile collector; empty turns the files off. A relative path is relative to the collection directory."`
	Listen string `toml:"listen" doc:"Address (host:port, or a port alone for 127.0.0.1) on which a harvester run serves the same metrics live over HTTP at /metrics; empty turns it off."`
}

func defaultMetrics() Metrics { return Metrics{} }

// validate reports the settings of the section that are out of range.
func (c *Metrics) validate(bad func(key, format string, args ...any)) {
	if c.Listen != "" {
		if _, err := c.ListenAddr(); err != nil {
			bad("metrics.listen", "%v", err)
		}
	}
}

// ListenAddr is metrics.listen as an address to listen on: a port alone
// ("9464" or ":9464") is bound to 127.0.0.1, so the metrics stay on the
// machine unless a host is named.
func (c Metrics) ListenAddr() (string, error) {
	s := strings.TrimPrefix(c.Listen, ":")
	if _, err := strconv.ParseUint(s, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", s), nil
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return "", fmt.Errorf("want host:port or a port, got %s", excerpt.Quote(c.Listen))
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("want a port number, got %s", excerpt.Quote(port))
	}
	return net.JoinHostPort(host, port), nil
}

// Collection holds the settings of the collection directory itself.
type Collection struct {
	MinFree string `toml:"min_free" doc:"Free space the file system of the collection must keep, in bytes (with an optional unit: 500MB, 20GiB) or as a percentage of its size (5%). The manager writes no batch expected to cross it, the harvester ends its batch when it is reached, the gatherer and the seeder do not start: each exits with code 7 (disk full). 0 turns the check off."`
}

func defaultCollection() Collection { return Collection{MinFree: "1GiB"} }

// validate reports the settings of the section that are out of range.
func (c *Collection) validate(bad func(key, format string, args ...any)) {
	if _, err := ParseFreeSpace(c.MinFree); err != nil {
		bad("collection.min_free", "%v", err)
	}
}

// FreeSpace is an amount of free space to keep: Bytes, or Percent of
// the file system's size when Percent > 0.
type FreeSpace struct {
	Bytes   int64
	Percent float64
}

// Of returns the free space to keep on a file system of size bytes.
func (f FreeSpace) Of(size int64) int64 {
	if f.Percent > 0 {
		return int64(float64(size) * f.Percent / 100)
	}
	return f.Bytes
}

// String writes f as it is written in the config.
func (f FreeSpace) String() string {
	if f.Percent > 0 {
		return strconv.FormatFloat(f.Percent, 'g', -1, 64) + "%"
	}
	return strconv.FormatInt(f.Bytes, 10)
}

// units are the byte units ParseFreeSpace accepts, longest first.
var units = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseFreeSpace reads collection.min_free: a number of bytes with an
// optional unit (B, KB, MB, GB, TB as powers of 1000; KiB, MiB, GiB, TiB,
// and K, M, G, T, as powers of 1024), or a percentage below 100 ("5%").
// Empty and "0" mean no limit.
func ParseFreeSpace(s string) (FreeSpace, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return FreeSpace{}, nil
	}
	if p, ok := strings.CutSuffix(t, "%"); ok {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(x >= 0 && x < 100) {
			return FreeSpace{}, fmt.Errorf("want a percentage from 0 to below 100, got %s", excerpt.Quote(s))
		}
		return FreeSpace{Percent: x}, nil
	}
	mult := 1.0
	for _, u := range units {
		if n, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || !(x >= 0) || x*mult > 1<<62 {
		return FreeSpace{}, fmt.Errorf("want bytes (e.g. 500MB, 20GiB) or a percentage (5%%), got %s", excerpt.Quote(s))
	}
	return FreeSpace{Bytes: int64(x * mult)}, nil
}
