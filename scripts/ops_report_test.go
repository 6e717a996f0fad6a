package scripts_test

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/longtest"
	"github.com/wirecrawl/wire/pkg/report"
)

// reportScreenshot, when set, receives the screenshot the report test
// takes (docs/img/report.png is made this way, see docs/report.md).
var reportScreenshot = flag.String("report-screenshot", "", "copy the report test's screenshot to `FILE`")

// chromiumFlags keep headless Chromium off the network and away from any
// profile: no background requests, no component or sync updates, no QUIC.
func chromiumFlags(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile}
}

// runChromium runs chromium with the isolation flags and args, within a
// time limit, and returns its standard output.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(chromiumFlags(t.TempDir()), args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// externalRef finds anything in a page that would make a browser fetch
// another resource: src or href attributes, CSS url() and @import.
var externalRef = regexp.MustCompile(`(?i)\s(src|href|srcset|action)\s*=|url\(|@import`)

// testReport writes the report of the crawl in col and checks the page
// without a browser; it returns the page's path for testReportRendering.
func (e *opsEnv) testReport(t *testing.T, col string) string {
	out := filepath.Join(t.TempDir(), "report.html")
	r := e.wire(t, "manager", "report", "--collection", col, "--output", out)
	if !strings.Contains(r.stdout, "wrote "+out) {
		t.Errorf("manager report says: %q", r.stdout)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m := externalRef.Find(html); m != nil {
		t.Errorf("the report refers to another resource (%q): it must be self-contained", m)
	}
	if bytes.Contains(html, []byte("<script")) {
		t.Errorf("the report has a script; it needs none")
	}
	// The default output is COLLECTION/report.html.
	e.wire(t, "manager", "report", "--collection", col)
	if _, err := os.Stat(filepath.Join(col, "report.html")); err != nil {
		t.Errorf("manager report without --output: %v", err)
	}
	return out
}

// testReportRendering renders the report page out in headless Chromium
// (Debian's chromium: scripts/test-deps.sh --long installs it where it
// can; no test installs software itself) and checks what it drew.
func (e *opsEnv) testReportRendering(t *testing.T, out string) {
	bin := longtest.Tool(t, "chromium", "chromium")
	dom := string(runChromium(t, bin, "--dump-dom", "file://"+out))
	for _, id := range report.PlotIDs() {
		svg := regexp.MustCompile(`(?s)<svg[^>]* id="` + id + `"[^>]*>(.*?)</svg>`).FindStringSubmatch(dom)
		if svg == nil {
			t.Errorf("plot %s is missing from the page Chromium rendered", id)
			continue
		}
		marks := strings.Count(svg[1], `class="mark`)
		if marks == 0 || strings.Contains(svg[1], `class="nodata"`) {
			t.Errorf("plot %s has no data marks (%d)", id, marks)
		}
	}
	for _, table := range []string{"top-sites", "top-pages", "batches"} {
		rows := regexp.MustCompile(`(?s)<table id="` + table + `">(.*?)</table>`).FindStringSubmatch(dom)
		if rows == nil || strings.Count(rows[1], "<tr>") < 3 {
			t.Errorf("table %s is missing or has fewer than two rows", table)
		}
	}
	// The national web's tables (issue 20): present, with a row at least.
	for _, table := range []string{"languages", "declared", "duplicates", "mirrors", "charsets", "sizes", "ages", "link-tlds"} {
		rows := regexp.MustCompile(`(?s)<table id="` + table + `">(.*?)</table>`).FindStringSubmatch(dom)
		if rows == nil || strings.Count(rows[1], "<tr>") < 2 {
			t.Errorf("table %s is missing or empty", table)
		}
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	runChromium(t, bin, "--window-size=1280,3000", "--screenshot="+shot, "file://"+out)
	checkScreenshot(t, shot)
	if *reportScreenshot != "" {
		data, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*reportScreenshot, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", *reportScreenshot)
	}
}

// checkScreenshot checks that the browser drew the plots: the first two
// series colours cover a good part of the page.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	blue, orange := countColor(img, 0x1f, 0x77, 0xb4), countColor(img, 0xd9, 0x5f, 0x02)
	t.Logf("screenshot %v: %d pixels of the first series colour, %d of the second", img.Bounds().Size(), blue, orange)
	if blue < 20000 || orange < 5000 {
		t.Errorf("the screenshot shows too little of the plots: %d blue and %d orange pixels", blue, orange)
	}
}

// countColor counts the pixels within a small distance of a colour.
func countColor(img image.Image, r, g, b uint8) int {
	n := 0
	bounds := img.Bounds()
	near := func(a uint32, want uint8) bool {
		d := int(a>>8) - int(want)
		return d > -12 && d < 12
	}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr, r) && near(pg, g) && near(pb, b) {
				n++
			}
		}
	}
	return n
}
