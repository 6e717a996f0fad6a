package faulttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// EnvCase is the outcome of one environment fault.
type EnvCase struct {
	// Name names the fault, e.g. "disk-full" or "config-wrong-type".
	Name string
	// Skipped says why the case could not run ("" when it ran).
	Skipped string
	// Stage and Code are the stage that met the fault and its exit code.
	Stage string
	Code  int
	// Message is the error line the stage printed.
	Message string
	// Note says what else was verified.
	Note string
	// Problem is what went wrong ("" when the case passed).
	Problem string
}

// String is the case in one line.
func (c EnvCase) String() string {
	switch {
	case c.Skipped != "":
		return fmt.Sprintf("%-22s SKIPPED: %s", c.Name, c.Skipped)
	case c.Problem != "":
		return fmt.Sprintf("%-22s FAIL: %s", c.Name, c.Problem)
	}
	s := fmt.Sprintf("%-22s ok: %s exit %d: %s", c.Name, c.Stage, c.Code, c.Message)
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// errorLines returns the lines of a stage's stderr that are not log
// records (slog's text handler starts them with "time=").
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "time=") {
			out = append(out, l)
		}
	}
	return out
}

// expectOneLine checks that res failed with code (any failure when code
// is 0) and printed exactly one error line, starting with the stage's
// name and matching want.
func expectOneLine(c *EnvCase, res Result, code int, want *regexp.Regexp) {
	c.Stage, c.Code = res.Args[0], res.Code
	lines := errorLines(res.Stderr)
	if len(lines) > 0 {
		c.Message = lines[len(lines)-1]
	}
	switch {
	case res.Code == exitOK || res.Code == exitNothing:
		c.Problem = fmt.Sprintf("%s did not fail: %s", c.Stage, res)
	case code != 0 && res.Code != code:
		c.Problem = fmt.Sprintf("exit %d, want %d: %s", res.Code, code, res)
	case len(lines) != 1:
		c.Problem = fmt.Sprintf("%d error lines, want 1: %q", len(lines), lines)
	case !strings.HasPrefix(lines[0], c.Stage+":"):
		c.Problem = fmt.Sprintf("error line does not start with %q: %s", c.Stage+":", lines[0])
	case !want.MatchString(lines[0]):
		c.Problem = fmt.Sprintf("error line does not match %q: %s", want, lines[0])
	}
}

