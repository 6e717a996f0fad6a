package command

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"
)

// Every command of the four binaries has the same shape
// (docs/architecture.md, "How a command is built"):
//
//	type fooOptions struct { … }                          // what the command needs, typed
//	func parseFoo(c *cli.Context) (fooOptions, error)      // every flag, setting and argument read and checked here
//	func runFoo(ctx context.Context, o fooOptions, out io.Writer) error // the work; never sees the cli.Context
//
// and its cli.Command's Action is Action(parseFoo, runFoo). The parser is
// the one place that reads the command line: it loads the config (Open,
// LoadConfig), makes usage errors (Usage) and fills Std; run prints its
// results on out (standard output) and everything else through the Std
// its options carry.

// Action returns the action of a command built the one way: parse turns
// the cli.Context into the command's options (every flag, setting and
// argument read and checked there; its error is the command's), then
// run does the work under the app's context, printing on the app's
// standard output.
func Action[O any](parse func(*cli.Context) (O, error), run func(context.Context, O, io.Writer) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		opts, err := parse(c)
		if err != nil {
			return err
		}
		return run(c.Context, opts, c.App.Writer)
	}
}

// Std is what a command's run may use of the process besides standard
// output: standard input and error, the logger for library packages
// (Logger's, by --quiet and --verbose) and whether progress may be drawn
// (Interactive). The parser fills it with StdFrom; a test can fill it by
// hand.
type Std struct {
	In          io.Reader    // standard input
	Err         io.Writer    // standard error
	Logger      *slog.Logger // the command's logger (never nil once StdFrom made it)
	Interactive bool         // stderr is a terminal and --quiet is not set
}

// StdFrom returns the Std of the command line c: the app's reader (os.Stdin
// when unset) and error writer, Logger(c) and Interactive(c).
func StdFrom(c *cli.Context) Std {
	in := c.App.Reader
	if in == nil {
		in = os.Stdin
	}
	return Std{In: in, Err: c.App.ErrWriter, Logger: Logger(c), Interactive: Interactive(c)}
}

// Log returns s.Logger, or a logger that discards when it is nil (a Std
// filled by hand in a test).
func (s Std) Log() *slog.Logger {
	if s.Logger == nil {
		return Discard()
	}
	return s.Logger
}

// ParseArgs runs parse on the command line "APP CMD ARGS…" as the app
// would (cmd's flags, NewApp's argument rule), without running the
// command: the options the command's run would get, or the parser's
// error. cmd is a fresh command from its constructor; it is changed.
// Tests of the binaries use it to check a command's parser.
func ParseArgs[O any](cmd *cli.Command, parse func(*cli.Context) (O, error), args ...string) (O, error) {
	var opts O
	cmd.Action = func(c *cli.Context) error {
		var err error
		opts, err = parse(c)
		return err
	}
	app := NewApp("app", "", cmd)
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	err := app.RunContext(context.Background(), append([]string{"app", cmd.Name}, args...))
	return opts, err
}
