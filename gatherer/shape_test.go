package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
)

// TestCommandShape calls each command's two halves apart, as
// docs/architecture.md ("How a command is built") describes them: the
// parser on a command line, giving typed options, then run with those
// options on a collection in a temporary directory.
func TestCommandShape(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	gathertest.Batch(t, col, 1, pages(t))
	c := "--collection=" + dir
	var out, errOut bytes.Buffer

	o, err := command.ParseArgs(runCommand(), parseRun, c, "--salvage", "--gatherer-workers", "2")
	if err != nil || o.Collection == nil || o.Batch != 0 || !o.Gather.Salvage || o.Gather.VerifyDigests || o.Gather.Workers != 2 {
		t.Fatalf("parse run: %+v, %v", o, err)
	}
	if err := runRun(ctx, o, &out); err != nil || !strings.Contains(out.String(), "batch 000001") {
		t.Fatalf("run: %q, %v", out.String(), err)
	}
	if err := runRun(ctx, o, &out); !errors.Is(err, collection.ErrNothingToDo) {
		t.Errorf("run again: %v, want nothing to do", err)
	}

	cat, err := command.ParseArgs(catCommand(), parseCat, c, "HTTP://WWW.A.CL/b")
	if err != nil || cat.Target.url != "http://www.a.cl/b" || cat.TextDir != col.TextPath() {
		t.Fatalf("parse cat: %+v, %v", cat, err)
	}
	cat.Std = command.Std{Err: &errOut}
	out.Reset()
	if err := runCat(ctx, cat, &out); err != nil || out.String() != "Texto de B\nC\n" {
		t.Errorf("cat: %q, %v", out.String(), err)
	}
	if cat, err := command.ParseArgs(catCommand(), parseCat, c, "11"); err != nil || cat.Target.docID != 11 {
		t.Errorf("parse cat 11: %+v, %v", cat, err)
	}

	show, err := command.ParseArgs(showCommand(), parseShow, c, "--batch-dir", col.Batch(1).Dir, "12")
	if err != nil || show.BatchDir != col.Batch(1).Dir || show.Target.docID != 12 {
		t.Fatalf("parse show: %+v, %v", show, err)
	}
	out.Reset()
	if err := runShow(ctx, show, &out); err != nil || !strings.Contains(out.String(), "url          http://www.a.cl/b") {
		t.Errorf("show: %q, %v", out.String(), err)
	}

	comp, err := command.ParseArgs(compactCommand(), parseCompact, c)
	if err != nil || comp.Dir != col.TextPath() || comp.Collection == nil {
		t.Fatalf("parse compact: %+v, %v", comp, err)
	}
	if err := runCompact(ctx, comp, &out); !errors.Is(err, collection.ErrNothingToDo) {
		t.Errorf("compact of one segment: %v, want nothing to do", err)
	}

	// The parsers' own errors: nothing runs.
	for _, args := range [][]string{
		{c, "--batch", "-1"},
		{c, "--batch-dir", "x"},
		{c, "--batch", "1", "--batch-dir", "x", "--text-dir", "y"},
		{c, "--force"},
		{"-c", t.TempDir()},
	} {
		if _, err := command.ParseArgs(runCommand(), parseRun, args...); command.ExitCode(err) != command.ExitUsage {
			t.Errorf("run %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}
