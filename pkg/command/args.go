package command

import (
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// The command line's one rule for arguments (docs/operations.md,
// "Command line"): flags come first, then the arguments a command takes,
// and nothing else. The flag parser stops at the first argument, so a
// flag written after it would be taken as one more argument and
// silently ignored ("manager cancel 5 -c /data/other" used to cancel a
// batch of ./collection); every command therefore rejects, before it
// does anything:
//
//   - an argument that looks like a flag (begins with "-" and is not "-"
//     alone, the name of standard input), naming it;
//   - more or fewer arguments than its ArgsUsage declares.
//
// ArgsUsage is the declaration, so the help and the check cannot
// disagree: empty means no argument; each word is one argument; a word
// in brackets ("[FILE]") is optional; a word ending in "..." takes any
// number. The check is installed by NewApp on every command of the app,
// subcommands included, so no command writes its own.

// argSpec is what ArgsUsage declares: at least min arguments, at most max
// (max < 0: no limit).
type argSpec struct {
	min, max int
	usage    string
}

// parseArgsUsage reads a command's ArgsUsage.
func parseArgsUsage(usage string) argSpec {
	s := argSpec{usage: strings.TrimSpace(usage)}
	for _, w := range strings.Fields(usage) {
		switch {
		case strings.HasSuffix(w, "..."), strings.HasSuffix(w, "...]"):
			s.max = -1
			if !strings.HasPrefix(w, "[") {
				s.min++
			}
			continue
		case strings.HasPrefix(w, "["):
		default:
			s.min++
		}
		if s.max >= 0 {
			s.max++
		}
	}
	return s
}

// checkArgs applies the argument rule and the float-flag rule to the
// command line of c, whose full name (e.g. "manager history import") is
// name.
func checkArgs(c *cli.Context, name string, spec argSpec) error {
	args := c.Args().Slice()
	for i, a := range args {
		if len(a) > 1 && a[0] == '-' {
			if i == 0 {
				return Usage("%s: %s after the flags is not a flag of this command; arguments may not begin with '-' (nothing was done)", name, excerpt.Quote(a))
			}
			return Usage("%s: flag %s after the argument %s: flags must come before the arguments (nothing was done)", name, excerpt.Quote(a), excerpt.Quote(args[0]))
		}
	}
	n := len(args)
	switch {
	case spec.max == 0 && n > 0:
		hint := ""
		if hasFlag(c.Command, "batch") && strings.Trim(args[0], "0123456789") == "" {
			hint = "; name a batch with --batch N"
		}
		return Usage("%s takes no arguments, got %s (nothing was done%s)", name, excerpt.Quote(args[0]), hint)
	case n < spec.min:
		return Usage("%s: missing argument: want %s", name, spec.usage)
	case spec.max > 0 && n > spec.max:
		return Usage("%s: too many arguments: want %s, got %s as argument %d (nothing was done)", name, spec.usage, excerpt.Quote(args[spec.max]), spec.max+1)
	}
	return checkFloatFlags(c)
}

// hasFlag tells whether cmd has a flag called name.
func hasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// checkFloatFlags rejects NaN and ±Inf given to a float flag of the
// command (the settings' flags are strings, checked by pkg/config).
func checkFloatFlags(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		ff, ok := f.(*cli.Float64Flag)
		if !ok || !c.IsSet(ff.Name) {
			continue
		}
		if x := c.Float64(ff.Name); math.IsNaN(x) || math.IsInf(x, 0) {
			return Usage("--%s: want a finite number, got %g", ff.Name, x)
		}
	}
	return nil
}

// guard installs the argument rule on cmd and its subcommands; prefix is
// the names of the parent commands ("" for a command of the app). The
// messages name the command without the app, which Main prints first. A command with
// subcommands and no action of its own rejects an unknown subcommand.
func guard(prefix string, cmd *cli.Command) {
	name := strings.TrimSpace(prefix + " " + cmd.Name)
	for _, sub := range cmd.Subcommands {
		guard(name, sub)
	}
	if cmd.Action == nil {
		if len(cmd.Subcommands) > 0 {
			cmd.Action = unknownCommand(name, cmd.Subcommands, false)
		}
		return
	}
	action, spec := cmd.Action, parseArgsUsage(cmd.ArgsUsage)
	cmd.Action = func(c *cli.Context) error {
		if err := checkArgs(c, name, spec); err != nil {
			return err
		}
		return action(c)
	}
}

// unknownCommand is the action of the app (and of a command with
// subcommands) when no command is named: the help without an argument,
// a usage error naming the unknown command with one.
func unknownCommand(name string, commands []*cli.Command, root bool) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Args().Present() {
			if root {
				return cli.ShowAppHelp(c)
			}
			return cli.ShowSubcommandHelp(c)
		}
		var names []string
		for _, cmd := range commands {
			if !cmd.Hidden {
				names = append(names, cmd.Name)
			}
		}
		help := strings.TrimSpace(c.App.Name + " " + name)
		what := "unknown command"
		if name != "" {
			what = name + ": unknown command"
		}
		return Usage("%s %s; the commands are %s (see '%s help')", what, excerpt.Quote(c.Args().First()), strings.Join(names, ", "), help)
	}
}
