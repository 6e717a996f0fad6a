package linkgraph

import "testing"

// TestValidatorsTrusted: the rule and the window.
func TestValidatorsTrusted(t *testing.T) {
	for _, tc := range []struct {
		v    *Validators
		want bool
	}{
		{nil, true},
		{&Validators{Agree: 10}, true},
		{&Validators{Disagree: 2}, true},            // too few to judge
		{&Validators{Disagree: 3}, false},           // three, all of them
		{&Validators{Agree: 12, Disagree: 4}, true}, // a quarter: within the noise of dates
		{&Validators{Agree: 11, Disagree: 4}, false},
	} {
		if got := tc.v.Trusted(); got != tc.want {
			t.Errorf("%+v: trusted %v, want %v", tc.v, got, tc.want)
		}
	}
	v := &Validators{Agree: 200, Disagree: 55}
	v.Add(false)
	if v.Agree != 100 || v.Disagree != 28 {
		t.Errorf("after the window: %+v, want halved to 100 and 28", v)
	}
}
