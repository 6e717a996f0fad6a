package longtest

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the module's directory, from this package's.
const root = "../.."

// importPath is this package's import path.
const importPath = "github.com/wirecrawl/wire/pkg/longtest"

// TestLongSuiteListsEveryGatedTest: every test that calls Need is one the
// long suite runs (scripts/test.sh's long_tests names its package and its
// -run pattern), and every entry there names such a test: a test gated
// out of the default command but missing from the list would no longer
// be run at all.
func TestLongSuiteListsEveryGatedTest(t *testing.T) {
	gated, err := gatedTests(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(gated) == 0 {
		t.Fatal("no test calls longtest.Need: the search is broken")
	}
	listed, err := longTests(filepath.Join(root, "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gated {
		if !slices.ContainsFunc(listed, func(l gatedTest) bool { return g.pkg == l.pkg && g.run == l.run }) {
			t.Errorf("%s calls longtest.Need but scripts/test.sh's long_tests does not run it: add the line %q", g.where, g.pkg+" "+g.run)
		}
	}
	for _, l := range listed {
		if !slices.ContainsFunc(gated, func(g gatedTest) bool { return g.pkg == l.pkg && g.run == l.run }) {
			t.Errorf("scripts/test.sh's long_tests runs %q in %s, but no test there calls longtest.Need", l.run, l.pkg)
		}
	}
}

// gatedTest is a test of the long suite: its package directory as go
// test takes it (./scripts), the -run pattern that selects exactly it,
// and, for messages, where it calls Need.
type gatedTest struct {
	pkg, run string
	where    string
}

// gatedTests finds the calls of Need in the test files under dir.
func gatedTests(dir string) ([]gatedTest, error) {
	var out []gatedTest
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		found, err := needCalls(fset, f, "./"+filepath.ToSlash(rel))
		out = append(out, found...)
		return err
	})
	return out, err
}

// needCalls returns the tests of file f (in package directory pkg) that
// call Need. Need must be called in a top-level test function or in a
// function literal passed to t.Run with a constant name inside one, so
// that the test has a -run pattern.
func needCalls(fset *token.FileSet, f *ast.File, pkg string) ([]gatedTest, error) {
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
			name = "longtest"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil, nil
	}
	var out []gatedTest
	var errs []string
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok || !isSelector(call.Fun, name, "Need") {
			return true
		}
		where := fset.Position(call.Pos()).String()
		path, err := testPath(stack)
		if err != nil {
			errs = append(errs, where+": "+err.Error())
			return true
		}
		out = append(out, gatedTest{pkg: pkg, run: runPattern(path), where: where})
		return true
	})
	if len(errs) > 0 {
		return out, fmt.Errorf("longtest.Need where the long suite cannot name the test:\n%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// testPath names the test that runs the innermost node of stack (the
// nodes from the file down): the top-level test function, then the name
// of each t.Run around it.
func testPath(stack []ast.Node) ([]string, error) {
	var path []string
	for i, n := range stack {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Recv != nil || !strings.HasPrefix(n.Name.Name, "Test") {
				return nil, fmt.Errorf("called in %s, not in a Test function", n.Name.Name)
			}
			path = append(path, n.Name.Name)
		case *ast.FuncLit:
			run, ok := stack[i-1].(*ast.CallExpr)
			if !ok || !isSelector(run.Fun, "", "Run") || len(run.Args) != 2 || run.Args[1] != n {
				return nil, fmt.Errorf("called in a function literal that is not a t.Run subtest")
			}
			lit, ok := run.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return nil, fmt.Errorf("called in a subtest whose name is not a constant string")
			}
			sub, err := strconv.Unquote(lit.Value)
			if err != nil {
				return nil, err
			}
			path = append(path, sub)
		}
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("called outside any function")
	}
	return path, nil
}

// isSelector reports whether e is x.sel (any x when x is "").
func isSelector(e ast.Expr, x, sel string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != sel {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && (x == "" || id.Name == x)
}

// runPattern is the -run pattern that selects exactly the test path:
// each level anchored, with spaces as go test writes them in names.
func runPattern(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = "^" + regexp.QuoteMeta(strings.ReplaceAll(p, " ", "_")) + "$"
	}
	return strings.Join(parts, "/")
}

// longEntry matches a line of test.sh's long_tests: "PKG PATTERN".
var longEntry = regexp.MustCompile(`^\s*"(\./\S*) (\S+)"\s*$`)

// longTests reads the long_tests array of scripts/test.sh.
func longTests(path string) ([]gatedTest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []gatedTest
	in, closed := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !in && line == "long_tests=(":
			in = true
		case in && strings.TrimSpace(line) == ")":
			in, closed = false, true
		case in:
			m := longEntry.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: want a line \"./PACKAGE PATTERN\" in long_tests, got %q", path, n, line)
			}
			out = append(out, gatedTest{pkg: m[1], run: m[2]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !closed {
		return nil, fmt.Errorf("%s: no long_tests=( … ) array", path)
	}
	return out, nil
}

func TestNeedCalls(t *testing.T) {
	const head = "package p\nimport (\n\t\"testing\"\n\tlt \"" + importPath + "\"\n)\n"
	for _, c := range []struct {
		name, src string
		run       []string
		err       string
	}{
		{"top level", `func TestA(t *testing.T) { lt.Need(t, "x") }`, []string{"^TestA$"}, ""},
		{"subtests", `func TestA(t *testing.T) { t.Run("b c", func(t *testing.T) { t.Run("d.e", func(t *testing.T) { lt.Need(t, "x") }) }) }`,
			[]string{`^TestA$/^b_c$/^d\.e$`}, ""},
		{"helper", `func helper(t *testing.T) { lt.Need(t, "x") }`, nil, "called in helper, not in a Test function"},
		{"method", `type e struct{}; func (e) TestA(t *testing.T) { lt.Need(t, "x") }`, nil, "not in a Test function"},
		{"goroutine", `func TestA(t *testing.T) { go func() { lt.Need(t, "x") }() }`, nil, "not a t.Run subtest"},
		{"computed name", `func TestA(t *testing.T) { n := "b"; t.Run(n, func(t *testing.T) { lt.Need(t, "x") }) }`, nil, "not a constant string"},
		{"another Need", `type o struct{}; func (o) Need(*testing.T, string) {}; func TestA(t *testing.T) { var longtest o; longtest.Need(t, "x") }`, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "a_test.go", head+c.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got, err := needCalls(fset, f, "./p")
			var runs []string
			for _, g := range got {
				runs = append(runs, g.run)
			}
			if !slices.Equal(runs, c.run) {
				t.Errorf("patterns %q, want %q", runs, c.run)
			}
			if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("error %v, want one saying %q", err, c.err)
			}
		})
	}
}
