package config

import "testing"

func TestParseFreeSpace(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    FreeSpace
		wantErr bool
	}{
		{"", FreeSpace{}, false},
		{"0", FreeSpace{}, false},
		{"1048576", FreeSpace{Bytes: 1 << 20}, false},
		{"500MB", FreeSpace{Bytes: 500e6}, false},
		{"20GiB", FreeSpace{Bytes: 20 << 30}, false},
		{"1.5 G", FreeSpace{Bytes: 3 << 29}, false},
		{"64K", FreeSpace{Bytes: 64 << 10}, false},
		{"5%", FreeSpace{Percent: 5}, false},
		{" 2.5 % ", FreeSpace{Percent: 2.5}, false},
		{"100%", FreeSpace{}, true},
		{"-1", FreeSpace{}, true},
		{"-5%", FreeSpace{}, true},
		{"lots", FreeSpace{}, true},
		{"NaN", FreeSpace{}, true},
		{"1e30TB", FreeSpace{}, true},
	} {
		got, err := ParseFreeSpace(c.in)
		if (err != nil) != c.wantErr || (err == nil && got != c.want) {
			t.Errorf("ParseFreeSpace(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.wantErr)
		}
	}
	if got := (FreeSpace{Percent: 10}).Of(1000); got != 100 {
		t.Errorf("10%% of 1000 = %d", got)
	}
	if got := (FreeSpace{Bytes: 7}).Of(1000); got != 7 {
		t.Errorf("7 bytes of 1000 = %d", got)
	}
}

func TestListenAddr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"9464", "127.0.0.1:9464"},
		{":9464", "127.0.0.1:9464"},
		{"0.0.0.0:9464", "0.0.0.0:9464"},
		{"[::1]:80", "[::1]:80"},
		{"host", ""},
		{"x:y", ""},
	} {
		got, err := Metrics{Listen: c.in}.ListenAddr()
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzParseFreeSpace: any text either fails or gives a limit that is
// not negative, a percentage below 100, and reads back the same.
func FuzzParseFreeSpace(f *testing.F) {
	for _, s := range []string{"", "0", "1GiB", "500MB", "5%", "2.5 %", "1e3K", "-1", "100%", "NaN%", "9999999999T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParseFreeSpace(s)
		if err != nil {
			return
		}
		if fs.Bytes < 0 || fs.Percent < 0 || fs.Percent >= 100 {
			t.Fatalf("ParseFreeSpace(%q) = %+v", s, fs)
		}
		again, err := ParseFreeSpace(fs.String())
		if err != nil || again != fs {
			t.Fatalf("ParseFreeSpace(%q) = %+v, read back from %q as %+v, %v", s, fs, fs.String(), again, err)
		}
	})
}
