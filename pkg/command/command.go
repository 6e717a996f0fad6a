// Package command is the plumbing the four binaries share: the
// --collection and --config flags, one flag per config setting, the config
// loader call, the logger, progress display and the mapping of errors to
// exit codes. Only binaries import it; library packages stay free of the
// command-line framework.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Exit codes shared by every binary, so scripts can tell "nothing to do"
// from a failure.
const (
	ExitOK          = 0 // success
	ExitFailure     = 1 // the stage failed; see the message
	ExitUsage       = 2 // bad command line or configuration, not a collection
	ExitNothingToDo = 3 // no batch is ready for this stage (not an error for scripts)
	ExitLocked      = 4 // another run holds the stage's lock or graph.db
	// ExitNetworkDown: the network failed as a whole (the DNS resolver
	// does not answer, no route to any server); nothing was counted
	// against the web and the batch is left for a rerun.
	ExitNetworkDown = 5
	// ExitDamaged: a file of the collection is damaged (graph.db, a
	// WARC file); the message names it and what to do.
	ExitDamaged = 6
	// ExitDiskFull: the collection's file system has no more free space
	// than collection.min_free; the stage did not start, or stopped
	// cleanly (the harvester: resumable). Free space, then run again.
	ExitDiskFull = 7
	// ExitInterrupted is the base of the codes of a run stopped by a
	// signal (the shell's convention, 128 + signal): 130 for SIGINT,
	// 143 for SIGTERM. The stage stopped cleanly; run it again to
	// resume.
	ExitInterrupted = 128
)

// exitCodeLines are the lines of the exit code table, by code (130
// stands for every 128+signal).
var exitCodeLines = []struct {
	code  int
	lines string
}{
	{ExitOK, "   0  success"},
	{ExitFailure, "   1  failure (the message names the stage, batch and cause)"},
	{ExitUsage, `   2  bad command line or configuration: an unknown command or flag,
      an argument too many or missing, a flag after an argument, a
      directory that is not a collection, a bad setting (nothing done)`},
	{ExitNothingToDo, "   3  nothing to do: no batch is ready for this stage"},
	{ExitLocked, "   4  locked: another run holds the stage's lock or graph.db"},
	{ExitNetworkDown, `   5  the network is down (DNS resolver or routes): nothing was counted
      against the web; run again once the network is back`},
	{ExitDamaged, `   6  a collection file is damaged (graph.db, a WARC file): the message
      names it and the repair`},
	{ExitDiskFull, `   7  disk full: less free space than collection.min_free; nothing was
      lost (a harvest resumes): free space, then run again`},
	{ExitInterrupted + 2, ` 130  interrupted by SIGINT (143: SIGTERM): stopped cleanly, run again
      to resume`},
}

// ExitCodes returns the EXIT CODES section of a help text: with no
// codes, the whole table (the binaries' own help); else 0, 1, 2 and 130
// (which every command can return) and the codes given, those the
// command can return (3 only where a command looks for the next ready
// batch, 4 where it takes a lock or opens graph.db, 5 for the harvester,
// 6 where it reads graph.db or a WARC file, 7 for the four stages' run).
func ExitCodes(codes ...int) string {
	var b strings.Builder
	b.WriteString("EXIT CODES:")
	for _, l := range exitCodeLines {
		always := l.code == ExitOK || l.code == ExitFailure || l.code == ExitUsage || l.code == ExitInterrupted+2
		if len(codes) == 0 || always || slices.Contains(codes, l.code) {
			b.WriteString("\n" + l.lines)
		}
	}
	return b.String()
}

// usageError marks errors that are the user's command line.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// Usage wraps err so that it exits with ExitUsage.
func Usage(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// ExitCode maps an error returned by a command to the process exit code.
// A directory that is not a collection is a usage error (the command
// line named the wrong directory), as it is for the scripts; graph.db
// held by another process is "locked", whichever stage finds it.
// cli.ExitCoder is what the framework returns for "help UNKNOWN": a
// usage error too.
func ExitCode(err error) int {
	var ue usageError
	var in Interrupted
	var ec cli.ExitCoder
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, collection.ErrNothingToDo):
		return ExitNothingToDo
	case errors.Is(err, collection.ErrLocked), errors.Is(err, linkgraph.ErrBusy):
		return ExitLocked
	case errors.Is(err, collection.ErrNotCollection), errors.As(err, &ec):
		return ExitUsage
	case errors.Is(err, collection.ErrDamaged):
		return ExitDamaged
	case errors.Is(err, fetch.ErrNetworkDown):
		return ExitNetworkDown
	case errors.Is(err, collection.ErrDiskFull), errors.Is(err, syscall.ENOSPC):
		return ExitDiskFull
	case errors.As(err, &in):
		return ExitInterrupted + int(in.Signal)
	case errors.As(err, &ue), errors.Is(err, config.ErrInvalid):
		return ExitUsage
	}
	return ExitFailure
}

