package mcptest

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every definition the method tables name must exist in the schema, or a typo would turn a
// check into a plain "no definition" error.
func TestTablesNameExistingDefs(t *testing.T) {
	s, err := shared()
	if err != nil {
		t.Fatal(err)
	}
	methods := []string{
		"initialize", "notifications/initialized", "ping", "tools/list", "tools/call",
		"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status",
		"notifications/cancelled", "notifications/progress", "elicitation/create", "sampling/createMessage",
	}
	for _, m := range methods {
		defs, _ := resultDefs(m)
		if d := messageDef(m); d != "" {
			defs = append(defs, d)
		} else {
			t.Errorf("messageDef(%q) is empty", m)
		}
		for _, d := range defs {
			if _, ok := s.defs[d]; !ok {
				t.Errorf("method %s: schema has no definition %q", m, d)
			}
		}
	}
	for _, d := range []string{"JSONRPCMessage", "JSONRPCRequest", "JSONRPCNotification", "JSONRPCResponse", "JSONRPCResultResponse", "JSONRPCErrorResponse"} {
		if _, ok := s.defs[d]; !ok {
			t.Errorf("schema has no definition %q", d)
		}
	}
}

// The same for the tables of the modern era, whose names may point into either schema.
func TestTables2026NameExistingDefs(t *testing.T) {
	m, err := sharedModern()
	if err != nil {
		t.Fatal(err)
	}
	exists := func(def string) bool {
		if d, ok := strings.CutPrefix(def, "ext:"); ok {
			_, ok := m.ext.defs[d]
			return ok
		}
		_, ok := m.core.defs[def]
		return ok
	}
	methods := []string{
		"server/discover", "tools/list", "tools/call", "subscriptions/listen", "tasks/get", "tasks/update",
		"tasks/cancel", "notifications/subscriptions/acknowledged", "notifications/tasks",
		"notifications/cancelled", "notifications/progress",
	}
	for _, meth := range methods {
		defs := []string{messageDef2026(meth)}
		if defs[0] == "" {
			t.Errorf("messageDef2026(%q) is empty", meth)
		}
		for _, d := range resultDefs2026(meth) {
			defs = append(defs, d)
		}
		for _, d := range defs {
			if d != "" && !exists(d) {
				t.Errorf("method %s: no definition %q", meth, d)
			}
		}
	}
	for _, d := range errorDefs2026 {
		if !exists(d) {
			t.Errorf("errorDefs2026: no definition %q", d)
		}
	}
	for _, d := range []string{"JSONRPCMessage", "JSONRPCRequest", "JSONRPCNotification", "JSONRPCResponse",
		"JSONRPCResultResponse", "JSONRPCErrorResponse", "RequestParams", "NotificationMetaObject"} {
		if !exists(d) {
			t.Errorf("core schema has no definition %q", d)
		}
	}
}

// Production code must not import mcptest (doc.go): it would embed a 174 KB schema and a
// validator into the tasksim binary.
func TestNotImportedByProductionCode(t *testing.T) {
	root, module := moduleRoot(t)
	self := module + "/internal/mcp/mcptest"
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return nil // another package's work in progress; go vet reports it
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self && filepath.Dir(path) != mustAbs(t, ".") {
				t.Errorf("%s imports %s; only _test.go files may", path, self)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// moduleRoot finds the directory holding go.mod above the working directory and the
// module path it declares.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir = mustAbs(t, ".")
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(m), `"`)
				}
			}
			t.Fatalf("%s/go.mod declares no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the working directory")
		}
		dir = parent
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
