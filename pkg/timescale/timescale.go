// Package timescale compresses the time of the freshness machinery: one
// factor s (manager.time_scale) multiplies each of its durations, so a
// recrawl experiment runs in minutes with the code a year-long crawl uses
// (docs/manager.md, "Time scale"). The freshness code asks a Scale for
// every duration it uses; no other code multiplies them.
package timescale

import (
	"fmt"
	"math"
	"time"
)

// Bounds of s. Below Min a day lasts under 0.9 s, finer than the
// one-second resolution of the HTTP dates (Last-Modified) the change-rate
// estimator reads; above Max time would be stretched, not compressed, and
// the longest scaled duration (3 years, the report's last age class)
// must still fit a time.Duration.
const (
	Min = 1e-5
	Max = 1
)

// Scale is the factor s that multiplies durations: 1 is time as it is,
// 1.0/1440 turns a day into a minute. The zero value is 1, so a zero
// Options field of a stage means real time.
type Scale float64

// Real is time as it is (s = 1).
const Real Scale = 1

// Factor returns s (1 for the zero value).
func (s Scale) Factor() float64 {
	if s == 0 {
		return 1
	}
	return float64(s)
}

// D returns d·s, rounded to the nanosecond. At s = 1 it is d.
func (s Scale) D(d time.Duration) time.Duration {
	f := s.Factor()
	if f == 1 {
		return d
	}
	return time.Duration(math.Round(float64(d) * f))
}

// Rate returns a rate given in events per real day (r per 24 h) at the
// scale: r / s, since one of its days lasts s real days.
func (s Scale) Rate(r float64) float64 { return r / s.Factor() }

// String writes s and what a day becomes: "1" at s = 1, else e.g.
// "0.000694444 (a day lasts 1m0s)".
func (s Scale) String() string {
	if s.Factor() == 1 {
		return "1"
	}
	return fmt.Sprintf("%.6g (a day lasts %s)", s.Factor(), s.D(24*time.Hour))
}

// Check reports whether s is a usable factor: a finite number between
// Min and Max.
func Check(s float64) error {
	if math.IsNaN(s) || s < Min || s > Max {
		return fmt.Errorf("must be between %g and %g (1/1440 = 0.000694444444444444 turns a day into a minute), got %g", float64(Min), float64(Max), s)
	}
	return nil
}
