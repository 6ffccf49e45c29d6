package results

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckMergeDirs: --out may not be a shard's directory (a mismatch, exit 2), and each
// shard directory must exist (an error naming it).
func TestCheckMergeDirs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := CheckMergeDirs([]string{a, b}, t.TempDir()); err != nil {
		t.Errorf("CheckMergeDirs = %v", err)
	}
	var me *MismatchError
	if err := CheckMergeDirs([]string{a, b}, b+"/"); !errors.As(err, &me) || me.Field != "out" {
		t.Errorf("--out a shard's directory: %v, want a mismatch on out", err)
	}
	missing := filepath.Join(a, "nope")
	if err := CheckMergeDirs([]string{missing}, b); err == nil || errors.As(err, &me) || !strings.Contains(err.Error(), "run directory "+missing) {
		t.Errorf("a missing shard directory: %v", err)
	}
}
