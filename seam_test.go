package tasksim_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mcpDir is the dialect seam of docs/ARCHITECTURE.md#dialects: the only package whose
// non-test code may spell a wire method name.
const mcpDir = "internal/mcp"

// seamExempt are the directories whose non-test code may spell method names anyway.
// internal/looplimit is a byte-for-byte replica of an external benchmark's loopback
// request (docs/ARCHITECTURE.md#packages): its body is the benchmark's, not tasksim's
// protocol, and must not change with a dialect. internal/schema is the independent oracle of
// the official schemas (it was internal/mcp/mcptest's): its method names are the
// specification's, not the dialect's, so that a misspelt method in internal/mcp fails there.
var seamExempt = map[string]bool{"internal/looplimit": true, "internal/schema": true}

// TestDialectSeam enforces docs/ARCHITECTURE.md#dialects: outside internal/mcp, non-test
// code never spells a wire method name. It fails, naming file:line, on a reference to one
// of internal/mcp's Method* identifiers (mcp.MethodTasksGet) and on a string literal whose
// value is exactly the value of one of them ("tasks/get"). Code names an operation by its
// mcp.Op and gets the spelling from a Dialect (Method) or, for outputs keyed by name, from
// Op.Name.
func TestDialectSeam(t *testing.T) {
	names := methodNames(t, mcpDir)
	if len(names) < 10 {
		t.Fatalf("found only %d method names in %s: %v", len(names), mcpDir, names)
	}
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" ||
				d.Name() == "node_modules" || path == mcpDir || seamExempt[filepath.ToSlash(path)]) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found = append(found, seamViolations(t, path, src, names)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range found {
		t.Error(v)
	}
}

// TestDialectSeamCatches shows TestDialectSeam's check failing on code that breaks the
// rule, and passing the forms that keep it.
func TestDialectSeamCatches(t *testing.T) {
	names := map[string]bool{"tasks/get": true, "tools/call": true}
	const head = "package p\n\nimport mcp \"github.com/tasksim/tasksim/internal/mcp\"\n\n"
	for _, c := range []struct {
		src  string
		want int // violations
	}{
		{"var a = mcp.MethodTasksGet", 1},
		{"var a = \"tasks/get\"", 1},
		{"var a = `tools/call`", 1},
		{"func f(m string) bool { return m == \"tasks/get\" || m == mcp.MethodToolsCall }", 2},
		{"var a = map[string]int{\"tasks/get\": 1}", 1},
		{"var a = mcp.OpTasksGet.Name()", 0},
		{"var a = mcp.V20251125{}.Method(mcp.OpTasksGet)", 0},
		{"var a = \"tasks/get result: \" + mcp.MethodNotAConst()", 1}, // any Method* selector of mcp
		{"var a = \"tasks/get result\"", 0},
		{"var a = f(\"tools/call\").Name", 1}, // not exactly a name
	} {
		got := seamViolations(t, "p.go", []byte(head+c.src+"\n"), names)
		if len(got) != c.want {
			t.Errorf("%s: %d violations %q, want %d", c.src, len(got), got, c.want)
		}
	}
	// A dot import leaves the name bare.
	src := "package p\n\nimport . \"github.com/tasksim/tasksim/internal/mcp\"\n\nvar a, b = MethodPing, x.MethodPing\n"
	if got := seamViolations(t, "p.go", []byte(src), names); len(got) != 1 || !strings.HasPrefix(got[0], "p.go:5:") {
		t.Errorf("dot import: %q, want one violation at p.go:5", got)
	}
	// A file that imports internal/mcp under another name is read by that name.
	src = "package p\n\nimport wire \"github.com/tasksim/tasksim/internal/mcp\"\n\nvar a = wire.MethodPing\n"
	if got := seamViolations(t, "p.go", []byte(src), names); len(got) != 1 || !strings.HasPrefix(got[0], "p.go:5:") {
		t.Errorf("renamed import: %q, want one violation at p.go:5", got)
	}
}

// seamViolations returns the places in one Go source file that spell a method name, as
// "file:line: what".
func seamViolations(t *testing.T, path string, src []byte, names map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	pkgName := "" // the name under which the file imports internal/mcp
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/"+mcpDir {
			pkgName = "mcp"
			if imp.Name != nil {
				pkgName = imp.Name.Name
			}
		}
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			x, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			if pkgName != "" && x.Name == pkgName && strings.HasPrefix(n.Sel.Name, "Method") {
				out = append(out, fset.Position(n.Pos()).String()+": "+x.Name+"."+n.Sel.Name+
					" spells a method name outside the dialect seam: use an mcp.Op and a Dialect's Method, or Op.Name")
			}
			return false // x.Sel: neither identifier is a bare name
		case *ast.Ident:
			if pkgName == "." && strings.HasPrefix(n.Name, "Method") {
				out = append(out, fset.Position(n.Pos()).String()+": "+n.Name+
					" (internal/mcp, dot-imported) spells a method name outside the dialect seam")
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(n.Value); err == nil && names[v] {
				out = append(out, fset.Position(n.Pos()).String()+": "+n.Value+
					" is a method name outside the dialect seam: use an mcp.Op and a Dialect's Method, or Op.Name")
			}
		}
		return true
	})
	return out
}

// methodNames returns the values of the string constants named Method* declared in the
// non-test files of dir: every wire method name internal/mcp knows.
func methodNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	names := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Method") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if v, err := strconv.Unquote(lit.Value); err == nil {
							names[v] = true
						}
					}
				}
			}
		}
	}
	return names
}
