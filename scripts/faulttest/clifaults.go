package faulttest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The command-line faults of issue 18: a stray argument before a flag on
// every command that changes or reads a collection, NaN for a float
// setting from the file, the environment and a flag, and a 20 MB seed
// line. Each must give one clear line and the documented exit code, and
// leave the collection as it was (a stray argument: neither the
// collection named first nor the one the stray flag names is touched).

// strayCommands are the commands run with a stray argument and a flag
// after it: those that change or remove data, and the two the issue saw
// ignore the flag (seeder check and stats). args are the arguments the
// command takes; "FILE" is replaced by a file of the collection.
var strayCommands = []struct {
	bin, cmd string
	args     []string
}{
	{"manager", "run", nil},
	{"manager", "cancel", nil},
	{"manager", "history import", []string{"FILE"}},
	{"harvester", "run", nil},
	{"gatherer", "run", nil},
	{"gatherer", "compact", nil},
	{"seeder", "run", nil},
	{"seeder", "add", []string{"FILE"}},
	{"seeder", "check", nil},
	{"seeder", "stats", nil},
	{"seeder", "restore", nil},
	{"seeder", "requeue", nil},
	{"seeder", "captures", nil},
}

// cliCases returns the command-line fault cases.
func cliCases(ctx context.Context, fresh freshFunc, st states) []func() (EnvCase, error) {
	out := []func() (EnvCase, error){
		func() (EnvCase, error) { return strayArguments(ctx, fresh, st) },
	}
	for _, where := range []string{"file", "env", "flag"} {
		out = append(out, func() (EnvCase, error) { return nanSetting(ctx, fresh, st, where) })
	}
	return append(out, func() (EnvCase, error) { return longSeedLine(ctx, fresh, st) })
}

// treeDigest is a digest of every file under dir (path, mode and
// contents), to tell that a command left a collection as it was.
func treeDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %v\n", rel, d.Type())
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
	return fmt.Sprintf("%x", h.Sum(nil)), err
}

// strayArguments runs every command of strayCommands as
// "BIN CMD --collection A [ARGS] 5 -c B": each must exit 2 with one line
// naming the flag after the argument, and both A and B must be unchanged.
func strayArguments(ctx context.Context, fresh freshFunc, st states) (EnvCase, error) {
	c := EnvCase{Name: "stray-argument"}
	r, err := fresh("stray-argument", st.seeded)
	if err != nil {
		return c, err
	}
	other, err := fresh("stray-argument-other", st.seeded)
	if err != nil {
		return c, err
	}
	file := filepath.Join(r.Collection, "seeds.txt")
	before, err := treeDigest(r.Collection)
	if err != nil {
		return c, err
	}
	beforeOther, err := treeDigest(other.Collection)
	if err != nil {
		return c, err
	}
	want := regexp.MustCompile(`flag "-c" after the argument`)
	for _, sc := range strayCommands {
		args := append(strings.Fields(sc.cmd), "--collection", r.Collection)
		for _, a := range sc.args {
			if a == "FILE" {
				a = file
			}
			args = append(args, a)
		}
		if len(sc.args) == 0 {
			args = append(args, "5") // the stray argument
		}
		args = append(args, "-c", other.Collection)
		res, err := r.Run(ctx, sc.bin, args...)
		if err != nil {
			return c, err
		}
		one := EnvCase{}
		expectOneLine(&one, res, 2, want)
		if one.Problem != "" {
			c.Problem = fmt.Sprintf("%s %s: %s", sc.bin, sc.cmd, one.Problem)
			return c, nil
		}
		c.Stage, c.Code, c.Message = one.Stage, one.Code, one.Message
	}
	after, err := treeDigest(r.Collection)
	if err != nil {
		return c, err
	}
	afterOther, err := treeDigest(other.Collection)
	if err != nil {
		return c, err
	}
	switch {
	case after != before:
		c.Problem = "the collection named by --collection changed"
	case afterOther != beforeOther:
		c.Problem = "the collection named by the stray -c changed"
	default:
		c.Note = fmt.Sprintf("%d commands, each exit 2; neither collection changed; then seeder check passes and the manager runs", len(strayCommands))
		if p := afterFault(ctx, r, "manager"); p != "" {
			c.Problem = p
		}
	}
	return c, nil
}

