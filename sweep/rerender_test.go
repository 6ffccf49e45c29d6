package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRerenderRefuses: a directory that is missing or is a file is refused, naming it.
func TestRerenderRefuses(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := Rerender(missing); err == nil || err.Error() != "run directory "+missing+": no such file or directory" {
		t.Errorf("Rerender(missing) = %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Rerender(file); err == nil || !strings.HasSuffix(err.Error(), ": not a directory") {
		t.Errorf("Rerender(file) = %v", err)
	}
}
