package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestPolitenessCommand audits two logs of a small heterogeneous web: a
// site and its alias asked 50 ms apart on one address (under the wait
// of 100 ms given by flag), and the same requests a second apart; and an
// old six-field log, audited per host name.
func TestPolitenessCommand(t *testing.T) {
	dir := t.TempDir()
	wc := testweb.Config{Seed: 5, Hosts: 30, MaxPages: 20, Heterogeneous: true, Hostile: true}
	data, err := json.Marshal(wc)
	if err != nil {
		t.Fatal(err)
	}
	webFile := filepath.Join(dir, "web.json")
	if err := os.WriteFile(webFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	web, err := testweb.New(wc)
	if err != nil {
		t.Fatal(err)
	}
	var bare, name string
	for bare, name = range web.Aliases() {
		break
	}
	if bare == "" {
		t.Fatal("no alias")
	}
	write := func(file string, gap time.Duration, addr string) string {
		p := filepath.Join(dir, file)
		l1 := logLine(1, name, "/", 200, 0, 10*time.Millisecond)
		l2 := logLine(2, bare, "/", 301, 10*time.Millisecond+gap, 20*time.Millisecond+gap)
		if addr != "" {
			l1 = strings.TrimSuffix(l1, "\n") + "\t" + addr + "\n"
			l2 = strings.TrimSuffix(l2, "\n") + "\t" + addr + "\n"
		}
		if err := os.WriteFile(p, []byte(l1+l2), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, log string
		fails     bool
		want      []string
	}{
		{"alias too soon", write("bad.tsv", 50*time.Millisecond, "127.77.0.2"), true,
			[]string{"wait 100ms", "address_wait 250ms", "1 unit(s): 50ms instead of 100ms", "60ms instead of 250ms", "politeness violations: 2", "endless.hostil.cl"}},
		{"alias a second later", write("good.tsv", time.Second, "127.77.0.2"), false,
			[]string{"politeness violations: 0"}},
		{"old log: per host name", write("old.tsv", 50*time.Millisecond, ""), false,
			[]string{"requests without an address 2", "politeness violations: 0"}},
	} {
		var out bytes.Buffer
		err := newApp(&out).Run([]string{"crawlcheck", "politeness", "--log", tc.log, "--web", webFile, "--wait", "100ms", "--label", "new"})
		if (err != nil) != tc.fails {
			t.Errorf("%s: error %v, want failure %v\n%s", tc.name, err, tc.fails, out.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
	}
	var out bytes.Buffer
	err = newApp(&out).Run([]string{"crawlcheck", "politeness", "--log", filepath.Join(dir, "good.tsv"), "--web", webFile, "--slack", "-1s"})
	if err == nil || !strings.Contains(err.Error(), "--slack must not be negative") {
		t.Errorf("negative slack: %v", err)
	}
}
