// Package pkg_test guards the direction of dependencies: binaries →
// pkg/command and the stage packages → format and library packages.
package pkg_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wirecrawl/wire/"

// stages compose libraries; they may import each other's formats but not
// the CLI framework.
var stages = map[string]bool{"manager": true, "harvester": true, "gatherer": true, "seeder": true}

func TestLayers(t *testing.T) {
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		pkg := d.Name()
		files, _ := filepath.Glob(filepath.Join(pkg, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				switch {
				case path == module+"manager" || path == module+"harvester" || path == module+"gatherer" || path == module+"seeder":
					t.Errorf("%s imports the binary %s", f, path)
				case strings.HasPrefix(path, "github.com/urfave/cli") && pkg != "command":
					t.Errorf("%s imports the CLI framework; only pkg/command and the binaries may", f)
				case path == module+"pkg/command":
					t.Errorf("%s imports pkg/command; only binaries may", f)
				case strings.HasPrefix(path, module+"pkg/") && !stages[pkg] && stages[strings.TrimPrefix(path, module+"pkg/")]:
					t.Errorf("%s (a library) imports the stage package %s", f, path)
				}
			}
		}
	}
}
