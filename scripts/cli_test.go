package scripts_test

// The command line against the one table of exit codes and the one rule
// for arguments (issue 18, docs/operations.md "Exit codes" and "Command
// line"), through the real binaries and scripts: every command of every
// binary with a stray argument, a flag after an argument and a missing
// argument, none of which may do anything; then each binary and script
// with the cases that are cheap to provoke: usage, unknown command, not a
// collection, locked, nothing to do.

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// cliCommands is every command of every binary with valid arguments
// (nil: it takes none). TestCommandLine fails if a binary lists a
// command missing here, so a new command gets its row. optional rows are
// commands another change adds; they are skipped while absent.
var cliCommands = []struct {
	bin, cmd string
	args     []string
	optional bool
}{
	{bin: "manager", cmd: "run"},
	{bin: "manager", cmd: "show", args: []string{"1"}},
	{bin: "manager", cmd: "cancel"},
	{bin: "manager", cmd: "stats"},
	{bin: "manager", cmd: "explain", args: []string{"http://a.cl/"}},
	{bin: "manager", cmd: "history import", args: []string{"history.tsv"}},
	{bin: "manager", cmd: "history export", args: []string{"-"}},
	{bin: "manager", cmd: "status"},
	{bin: "manager", cmd: "report"},
	{bin: "manager", cmd: "simulate"},
	{bin: "harvester", cmd: "run"},
	{bin: "harvester", cmd: "fetch", args: []string{"http://127.0.0.1:1/"}},
	{bin: "harvester", cmd: "index"},
	{bin: "harvester", cmd: "wacz", args: []string{"out.wacz"}},
	{bin: "gatherer", cmd: "run"},
	{bin: "gatherer", cmd: "cat", args: []string{"1"}},
	{bin: "gatherer", cmd: "show", args: []string{"1"}},
	{bin: "gatherer", cmd: "compact"},
	{bin: "seeder", cmd: "init"},
	{bin: "seeder", cmd: "add", args: []string{"-"}},
	{bin: "seeder", cmd: "run"},
	{bin: "seeder", cmd: "release"},
	{bin: "seeder", cmd: "exchange"},
	{bin: "seeder", cmd: "check"},
	{bin: "seeder", cmd: "stats"},
	{bin: "seeder", cmd: "import"},
	{bin: "seeder", cmd: "restore"},
	{bin: "seeder", cmd: "requeue"},
	{bin: "seeder", cmd: "captures"},
}

// cliRun runs a program in dir with stdin empty and returns its exit
// code and output.
func cliRun(t *testing.T, dir string, env []string, name string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return 0, stdout.String(), stderr.String()
}

// snapshot lists every file under dir with its size and modification
// time, to tell that nothing was changed.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(path + " " + info.Mode().String())
		if !d.IsDir() {
			b.WriteString(" " + info.ModTime().String() + " " + strconv.FormatInt(info.Size(), 10))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// cliEnv builds the binaries once and makes a work directory whose
// ./collection (the default --collection) has one batch written, and a
// second collection, other.
type cliEnv struct {
	bin, work, col, other string
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	e := &cliEnv{bin: t.TempDir(), work: t.TempDir()}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(gobin, "build", "-o", e.bin+string(filepath.Separator), "./manager", "./harvester", "./gatherer", "./seeder")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build binaries: %v\n%s", err, out)
	}
	e.col, e.other = filepath.Join(e.work, "collection"), filepath.Join(e.work, "other")
	seeds := filepath.Join(e.work, "seeds.txt")
	os.WriteFile(seeds, []byte("http://a.cl/\nhttp://b.cl/\n"), 0o644)
	for _, col := range []string{e.col, e.other} {
		e.must(t, "seeder", "init", "-c", col, "--scope-domains", "cl")
		e.must(t, "seeder", "add", "-c", col, seeds)
		e.must(t, "manager", "run", "-c", col)
	}
	return e
}

func (e *cliEnv) run(t *testing.T, env []string, bin string, args ...string) (int, string, string) {
	t.Helper()
	return cliRun(t, e.work, env, filepath.Join(e.bin, bin), args...)
}

func (e *cliEnv) must(t *testing.T, bin string, args ...string) {
	t.Helper()
	if code, out, errOut := e.run(t, nil, bin, args...); code != 0 {
		t.Fatalf("%s %s: exit %d\n%s%s", bin, strings.Join(args, " "), code, out, errOut)
	}
}

// listed returns the commands a binary lists (bash completion), with
// those of the commands that have subcommands as "cmd sub".
func (e *cliEnv) listed(t *testing.T, bin string) []string {
	t.Helper()
	var out []string
	var walk func(prefix []string)
	walk = func(prefix []string) {
		_, stdout, _ := e.run(t, nil, bin, append(prefix, "--generate-bash-completion")...)
		for _, name := range strings.Fields(stdout) {
			name, _, _ = strings.Cut(name, ":")
			if name == "help" || name == "h" || strings.HasPrefix(name, "-") {
				continue
			}
			path := append(append([]string{}, prefix...), name)
			_, sub, _ := e.run(t, nil, bin, append(path, "--generate-bash-completion")...)
			if hasSubcommands(sub) {
				walk(path)
				continue
			}
			out = append(out, strings.Join(path, " "))
		}
	}
	walk(nil)
	sort.Strings(out)
	return out
}

