package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestPackagePrefixesKnown: every package of the module whose errors begin
// with its own name ("store: …", made by errors.New or fmt.Errorf) is in
// describe's packagePrefix, so that no package name reaches the terminal.
// A new package that names itself in its errors fails here until it is
// added to the list. Test-support packages (…test) are not the CLI's.
func TestPackagePrefixesKnown(t *testing.T) {
	root := filepath.Join("..", "..")
	lead := regexp.MustCompile(`^([a-z][a-z0-9]*): `)
	where := map[string]string{} // prefix → first place seen
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if strings.HasSuffix(f.Name.Name, "test") {
			return nil
		}
		own := map[string]bool{f.Name.Name: true, filepath.Base(filepath.Dir(path)): true}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || !(x.Name == "fmt" && sel.Sel.Name == "Errorf" || x.Name == "errors" && sel.Sel.Name == "New") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if m := lead.FindStringSubmatch(s); m != nil && own[m[1]] {
				if _, seen := where[m[1]]; !seen {
					where[m[1]] = fset.Position(lit.Pos()).String()
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(where) < 10 {
		t.Fatalf("only %d package prefixes found (%v): the walk missed the module", len(where), where)
	}
	var missing []string
	for p, at := range where {
		if packagePrefix.ReplaceAllString(p+": x", "$1") != "x" {
			missing = append(missing, p+" ("+at+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("errors begin with these package names, which describe does not drop; add them to packagePrefix:\n%s",
			strings.Join(missing, "\n"))
	}
}
