package main

import (
	"strings"
	"testing"
)

// TestProgressLines: with stderr no terminal (here a buffer, as in CI or kubectl logs), run
// prints a plain status line every --progress-interval; --no-progress prints none.
func TestProgressLines(t *testing.T) {
	for _, c := range []struct {
		flag     string
		atLeast  int
		noneWant bool
	}{{"--progress-interval=1s", 2, false}, {"--no-progress", 0, true}} {
		_, stderr, code := runCLI("run", "smoke", "--duration", "3s", "--set", "grace=3s", "--out", t.TempDir(), c.flag)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", c.flag, code, stderr)
		}
		n := strings.Count(stderr, "tasksim run: load 0:0")
		if n < c.atLeast || c.noneWant && n != 0 {
			t.Errorf("%s: %d status lines, want %s:\n%s", c.flag, n, map[bool]string{true: "none", false: "at least 2"}[c.noneWant], stderr)
		}
		if !c.noneWant && !strings.Contains(stderr, "req/s  errors 0") {
			t.Errorf("%s: the status line lacks the request rate and errors:\n%s", c.flag, stderr)
		}
	}
}

// TestVersion: tasksim version prints the version, the module, the commit, the dates and
// the toolchain, each on its line, an unknown one said so.
func TestVersion(t *testing.T) {
	stdout, stderr, code := runCLI("version")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, w := range []string{"tasksim " + version + "\n", "\nmodule ", "\ncommit ", "\ncommitted ", "\nbuilt ", "\ngo "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("version lacks %q:\n%s", w, stdout)
		}
	}
}
