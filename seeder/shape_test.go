package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
)

// TestCommandShape calls each command's two halves apart, as
// docs/architecture.md ("How a command is built") describes them: the
// parser on a command line, giving typed options, then run with those
// options (its standard error and input replaced by hand) on a
// collection in a temporary directory.
func TestCommandShape(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "col")
	c := "--collection=" + dir
	var out, errOut bytes.Buffer
	std := command.Std{In: strings.NewReader("http://b.cl/\n"), Err: &errOut}

	in, err := command.ParseArgs(initCommand(), parseInit, c, "--scope-domains=cl")
	if err != nil || in.Dir != dir || !in.SettingFlags || strings.Join(in.Config.Scope.Domains, ",") != "cl" {
		t.Fatalf("parse init: %+v, %v", in, err)
	}
	in.Std = std
	if err := runInit(ctx, in, &out); err != nil || out.String() != "created collection "+dir+"\n" {
		t.Fatalf("init: %q, %v", out.String(), err)
	}

	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	os.WriteFile(seeds, []byte("http://a.cl/\nhttp://a.com/\n"), 0o644)
	add, err := command.ParseArgs(addCommand(), parseAdd, c, seeds)
	if err != nil || add.File != seeds || add.Collection.Dir != dir {
		t.Fatalf("parse add: %+v, %v", add, err)
	}
	out.Reset()
	add.Std = std
	if err := runAdd(ctx, add, &out); err != nil || !strings.Contains(out.String(), "1 added") || !strings.Contains(errOut.String(), seeds+":2: out-of-scope") {
		t.Fatalf("add: %q %q, %v", out.String(), errOut.String(), err)
	}
	add.File = "-"
	out.Reset()
	if err := runAdd(ctx, add, &out); err != nil || !strings.Contains(out.String(), "1 added") {
		t.Fatalf("add -: %q, %v", out.String(), err)
	}

	st, err := command.ParseArgs(statsCommand(), parseStats, c, "--json")
	if err != nil || !st.JSON {
		t.Fatalf("parse stats: %+v, %v", st, err)
	}
	out.Reset()
	if err := runStats(ctx, st, &out); err != nil || !strings.Contains(out.String(), `"docs": 2`) {
		t.Errorf("stats: %q, %v", out.String(), err)
	}

	ck, err := command.ParseArgs(checkCommand(), parseCheck, c)
	out.Reset()
	if err != nil || runCheck(ctx, ck, &out) != nil || out.String() != dir+": ok\n" {
		t.Errorf("check: %q, %v", out.String(), err)
	}

	rq, err := command.ParseArgs(requeueCommand(), parseRequeue, c, "--dry-run")
	out.Reset()
	if err != nil || !rq.DryRun || runRequeue(ctx, rq, &out) != nil || !strings.Contains(out.String(), "(dry run)") {
		t.Errorf("requeue: %+v %q, %v", rq, out.String(), err)
	}

	rl, err := command.ParseArgs(releaseCommand(), parseRelease, c, "--all")
	out.Reset()
	if err != nil || !rl.Release.All || runRelease(ctx, rl, &out) != nil || !strings.Contains(out.String(), "release of parked links") {
		t.Errorf("release: %+v %q, %v", rl, out.String(), err)
	}

	run, err := command.ParseArgs(runCommand(), parseRun, c)
	if err != nil || run.Run.Batch != 0 {
		t.Fatalf("parse run: %+v, %v", run, err)
	}
	if err := runRun(ctx, run, &out); !errors.Is(err, collection.ErrNothingToDo) {
		t.Errorf("run with no batch: %v, want nothing to do", err)
	}

	imp, err := command.ParseArgs(importCommand(), parseImport, c, "--from", dir, "--seeds", "fetched")
	if err != nil || imp.Import.From != dir || imp.Import.Seeds != "fetched" {
		t.Fatalf("parse import: %+v, %v", imp, err)
	}
	imp.Std = std
	if err := runImport(ctx, imp, &out); command.ExitCode(err) != command.ExitUsage {
		t.Errorf("import from itself: %v, want a usage error", err)
	}

	rs, err := command.ParseArgs(restoreCommand(), parseRestore, c)
	if err != nil || rs.Restore.Collection == nil {
		t.Fatalf("parse restore: %+v, %v", rs, err)
	}

	// The parsers' own errors: nothing runs.
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"run --force", second(command.ParseArgs(runCommand(), parseRun, c, "--force"))},
		{"run --batch -1", second(command.ParseArgs(runCommand(), parseRun, c, "--batch", "-1"))},
		{"import", second(command.ParseArgs(importCommand(), parseImport, c))},
		{"import --seeds x", second(command.ParseArgs(importCommand(), parseImport, c, "--from", dir, "--seeds", "x"))},
		{"stats of no collection", second(command.ParseArgs(statsCommand(), parseStats, "-c", t.TempDir()))},
	} {
		if code := command.ExitCode(tc.err); code != command.ExitUsage {
			t.Errorf("%s: exit %d (%v), want %d", tc.name, code, tc.err, command.ExitUsage)
		}
	}
}

// second is the error of a (value, error) pair.
func second[T any](_ T, err error) error { return err }
