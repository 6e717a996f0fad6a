// Package faulttest proves that a crawl survives faults: it runs the four
// stage binaries over a collection of the synthetic test web (package
// pkg/testweb), kills them with SIGKILL at random moments, reruns them,
// and then checks the collection and the server's records — seeder check,
// every batch URL fetched once or still pending, one id per URL, the text
// of every fetched page retrievable, no politeness violation across the
// restarts. It also breaks the environment (a full disk, a read-only
// collection, bad config files, a truncated batch file) and checks that
// the stages fail cleanly with a one-line message.
//
// The go test of this package runs a small version in under a minute;
// scripts/faults.sh runs the long one through the crawlcheck command
// (scripts/crawlcheck). docs/faults.md says what is checked and how.
package faulttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Exit codes of the stages (pkg/command), repeated here so that this
// package only runs the binaries.
const (
	exitOK       = 0
	exitNothing  = 3
	exitDamaged  = 6 // a damaged collection file (graph.db, a WARC file)
	exitDiskFull = 7 // less free space than collection.min_free, or none left
)

// Stages returns the four stages in the order of a crawl cycle.
func Stages() []string {
	return []string{"manager", "harvester", "gatherer", "seeder"}
}

// Runner runs the stage binaries on one collection.
type Runner struct {
	// Bin is the directory holding manager, harvester, gatherer and
	// seeder.
	Bin string
	// Collection is the collection directory.
	Collection string
	// Env is added to the environment; WIRE_* variables of the calling
	// process are removed first, so only the collection's wire.toml and
	// Env configure the stages.
	Env []string
	// Log, if not nil, receives one line per run.
	Log io.Writer
}

// Result is the outcome of one run of a binary.
type Result struct {
	// Args are the binary's name and its arguments.
	Args []string
	// Code is the exit code (-1 when killed by a signal).
	Code int
	// Killed is true when our SIGKILL ended the process.
	Killed bool
	// Stdout and Stderr are what it printed.
	Stdout, Stderr string
	// Elapsed is its wall time, and Ended when it was reaped (for a
	// killed process: when it was certainly dead, its sockets closed).
	Elapsed time.Duration
	Ended   time.Time
}

// String describes the result in one line for error messages.
func (r Result) String() string {
	what := fmt.Sprintf("exit %d", r.Code)
	if r.Killed {
		what = "killed"
	}
	return fmt.Sprintf("%s (%s after %v): %s", strings.Join(r.Args, " "), what, r.Elapsed.Round(time.Millisecond), lastLine(r.Stderr))
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// environ returns the process environment without WIRE_* variables, plus
// extra.
func environ(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WIRE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Run runs binary name with args to completion (or until ctx is done).
func (r *Runner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	return r.run(ctx, -1, name, args...)
}

// RunKilled runs binary name with args and sends it SIGKILL after delay
// if it is still running. Result.Killed says whether the kill landed.
func (r *Runner) RunKilled(ctx context.Context, delay time.Duration, name string, args ...string) (Result, error) {
	return r.run(ctx, delay, name, args...)
}

// Stage runs "STAGE run --collection DIR" (see Run).
func (r *Runner) Stage(ctx context.Context, stage string) (Result, error) {
	return r.Run(ctx, stage, "run", "--collection", r.Collection)
}

// StageKilled runs "STAGE run --collection DIR" and kills it after delay
// (see RunKilled).
func (r *Runner) StageKilled(ctx context.Context, stage string, delay time.Duration) (Result, error) {
	return r.RunKilled(ctx, delay, stage, "run", "--collection", r.Collection)
}

// run starts the binary, kills it after delay when delay >= 0, and waits.
func (r *Runner) run(ctx context.Context, delay time.Duration, name string, args ...string) (Result, error) {
	p, err := r.Start(ctx, name, args...)
	if err != nil {
		return p.res, err
	}
	var timer *time.Timer
	if delay >= 0 {
		timer = time.AfterFunc(delay, p.Kill)
	}
	res, err := p.Wait()
	if timer != nil {
		timer.Stop()
	}
	return res, err
}

// Proc is a binary started by Runner.Start.
type Proc struct {
	r              *Runner
	ctx            context.Context
	cmd            *exec.Cmd
	res            Result
	start          time.Time
	stdout, stderr bytes.Buffer
	killSent       atomic.Bool
}

// Start starts binary name with args; Wait waits for it, Kill kills it.
func (r *Runner) Start(ctx context.Context, name string, args ...string) (*Proc, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(r.Bin, name), args...)
	cmd.Env = environ(r.Env)
	p := &Proc{r: r, ctx: ctx, cmd: cmd, res: Result{Args: append([]string{name}, args...)}}
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return p, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

// Kill sends the process SIGKILL; Result.Killed then says whether it
// landed (the process may have ended already).
func (p *Proc) Kill() {
	p.killSent.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
}

// Wait waits for the process to end and returns its result; call it
// once.
func (p *Proc) Wait() (Result, error) {
	err := p.cmd.Wait()
	res := p.res
	name := res.Args[0]
	res.Ended = time.Now()
	res.Elapsed = res.Ended.Sub(p.start)
	res.Stdout, res.Stderr = p.stdout.String(), p.stderr.String()
	res.Code = p.cmd.ProcessState.ExitCode()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && p.killSent.Load() {
		res.Killed = true
	}
	if p.ctx.Err() != nil {
		return res, fmt.Errorf("%s: %w", name, p.ctx.Err())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("run %s: %w", name, err)
	}
	if p.r.Log != nil {
		fmt.Fprintf(p.r.Log, "%s\n", res)
	}
	return res, nil
}
