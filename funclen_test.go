package tasksim_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be (issue 25): one that does not fit on a screen
// does more than one named thing, and should be split into helpers that say what they do.
const maxFuncLines = 80

// longFuncAllowlist names the functions ("dir/file.go name", methods by their bare name) still
// allowed over maxFuncLines. Each entry is a debt, not an exemption: the test fails once an entry
// fits or is gone, so the list only shrinks.
var longFuncAllowlist = map[string]bool{}

// TestFuncLen parses every non-test Go file of the module and fails, naming file:line, function
// and length, on each function or method over maxFuncLines lines (last line − first line + 1 of
// the declaration) that longFuncAllowlist does not name, and on each allowlist entry that no
// longer exceeds the limit or no longer exists.
func TestFuncLen(t *testing.T) {
	fset := token.NewFileSet()
	long := map[string]bool{}
	var problems []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == "." {
				return nil
			}
			if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir // not built, as the go command sees them
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			first := fset.Position(fn.Pos())
			n := fset.Position(fn.End()).Line - first.Line + 1
			if n <= maxFuncLines {
				continue
			}
			key := filepath.ToSlash(path) + " " + fn.Name.Name
			long[key] = true
			if !longFuncAllowlist[key] {
				problems = append(problems, fmt.Sprintf("%s: %s is %d lines, over %d: split it into named helpers", first, funcName(fn), n, maxFuncLines))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range longFuncAllowlist {
		if !long[key] {
			problems = append(problems, fmt.Sprintf("%s is allowlisted but no longer over %d lines (or gone): remove it from longFuncAllowlist", key, maxFuncLines))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// funcName is fn's name as a reader searches for it: a method with its receiver's type,
// (*T).m or T.m.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if ix, ok := typ.(*ast.IndexExpr); ok { // a generic receiver, T[P]
		typ = ix.X
	}
	switch r := typ.(type) {
	case *ast.StarExpr:
		x := r.X
		if ix, ok := x.(*ast.IndexExpr); ok {
			x = ix.X
		}
		if id, ok := x.(*ast.Ident); ok {
			return "(*" + id.Name + ")." + fn.Name.Name
		}
	case *ast.Ident:
		return r.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
