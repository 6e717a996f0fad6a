package warcio_test

import (
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestName pins the WARC file names (docs/format/harvest.md, "WARC file
// names"): what String writes, ParseName reads back, and nothing else.
func TestName(t *testing.T) {
	start := time.Date(2026, 11, 22, 2, 3, 11, 500, time.FixedZone("CLT", -3*3600))
	for _, tt := range []struct {
		n    warcio.Name
		want string
	}{
		{warcio.Name{Prefix: "wire", Time: start, Batch: 42, ShardI: 1, ShardN: 1, Serial: 1}, "wire-20261122050311-000042-s1of1-00001.warc.gz"},
		{warcio.Name{Prefix: "wire", Time: start, Batch: 42, Serial: 7}, "wire-20261122050311-000042-s1of1-00007.warc.gz"},
		{warcio.Name{Prefix: "cl-bn.2026", Time: start, Batch: 1234567, ShardI: 3, ShardN: 16, Serial: 123456}, "cl-bn.2026-20261122050311-1234567-s3of16-123456.warc.gz"},
	} {
		got := tt.n.String()
		if got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.n, got, tt.want)
		}
		back, ok := warcio.ParseName(got)
		if !ok || back.String() != got || back.Prefix != tt.n.Prefix || back.Batch != tt.n.Batch || back.Serial != tt.n.Serial || !back.Time.Equal(start.Truncate(time.Second)) {
			t.Errorf("ParseName(%s) = %+v, %v", got, back, ok)
		}
		if s, ok := warcio.SerialOf(got); !ok || s != tt.n.Serial {
			t.Errorf("SerialOf(%s) = %d, %v", got, s, ok)
		}
	}
	for _, old := range []string{"data-00001.warc.gz", "data-s2of4-00003.warc.gz"} {
		if _, ok := warcio.ParseName(old); ok {
			t.Errorf("ParseName accepted the old name %s", old)
		}
		if s, ok := warcio.SerialOf(old); !ok || s != int(old[len(old)-len("1.warc.gz")]-'0') {
			t.Errorf("SerialOf(%s) = %d, %v", old, s, ok)
		}
	}
	for _, bad := range []string{
		"wire-20261122050311-000042-s1of1-00001.warc",    // suffix
		"wire-20261122050311-000042-s1of1-0001.warc.gz",  // serial too short
		"wire-20261122050311-42-s1of1-00001.warc.gz",     // batch too short
		"wire-20261322050311-000042-s1of1-00001.warc.gz", // month 13
		"wire-2026112205031-000042-s1of1-00001.warc.gz",  // time too short
		"wire-20261122050311-000042-s3of2-00001.warc.gz", // shard past N
		"wire-20261122050311-000042-s0of2-00001.warc.gz",
		"wire-20261122050311-000042-s01of2-00001.warc.gz",
		"wire-20261122050311-000042-1of2-00001.warc.gz",
		"-20261122050311-000042-s1of1-00001.warc.gz", // no prefix
		"a/b-20261122050311-000042-s1of1-00001.warc.gz",
		"20261122050311-000042-s1of1-00001.warc.gz",
		"",
	} {
		if n, ok := warcio.ParseName(bad); ok {
			t.Errorf("ParseName(%q) = %+v, want not a name", bad, n)
		}
	}
	for _, p := range []string{"wire", "CL-2026", "a", "x.y_z-1"} {
		if err := warcio.CheckPrefix(p); err != nil {
			t.Errorf("CheckPrefix(%q): %v", p, err)
		}
	}
	for _, p := range []string{"", "-a", ".a", "a/b", "a b", "é", string(make([]byte, 65))} {
		if err := warcio.CheckPrefix(p); err == nil {
			t.Errorf("CheckPrefix(%q) accepted", p)
		}
	}
}