// copyTree copies directory src to dst (regular files and directories).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// mount runs mount(8) with args.
func mount(args ...string) error {
	out, err := exec.Command("mount", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mount %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// umount unmounts dir.
func umount(dir string) {
	_ = exec.Command("umount", dir).Run()
}

// states are collections of the test web prepared at successive points
// of a cycle, for the environment faults.
type states struct {
	managed   string // batch 2 managed, not harvested
	harvested string // batch 2 harvested, not gathered
	gathered  string // batch 2 gathered, not seeded
	seeded    string // batch 2 seeded: the manager has work
}

// prepare crawls one cycle of a small collection and keeps copies of it
// at each stage of the second cycle.
func prepare(ctx context.Context, bin, dir string, web *testweb.Web, s Settings) (states, error) {
	st := states{
		managed:   filepath.Join(dir, "state-managed"),
		harvested: filepath.Join(dir, "state-harvested"),
		gathered:  filepath.Join(dir, "state-gathered"),
		seeded:    filepath.Join(dir, "state-seeded"),
	}
	r := &Runner{Bin: bin, Collection: st.managed}
	if err := InitCollection(ctx, r, web, s); err != nil {
		return st, err
	}
	step := func(col, stage string) error {
		r := &Runner{Bin: bin, Collection: col}
		res, err := r.Stage(ctx, stage)
		if err != nil {
			return err
		}
		if res.Code != exitOK {
			return fmt.Errorf("prepare: %s", res)
		}
		return nil
	}
	for _, stage := range append(Stages(), "manager") {
		if err := step(st.managed, stage); err != nil {
			return st, err
		}
	}
	if err := copyTree(st.managed, st.harvested); err != nil {
		return st, fmt.Errorf("copy collection: %w", err)
	}
	if err := step(st.harvested, "harvester"); err != nil {
		return st, err
	}
	if err := copyTree(st.harvested, st.gathered); err != nil {
		return st, fmt.Errorf("copy collection: %w", err)
	}
	if err := step(st.gathered, "gatherer"); err != nil {
		return st, err
	}
	if err := copyTree(st.gathered, st.seeded); err != nil {
		return st, fmt.Errorf("copy collection: %w", err)
	}
	return st, step(st.seeded, "seeder")
}

// EnvironmentFaults breaks the environment of a small collection of web
// in every way listed in docs/faults.md and checks that each stage fails
// cleanly: exit code 1 (2 for configuration), exactly one error line that
// names the problem, and a collection that `seeder check` still accepts
// and that crawls on once the fault is gone. dir is a scratch directory.
// Faults that need mount(8) (full disk, read-only collection as root) are
// skipped, with the reason, where mounting is not permitted.
func EnvironmentFaults(ctx context.Context, bin, dir string, web *testweb.Web, s Settings, log io.Writer) ([]EnvCase, error) {
	st, err := prepare(ctx, bin, dir, web, s)
	if err != nil {
		return nil, err
	}
	var out []EnvCase
	fresh := func(name, from string) (*Runner, error) {
		col := filepath.Join(dir, name)
		if err := copyTree(from, col); err != nil {
			return nil, fmt.Errorf("copy collection: %w", err)
		}
		return &Runner{Bin: bin, Collection: col}, nil
	}
	report := func(c EnvCase) {
		out = append(out, c)
		if log != nil {
			fmt.Fprintln(log, c)
		}
	}
	cases := []func() (EnvCase, error){
		func() (EnvCase, error) { return configWrongType(ctx, fresh, st) },
		func() (EnvCase, error) { return configUnknownKey(ctx, fresh, st) },
		func() (EnvCase, error) { return configMissingKey(ctx, fresh, st, s) },
		func() (EnvCase, error) { return configMissingFile(ctx, fresh, st) },
		func() (EnvCase, error) { return truncatedBatch(ctx, fresh, st, false) },
		func() (EnvCase, error) { return truncatedBatch(ctx, fresh, st, true) },
	}
	for _, stage := range Stages() {
		cases = append(cases, func() (EnvCase, error) { return readOnly(ctx, fresh, st, stage) })
	}
	cases = append(cases, warcCases(ctx, fresh, st)...)
	cases = append(cases, func() (EnvCase, error) { return diskFull(ctx, bin, dir, web, s, false) })
	cases = append(cases, func() (EnvCase, error) { return diskFull(ctx, bin, dir, web, s, true) })
	cases = append(cases, outageCases(ctx, fresh, st, web)...)
	cases = append(cases, cliCases(ctx, fresh, st)...)
	cases = append(cases, func() (EnvCase, error) { return followKilled(ctx, fresh, st) })
	for _, run := range cases {
		c, err := run()
		if err != nil {
			return out, err
		}
		report(c)
	}
	graph, err := graphFaults(ctx, fresh, st)
	for _, c := range graph {
		report(c)
	}
	return out, err
}

// freshFunc makes a scratch copy of a prepared collection.
type freshFunc func(name, from string) (*Runner, error)

// editConfig rewrites the collection's wire.toml through edit.
func editConfig(col string, edit func(string) string) error {
	p := filepath.Join(col, "wire.toml")
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	after := edit(string(data))
	if after == string(data) {
		return fmt.Errorf("edit of %s changed nothing", p)
	}
	return os.WriteFile(p, []byte(after), 0o644)
}

// setKey replaces the line of key (the first one) in a TOML text.
func setKey(key, line string) func(string) string {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + ` = .*$`)
	return func(s string) string {
		done := false
		return re.ReplaceAllStringFunc(s, func(m string) string {
			if done {
				return m
			}
			done = true
			return line
		})
	}
}

// configWrongType: harvester.wait = 5 (a number, not a duration).
func configWrongType(ctx context.Context, fresh freshFunc, st states) (EnvCase, error) {
	c := EnvCase{Name: "config-wrong-type"}
	r, err := fresh("config-wrong-type", st.managed)
	if err != nil {
		return c, err
	}
	if err := editConfig(r.Collection, setKey("wait", "wait = 5")); err != nil {
		return c, err
	}
	res, err := r.Stage(ctx, "harvester")
	if err != nil {
		return c, err
	}
	expectOneLine(&c, res, 2, regexp.MustCompile(`wire\.toml.*(line \d+|wait).*duration`))
	return c, nil
}

// configUnknownKey: a misspelt key (wiat) is an error naming it.
func configUnknownKey(ctx context.Context, fresh freshFunc, st states) (EnvCase, error) {
	c := EnvCase{Name: "config-unknown-key"}
	r, err := fresh("config-unknown-key", st.managed)
	if err != nil {
		return c, err
	}
	if err := editConfig(r.Collection, setKey("wait", `wiat = "1s"`)); err != nil {
		return c, err
	}
	res, err := r.Stage(ctx, "harvester")
	if err != nil {
		return c, err
	}
	expectOneLine(&c, res, 2, regexp.MustCompile(`wire\.toml.*harvester\.wiat`))
	return c, nil
}

// configMissingKey: a key removed from wire.toml takes its default. The
// collection was made with a small manager.batch_size; without the key
// the default (100,000) applies and the next batch is bigger.
func configMissingKey(ctx context.Context, fresh freshFunc, st states, s Settings) (EnvCase, error) {
	c := EnvCase{Name: "config-missing-key", Stage: "manager"}
	r, err := fresh("config-missing-key", st.gathered)
	if err != nil {
		return c, err
	}
	if err := editConfig(r.Collection, setKey("batch_size", "")); err != nil {
		return c, err
	}
	for _, stage := range []string{"seeder", "manager"} {
		res, err := r.Stage(ctx, stage)
		if err != nil {
			return c, err
		}
		if res.Code != exitOK {
			c.Problem = fmt.Sprintf("without batch_size: %s", res)
			return c, nil
		}
	}
	_, ents, err := batch.ReadFile(filepath.Join(r.Collection, collection.BatchesDir, collection.BatchName(3), collection.BatchFile))
	if err != nil {
		return c, err
	}
	c.Message = fmt.Sprintf("no error: batch 3 has %d URLs (batch_size was %d, the default applies)", len(ents), s.BatchSize)
	if len(ents) <= s.BatchSize {
		c.Problem = fmt.Sprintf("batch 3 has %d URLs, no more than the removed batch_size %d: the default did not apply", len(ents), s.BatchSize)
	}
	return c, nil
}

// configMissingFile: --config naming a missing file is an error naming
// it. (Without --config a missing COLLECTION/wire.toml means defaults:
// see docs/faults.md.)
func configMissingFile(ctx context.Context, fresh freshFunc, st states) (EnvCase, error) {
	c := EnvCase{Name: "config-missing-file"}
	r, err := fresh("config-missing-file", st.managed)
	if err != nil {
		return c, err
	}
	missing := filepath.Join(r.Collection, "nowhere.toml")
	res, err := r.Run(ctx, "harvester", "run", "--collection", r.Collection, "--config", missing)
	if err != nil {
		return c, err
	}
	expectOneLine(&c, res, 2, regexp.MustCompile(regexp.QuoteMeta(missing)))
	return c, nil
}

// truncatedBatch cuts batch.tsv in the middle of a line, or at a line end
// (atLine), and runs the harvester on it.
func truncatedBatch(ctx context.Context, fresh freshFunc, st states, atLine bool) (EnvCase, error) {
	c := EnvCase{Name: "truncated-batch"}
	if atLine {
		c.Name = "truncated-batch-line"
	}
	r, err := fresh(c.Name, st.managed)
	if err != nil {
		return c, err
	}
	p := filepath.Join(r.Collection, collection.BatchesDir, collection.BatchName(2), collection.BatchFile)
	data, err := os.ReadFile(p)
	if err != nil {
		return c, err
	}
	cut := len(data) * 2 / 3
	if atLine {
		cut = strings.LastIndexByte(string(data[:cut]), '\n') + 1
	}
	if err := os.WriteFile(p, data[:cut], 0o644); err != nil {
		return c, err
	}
	res, err := r.Stage(ctx, "harvester")
	if err != nil {
		return c, err
	}
	expectOneLine(&c, res, 1, regexp.MustCompile(`batch\.tsv.*(truncated|malformed|line \d+)`))
	return c, nil
}

// readOnly makes a collection read-only (a read-only bind mount, or
// permissions when not root) where stage has work to do, runs it, and
// checks that it fails cleanly and that, writable again, the collection
// passes `seeder check` and the stage succeeds.
func readOnly(ctx context.Context, fresh freshFunc, st states, stage string) (EnvCase, error) {
	c := EnvCase{Name: "read-only-" + stage}
	from := map[string]string{"manager": st.seeded, "harvester": st.managed, "gatherer": st.harvested, "seeder": st.gathered}[stage]
	r, err := fresh(c.Name, from)
	if err != nil {
		return c, err
	}
	undo, how, err := makeReadOnly(r.Collection)
	if err != nil {
		c.Skipped = err.Error()
		return c, nil
	}
	res, err := r.Stage(ctx, stage)
	undo()
	if err != nil {
		return c, err
	}
	expectOneLine(&c, res, 1, regexp.MustCompile(`(?i)read-only|permission denied`))
	if c.Problem != "" {
		return c, nil
	}
	c.Note = how + "; writable again: seeder check passes and the stage succeeds"
	if p := afterFault(ctx, r, stage); p != "" {
		c.Problem = p
	}
	return c, nil
}

// afterFault checks a collection once its fault is gone: seeder check
// passes and stage then runs successfully.
func afterFault(ctx context.Context, r *Runner, stage string) string {
	res, err := r.Run(ctx, "seeder", "check", "--collection", r.Collection)
	if err != nil || res.Code != exitOK {
		return fmt.Sprintf("after the fault, seeder check: %v %s\n%s", err, res, res.Stdout)
	}
	if stage == "" {
		return ""
	}
	res, err = r.Stage(ctx, stage)
	if err != nil || res.Code != exitOK {
		return fmt.Sprintf("after the fault, %s: %v %s", stage, err, res)
	}
	return ""
}

// makeReadOnly makes dir read-only: a read-only bind mount onto itself
// (needs root), else, for a user other than root, write permissions
// removed. It returns the function that undoes it.
func makeReadOnly(dir string) (undo func(), how string, err error) {
	if mount("--bind", dir, dir) == nil {
		if err := mount("-o", "remount,bind,ro", dir); err != nil {
			umount(dir)
			return nil, "", fmt.Errorf("cannot remount read-only: %w", err)
		}
		return func() { umount(dir) }, "read-only bind mount", nil
	}
	if os.Geteuid() == 0 {
		return nil, "", errors.New("mount is not permitted and root ignores permissions")
	}
	chmodAll := func(dirMode, fileMode os.FileMode) {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				mode := fileMode
				if d.IsDir() {
					mode = dirMode
				}
				_ = os.Chmod(p, mode)
			}
			return nil
		})
	}
	chmodAll(0o555, 0o444)
	return func() {
		chmodAll(0o755, 0o644)
	}, "permissions removed", nil
}

