// Package longtest gates the tests of the long suite: the ones the
// README's test command (scripts/test.sh) leaves to `scripts/test.sh
// --long` because they take minutes or need software that takes minutes
// to install (the fault run, the report rendered in Chromium). Both
// suites run in CI (.ci/run); the README's "Tests" section says what each holds.
//
// Need skips a test unless the long suite was asked for; Tool finds a
// program a test needs and skips, saying how to install it, when it is
// missing — except in CI as root on Debian, where scripts/test-deps.sh
// can install it, so a missing program there is a failure, not a skip.
// Unavailable does the same for what a test fetches for itself (the npm
// packages of the archivists' tools) when it cannot be had.
package longtest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// EnvLong is the environment variable that asks for the long suite's
// tests: "1" runs them (scripts/test.sh --long sets it), unset or "0"
// skips them.
const EnvLong = "WIRE_TEST_LONG"

// debianVersion exists on Debian and its derivatives, where apt-get can
// install the programs the tests need.
const debianVersion = "/etc/debian_version"

// Env is what the gates look at in the environment.
type Env struct {
	// Long is true when the long suite was asked for (EnvLong=1).
	Long bool
	// Installable is true where scripts/test-deps.sh installs what the
	// tests need and a CI run must not pass by skipping: CI=true, root,
	// and Debian with apt-get.
	Installable bool
}

// FromOS reads Env from the process environment. An EnvLong that is
// neither "", "0" nor "1" is an error naming it.
func FromOS() (Env, error) {
	var e Env
	switch v := os.Getenv(EnvLong); v {
	case "", "0":
	case "1":
		e.Long = true
	default:
		return e, fmt.Errorf("%s=%q: want 1 (run the long suite's tests) or 0", EnvLong, v)
	}
	if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
		_, errDeb := os.Stat(debianVersion)
		_, errApt := exec.LookPath("apt-get")
		e.Installable = errDeb == nil && errApt == nil
	}
	return e, nil
}

// Need skips t unless the long suite was asked for; what says what the
// test does that puts it there ("crawls with 20 SIGKILLs"). The skip
// message says how to run it.
func Need(t testing.TB, what string) {
	t.Helper()
	e, err := FromOS()
	if err != nil {
		t.Fatal(err)
	}
	if skip, msg := e.need(what); skip {
		t.Skip(msg)
	}
}

// need says whether a long-suite test that does what is skipped, and why.
func (e Env) need(what string) (skip bool, msg string) {
	if e.Long {
		return false, ""
	}
	return true, fmt.Sprintf("long suite (%s): run by scripts/test.sh --long, or with %s=1", what, EnvLong)
}

// Tool returns the path of the program name a test needs; pkg is the
// Debian package that has it (scripts/test-deps.sh installs it). When
// the program is missing it skips t, saying so — or fails t where it
// could have been installed (Env.Installable), so that CI cannot pass a
// test by skipping it.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	e, err := FromOS()
	if err != nil {
		t.Fatal(err)
	}
	path, lookErr := exec.LookPath(name)
	switch fail, msg := e.tool(name, pkg, lookErr == nil); {
	case msg == "":
		return path
	case fail:
		t.Fatal(msg)
	default:
		t.Skip(msg)
	}
	return ""
}

// tool says, for a test that needs program name from Debian package pkg,
// whether its absence fails the test or skips it, and why; found tells
// whether it is installed (then msg is empty).
func (e Env) tool(name, pkg string, found bool) (fail bool, msg string) {
	if found {
		return false, ""
	}
	if e.Installable {
		return true, fmt.Sprintf("%s is not installed, though this is CI as root on Debian: scripts/test-deps.sh should have installed it (apt-get install %s); a CI run must not pass by skipping this test", name, pkg)
	}
	return false, fmt.Sprintf("%s is not installed, so this test is skipped: scripts/test-deps.sh installs it where it can (as root, with apt-get install %s; --long for the long suite's programs)", name, pkg)
}

// Unavailable stops t because something it needs and fetches for itself
// could not be had (the npm packages of scripts/archtools, from a
// registry that did not answer): what names it, why says what went wrong
// and how to get it. It skips t, saying so — or fails it where a CI run
// must not pass by skipping (Env.Installable), as Tool does.
func Unavailable(t testing.TB, what, why string) {
	t.Helper()
	e, err := FromOS()
	if err != nil {
		t.Fatal(err)
	}
	fail, msg := e.unavailable(what, why)
	if fail {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// unavailable says whether the lack of what (for the reason why) fails a
// test or skips it, and the message.
func (e Env) unavailable(what, why string) (fail bool, msg string) {
	if e.Installable {
		return true, fmt.Sprintf("%s could not be had, though this is CI as root on Debian, where the tests must get it: %s; a CI run must not pass by skipping this test", what, why)
	}
	return false, fmt.Sprintf("%s could not be had, so this test is skipped: %s", what, why)
}
