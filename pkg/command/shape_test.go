package command

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
)

// echoOptions are the options of the test command echo.
type echoOptions struct {
	Collection *collection.Collection
	Config     config.Config
	Word       string
	Times      int
	Std        Std
}

func echoCommand() *cli.Command {
	return &cli.Command{
		Name:      "echo",
		ArgsUsage: "WORD",
		Flags:     WithSettings(&cli.IntFlag{Name: "times", Value: 1}),
		Action:    Action(parseEcho, runEcho),
	}
}

func parseEcho(c *cli.Context) (echoOptions, error) {
	if c.Int("times") < 1 {
		return echoOptions{}, Usage("--times must be at least 1, got %d", c.Int("times"))
	}
	col, cfg, err := Open(c)
	if err != nil {
		return echoOptions{}, err
	}
	return echoOptions{Collection: col, Config: cfg, Word: c.Args().First(), Times: c.Int("times"), Std: StdFrom(c)}, nil
}

// runEcho prints the word o.Times on out and the collection on stderr;
// it fails when ctx is done.
func runEcho(ctx context.Context, o echoOptions, out io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	io.WriteString(out, strings.Repeat(o.Word+"\n", o.Times))
	io.WriteString(o.Std.Err, o.Collection.Dir+"\n")
	o.Std.Log().Debug("echoed")
	return nil
}

// TestAction: the app runs a command built with Action as parse then
// run, with its context and writers; a parser's error stops it before
// run; ParseArgs gives the options without running.
func TestAction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "col")
	if _, err := collection.Create(dir, config.Render(config.Defaults())); err != nil {
		t.Fatal(err)
	}
	app := NewApp("t", "test", echoCommand())
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errOut, strings.NewReader("in")
	if err := app.Run([]string{"t", "echo", "-c", dir, "--times", "2", "hi"}); err != nil || out.String() != "hi\nhi\n" || errOut.String() != dir+"\n" {
		t.Fatalf("echo: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
	out.Reset()
	if err := app.Run([]string{"t", "echo", "-c", dir, "--times", "0", "hi"}); ExitCode(err) != ExitUsage || out.Len() != 0 {
		t.Errorf("echo --times 0: %v, stdout %q; want a usage error and nothing run", err, out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := app.RunContext(ctx, []string{"t", "echo", "-c", dir, "hi"}); !errors.Is(err, context.Canceled) {
		t.Errorf("run under a cancelled context: %v", err)
	}

	o, err := ParseArgs(echoCommand(), parseEcho, "-c", dir, "-v", "--times", "3", "--harvester-wait", "2s", "yo")
	if err != nil || o.Word != "yo" || o.Times != 3 || o.Collection.Dir != dir || o.Config.Harvester.Wait.D().Seconds() != 2 {
		t.Fatalf("ParseArgs: %+v, %v", o, err)
	}
	if o.Std.In != os.Stdin || o.Std.Err != io.Discard || o.Std.Logger == nil || o.Std.Interactive {
		t.Errorf("ParseArgs' Std: %+v", o.Std)
	}
	// The argument rule of NewApp applies.
	for _, args := range [][]string{{"-c", dir}, {"-c", dir, "a", "b"}, {"-c", dir, "a", "--times", "2"}, {"-c", t.TempDir(), "a"}} {
		if _, err := ParseArgs(echoCommand(), parseEcho, args...); ExitCode(err) != ExitUsage {
			t.Errorf("ParseArgs %q: %v, want a usage error", args, err)
		}
	}
}

// A Std filled by hand works in run: its Log never returns nil, and
// progress is not drawn when it is not interactive.
func TestStd(t *testing.T) {
	var s Std
	s.Log().Info("dropped")
	p := NewProgress(s, 10, "testing")
	p.Add(3)
	p.Done()
	if p.bar != nil {
		t.Error("progress drawn without a terminal")
	}
	app := &cli.App{ErrWriter: io.Discard}
	c := cli.NewContext(app, nil, nil)
	if got := StdFrom(c); got.In != os.Stdin || got.Err != io.Discard || got.Logger == nil || got.Interactive {
		t.Errorf("StdFrom: %+v", got)
	}
}
