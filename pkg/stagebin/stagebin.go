// Package stagebin builds the four stage binaries for tests that run
// them as a user would, once per test process: go build links four
// binaries of about 20 MB each, a few CPU-seconds each test paid again
// before the tests of a package shared one build.
package stagebin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Stages are the main packages built, relative to the module's root.
var Stages = []string{"./manager", "./harvester", "./gatherer", "./seeder"}

// Build is one build of the stages, made on first use by the go command
// that runs the tests. Tests must not write into its directory: a test
// that needs other binaries beside them links them into one of its own.
type Build struct {
	// Root is the module's directory, relative to the test's package.
	Root string

	once sync.Once
	dir  string
	err  error
}

// Dir returns the directory holding the built stages, building them on
// the first call.
func (b *Build) Dir() (string, error) {
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "wire-stages-")
		if err != nil {
			b.err = fmt.Errorf("stage binaries: %w", err)
			return
		}
		b.dir = dir
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		cmd := exec.Command(gobin, append([]string{"build", "-o", dir + string(filepath.Separator)}, Stages...)...)
		cmd.Dir = b.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build the stages in %s: %v\n%s", b.Root, err, out)
		}
	})
	return b.dir, b.err
}

// Remove deletes the built binaries; call it once the tests are done
// (from TestMain).
func (b *Build) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// For returns the directory of the built stages for test t, building
// them on first use; a failed build fails t.
func (b *Build) For(t testing.TB) string {
	t.Helper()
	dir, err := b.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Main runs a package's tests (from its TestMain), then removes the
// binaries they shared, and exits with the tests' code.
func (b *Build) Main(m *testing.M) {
	code := m.Run()
	b.Remove()
	os.Exit(code)
}
