package scripts_test

import (
	"testing"

	"github.com/wirecrawl/wire/pkg/stagebin"
)

// stageBuild is the package's one build of the four stages.
var stageBuild = stagebin.Build{Root: ".."}

// TestMain runs the tests and removes the binaries they shared.
func TestMain(m *testing.M) { stageBuild.Main(m) }

// stageBinaries returns the directory of the four stages, built on first
// use by the go command that runs this test.
func stageBinaries(t *testing.T) string { return stageBuild.For(t) }
