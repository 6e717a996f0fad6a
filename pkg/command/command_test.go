package command

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("disk on fire"), ExitFailure},
		{fmt.Errorf("run: %w", collection.ErrNothingToDo), ExitNothingToDo},
		{fmt.Errorf("lock: %w", collection.ErrLocked), ExitLocked},
		{fmt.Errorf("load: %w", config.ErrInvalid), ExitUsage},
		{Usage("bad %s", "flag"), ExitUsage},
		{fmt.Errorf("harvest: %w", fetch.ErrNetworkDown), ExitNetworkDown},
		{fmt.Errorf("harvest: %w", Interrupted{Signal: syscall.SIGINT}), 130},
		{fmt.Errorf("harvest: %w", Interrupted{Signal: syscall.SIGTERM}), 143},
		{fmt.Errorf("open: %w", collection.ErrNotCollection), ExitUsage},
		{fmt.Errorf("open graph: %w", linkgraph.ErrBusy), ExitLocked},
		{cli.Exit("No help topic for 'x'", 3), ExitUsage},
	}
	for _, tc := range tests {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func cliContext(t *testing.T, args ...string) *cli.Context {
	t.Helper()
	set := flag.NewFlagSet("test", flag.ContinueOnError)
	for _, f := range append(CommonFlags(), SettingFlags()...) {
		if err := f.Apply(set); err != nil {
			t.Fatal(err)
		}
	}
	if err := set.Parse(args); err != nil {
		t.Fatal(err)
	}
	return cli.NewContext(&cli.App{ErrWriter: os.Stderr}, set, nil)
}

// TestOpenNeedsConfig: a collection whose wire.toml is gone must not crawl
// on the defaults (found by the fault-injection run).
func TestOpenNeedsConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "col")
	if _, err := collection.Create(dir, config.Render(config.Defaults())); err != nil {
		t.Fatal(err)
	}
	if _, cfg, err := Open(cliContext(t, "--collection", dir, "--harvester-wait", "3s")); err != nil || cfg.Harvester.Wait.D().Seconds() != 3 {
		t.Fatalf("open with config: %v, wait %v", err, cfg.Harvester.Wait)
	}
	os.Remove(filepath.Join(dir, config.FileName))
	_, _, err := Open(cliContext(t, "--collection", dir))
	if ExitCode(err) != ExitUsage {
		t.Errorf("open without wire.toml: %v (exit %d), want exit %d", err, ExitCode(err), ExitUsage)
	}
}

// TestOverrides: exactly the setting flags given on the command line
// become overrides, with their values as given (a bool given as false
// included), whatever the other flags.
func TestOverrides(t *testing.T) {
	tests := []struct {
		args []string
		want map[string]string
	}{
		{nil, map[string]string{}},
		{[]string{"-q", "--collection", "x"}, map[string]string{}},
		{[]string{"--harvester-wait", "2s"}, map[string]string{"harvester.wait": "2s"}},
		{[]string{"--harvester-allow-private", "--crawl-user-agent", "bot/1", "-v"},
			map[string]string{"harvester.allow_private": "true", "crawl.user_agent": "bot/1"}},
		{[]string{"--harvester-allow-private=false"}, map[string]string{"harvester.allow_private": "false"}},
	}
	for _, tc := range tests {
		var got map[string]string
		app := &cli.App{Name: "t", Commands: []*cli.Command{{
			Name:  "run",
			Flags: WithSettings(&cli.BoolFlag{Name: "force"}),
			Action: func(c *cli.Context) error {
				got = Overrides(c)
				return nil
			},
		}}}
		if err := app.Run(append([]string{"t", "run"}, tc.args...)); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q: overrides %v, want %v", tc.args, got, tc.want)
		}
	}
}

