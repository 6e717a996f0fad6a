package testweb

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestPagesScalesSiteSizes(t *testing.T) {
	tests := []struct {
		hosts, maxPages, pages int
	}{
		{100, 400, 5000},
		{1000, 2000, 100000},
		{10000, 20000, 1000000}, // the scale run of scripts/bench-crawl.sh
	}
	for _, tc := range tests {
		start := time.Now()
		w, err := New(Config{Seed: 1, Hosts: tc.hosts, MaxPages: tc.maxPages, Pages: tc.pages})
		if err != nil {
			t.Fatal(err)
		}
		built := time.Since(start)
		sizes := make([]int, 0, tc.hosts)
		total := 0
		for _, s := range w.sites[:w.nIn] {
			sizes = append(sizes, s.pages)
			total += s.pages
		}
		sort.Ints(sizes)
		median, largest := sizes[len(sizes)/2], sizes[len(sizes)-1]
		t.Logf("%d hosts, Pages %d: total %d, median %d, largest %d, PageCount %d, built in %v",
			tc.hosts, tc.pages, total, median, largest, w.PageCount(), built)
		if total < tc.pages || total > tc.pages+tc.pages/100 {
			t.Errorf("total %d pages, want about %d", total, tc.pages)
		}
		if largest != tc.maxPages || median*10 > largest {
			t.Errorf("not heavy-tailed: median %d, largest %d", median, largest)
		}
	}
	if _, err := New(Config{Hosts: 10, MaxPages: 10, Pages: 100}); err == nil {
		t.Error("Pages >= Hosts*MaxPages accepted")
	}
	if _, err := New(Config{Pages: -1}); err == nil {
		t.Error("negative Pages accepted")
	}
}

func TestForEachPageMatchesURLsAndPage(t *testing.T) {
	w := startWeb(t, Config{Seed: 12, Hosts: 50, MaxPages: 100, Hostile: true})
	var got []string
	err := w.ForEachPage(func(info PageInfo) error {
		got = append(got, info.URL)
		if len(got)%7 == 0 {
			want, ok := w.Page(info.URL)
			if !ok || !reflect.DeepEqual(want, info) {
				t.Fatalf("ForEachPage gave %+v, Page %+v", info, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != w.PageCount() {
		t.Errorf("%d pages, PageCount %d", len(got), w.PageCount())
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, w.URLs()) {
		t.Error("ForEachPage and URLs differ")
	}
	stop := errors.New("stop")
	n := 0
	if err := w.ForEachPage(func(PageInfo) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("stopping: %v after %d pages", err, n)
	}
}

func TestReachable(t *testing.T) {
	w := startWeb(t, Config{Seed: 19, Hosts: 200, Hostile: true})
	const token = "wirebot"
	got := w.Reachable(w.SeedURLs(1), token)
	inScope := map[string]bool{}
	for _, h := range w.HostNames() {
		inScope[h] = true
	}
	var want []string
	for _, u := range w.URLs() {
		if inScope[hostOf(t, u)] && !w.Disallowed(u, token) {
			want = append(want, u)
		}
	}
	// A host whose robots.txt answers 500 is closed to the crawler, and
	// what only it links is out of reach: Reachable may miss a little of
	// the model, never add to it.
	wantSet := map[string]bool{}
	for _, u := range want {
		wantSet[u] = true
	}
	for _, u := range got {
		if !wantSet[u] {
			t.Fatalf("Reachable gave %s, not an allowed in-scope page", u)
		}
	}
	t.Logf("reachable %d of %d allowed in-scope pages", len(got), len(want))
	if len(got) < len(want)*95/100 {
		t.Errorf("only %d of %d allowed pages reachable", len(got), len(want))
	}
	if !sort.StringsAreSorted(got) {
		t.Error("not sorted")
	}
	if r := w.Reachable([]string{"http://nowhere.cl/"}, token); len(r) != 0 {
		t.Errorf("reachable from an unknown host: %v", r)
	}
}

func TestHeavyPages(t *testing.T) {
	plain, err := New(Config{Seed: 4, Hosts: 300, MaxPages: 300})
	if err != nil {
		t.Fatal(err)
	}
	heavy, err := New(Config{Seed: 4, Hosts: 300, MaxPages: 300, HeavyPages: true})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	longer := 0
	for si := range plain.sites[:plain.nIn] {
		s := &plain.sites[si]
		for i := 0; i < s.pages; i++ {
			path := plain.pathOf(s, i, s.kindOf(i))
			rp, ip, _ := plain.respond(si, path, true)
			rh, ih, _ := heavy.respond(si, path, true)
			if !reflect.DeepEqual(ip, ih) {
				t.Fatalf("%s: truth changes with HeavyPages", path)
			}
			if len(rh.body) > len(rp.body) {
				longer++
			}
			if strings.HasPrefix(rh.ctype, "text/html") && rh.status == 200 {
				sizes = append(sizes, len(rh.body))
			}
		}
	}
	sort.Ints(sizes)
	median, p999, largest := sizes[len(sizes)/2], sizes[len(sizes)*999/1000], sizes[len(sizes)-1]
	t.Logf("%d HTML pages, %d with an appendix; median %d bytes, 99.9th percentile %d, largest %d", len(sizes), longer, median, p999, largest)
	if longer < len(sizes)/40 || longer > len(sizes)/10 {
		t.Errorf("%d of %d pages longer", longer, len(sizes))
	}
	if largest < 20*median || largest > 1<<20+100<<10 {
		t.Errorf("sizes not heavy-tailed or too big: median %d, largest %d", median, largest)
	}
}

func TestFixedPortKnownBeforeStart(t *testing.T) {
	w, err := New(Config{Seed: 1, Hosts: 5, HTTPAddr: "127.0.0.1:38117"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Port() != 38117 || !strings.Contains(w.SeedURLs(1)[0], ":38117/") {
		t.Errorf("port %d, seed %s", w.Port(), w.SeedURLs(1)[0])
	}
}
