package scripts_test

// The collection in the archivists' own tools (issue 37): a crawl of the
// changing test web through the real binaries, several batches and two
// recrawls, is read record by record by warcio.js (its digests checked,
// its index against ours), and packed into a WACZ that ReplayWeb.page
// replays in headless Chromium, each page showing the text the test web
// served at capture time. The tools are the npm packages pinned in
// scripts/archtools (docs/operations.md, "Checked with the archivists'
// tools").

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/longtest"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// ReplayWeb.page, pinned: npm pack fetches its package (the prebuilt
// ui.js and sw.js are all the test needs; installed with its dependencies
// it pulls in Electron). The integrity is the registry's, checked.
const (
	replayWebPage          = "replaywebpage@2.5.3"
	replayWebPageIntegrity = "sha512-nCj2PSON3BxeSJKE8AsYPyULv0XPZKJWfy4l9PyQre9SqwLZ+WKZVs/sfLqPOQ4GrH+0YkjbwOhr8cSTH08gsQ=="
)

// archToolsDir holds package.json and package-lock.json (warcio.js and
// puppeteer-core, pinned) and the node scripts that drive them.
const archToolsDir = "archtools"

// archTools is an installation of the tools: node_modules and
// ReplayWeb.page's two files in a cache directory, and a run directory
// holding this checkout's scripts beside a link to node_modules.
type archTools struct {
	node    string // the node program
	run     string // directory of the scripts; node_modules links to the cache's
	uiJS    string // ReplayWeb.page's ui.js
	swJS    string // and its service worker, sw.js
	warcCLI string // warcio.js's command line (dist/cli.js)
}

func TestArchiveTools(t *testing.T) {
	longtest.Need(t, "reads a crawl's WARC files with warcio.js and replays its WACZ in ReplayWeb.page in headless Chromium")
	start := time.Now()
	node := longtest.Tool(t, "node", "nodejs")
	npm := longtest.Tool(t, "npm", "npm")
	chromium := longtest.Tool(t, "chromium", "chromium")
	tools := installArchTools(t, node, npm)
	t.Logf("tools ready in %v", time.Since(start).Round(time.Millisecond))

	bin := stageBinaries(t)
	a := crawlForArchive(t, bin)
	t.Logf("crawled in %v: %d batches, %d captures", time.Since(start).Round(time.Millisecond), len(a.batches), len(a.captures))

	warcs, _ := filepath.Glob(filepath.Join(a.col, collection.BatchesDir, "*", collection.HarvestDir, "*"+warcio.Suffix))
	revisits := checkWARCsWithWarcio(t, tools, warcs)
	compareIndexes(t, tools, warcs)

	wacz := filepath.Join(t.TempDir(), "crawl.wacz")
	a.env.wire(t, "harvester", "wacz", "-c", a.col, wacz)
	pages := a.pickReplays(t, revisits)
	// Nothing may come from the live web: it is gone before the replay.
	if err := a.env.web.Close(); err != nil {
		t.Fatal(err)
	}
	replayInReplayWebPage(t, tools, chromium, wacz, pages)
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

// installArchTools installs the pinned packages (npm ci from
// scripts/archtools's lock file, and npm pack of ReplayWeb.page) into a
// cache directory keyed by what is pinned, once: later runs reuse it. It
// skips the test, saying why, when npm cannot get them (or fails it in CI
// as root on Debian: longtest.Unavailable).
func installArchTools(t *testing.T, node, npm string) *archTools {
	t.Helper()
	pkg, err := os.ReadFile(filepath.Join(archToolsDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(archToolsDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(slices.Concat(pkg, []byte{0}, lock, []byte{0}, []byte(replayWebPage+" "+replayWebPageIntegrity)))
	base, err := os.UserCacheDir()
	if err != nil {
		base = t.TempDir()
	}
	dir := filepath.Join(base, "wire-archtools", hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "ready")); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), ".install-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		const what = "the npm packages of scripts/archtools (warcio, puppeteer-core, " + replayWebPage + ")"
		if err := npmInstall(t, npm, tmp, pkg, lock); err != nil {
			longtest.Unavailable(t, what, err.Error()+"; is the registry reachable (npm config get registry)?")
		}
		// A concurrent run may have finished first: either copy is whole.
		if err := os.Rename(tmp, dir); err != nil {
			if _, statErr := os.Stat(filepath.Join(dir, "ready")); statErr != nil {
				t.Fatalf("install the archive tools: %v", err)
			}
		}
	}
	run := t.TempDir()
	for _, f := range []string{"checkwarc.mjs", "replay.mjs"} {
		data, err := os.ReadFile(filepath.Join(archToolsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(run, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return &archTools{node: node, run: run, uiJS: filepath.Join(dir, "replaywebpage", "ui.js"),
		swJS: filepath.Join(dir, "replaywebpage", "sw.js"), warcCLI: filepath.Join(dir, "node_modules", "warcio", "dist", "cli.js")}
}

// npmInstall installs the packages into dir: npm ci from the lock file
// (exact versions, no install scripts), then ReplayWeb.page's ui.js and
// sw.js from npm pack, its integrity checked; last, the file ready.
func npmInstall(t *testing.T, npm, dir string, pkg, lock []byte) error {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), lock, 0o644); err != nil {
		return err
	}
	npmRun := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, args...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			// npm says what went wrong first ("npm error code
			// ECONNREFUSED", the request that failed), then advice.
			return nil, fmt.Errorf("npm %s: %v: %s", strings.Join(args, " "), err, firstLines(stderr.String(), 4))
		}
		return stdout.Bytes(), nil
	}
	if _, err := npmRun("ci", "--no-audit", "--no-fund", "--ignore-scripts"); err != nil {
		return err
	}
	out, err := npmRun("pack", replayWebPage, "--json", "--pack-destination", dir)
	if err != nil {
		return err
	}
	var packed []struct {
		Filename, Integrity string
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return fmt.Errorf("npm pack %s: unexpected output %q (%v)", replayWebPage, lastLines(string(out), 3), err)
	}
	if packed[0].Integrity != replayWebPageIntegrity {
		t.Fatalf("npm pack %s: integrity %s, pinned %s", replayWebPage, packed[0].Integrity, replayWebPageIntegrity)
	}
	if err := untarFiles(filepath.Join(dir, packed[0].Filename), filepath.Join(dir, "replaywebpage"), "package/ui.js", "package/sw.js"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "ready"), []byte(replayWebPage+"\n"), 0o644)
}

