package scripts_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIShape reads the four binaries' sources and checks that every
// command has the one shape of docs/architecture.md ("How a command is
// built"): its Action is command.Action(parseX, runX); only parsers
// (functions named parse…) take the *cli.Context; and no function named
// run… uses the cli package at all.
func TestCLIShape(t *testing.T) {
	for _, bin := range []string{"manager", "harvester", "gatherer", "seeder"} {
		files, err := filepath.Glob(filepath.Join("..", bin, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		parsed := map[string]*ast.File{}
		runs := map[string]bool{} // the runs given to command.Action
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			name := bin + "/" + filepath.Base(path)
			parsed[name] = f
			ast.Inspect(f, func(n ast.Node) bool {
				kv, ok := n.(*ast.KeyValueExpr)
				if !ok || !isIdent(kv.Key, "Action") {
					return true
				}
				call, ok := kv.Value.(*ast.CallExpr)
				if !ok || !isSelector(call.Fun, "command", "Action") || len(call.Args) != 2 ||
					!strings.HasPrefix(identName(call.Args[0]), "parse") || !strings.HasPrefix(identName(call.Args[1]), "run") {
					t.Errorf("%s: a command's Action is not command.Action(parseX, runX)", name)
					return true
				}
				runs[identName(call.Args[1])] = true
				return true
			})
		}
		for name, f := range parsed {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				takes := false
				for _, p := range fn.Type.Params.List {
					if star, ok := p.Type.(*ast.StarExpr); ok && isSelector(star.X, "cli", "Context") {
						takes = true
					}
				}
				if takes && !strings.HasPrefix(fn.Name.Name, "parse") {
					t.Errorf("%s: %s takes the *cli.Context; only a parser (parse…) may", name, fn.Name.Name)
				}
				if runs[fn.Name.Name] {
					ast.Inspect(fn, func(n ast.Node) bool {
						if sel, ok := n.(*ast.SelectorExpr); ok && isIdent(sel.X, "cli") {
							t.Errorf("%s: %s uses cli.%s; a run works without the command line", name, fn.Name.Name, sel.Sel.Name)
						}
						return true
					})
				}
			}
		}
		actions := len(runs)
		if actions == 0 {
			t.Errorf("%s: no command found", bin)
		}
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func identName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, pkg) && sel.Sel.Name == name
}
