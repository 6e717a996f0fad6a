package gatherer

import (
	"runtime/debug"
	"testing"
)

// gcPercent returns the current GOGC setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneGC(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		before    int
		want      int // while tuned
	}{
		{"GOGC unset", "", 100, GCPercent},
		{"GOGC unset, other default", "", 50, GCPercent},
		{"GOGC set by the operator", "150", 150, 150},
		{"GOGC=off set by the operator", "off", -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.env)
			old := debug.SetGCPercent(tc.before)
			defer debug.SetGCPercent(old)
			restore := TuneGC()
			if got := gcPercent(); got != tc.want {
				t.Errorf("tuned: GOGC %d, want %d", got, tc.want)
			}
			restore()
			if got := gcPercent(); got != tc.before {
				t.Errorf("restored: GOGC %d, want %d", got, tc.before)
			}
		})
	}
}
