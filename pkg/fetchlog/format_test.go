package fetchlog

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// sprintfFormat is the fetch log line as Format made it with fmt.Sprintf
// before AppendFormat: the reference the new formatter must match byte
// for byte.
func sprintfFormat(r *Record) string {
	return fmt.Sprintf("%d\t%s\t%d\t%d\t%s\t%s\t%d\t%s\t%d\t%d\t%s\t%s\n",
		r.DocID, clean(r.URL), r.Status, r.Bytes, clean(r.MIME), r.Fetched.UTC().Format(time.RFC3339Nano),
		r.Millis, clean(r.WARC), r.Offset, r.Length, clean(r.Location), clean(r.Err))
}

// randomText draws a field: empty, plain, or with the bytes clean
// handles (tabs, line ends, non-ASCII, invalid UTF-8, a lone "-").
func randomText(rng *rand.Rand) string {
	pieces := []string{"", "-", "http://a.cl/x?q=1", "text/html", "data-00001.warc.gz", "timeout: read",
		"\t", "\n", "\r", "\r\n", "ñandú", "\xff", "\xe2\x82", "日本", " ", "\x00", "\U0001F600", "%41", "\u2028", "\xed\xa0\x80"}
	var s string
	for n := rng.IntN(5); n > 0; n-- {
		s += pieces[rng.IntN(len(pieces))]
	}
	return s
}

// randomInt64 draws from small values, boundaries and the whole range.
func randomInt64(rng *rand.Rand) int64 {
	switch rng.IntN(4) {
	case 0:
		return []int64{0, -1, 1, math.MaxInt64, math.MinInt64, 10, 999, 1000}[rng.IntN(8)]
	case 1:
		return int64(rng.Uint64())
	default:
		return rng.Int64N(1 << 32)
	}
}

// randomTime draws instants in several zones, with and without
// fractions of a second (RFC3339Nano drops trailing zeros), the zero
// time and years outside 0000-9999.
func randomTime(rng *rand.Rand) time.Time {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("CLT", -3*3600), time.FixedZone("odd", 5*3600+1800+17)}
	switch rng.IntN(6) {
	case 0:
		return time.Time{}
	case 1:
		return time.Date(rng.IntN(30000)-10000, time.Month(rng.IntN(12)+1), rng.IntN(28)+1, rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, zones[rng.IntN(len(zones))])
	}
	ns := []int{0, 1, 10, 100000, 456789000, 999999999, rng.IntN(1e9)}[rng.IntN(7)]
	return time.Unix(rng.Int64N(4e9), int64(ns)).In(zones[rng.IntN(len(zones))])
}

// TestAppendFormatMatchesSprintf: AppendFormat (and so Format) writes
// exactly the bytes the fmt.Sprintf formatter wrote, on many random
// records and on the samples, appended to an existing buffer too.
func TestAppendFormatMatchesSprintf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := sample()
	for range 50000 {
		recs = append(recs, Record{
			DocID: rng.Uint64() >> uint(rng.IntN(64)), URL: randomText(rng), Status: int(randomInt64(rng)),
			Bytes: randomInt64(rng), MIME: randomText(rng), Fetched: randomTime(rng), Millis: randomInt64(rng),
			WARC: randomText(rng), Offset: randomInt64(rng), Length: randomInt64(rng),
			Location: randomText(rng), Err: randomText(rng),
		})
	}
	buf := []byte("prefix")
	for i := range recs {
		want := sprintfFormat(&recs[i])
		if got := recs[i].Format(); got != want {
			t.Fatalf("record %+v:\n got %q\nwant %q", recs[i], got, want)
		}
		buf = recs[i].AppendFormat(buf[:6])
		if string(buf) != "prefix"+want {
			t.Fatalf("appended to a buffer, record %+v:\n got %q\nwant %q", recs[i], buf, "prefix"+want)
		}
	}
}

// BenchmarkFormat: one fetch log line of a page, as the harvester makes
// it (AppendFormat into a reused buffer) and as Format returns it.
func BenchmarkFormat(b *testing.B) {
	r := sample()[0]
	r.URL = "http://www.example.cl/some/path/to/a/page-1234.html"
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = r.AppendFormat(buf[:0])
		}
	})
	b.Run("format", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = r.Format()
		}
	})
	b.Run("sprintf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = sprintfFormat(&r)
		}
	})
}

// BenchmarkRead: reading back a fetch log of 2,400 page lines (the
// harvester reads its log once at the end of a run to check it).
func BenchmarkRead(b *testing.B) {
	r := sample()[0]
	r.URL = "http://www.example.cl/some/path/to/a/page-1234.html"
	data := []byte(Header())
	for i := range 2400 {
		r.DocID, r.Offset = uint64(i), int64(i)*2500
		data = r.AppendFormat(data)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if recs, err := Read(bytes.NewReader(data)); err != nil || len(recs) != 2400 {
			b.Fatal(len(recs), err)
		}
	}
}
