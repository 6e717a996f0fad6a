package tally

import "testing"

func TestFormat(t *testing.T) {
	tests := []struct {
		m    map[string]int
		want string
	}{
		{nil, ""},
		{map[string]int{"timeout": 1}, "timeout 1"},
		{map[string]int{"b": 2, "a": 2, "c": 5}, "c 5, a 2, b 2"},
	}
	for _, tc := range tests {
		if got := Format(tc.m); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
