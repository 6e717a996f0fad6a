package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestPartitionsCommand: on a web with subdomains and shared addresses,
// the address key splits no server and no unit, the registrable domain
// splits no unit but servers, and one partition is the whole web.
func TestPartitionsCommand(t *testing.T) {
	dir := t.TempDir()
	wc := testweb.Config{Seed: 5, Hosts: 60, MaxPages: 30, Addresses: 6, SubdomainShare: 0.5, HTTPAddr: "127.0.0.1:18080", DNSAddr: "127.0.0.1:18053"}
	web, err := testweb.New(wc)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(wc)
	webPath, seedPath := filepath.Join(dir, "web.json"), filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(webPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedPath, []byte(strings.Join(web.SeedURLs(5), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := newApp(&out).Run([]string{"crawlcheck", "partitions", "--web", webPath, "--seeds", seedPath, "--k", "1,3"}); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n")[2:] {
		if f := strings.Fields(line); len(f) == 9 {
			rows[f[0]+" "+f[1]] = f
		}
	}
	check := func(row string, ratio func(string) bool, addrSplit, unitSplit func(string) bool) {
		t.Helper()
		f := rows[row]
		if f == nil {
			t.Fatalf("no row %q in\n%s", row, out.String())
		}
		if !ratio(f[2]) || !addrSplit(f[3]) || !unitSplit(f[6]) {
			t.Errorf("%s: %v", row, f)
		}
	}
	zero := func(s string) bool { return s == "0" }
	some := func(s string) bool { return s != "0" }
	one := func(s string) bool { return s == "1.00" }
	anything := func(string) bool { return true }
	for _, key := range []string{"domain", "host", "address"} {
		check(key+" 1", one, zero, zero)
	}
	check("address 3", anything, zero, zero)
	check("domain 3", anything, some, zero)
	if err := newApp(&bytes.Buffer{}).Run([]string{"crawlcheck", "partitions", "--web", webPath, "--seeds", seedPath, "--k", "2,x"}); err == nil || !strings.Contains(err.Error(), "--k") {
		t.Errorf("bad --k: %v", err)
	}
}
