package collection

import (
	"strings"
	"testing"
)

// TestParseBatchRange: the forms of --batches (harvester index, wacz).
func TestParseBatchRange(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want BatchRange
		str  string
	}{
		{"3", BatchRange{3, 3}, "3"},
		{"3-7", BatchRange{3, 7}, "3-7"},
		{" 3-7 ", BatchRange{3, 7}, "3-7"},
		{"12-", BatchRange{12, 0}, "12-"},
		{"1-", BatchRange{1, 0}, "all"},
		{"000042", BatchRange{42, 42}, "42"},
		{"5-5", BatchRange{5, 5}, "5"},
	} {
		got, err := ParseBatchRange(tt.in)
		if err != nil || got != tt.want || got.String() != tt.str {
			t.Errorf("ParseBatchRange(%q) = %+v (%s), %v; want %+v (%s)", tt.in, got, got.String(), err, tt.want, tt.str)
		}
	}
	for _, bad := range []string{"", "-", "-7", "0", "0-3", "7-3", "a", "3-b", "3--7", "3-7-9", "+3", "1e3", "1234567890", "3 - 7", "3,7"} {
		if r, err := ParseBatchRange(bad); err == nil || !strings.Contains(err.Error(), "batch range") {
			t.Errorf("ParseBatchRange(%q) = %+v, %v; want an error", bad, r, err)
		}
	}
	r := BatchRange{3, 7}
	for id, want := range map[int]bool{2: false, 3: true, 7: true, 8: false} {
		if r.Has(id) != want {
			t.Errorf("%v.Has(%d) = %v", r, id, !want)
		}
	}
	if !(BatchRange{}).Has(1) || (BatchRange{}).String() != "all" {
		t.Error("the zero range is not every batch")
	}
}

// FuzzParseBatchRange: no input panics the parser, and a range it reads
// is written back to text it reads the same.
func FuzzParseBatchRange(f *testing.F) {
	for _, s := range []string{"3", "3-7", "12-", "0", "7-3", " 1-2 ", "999999999-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseBatchRange(s)
		if err != nil {
			return
		}
		if r.First < 1 || (r.Last != 0 && r.Last < r.First) {
			t.Fatalf("%q read as %+v", s, r)
		}
		text := r.String()
		if text == "all" {
			text = "1-"
		}
		back, err := ParseBatchRange(text)
		if err != nil || back != r {
			t.Fatalf("%q read as %+v, written %q, read back as %+v, %v", s, r, text, back, err)
		}
	})
}