// Interrupted is the cause of a run's context cancelled by a signal
// (SIGINT, SIGTERM). An error that holds it exits with ExitInterrupted +
// the signal's number: the stage stopped cleanly and a rerun resumes.
type Interrupted struct{ Signal syscall.Signal }

func (e Interrupted) Error() string {
	name := "signal " + strconv.Itoa(int(e.Signal))
	switch e.Signal {
	case syscall.SIGINT:
		name = "SIGINT"
	case syscall.SIGTERM:
		name = "SIGTERM"
	}
	return "interrupted by " + name
}

// WithSignal returns the error of a command run under ctx as Main
// reports it: when a signal cancelled ctx (its cause is Interrupted),
// a failure is taken as the signal's doing and carries the Interrupted,
// so it exits with 128 + signal; other outcomes (success, a usage error,
// a lock, nothing to do ...) are kept.
func WithSignal(ctx context.Context, err error) error {
	var in Interrupted
	if err == nil || !errors.As(context.Cause(ctx), &in) || errors.As(err, &in) || ExitCode(err) != ExitFailure {
		return err
	}
	return fmt.Errorf("%w (%w; run again to resume)", err, in)
}

// Flag names shared by every binary.
const (
	FlagCollection = "collection"
	FlagConfig     = "config"
	FlagQuiet      = "quiet"
	FlagVerbose    = "verbose"
)

// FlagBatch is the name of the flag that names a batch, with the short
// form -b on every command that takes it.
const FlagBatch = "batch"

// BatchFlag returns the --batch (-b) flag of a command that works on one
// batch, with its usage ("batch `N` to gather (default: …)").
func BatchFlag(usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: FlagBatch, Aliases: []string{"b"}, Usage: usage}
}

// CommonFlags are the flags every command that works on a collection takes.
func CommonFlags() []cli.Flag {
	return []cli.Flag{
		stringFlag(&cli.StringFlag{Name: FlagCollection, Aliases: []string{"c"}, Value: "collection", EnvVars: []string{"WIRE_COLLECTION"}, Usage: "collection directory"}),
		stringFlag(&cli.StringFlag{Name: FlagConfig, EnvVars: []string{"WIRE_CONFIG"}, Usage: "config file (default: COLLECTION/wire.toml)"}),
		boolFlag(&cli.BoolFlag{Name: FlagQuiet, Aliases: []string{"q"}, Usage: "print only errors and the final summary"}),
		boolFlag(&cli.BoolFlag{Name: FlagVerbose, Aliases: []string{"v"}, Usage: "log every step"}),
	}
}

// WithSettings returns the flags of a command that works on a collection
// and reads its config: the common flags, the command's own, and one flag
// per config setting.
func WithSettings(own ...cli.Flag) []cli.Flag {
	flags := append(CommonFlags(), own...)
	return append(flags, SettingFlags()...)
}

// WithSections is WithSettings for a command that reads only the settings
// of the given config sections ("scope", "manager", …): its flags and its
// help list only those (a read-only command's help is then a screen, not
// a hundred settings).
func WithSections(sections []string, own ...cli.Flag) []cli.Flag {
	flags := append(CommonFlags(), own...)
	return append(flags, SettingFlags(sections...)...)
}

// SettingFlags returns one flag per config setting (of the given
// sections only, if any are given), grouped under
// "Settings" in the help. They carry no default of their own: an unset
// flag leaves the setting to the environment, the file or the default.
//
// Each shows, as the standard flags do, its environment variable
// ([$WIRE_…]) and its built-in default (default: …), the value used when
// neither the flag, the environment nor the config file sets it.
func SettingFlags(sections ...string) []cli.Flag {
	var out []cli.Flag
	defaults := config.Defaults()
	for _, f := range config.Fields() {
		if len(sections) > 0 && !slices.Contains(sections, f.Section) {
			continue
		}
		usage := f.Doc + " [$" + f.Env + "]"
		def := f.Get(&defaults)
		if f.Kind == "string" || f.Kind == "list" {
			def = strconv.Quote(def)
		}
		if f.Kind == "bool" {
			out = append(out, boolFlag(&cli.BoolFlag{Name: f.Flag, Usage: usage, Category: "Settings", DefaultText: def}))
		} else {
			out = append(out, stringFlag(&cli.StringFlag{Name: f.Flag, Usage: usage, Category: "Settings", DefaultText: def}))
		}
	}
	return out
}

// namedString and namedBool are cli's string and bool flags with their
// names worked out once (stringFlag, boolFlag): the common flags and the
// setting flags. Before a command's action cli asks, for every flag,
// whether it was set, and each such question looks the name up among the
// command's flags, each flag's names recomputed with a regexp: with a
// hundred settings, ten thousand regexps, about 5 ms of CPU at the start
// of every run of every stage (BenchmarkRunWithSettings, 2026-12-07 on a
// loaded 2-core machine: 7.2 ms and 22,249 allocations per parse with
// cli's own flags).
type (
	namedString struct {
		*cli.StringFlag
		names []string
	}
	namedBool struct {
		*cli.BoolFlag
		names []string
	}
)