// Every setting flag shows its environment variable and its built-in
// default, as the standard flags do.
func TestSettingFlagsHelp(t *testing.T) {
	want := map[string][]string{
		"harvester-wait":          {"[$WIRE_HARVESTER_WAIT]", "(default: 15s)"},
		"harvester-allow-private": {"[$WIRE_HARVESTER_ALLOW_PRIVATE]", "(default: false)"},
		"crawl-product-token":     {"[$WIRE_CRAWL_PRODUCT_TOKEN]", `(default: "wirebot")`},
		"manager-alpha":           {"[$WIRE_MANAGER_ALPHA]", "(default: 1)"},
	}
	flags := SettingFlags()
	if len(flags) != len(config.Fields()) {
		t.Fatalf("%d setting flags for %d settings", len(flags), len(config.Fields()))
	}
	seen := 0
	for _, f := range flags {
		help := f.String()
		if !strings.Contains(help, "(default: ") || !strings.Contains(help, "[$WIRE_") {
			t.Errorf("%s: %q shows no default or no environment variable", f.Names()[0], help)
		}
		if w, ok := want[f.Names()[0]]; ok {
			seen++
			for _, s := range w {
				if !strings.Contains(help, s) {
					t.Errorf("%s: %q, want %q", f.Names()[0], help, s)
				}
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d flags looked for", seen, len(want))
	}
}

// A read-only command lists only the settings of the sections it reads.
func TestWithSections(t *testing.T) {
	n := 0
	for _, f := range WithSections([]string{"scope"}) {
		name := f.Names()[0]
		if strings.HasPrefix(name, "harvester-") || strings.HasPrefix(name, "manager-") {
			t.Errorf("--%s offered to a command reading only scope", name)
		}
		if strings.HasPrefix(name, "scope-") {
			n++
		}
	}
	if n == 0 {
		t.Error("no scope setting offered")
	}
	if all, some := len(WithSettings()), len(WithSections([]string{"scope"})); some >= all/2 {
		t.Errorf("%d flags with the scope section only, %d with every setting", some, all)
	}
}

// The exit codes a command's help lists: the whole table for a binary,
// and for a command only those it can return beside 0, 1, 2 and 130.
func TestExitCodes(t *testing.T) {
	all := ExitCodes()
	for _, code := range []string{"   0 ", "   3 ", "   4 ", "   5 ", "   6 ", " 130 "} {
		if !strings.Contains(all, "\n"+code) {
			t.Errorf("the whole table lacks %q:\n%s", code, all)
		}
	}
	cat := ExitCodes(ExitOK)
	for _, code := range []string{"   3 ", "   4 ", "   5 ", "   6 "} {
		if strings.Contains(cat, "\n"+code) {
			t.Errorf("a read-only command's table lists %q:\n%s", code, cat)
		}
	}
	if run := ExitCodes(ExitNothingToDo, ExitLocked); !strings.Contains(run, "\n   3 ") || !strings.Contains(run, "\n   4 ") || strings.Contains(run, "\n   5 ") || !strings.Contains(run, "\n 130 ") {
		t.Errorf("a stage's table:\n%s", run)
	}
}

// The names of the common and setting flags are worked out once: cli
// asks for every flag's names once per flag before each action, and its
// own flags recompute them with a regexp each time (namedString).
func TestFlagNamesOnce(t *testing.T) {
	for _, f := range WithSettings() {
		want := f.Names()
		if allocs := testing.AllocsPerRun(10, func() { f.Names() }); allocs != 0 {
			t.Errorf("--%s: %v allocations to list its names", want[0], allocs)
		}
		if name := strings.Join(want, ","); name != strings.Join(cli.FlagNames(want[0], want[1:]), ",") {
			t.Errorf("names %q, cli's own %q", name, cli.FlagNames(want[0], want[1:]))
		}
	}
}

// BenchmarkRunWithSettings is the start of every stage's run: a command
// with every setting flag, one of them given, parsed by cli up to its
// action (cli looks each flag's names up among all of them to run flag
// actions: settingFlags keeps that cheap).
func BenchmarkRunWithSettings(b *testing.B) {
	app := &cli.App{Name: "t", Commands: []*cli.Command{{
		Name:   "run",
		Flags:  WithSettings(&cli.BoolFlag{Name: "force"}),
		Action: func(c *cli.Context) error { Overrides(c); return nil },
	}}}
	args := []string{"t", "run", "--harvester-wait", "0s", "-q"}
	b.ReportAllocs()
	for b.Loop() {
		if err := app.Run(args); err != nil {
			b.Fatal(err)
		}
	}
}
