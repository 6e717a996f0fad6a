package timescale

import (
	"math"
	"strings"
	"testing"
	"time"
)

const day = 24 * time.Hour

// TestD: each duration of the freshness machinery (issue 35) at the
// scales an experiment uses; s = 1 and the zero value leave it as it is.
func TestD(t *testing.T) {
	minute := Scale(1.0 / 1440) // a day becomes a minute
	tests := []struct {
		name string
		s    Scale
		d    time.Duration
		want time.Duration
	}{
		{"real time: the prior", Real, 30 * day, 30 * day},
		{"zero value is real time", 0, 365 * day, 365 * day},
		{"prior, one change per 30 days", minute, 30 * day, 30 * time.Minute},
		{"Last-Modified cap, 365 days", minute, 365 * day, 365 * time.Minute},
		{"lying-sitemap window, 1 h", minute, time.Hour, 2500 * time.Millisecond},
		{"sitemap future slack, 24 h", minute, day, time.Minute},
		{"min_revisit, 7 days", minute, 7 * day, 7 * time.Minute},
		{"last age class, 3 years", minute, 3 * 365 * day, 3 * 365 * time.Minute},
		{"an hour becomes a second", 1.0 / 3600, time.Hour, time.Second},
		{"half speed", 0.5, 7 * day, 84 * time.Hour},
		// The float nearest 1/1440 as TOML gives it back to 18 digits.
		{"1/1440 written out", 0.000694444444444444, 30 * day, 30 * time.Minute},
		{"smallest scale", Min, day, 864 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := tt.s.D(tt.d); got != tt.want {
			t.Errorf("%s: %g × %s = %s, want %s", tt.name, tt.s.Factor(), tt.d, got, tt.want)
		}
	}
}

// TestRate: a rate per day is per scaled day (a sitemap's "daily").
func TestRate(t *testing.T) {
	for _, tt := range []struct {
		s         Scale
		r, want   float64
		wantDescr string
	}{
		{Real, 1, 1, "1"},
		{0, 1.0 / 7, 1.0 / 7, "1"},
		{1.0 / 1440, 1, 1440, "0.000694444 (a day lasts 1m0s)"},
		{0.5, 24, 48, "0.5 (a day lasts 12h0m0s)"},
	} {
		if got := tt.s.Rate(tt.r); math.Abs(got-tt.want) > 1e-9*tt.want {
			t.Errorf("s = %g: rate %g per day is %g, want %g", tt.s.Factor(), tt.r, got, tt.want)
		}
		if got := tt.s.String(); got != tt.wantDescr {
			t.Errorf("s = %g: String %q, want %q", tt.s.Factor(), got, tt.wantDescr)
		}
	}
}

// TestCheck: the bounds of manager.time_scale.
func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		s  float64
		ok bool
	}{
		{1, true}, {1.0 / 1440, true}, {Min, true}, {0.5, true},
		{0, false}, {-1, false}, {-1.0 / 1440, false}, {Min / 2, false}, {1.0000001, false}, {1440, false},
		{math.NaN(), false}, {math.Inf(1), false}, {math.Inf(-1), false},
	} {
		err := Check(tt.s)
		if (err == nil) != tt.ok {
			t.Errorf("Check(%g) = %v, want ok %v", tt.s, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "1/1440") {
			t.Errorf("Check(%g): %v does not say how to turn a day into a minute", tt.s, err)
		}
	}
}

// FuzzScale: any s Check accepts scales every duration of the freshness
// machinery (up to the report's 3 years) to a positive duration no longer
// than the original, within a nanosecond of d·s, keeping their order.
func FuzzScale(f *testing.F) {
	for _, s := range []float64{1, 1.0 / 1440, Min, 0.5, 0, -1, math.NaN(), 2} {
		f.Add(s)
	}
	durations := []time.Duration{time.Hour, day, 7 * day, 30 * day, 365 * day, 3 * 365 * day}
	f.Fuzz(func(t *testing.T, s float64) {
		if Check(s) != nil {
			return
		}
		sc := Scale(s)
		prev := time.Duration(0)
		for _, d := range durations {
			got := sc.D(d)
			if got <= prev || got > d {
				t.Fatalf("s = %g: %s scaled to %s (previous %s)", s, d, got, prev)
			}
			if math.Abs(float64(got)-float64(d)*s) > 1 {
				t.Fatalf("s = %g: %s scaled to %s, not d·s", s, d, got)
			}
			prev = got
		}
		if r := sc.Rate(1); !(r >= 1) || math.IsInf(r, 0) {
			t.Fatalf("s = %g: a daily rate becomes %g", s, r)
		}
	})
}