// hasSubcommands tells a completion listing of subcommands from one of
// flags.
func hasSubcommands(listing string) bool {
	for _, w := range strings.Fields(listing) {
		if !strings.HasPrefix(w, "-") && w != "help" && w != "h" {
			return true
		}
	}
	return false
}

func TestCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	e := newCLIEnv(t)

	t.Run("every command listed", func(t *testing.T) {
		known := map[string]bool{}
		for _, c := range cliCommands {
			known[c.bin+" "+c.cmd] = true
		}
		for _, bin := range []string{"manager", "harvester", "gatherer", "seeder"} {
			cmds := e.listed(t, bin)
			if len(cmds) < 2 || (bin == "manager" && !strings.Contains(strings.Join(cmds, ","), "history import")) {
				t.Errorf("%s lists the commands %v", bin, cmds)
			}
			for _, cmd := range cmds {
				if !known[bin+" "+cmd] {
					t.Errorf("%s %s has no row in cliCommands", bin, cmd)
				}
			}
		}
	})

	t.Run("short flags", func(t *testing.T) {
		// A long flag has the same short form on every command that
		// takes it, and a short form means one long flag everywhere
		// (-b was --batch in two binaries of three).
		flagLine := regexp.MustCompile(`^\s+--([a-z0-9-]+)(?: [A-Za-z_]+)?, -([a-zA-Z])\b`)
		longOnly := regexp.MustCompile(`^\s+--([a-z0-9-]+)(?: [A-Za-z_]+)?\s{2,}`)
		short := map[string]string{}  // long → short
		longOf := map[string]string{} // short → long
		where := map[string]string{}
		var without []string
		for _, c := range cliCommands {
			_, out, _ := e.run(t, nil, c.bin, append(strings.Fields(c.cmd), "--help")...)
			for _, l := range strings.Split(out, "\n") {
				if m := flagLine.FindStringSubmatch(l); m != nil {
					long, sh := m[1], m[2]
					if old, ok := short[long]; ok && old != sh {
						t.Errorf("--%s is -%s in %s and -%s in %s %s", long, old, where[long], sh, c.bin, c.cmd)
					}
					if old, ok := longOf[sh]; ok && old != long {
						t.Errorf("-%s is --%s in %s and --%s in %s %s", sh, old, where[long], long, c.bin, c.cmd)
					}
					short[long], longOf[sh], where[long] = sh, long, c.bin+" "+c.cmd
				} else if m := longOnly.FindStringSubmatch(l); m != nil {
					without = append(without, m[1]+"\x00"+c.bin+" "+c.cmd)
				}
			}
		}
		for _, w := range without {
			long, cmd, _ := strings.Cut(w, "\x00")
			if sh, ok := short[long]; ok {
				t.Errorf("--%s has no -%s in %s (it has in %s)", long, sh, cmd, where[long])
			}
		}
	})

	t.Run("arguments", func(t *testing.T) {
		before := snapshot(t, e.work)
		for _, c := range cliCommands {
			cmd := strings.Fields(c.cmd)
			if c.optional {
				if code, _, _ := e.run(t, nil, c.bin, append(cmd, "--help")...); code != 0 {
					continue
				}
			}
			positional := c.args
			if len(positional) == 0 {
				positional = []string{"5"} // "manager cancel 5 -c /data/other"
			}
			line := func(parts ...[]string) []string {
				var out []string
				for _, p := range parts {
					out = append(out, p...)
				}
				return out
			}
			type argCase struct {
				name string
				args []string
				want string
			}
			cases := []argCase{
				// The case of the issue: a flag after an argument
				// names another collection.
				{"flag after argument", line(cmd, positional, []string{"-c", e.other}), `flag "-c" after the argument "` + positional[0] + `"`},
				{"stray argument", line(cmd, []string{"-c", e.col}, c.args, []string{"stray"}), `"stray"`},
			}
			if len(c.args) > 0 {
				cases = append(cases, argCase{"missing argument", line(cmd, []string{"-c", e.col}), "missing argument"})
			}
			for _, tc := range cases {
				code, out, errOut := e.run(t, nil, c.bin, tc.args...)
				if code != command.ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 || out != "" {
					t.Errorf("%s %s (%s): exit %d, want %d and one line naming %s\nstdout:\n%s\nstderr:\n%s", c.bin, strings.Join(tc.args, " "), tc.name, code, command.ExitUsage, tc.want, out, errOut)
				}
			}
		}
		if after := snapshot(t, e.work); after != before {
			t.Errorf("a rejected command line changed the collections:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	t.Run("exit codes", func(t *testing.T) { e.testExitCodes(t) })
}

// testExitCodes runs each binary and script against the table.
func (e *cliEnv) testExitCodes(t *testing.T) {
	empty := t.TempDir()
	bins := []string{"manager", "harvester", "gatherer", "seeder"}
	check := func(what string, code, want int, errOut, text string) {
		t.Helper()
		if code != want || !strings.Contains(errOut, text) {
			t.Errorf("%s: exit %d, want %d and %q on stderr:\n%s", what, code, want, text, errOut)
		}
	}
	for _, bin := range bins {
		code, _, errOut := e.run(t, nil, bin, "frobnicate")
		check(bin+" frobnicate", code, command.ExitUsage, errOut, `unknown command "frobnicate"`)
		code, _, errOut = e.run(t, nil, bin, "help", "frobnicate")
		check(bin+" help frobnicate", code, command.ExitUsage, errOut, "frobnicate")
		code, _, errOut = e.run(t, nil, bin, "run", "--no-such-flag")
		check(bin+" run --no-such-flag", code, command.ExitUsage, errOut, "no-such-flag")
		code, _, errOut = e.run(t, nil, bin, "run", "-c", empty)
		check(bin+" run outside a collection", code, command.ExitUsage, errOut, "not a collection")
	}
	code, _, errOut := e.run(t, nil, "manager", "history", "frobnicate")
	check("manager history frobnicate", code, command.ExitUsage, errOut, `unknown command "frobnicate"`)
	code, _, errOut = e.run(t, nil, "manager", "run", "--manager-alpha", "NaN")
	check("manager run --manager-alpha NaN", code, command.ExitUsage, errOut, "manager.alpha")
	code, _, errOut = e.run(t, []string{"WIRE_MANAGER_GAMMA=inf"}, "manager", "run")
	check("WIRE_MANAGER_GAMMA=inf manager run", code, command.ExitUsage, errOut, "manager.gamma")

	// Nothing to do: the batch written is not harvested yet, so the
	// gatherer and the seeder have nothing; a fresh collection has no
	// batch for the harvester or the manager's cancel, and no frontier.
	fresh := filepath.Join(t.TempDir(), "fresh")
	e.must(t, "seeder", "init", "-c", fresh)
	for _, c := range [][]string{
		{"gatherer", "run", "-c", e.col},
		{"seeder", "run", "-c", e.col},
		{"harvester", "run", "-c", fresh},
		{"manager", "run", "-c", fresh},
		{"manager", "cancel", "-c", fresh},
	} {
		code, _, errOut := e.run(t, nil, c[0], c[1:]...)
		check(strings.Join(c, " "), code, command.ExitNothingToDo, errOut, "")
	}

	// Damaged: manager status shows what it can of a collection whose
	// graph.db is damaged, then exits with the damaged-file code (it
	// exited 0).
	code, out, errOut := e.run(t, nil, "manager", "status", "-c", fresh, "--no-graph")
	check("manager status --no-graph", code, command.ExitOK, errOut, "")
	if err := os.WriteFile(filepath.Join(fresh, "graph.db"), bytes.Repeat([]byte{0xa5}, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = e.run(t, nil, "manager", "status", "-c", fresh)
	check("manager status with graph.db damaged", code, command.ExitDamaged, errOut, "graph.db")
	if !strings.Contains(out, "pages") {
		t.Errorf("manager status with graph.db damaged shows no status:\n%s", out)
	}

	// Locked: a stage's lock, and graph.db held open by this process
	// (both the manager and the seeder must say 4; they wait 5 s).
	col, err := collection.Open(e.col)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manager", "seeder"} {
		lock, err := col.Lock(name)
		if err != nil {
			t.Fatal(err)
		}
		args := map[string][]string{"manager": {"run", "-c", e.col}, "seeder": {"add", "-c", e.col, "-"}}[name]
		code, _, errOut := e.run(t, nil, name, args...)
		check(name+" with its lock held", code, command.ExitLocked, errOut, "locked")
		lock.Release()
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, c := range [][]string{{"manager", "run", "-c", e.col}, {"seeder", "add", "-c", e.col, "-"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, errOut := e.run(t, nil, c[0], c[1:]...)
			check(c[0]+" with graph.db busy", code, command.ExitLocked, errOut, "graph.db")
		}()
	}
	wg.Wait()
	g.Close()

	// The scripts that take a collection.
	env := []string{"WIRE_BIN=" + e.bin}
	script := func(name string, args ...string) (int, string, string) {
		t.Helper()
		return cliRun(t, ".", env, "bash", append([]string{name}, args...)...)
	}
	for _, s := range []string{"crawl.sh", "cron.sh"} {
		code, _, errOut := script(s)
		check(s+" without arguments", code, command.ExitUsage, errOut, "usage")
		code, _, errOut = script(s, empty)
		check(s+" outside a collection", code, command.ExitUsage, errOut, "not a collection")
	}
	lock, err := col.Lock("cron")
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut = script("cron.sh", e.col)
	check("cron.sh with cron.lock held", code, command.ExitLocked, errOut, "another cron.sh")
	lock.Release()
}