// nanSetting gives manager.alpha the value NaN from the file, the
// environment or a flag: manager run must exit 2 naming the key and
// leave the collection unchanged; without it the manager runs.
func nanSetting(ctx context.Context, fresh freshFunc, st states, where string) (EnvCase, error) {
	c := EnvCase{Name: "nan-" + where}
	r, err := fresh(c.Name, st.seeded)
	if err != nil {
		return c, err
	}
	args := []string{"run", "--collection", r.Collection}
	switch where {
	case "file":
		if err := editConfig(r.Collection, setKey("alpha", "alpha = nan")); err != nil {
			return c, err
		}
	case "env":
		r.Env = append(r.Env, "WIRE_MANAGER_ALPHA=NaN")
	case "flag":
		args = append(args, "--manager-alpha", "NaN")
	}
	before, err := treeDigest(r.Collection)
	if err != nil {
		return c, err
	}
	res, err := r.Run(ctx, "manager", args...)
	if err != nil {
		return c, err
	}
	expectOneLine(&c, res, 2, regexp.MustCompile(`(?i)manager\.alpha.*(nan|finite)|(nan|finite).*manager\.alpha|alpha.*(NaN|finite)`))
	if c.Problem != "" {
		return c, nil
	}
	if after, err := treeDigest(r.Collection); err != nil {
		return c, err
	} else if after != before {
		c.Problem = "the collection changed"
		return c, nil
	}
	// Without the NaN, the manager runs.
	r.Env = nil
	if where == "file" {
		if err := editConfig(r.Collection, setKey("alpha", "alpha = 1.0")); err != nil {
			return c, err
		}
	}
	c.Note = "collection unchanged; without the NaN seeder check passes and the manager runs"
	if p := afterFault(ctx, r, "manager"); p != "" {
		c.Problem = p
	}
	return c, nil
}

// longSeedLine adds a seed file whose first line is 20 MB with terminal
// control bytes and whose second is a good new URL: seeder add reports
// the long line in one short escaped line, adds the other (exit 0, as
// for any rejected line), and the collection checks.
func longSeedLine(ctx context.Context, fresh freshFunc, st states) (EnvCase, error) {
	c := EnvCase{Name: "seed-line-20mb"}
	r, err := fresh(c.Name, st.seeded)
	if err != nil {
		return c, err
	}
	file := filepath.Join(r.Collection, "long-seeds.txt")
	long := "http://www.uchile.cl/\x1b[2J" + strings.Repeat("a", 20<<20) + "\nhttp://nuevo-sitio.cl/\n"
	if err := os.WriteFile(file, []byte(long), 0o644); err != nil {
		return c, err
	}
	res, err := r.Run(ctx, "seeder", "add", "--collection", r.Collection, file)
	if err != nil {
		return c, err
	}
	c.Stage, c.Code = "seeder", res.Code
	lines := errorLines(res.Stderr)
	if len(lines) > 0 {
		c.Message = lines[0]
	}
	switch {
	case res.Code != exitOK:
		c.Problem = fmt.Sprintf("exit %d, want 0 (a rejected line is reported, the others added): %s", res.Code, res)
	case len(res.Stderr) > 4096:
		c.Problem = fmt.Sprintf("%d bytes on stderr for one bad line", len(res.Stderr))
	case strings.ContainsRune(res.Stderr, '\x1b'):
		c.Problem = "a raw escape byte reached stderr"
	case len(lines) != 1 || !strings.Contains(lines[0], "long-seeds.txt:1:"):
		c.Problem = fmt.Sprintf("want one line naming long-seeds.txt:1, got %q", lines)
	case !strings.Contains(res.Stdout, "added"):
		c.Problem = fmt.Sprintf("no summary on stdout: %q", res.Stdout)
	default:
		c.Note = fmt.Sprintf("%d bytes on stderr; the good line added; seeder check passes", len(res.Stderr))
		if p := afterFault(ctx, r, ""); p != "" {
			c.Problem = p
		}
	}
	return c, nil
}
