package scripts_test

import (
	"os"
	"testing"

	"github.com/wirecrawl/wire/pkg/stagebin"
)

// stageBuild is the package's one build of the four stages.
var stageBuild = stagebin.Build{Root: ".."}

// TestMain runs the tests and removes the binaries they shared.
func TestMain(m *testing.M) {
	code := m.Run()
	stageBuild.Remove()
	os.Exit(code)
}

// stageBinaries returns the directory of the four stages, built on first
// use by the go command that runs this test.
func stageBinaries(t *testing.T) string {
	t.Helper()
	dir, err := stageBuild.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
