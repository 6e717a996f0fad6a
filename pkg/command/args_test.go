package command

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestParseArgsUsage(t *testing.T) {
	for _, tc := range []struct {
		usage    string
		min, max int
	}{
		{"", 0, 0},
		{"URL", 1, 1},
		{"FILE|N", 1, 1},
		{"[FILE]", 0, 1},
		{"SRC DST", 2, 2},
		{"URL [N]", 1, 2},
		{"FILE...", 1, -1},
		{"[FILE...]", 0, -1},
	} {
		if s := parseArgsUsage(tc.usage); s.min != tc.min || s.max != tc.max {
			t.Errorf("parseArgsUsage(%q) = %d..%d, want %d..%d", tc.usage, s.min, s.max, tc.min, tc.max)
		}
	}
}

// TestArgumentRule runs an app built by NewApp: every command rejects a
// flag after an argument, a stray or missing argument, an unknown
// subcommand and a non-finite float flag, without running its action.
func TestArgumentRule(t *testing.T) {
	ran := ""
	action := func(c *cli.Context) error { ran = c.Command.Name; return nil }
	newApp := func() *cli.App {
		app := NewApp("wire", "test",
			&cli.Command{Name: "none", Flags: append(CommonFlags(), &cli.Float64Flag{Name: "x"}, &cli.IntFlag{Name: "batch"}), Action: action},
			&cli.Command{Name: "one", ArgsUsage: "URL", Flags: CommonFlags(), Action: action},
			&cli.Command{Name: "opt", ArgsUsage: "[FILE]", Flags: CommonFlags(), Action: action},
			&cli.Command{Name: "many", ArgsUsage: "FILE...", Flags: CommonFlags(), Action: action},
			&cli.Command{Name: "group", Subcommands: []*cli.Command{
				{Name: "sub", ArgsUsage: "FILE", Flags: CommonFlags(), Action: action},
			}},
		)
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		return app
	}
	for _, tc := range []struct {
		args []string
		code int
		want string // in the error; "" for success
	}{
		{[]string{"none"}, ExitOK, ""},
		{[]string{"none", "-c", "dir", "--x", "1.5"}, ExitOK, ""},
		{[]string{"none", "5", "-c", "/data/other"}, ExitUsage, `none: flag "-c" after the argument "5"`},
		{[]string{"none", "5"}, ExitUsage, `none takes no arguments, got "5" (nothing was done; name a batch with --batch N)`},
		{[]string{"none", "--x", "NaN"}, ExitUsage, "--x: want a finite number, got NaN"},
		{[]string{"none", "--x", "-Inf"}, ExitUsage, "--x: want a finite number"},
		{[]string{"one", "http://a.cl/"}, ExitOK, ""},
		{[]string{"one"}, ExitUsage, "one: missing argument: want URL"},
		{[]string{"one", "a", "b"}, ExitUsage, `one: too many arguments: want URL, got "b" as argument 2`},
		{[]string{"one", "http://a.cl/", "--verbose"}, ExitUsage, `flag "--verbose" after the argument`},
		{[]string{"one", "--", "-x"}, ExitUsage, `"-x" after the flags`},
		{[]string{"opt"}, ExitOK, ""},
		{[]string{"opt", "-"}, ExitOK, ""},
		{[]string{"opt", "a", "b"}, ExitUsage, "too many arguments"},
		{[]string{"many", "a", "b", "c"}, ExitOK, ""},
		{[]string{"many"}, ExitUsage, "missing argument"},
		{[]string{"many", "a", "-q"}, ExitUsage, `flag "-q"`},
		{[]string{"group", "sub", "f"}, ExitOK, ""},
		{[]string{"group", "sub", "f", "-c", "x"}, ExitUsage, `group sub: flag "-c"`},
		{[]string{"group", "frob"}, ExitUsage, `group: unknown command "frob"; the commands are sub (see 'wire group help')`},
		{[]string{"frob"}, ExitUsage, `unknown command "frob"; the commands are none, one, opt, many, group (see 'wire help')`},
		{[]string{"help", "frob"}, ExitUsage, "frob"},
		{[]string{"none", "--no-such-flag"}, ExitUsage, "no-such-flag"},
		{[]string{"group", "sub", "--no-such-flag", "f"}, ExitUsage, "no-such-flag"},
	} {
		ran = ""
		err := newApp().RunContext(context.Background(), append([]string{"wire"}, tc.args...))
		if code := ExitCode(err); code != tc.code || (tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want))) {
			t.Errorf("%v: exit %d, error %v; want exit %d, error containing %q", tc.args, code, err, tc.code, tc.want)
		}
		if tc.code != ExitOK && ran != "" {
			t.Errorf("%v: the command %s ran", tc.args, ran)
		}
		if tc.code == ExitOK && ran == "" {
			t.Errorf("%v: no command ran", tc.args)
		}
	}
}
