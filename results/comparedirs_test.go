package results

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCompareDirs: one argument is an A/B run's directory, two are BASELINE CANDIDATE;
// anything else is an input error.
func TestCompareDirs(t *testing.T) {
	ab := t.TempDir()
	for _, side := range []string{ABBaseline, ABCanary} {
		if err := os.Mkdir(filepath.Join(ab, side), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if b, c, err := CompareDirs([]string{ab}); err != nil || b != filepath.Join(ab, ABBaseline) || c != filepath.Join(ab, ABCanary) {
		t.Errorf("CompareDirs(ab) = %q, %q, %v", b, c, err)
	}
	if b, c, err := CompareDirs([]string{"x", "y"}); err != nil || b != "x" || c != "y" {
		t.Errorf("CompareDirs(x, y) = %q, %q, %v", b, c, err)
	}
	for _, args := range [][]string{{t.TempDir()}, nil, {"a", "b", "c"}} {
		if _, _, err := CompareDirs(args); !errors.As(err, new(*CompareInputError)) {
			t.Errorf("CompareDirs(%q) = %v, want an input error", args, err)
		}
	}
}

// TestComparisonFilesInDir: a directory with a comparison is refused until the comparison
// is removed; CompareRuns refuses a directory without a run.
func TestComparisonFilesInDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CompareJSONFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RefuseComparisonIn(dir); err == nil || !strings.Contains(err.Error(), "already holds a comparison") {
		t.Errorf("RefuseComparisonIn = %v", err)
	}
	if err := RemoveComparison(dir); err != nil || RefuseComparisonIn(dir) != nil {
		t.Errorf("RemoveComparison = %v, and the directory is still refused", err)
	}
	if _, err := CompareRuns(dir, dir, CompareOptions{}); !errors.As(err, new(*CompareInputError)) || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("CompareRuns on an empty directory = %v", err)
	}
	if got := AllowFields([]string{" clients", "", "tool "}); !reflect.DeepEqual(got, []string{"clients", "tool"}) {
		t.Errorf("AllowFields = %q", got)
	}
}
