// Package pkg_test guards the direction of dependencies: binaries →
// pkg/command and the stage packages → format and library packages, in
// every package under pkg/, nested ones (internal/, harvestertest,
// gathertest …) included.
package pkg_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wirecrawl/wire/"

// stages compose libraries; they may import each other's formats but not
// the CLI framework. A package nested under a stage's directory
// (pkg/seeder/internal/…, pkg/harvester/harvestertest) is on the stage's
// side.
var stages = map[string]bool{"manager": true, "harvester": true, "gatherer": true, "seeder": true}

// top is the first element of a package path relative to pkg/.
func top(pkg string) string {
	first, _, _ := strings.Cut(pkg, "/")
	return first
}

// violations returns what is wrong with package pkg (its path relative to
// pkg/, such as "harvester/harvestertest") importing path.
func violations(pkg, path string) []string {
	var out []string
	imported, inPkg := strings.CutPrefix(path, module+"pkg/")
	switch {
	case path == module+"manager" || path == module+"harvester" || path == module+"gatherer" || path == module+"seeder":
		out = append(out, "imports the binary "+path)
	case strings.HasPrefix(path, "github.com/urfave/cli") && pkg != "command":
		out = append(out, "imports the CLI framework; only pkg/command and the binaries may")
	case path == module+"pkg/command":
		out = append(out, "imports pkg/command; only binaries may")
	case inPkg && !stages[top(pkg)] && stages[top(imported)]:
		out = append(out, "(a library) imports the stage package "+path)
	}
	// The test web server is for tests, demos and benchmarks: only its
	// own packages and test helper packages (named …test, as
	// net/http/httptest) may import it; libraries and stages may not.
	if inPkg && top(imported) == "testweb" && top(pkg) != "testweb" && !strings.HasSuffix(pkg, "test") {
		out = append(out, "imports the test web server "+path)
	}
	return out
}

func TestViolations(t *testing.T) {
	for _, c := range []struct {
		pkg, path string
		bad       bool
	}{
		{"batch", module + "pkg/urlnorm", false},
		{"batch", module + "manager", true},
		{"command", "github.com/urfave/cli/v2", false},
		{"extract/internal/htmltok", "github.com/urfave/cli/v2", true},
		{"harvester", module + "pkg/command", true},
		{"webgraph", module + "pkg/harvester", true},
		{"webgraph", module + "pkg/harvester/harvestertest", true},
		{"seeder/internal/benchtool", module + "pkg/seeder", false},
		{"manager", module + "pkg/seeder", false},
		{"webgraph", module + "pkg/testweb", true},
		{"harvester", module + "pkg/testweb/politeaudit", true},
		{"testweb/politeaudit", module + "pkg/testweb", false},
		{"testweb/crawlgraph", module + "pkg/webgraph", false},
		{"harvester/harvestertest", module + "pkg/testweb", false},
	} {
		if got := violations(c.pkg, c.path); (len(got) > 0) != c.bad {
			t.Errorf("pkg/%s importing %s: %q, want bad=%v", c.pkg, c.path, got, c.bad)
		}
	}
}

func TestLayers(t *testing.T) {
	var seen []string
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || dir == "." {
			return nil
		}
		if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return fs.SkipDir
		}
		pkg := filepath.ToSlash(dir)
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, v := range violations(pkg, path) {
					t.Errorf("%s %s", f, v)
				}
			}
		}
		if len(files) > 0 {
			seen = append(seen, pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk reaches nested packages.
	for _, want := range []string{"extract/internal/htmltok", "harvester/harvestertest", "gatherer/gathertest", "testweb/politeaudit"} {
		if !slices.Contains(seen, want) {
			t.Errorf("pkg/%s was not checked (checked: %v)", want, seen)
		}
	}
}