// diskFull crawls a fresh collection on a small tmpfs until a stage
// fails, checks the failure is clean, then grows the file system and
// checks the crawl goes on. With keep (case disk-min-free) the
// collection keeps collection.min_free = 2 MiB of a 5 MiB file system:
// a stage must stop there with exit code 7 and "disk full", the disk
// never running out (no "no space left on device"). Without (case
// disk-full, min_free 0, 2 MB) the disk runs out: exit 7 too (ENOSPC),
// "no space left on device".
func diskFull(ctx context.Context, bin, dir string, web *testweb.Web, s Settings, keep bool) (EnvCase, error) {
	c := EnvCase{Name: "disk-full"}
	size, minFree, want := "2m", "0", regexp.MustCompile(`(?i)no space left on device`)
	if keep {
		c.Name = "disk-min-free"
		size, minFree, want = "5m", "2MiB", regexp.MustCompile(`disk full: .* collection\.min_free keeps 2\.0 MiB.*gatherer compact`)
	}
	mnt := filepath.Join(dir, "tmpfs-"+c.Name)
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return c, err
	}
	if err := mount("-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt); err != nil {
		c.Skipped = err.Error()
		return c, nil
	}
	defer umount(mnt)
	r := &Runner{Bin: bin, Collection: filepath.Join(mnt, "col"), Env: []string{"WIRE_COLLECTION_MIN_FREE=" + minFree}}
	s.BatchSize = max(s.BatchSize, 500) // fill the disk in a few cycles
	if err := InitCollection(ctx, r, web, s); err != nil {
		c.Skipped = "the collection does not even fit: " + err.Error()
		return c, nil
	}
	var failed Result
	var failedStage string
