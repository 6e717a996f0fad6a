package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/command"
)

// TestCommandShape calls each command's two halves apart, as
// docs/architecture.md ("How a command is built") describes them: the
// parser on a command line, giving typed options, then run with those
// options (standard error replaced by hand) on a collection in a
// temporary directory.
func TestCommandShape(t *testing.T) {
	ctx := context.Background()
	dir := newCollection(t)
	c := "--collection=" + dir
	var out, errOut bytes.Buffer
	std := command.Std{Err: &errOut}
	contains := func(what, got, want string) {
		t.Helper()
		if !strings.Contains(got, want) {
			t.Errorf("%s: output lacks %q:\n%s", what, want, got)
		}
	}

	run, err := command.ParseArgs(runCommand(), parseRun, c, "--min-sites", "1", "--manager-strategy", "backlink")
	if err != nil || run.Run.MinSites != 1 || run.Run.Config.Manager.Strategy != "backlink" || run.Collection.Dir != dir {
		t.Fatalf("parse run: %+v, %v", run, err)
	}
	run.Std = std
	if err := runRun(ctx, run, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	contains("run", out.String(), "strategy    backlink")

	show, err := command.ParseArgs(showCommand(), parseShow, c, "--kind", "new", "--max-depth", "1", "1")
	if err != nil || !show.Show.Rows || show.Show.Filter.Kind != "new" || show.Show.Filter.MaxDepth == nil || *show.Show.Filter.MaxDepth != 1 || !strings.HasSuffix(show.Path, "batch.tsv") {
		t.Fatalf("parse show: %+v, %v", show, err)
	}
	out.Reset()
	if err := runShow(ctx, show, &out); err != nil {
		t.Fatalf("show: %v", err)
	}
	contains("show", out.String(), "4 of 4 entries match")

	stats, err := command.ParseArgs(statsCommand(), parseStats, c, "--json")
	out.Reset()
	if err != nil || !stats.JSON || runStats(ctx, stats, &out) != nil {
		t.Fatalf("stats: %+v, %v", stats, err)
	}
	contains("stats", out.String(), `"docs": 4`)

	st, err := command.ParseArgs(statusCommand(), parseStatus, c, "--no-graph", "--errors", "2")
	out.Reset()
	if err != nil || !st.Status.NoGraph || st.Status.Errors != 2 || runStatus(ctx, st, &out) != nil {
		t.Fatalf("status: %+v, %v", st, err)
	}
	contains("status", out.String(), "last batch")

	ex, err := command.ParseArgs(explainCommand(), parseExplain, c, "http://a.cl/1")
	out.Reset()
	if err != nil || ex.URL != "http://a.cl/1" || runExplain(ctx, ex, &out) != nil {
		t.Fatalf("explain: %+v, %v", ex, err)
	}
	contains("explain", out.String(), "url    http://a.cl/1")

	file := filepath.Join(t.TempDir(), "pr.tsv")
	exp, err := command.ParseArgs(historyCommand().Subcommands[1], parseHistory, c, file)
	if err != nil || exp.File != file {
		t.Fatalf("parse history export: %+v, %v", exp, err)
	}
	exp.Std = std
	out.Reset()
	if err := runHistoryExport(ctx, exp, &out); err != nil || out.Len() != 0 {
		t.Fatalf("history export: %q, %v", out.String(), err)
	}
	contains("history export", errOut.String(), "exported the PageRank of 4 pages")
	imp, err := command.ParseArgs(historyCommand().Subcommands[0], parseHistory, c, file)
	out.Reset()
	if err != nil || runHistoryImport(ctx, imp, &out) != nil {
		t.Fatalf("history import: %+v, %v", imp, err)
	}
	contains("history import", out.String(), "imported 4 PageRank values")

	rep, err := command.ParseArgs(reportCommand(), parseReport, c, "--json", "--top", "3")
	if err != nil || !rep.JSON || rep.Report.Top != 3 || rep.Output != "" {
		t.Fatalf("parse report: %+v, %v", rep, err)
	}
	out.Reset()
	if err := runReport(ctx, rep, &out); err != nil {
		t.Fatalf("report: %v", err)
	}
	contains("report", out.String(), "report.json: 4 pages known")
	if _, err := os.Stat(filepath.Join(dir, "report.json")); err != nil {
		t.Error(err)
	}

	cancel, err := command.ParseArgs(cancelCommand(), parseCancel, c, "--force")
	out.Reset()
	if err != nil || !cancel.Force || runCancel(ctx, cancel, &out) != nil {
		t.Fatalf("cancel: %+v, %v", cancel, err)
	}
	contains("cancel", out.String(), "cancelled batch 000001: 4 pages back")

	sim, err := command.ParseArgs(simulateCommand(), parseSimulate, c, "--generate", "national", "--pages", "200", "--strategies", "none")
	if err != nil || sim.Generate != "national" || sim.GenerateParams.Pages != 200 || sim.Stages.Manage == nil {
		t.Fatalf("parse simulate: %+v, %v", sim, err)
	}
	out.Reset()
	if err := runSimulate(ctx, sim, &out); err != nil || out.Len() == 0 {
		t.Fatalf("simulate: %q, %v", out.String(), err)
	}
	sim.Model = "x"
	if err := runSimulate(ctx, sim, &out); command.ExitCode(err) != command.ExitUsage {
		t.Errorf("simulate --model x: %v, want a usage error", err)
	}

	// The parsers' own errors: nothing runs.
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"run --min-sites -1", second(command.ParseArgs(runCommand(), parseRun, c, "--min-sites", "-1"))},
		{"show --kind x", second(command.ParseArgs(showCommand(), parseShow, c, "--kind", "x", "1"))},
		{"show 0", second(command.ParseArgs(showCommand(), parseShow, c, "0"))},
		{"status of no collection", second(command.ParseArgs(statusCommand(), parseStatus, "-c", t.TempDir()))},
	} {
		if code := command.ExitCode(tc.err); code != command.ExitUsage {
			t.Errorf("%s: exit %d (%v), want %d", tc.name, code, tc.err, command.ExitUsage)
		}
	}
}

// second is the error of a (value, error) pair.
func second[T any](_ T, err error) error { return err }
