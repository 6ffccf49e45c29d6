package scenarios

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteBuiltins: every built-in scenario on a line of its own, the descriptions aligned.
func TestWriteBuiltins(t *testing.T) {
	var b bytes.Buffer
	if err := WriteBuiltins(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	list := Builtins()
	if len(lines) != len(list) {
		t.Fatalf("%d lines for %d scenarios:\n%s", len(lines), len(list), b.String())
	}
	col := strings.Index(lines[0], list[0].Description)
	for i, in := range list {
		if !strings.HasPrefix(lines[i], in.Name+" ") || strings.Index(lines[i], in.Description) != col {
			t.Errorf("line %d %q: want %s, its description at column %d", i, lines[i], in.Name, col)
		}
	}
}