// stringFlag is f with its names worked out once.
func stringFlag(f *cli.StringFlag) cli.Flag {
	return namedString{f, append([]string{f.Name}, f.Aliases...)}
}

// boolFlag is f with its names worked out once.
func boolFlag(f *cli.BoolFlag) cli.Flag {
	return namedBool{f, append([]string{f.Name}, f.Aliases...)}
}

// Names implements cli.Flag.
func (f namedString) Names() []string { return f.names }

// Names implements cli.Flag.
func (f namedBool) Names() []string { return f.names }

// Overrides collects the setting flags given on the command line. The
// flags given are listed once (cli's IsSet looks through every flag of
// the command, and there are a hundred settings).
func Overrides(c *cli.Context) map[string]string {
	m := map[string]string{}
	given := map[string]bool{}
	for _, name := range c.LocalFlagNames() {
		given[name] = true
	}
	for _, f := range config.Fields() {
		if given[f.Flag] {
			if f.Kind == "bool" {
				m[f.Key] = fmt.Sprint(c.Bool(f.Flag))
			} else {
				m[f.Key] = c.String(f.Flag)
			}
		}
	}
	return m
}

// LoadConfig loads the configuration for the collection directory named
// by the flags: flags over environment over file over defaults. The file
// must exist when --config is given; COLLECTION/wire.toml may be missing.
func LoadConfig(c *cli.Context) (config.Config, error) {
	file := c.String(FlagConfig)
	optional := false
	if file == "" {
		file = c.String(FlagCollection) + "/" + config.FileName
		optional = true
	}
	return config.Load(config.Sources{File: file, FileOptional: optional, Overrides: Overrides(c)})
}

// OpenCollection opens the collection named by --collection, for a
// command that reads no settings.
func OpenCollection(c *cli.Context) (*collection.Collection, error) {
	return collection.Open(c.String(FlagCollection))
}

// Open opens the collection named by --collection and loads its config.
// Unlike LoadConfig, it requires the collection's wire.toml (unless
// --config names another file): a collection that lost its config must
// not crawl silently on the defaults.
func Open(c *cli.Context) (*collection.Collection, config.Config, error) {
	col, err := OpenCollection(c)
	if err != nil {
		return nil, config.Config{}, err
	}
	if c.String(FlagConfig) == "" {
		if _, err := os.Stat(col.ConfigPath()); err != nil {
			return nil, config.Config{}, fmt.Errorf("%w: collection %s has no config: %w (restore it, or name one with --config)", config.ErrInvalid, col.Dir, err)
		}
	}
	cfg, err := LoadConfig(c)
	if err != nil {
		return nil, config.Config{}, err
	}
	return col, cfg, nil
}

// Logger returns the logger a command passes to library packages: text on
// stderr, warnings and errors only with --quiet, debug with --verbose.
func Logger(c *cli.Context) *slog.Logger {
	level := slog.LevelInfo
	if c.Bool(FlagQuiet) {
		level = slog.LevelWarn
	}
	if c.Bool(FlagVerbose) {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
}

// Interactive tells whether progress should be drawn: stderr is a
// terminal and --quiet is not set (so cron runs stay quiet).
func Interactive(c *cli.Context) bool {
	if c.Bool(FlagQuiet) {
		return false
	}
	f, ok := c.App.ErrWriter.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Main runs app with the process arguments, cancels its context on SIGINT
// and SIGTERM (with cause Interrupted), prints any error as "NAME:
// message" on stderr and exits with the mapped code: 130 or 143 for a
// run the signal stopped (WithSignal).
func Main(app *cli.App) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := (<-sigs).(syscall.Signal); ok {
			cancel(Interrupted{Signal: s})
		}
	}()
	err := WithSignal(ctx, app.RunContext(ctx, os.Args))
	signal.Stop(sigs)
	close(sigs)
	cancel(nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", app.Name, err)
	}
	os.Exit(ExitCode(err))
}

// NewApp returns an app with the shared settings: the exit-code help, the
// common flags on every command, errors returned rather than printed, an
// unknown command a usage error, and on every command the one rule for
// arguments (args.go): flags before arguments, and exactly the arguments
// the command's ArgsUsage declares.
func NewApp(name, usage string, commands ...*cli.Command) *cli.App {
	app := &cli.App{
		Name:                 name,
		Usage:                usage,
		Description:          ExitCodes(),
		Commands:             commands,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {},
		Writer:               os.Stdout,
		ErrWriter:            os.Stderr,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err}
		},
	}
	app.Action = unknownCommand("", commands, true)
	var onUsage func(*cli.Command)
	onUsage = func(cmd *cli.Command) {
		cmd.OnUsageError = app.OnUsageError
		for _, sub := range cmd.Subcommands {
			onUsage(sub)
		}
	}
	for _, cmd := range commands {
		onUsage(cmd)
		guard("", cmd)
	}
	return app
}

// Discard is a logger that drops everything.
func Discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