// untarFiles copies the named members of a .tgz into dir, under their
// base names; a member missing is an error.
func untarFiles(tgz, dir string, names ...string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", tgz, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	left := slices.Clone(names)
	tr := tar.NewReader(zr)
	for len(left) > 0 {
		h, err := tr.Next()
		if err != nil {
			return fmt.Errorf("read %s: %v before %q", tgz, err, left)
		}
		i := slices.Index(left, h.Name)
		if i < 0 {
			continue
		}
		left = slices.Delete(left, i, i+1)
		data, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("read %s in %s: %w", h.Name, tgz, err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(h.Name)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// firstLines is the first n lines of s, for messages.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[:min(n, len(lines))], " | ")
}

// lastLines is the last n lines of s, for messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// nodeRun runs a node program with args in the tools' run directory,
// within limit, and returns its standard output; dir, if not empty, is
// its working directory.
func (a *archTools) nodeRun(t *testing.T, dir string, limit time.Duration, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.node, args...)
	cmd.Dir = a.run
	if dir != "" {
		cmd.Dir = dir
	}
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes()
}

// warcioRevisit is a revisit record as checkwarc.mjs lists it.
type warcioRevisit struct {
	File, URL, Date, Profile    string
	Offset                      int64
	RefersTo, RefersToTargetURI string
	RefersToDate, PayloadDigest string
}

// checkWARCsWithWarcio reads every record of the WARC files with
// warcio.js (scripts/archtools/checkwarc.mjs): each parses, its digests
// check, its references name records of the files; as many records per
// file as pkg/warcio's own scan finds. It returns the revisit records.
func checkWARCsWithWarcio(t *testing.T, a *archTools, warcs []string) []warcioRevisit {
	t.Helper()
	if len(warcs) == 0 {
		t.Fatal("no WARC files to check")
	}
	var got struct {
		Files, Records, BlockDigests, PayloadDigests, References int
		Types                                                    map[string]int
		PerFile                                                  map[string]int
		Revisits                                                 []warcioRevisit
		Errors                                                   []string
	}
	out := a.nodeRun(t, "", 2*time.Minute, append([]string{"checkwarc.mjs"}, warcs...)...)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("checkwarc.mjs: %v\n%s", err, out)
	}
	for _, e := range got.Errors {
		t.Errorf("warcio.js: %s", e)
	}
	for _, w := range warcs {
		n := 0
		if _, err := warcio.Scan(w, func(*warcio.ScannedRecord) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if got.PerFile[filepath.Base(w)] != n {
			t.Errorf("%s: warcio.js read %d records, pkg/warcio %d", w, got.PerFile[filepath.Base(w)], n)
		}
	}
	t.Logf("warcio.js read %d records of %d WARC files (%v): %d block digests, %d payload digests and %d references checked, %d errors",
		got.Records, got.Files, got.Types, got.BlockDigests, got.PayloadDigests, got.References, len(got.Errors))
	if got.Files != len(warcs) || got.Types["response"] == 0 || got.Types["revisit"] == 0 || got.PayloadDigests != got.Types["response"] {
		t.Errorf("warcio.js read too little: %+v", got)
	}
	return got.Revisits
}

// compareIndexes indexes each WARC file with warcio.js (warcio
// cdx-index) and compares its lines with our index beside the file,
// record by record: the same records, keys, timestamps and fields but
// for the two known differences (docs/format/harvest.md, "CDXJ
// indexes"): warcio.js keeps a path's trailing slash in the key, and gives
// a revisit a status, which pywb's convention, followed here, leaves out.
func compareIndexes(t *testing.T, a *archTools, warcs []string) {
	t.Helper()
	lines, slashes, revisits := 0, 0, 0
	for _, w := range warcs {
		ours, err := cdxj.ReadFile(strings.TrimSuffix(w, warcio.Suffix) + cdxj.Suffix)
		if err != nil {
			t.Fatal(err)
		}
		byOffset := map[int64]cdxj.Line{}
		for _, l := range ours {
			byOffset[l.Offset] = l
		}
		out := a.nodeRun(t, filepath.Dir(w), time.Minute, a.warcCLI, "cdx-index", "--format", "cdxj", filepath.Base(w))
		theirs := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(theirs) != len(ours) {
			t.Errorf("%s: warcio.js indexes %d records, we %d", w, len(theirs), len(ours))
		}
		for _, text := range theirs {
			l, err := cdxj.Parse([]byte(text + "\n"))
			if err != nil {
				t.Errorf("%s: warcio.js line %q: %v", w, text, err)
				continue
			}
			want, ok := byOffset[l.Offset]
			if !ok {
				t.Errorf("%s: warcio.js indexes a record at %d, we do not: %s", w, l.Offset, text)
				continue
			}
			lines++
			if l.Key != want.Key && dropPathSlash(l.Key) == want.Key {
				l.Key = want.Key
				slashes++
			}
			if l.MIME == cdxj.MIMERevisit && want.Status == 0 {
				l.Status = 0
				revisits++
			}
			if l != want {
				t.Errorf("%s at %d:\nwarcio.js %s\nours      %s", w, l.Offset, text, want.String())
			}
		}
	}
	t.Logf("warcio cdx-index agrees with our %d index lines (%d keys differing only by a trailing slash, %d revisits with a status)", lines, slashes, revisits)
	if lines == 0 {
		t.Error("no index line compared")
	}
}

// dropPathSlash is a SURT key without the trailing slash of its path
// (before the query, if any) unless the path is "/": pywb's surt drops
// it, warcio.js keeps it.
func dropPathSlash(key string) string {
	path, query, hasQuery := strings.Cut(key, "?")
	if !strings.HasSuffix(path, "/") || strings.HasSuffix(path, ")/") {
		return key
	}
	path = strings.TrimSuffix(path, "/")
	if hasQuery {
		return path + "?" + query
	}
	return path
}
