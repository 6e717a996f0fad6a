package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
)

// TestCommandShape calls each command's two halves apart, as
// docs/architecture.md ("How a command is built") describes them: the
// parser on a command line, giving typed options, then run with those
// options.
func TestCommandShape(t *testing.T) {
	ctx := context.Background()

	// harvester run: the options of each mode, and run on a collection
	// with nothing to harvest.
	dir := t.TempDir()
	if _, err := collection.Create(dir, config.Render(config.Defaults())); err != nil {
		t.Fatal(err)
	}
	o, err := command.ParseArgs(runCommand(), parseRun, "-c", dir, "--batch", "2", "--force", "--shard", "1/2", "--harvester-connections", "7")
	if err != nil || o.Collection != dir || o.Batch != 2 || !o.Force || o.Shard.String() != "1/2" || o.Config.Harvester.Connections != 7 || o.Logger == nil {
		t.Fatalf("parse run: %+v, %v", o, err)
	}
	o, err = command.ParseArgs(runCommand(), parseRun, "-c", dir)
	if err != nil || o.Batch != 0 || !o.Shard.Whole() {
		t.Fatalf("parse run: %+v, %v", o, err)
	}
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	var out bytes.Buffer
	if err := runRun(ctx, o, &out); !errors.Is(err, collection.ErrNothingToDo) || out.Len() != 0 {
		t.Errorf("run with no batch: %q, %v; want nothing to do", out.String(), err)
	}
	bdir := t.TempDir()
	cfg := config.Defaults()
	cfg.Harvester.Connections = 3
	writeConfig(t, filepath.Join(bdir, config.FileName), cfg)
	if o, err := command.ParseArgs(runCommand(), parseRun, "--batch-dir", bdir); err != nil || o.BatchDir != bdir || o.Config.Harvester.Connections != 3 {
		t.Errorf("parse run --batch-dir: the config of the batch directory not read: %+v, %v", o, err)
	}
	// The collection is opened by run (--batch-dir needs none).
	o.Collection = t.TempDir()
	if err := runRun(ctx, o, &out); command.ExitCode(err) != command.ExitUsage {
		t.Errorf("run on a directory that is not a collection: %v, want a usage error", err)
	}

	// harvester fetch: the options, and run on a URL nothing listens on.
	f, err := command.ParseArgs(fetchCommand(), parseFetch, "--body", "--harvester-allow-private", "http://127.0.0.1:1/")
	if err != nil || f.URL != "http://127.0.0.1:1/" || !f.Body || !f.Config.Harvester.AllowPrivate {
		t.Fatalf("parse fetch: %+v, %v", f, err)
	}
	out.Reset()
	if err := runFetch(ctx, f, &out); err == nil {
		t.Errorf("fetch of a closed port: %q, no error", out.String())
	}

	// The parsers' own errors: nothing runs.
	for _, args := range [][]string{
		{"--force"},
		{"--batch", "0"},
		{"--batch", "1", "--batch-dir", "x"},
		{"--shard", "3/2"},
	} {
		if _, err := command.ParseArgs(runCommand(), parseRun, args...); command.ExitCode(err) != command.ExitUsage {
			t.Errorf("run %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}
