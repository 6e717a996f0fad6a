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

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 19: "1.5 MiB", 5 << 30: "5.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