loop:
	for cycle := 0; cycle < 200; cycle++ {
		for _, stage := range Stages() {
			res, err := r.Stage(ctx, stage)
			if err != nil {
				return c, err
			}
			switch res.Code {
			case exitOK:
				continue
			case exitNothing:
				if stage == "manager" {
					c.Problem = "the frontier emptied before the disk filled up"
					return c, nil
				}
				continue
			}
			failed, failedStage = res, stage
			break loop
		}
	}
	if failedStage == "" {
		c.Problem = "no stage failed in 200 cycles"
		return c, nil
	}
	expectOneLine(&c, failed, exitDiskFull, want)
	if c.Problem != "" {
		return c, nil
	}
	if keep && strings.Contains(failed.Stderr, "no space left") {
		c.Problem = "the disk ran out despite collection.min_free: " + failed.Stderr
		return c, nil
	}
	if p := afterFault(ctx, r, ""); p != "" {
		c.Problem = "on the full disk: " + p
		return c, nil
	}
	if err := mount("-o", "remount,size=256m", mnt); err != nil {
		c.Problem = err.Error()
		return c, nil
	}
	// With room again, the failed stage and a whole cycle complete.
	for _, stage := range append(Stages()[1:], Stages()...) {
		res, err := r.Stage(ctx, stage)
		if err != nil {
			return c, err
		}
		if res.Code != exitOK && res.Code != exitNothing {
			c.Problem = fmt.Sprintf("after growing the disk: %s", res)
			return c, nil
		}
	}
	if p := afterFault(ctx, r, ""); p != "" {
		c.Problem = "after growing the disk: " + p
		return c, nil
	}
	c.Note = "then on 256 MB: seeder check passes, the crawl goes on"
	if keep {
		c.Note = failedStage + " stopped at collection.min_free; " + c.Note
	}
	return c, nil
}
