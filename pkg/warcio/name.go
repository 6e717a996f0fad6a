package warcio

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The names of the harvester's WARC files (docs/format/harvest.md, "WARC
// file names"): PREFIX-TIME-BATCH-SHARD-SERIAL.warc.gz, unique across a
// collection, its batches and its harvester shards, and across
// collections that use different prefixes or were harvested at other
// times, as archives that gather WARC files from many crawls (an index,
// a WACZ) expect. Before issue 37 the names were PREFIX-SERIAL.warc.gz
// (data-00001.warc.gz in every batch); readers never parse a name (they
// take it from the fetch log), so both kinds keep reading.

// Suffix ends the name of every WARC file the harvester writes.
const Suffix = ".warc.gz"

// NameTimeLayout is the layout of a name's TIME field: the harvest's
// start, UTC, to the second (the 14-digit timestamp of WARC and CDX).
const NameTimeLayout = "20060102150405"

// DefaultPrefix is the default of harvester.warc_prefix.
const DefaultPrefix = "wire"

// MaxPrefix is the longest prefix a name may have, in bytes.
const MaxPrefix = 64

// Name is the name of one WARC file of a harvest. Time is the harvest's
// start, which a resumed run keeps; Serial counts the harvest's files
// from 1.
type Name struct {
	Prefix string    // harvester.warc_prefix: letters, digits, '.', '_', '-'
	Time   time.Time // when the harvest started (second precision, UTC)
	Batch  int       // batch id (0 for a bare directory without one)
	ShardI int       // shard I of N; 1 of 1 for a whole batch
	ShardN int
	Serial int // 1, 2, … in the order the harvest opened its files
}

// String is the file name: PREFIX-YYYYMMDDhhmmss-BATCH-sIofN-SERIAL.warc.gz
// with BATCH at least six digits and SERIAL at least five, e.g.
// wire-20261122020311-000042-s1of1-00001.warc.gz.
func (n Name) String() string {
	i, total := n.ShardI, n.ShardN
	if total < 1 {
		i, total = 1, 1
	}
	return fmt.Sprintf("%s-%s-%06d-s%dof%d-%05d%s", n.Prefix, n.Time.UTC().Format(NameTimeLayout), n.Batch, i, total, n.Serial, Suffix)
}

// CheckPrefix tells what is wrong with a name prefix, or nil: it must be
// 1 to MaxPrefix bytes of ASCII letters, digits, '.', '_' and '-',
// beginning with a letter or a digit (a name is also a path element and
// a WACZ resource name).
func CheckPrefix(p string) error {
	if p == "" || len(p) > MaxPrefix {
		return fmt.Errorf("want 1 to %d characters, got %d", MaxPrefix, len(p))
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return fmt.Errorf("want letters, digits, '.', '_' and '-' (not first), got %q at byte %d", c, i)
		}
	}
	return nil
}

// ParseName reads a name String wrote; ok is false for any other name
// (an old PREFIX-SERIAL.warc.gz among them). The fields are read from the
// right, so a prefix may hold '-'.
func ParseName(name string) (n Name, ok bool) {
	rest, ok := strings.CutSuffix(name, Suffix)
	if !ok {
		return Name{}, false
	}
	field := func() string {
		i := strings.LastIndexByte(rest, '-')
		if i < 0 {
			ok = false
			return ""
		}
		f := rest[i+1:]
		rest = rest[:i]
		return f
	}
	serial, shard, batch, stamp := field(), field(), field(), field()
	if !ok || CheckPrefix(rest) != nil {
		return Name{}, false
	}
	n.Prefix = rest
	if n.Serial, ok = digits(serial, 5); !ok {
		return Name{}, false
	}
	if n.Batch, ok = digits(batch, 6); !ok {
		return Name{}, false
	}
	si, sn, cut := strings.Cut(strings.TrimPrefix(shard, "s"), "of")
	if !cut || !strings.HasPrefix(shard, "s") {
		return Name{}, false
	}
	if n.ShardI, ok = digits(si, 1); !ok {
		return Name{}, false
	}
	if n.ShardN, ok = digits(sn, 1); !ok || n.ShardI < 1 || n.ShardI > n.ShardN {
		return Name{}, false
	}
	if len(stamp) != len(NameTimeLayout) {
		return Name{}, false
	}
	t, err := time.Parse(NameTimeLayout, stamp)
	if err != nil {
		return Name{}, false
	}
	n.Time = t
	return n, n.String() == name
}

// SerialOf returns the serial number at the end of any harvester WARC
// file name, new (ParseName) or old (PREFIX-NNNNN.warc.gz): the digits
// between the last '-' and the suffix, at least five of them.
func SerialOf(name string) (int, bool) {
	rest, ok := strings.CutSuffix(name, Suffix)
	if !ok {
		return 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return 0, false
	}
	return digits(rest[i+1:], 5)
}

// digits reads a decimal number of at least min digits (and at most 9,
// so it never overflows), nothing else.
func digits(s string, min int) (int, bool) {
	if len(s) < min || len(s) > 9 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
