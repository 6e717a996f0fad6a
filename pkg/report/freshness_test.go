package report

import (
	"context"
	"math"
	"testing"
	"time"
)

// changeFixture is four fetched pages' estimates, on two sites and two
// depths.
var changeFixture = []PageChange{
	{Site: "http://a.cl", Depth: 0, Lambda: 1, Age: 24 * time.Hour, Revisits: 4, Changed: 3},    // F e^-1, interval 1 day
	{Site: "http://a.cl", Depth: 1, Lambda: 0.5, Age: 48 * time.Hour, Revisits: 2, Changed: 0},  // F e^-1, 2 days
	{Site: "http://a.cl", Depth: 1, Lambda: 0.1, Age: 0, Revisits: 0, Changed: 0},               // F 1, 10 days
	{Site: "http://b.cl", Depth: 0, Lambda: 0.25, Age: 96 * time.Hour, Revisits: 1, Changed: 1}, // F e^-1, 4 days
}

// fixedChanges supplies changeFixture (Options.Changes).
func fixedChanges(_ context.Context, fn func(PageChange) error) error {
	for _, c := range changeFixture {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// TestCollectFreshness: the estimated freshness is the mean of
// exp(−λ·age); the rows by depth and by site (most pages first, Top of
// them) have the median interval 1/λ (in days of the time scale), the
// revisits and the changes found.
func TestCollectFreshness(t *testing.T) {
	f, err := collectFreshness(context.Background(), fixedChanges, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	e1 := math.Exp(-1)
	if f.Pages != 4 || math.Abs(f.Estimated-(3*e1+1)/4) > 1e-12 || f.Revisits != 7 || f.Changed != 4 || f.TimeScale != 0 {
		t.Errorf("whole %+v", f)
	}
	if len(f.ByDepth) != 2 || f.ByDepth[0].Pages != 2 || f.ByDepth[0].MedianInterval != 1 || f.ByDepth[1].MedianInterval != 2 || math.Abs(f.ByDepth[1].Freshness-(e1+1)/2) > 1e-12 {
		t.Errorf("by depth %+v", f.ByDepth)
	}
	if len(f.BySite) != 1 || f.BySite[0].Label != "http://a.cl" || f.BySite[0].Pages != 3 || f.BySite[0].MedianInterval != 2 || f.BySite[0].Changed != 3 {
		t.Errorf("by site %+v", f.BySite)
	}
	// At time scale 1/1440 a day of the clock lasts a minute: the
	// same rates are 1,440 times the intervals in its days.
	f, err = collectFreshness(context.Background(), fixedChanges, 1.0/1440, 5)
	if err != nil {
		t.Fatal(err)
	}
	if f.TimeScale != 1.0/1440 || math.Abs(f.ByDepth[0].MedianInterval-1440) > 1e-9 || len(f.BySite) != 2 {
		t.Errorf("scaled: %+v", f)
	}
}
