package runner

import (
	"strings"
	"testing"
)

// TestBuildText: every fact has its line, and an unknown one says it is unknown.
func TestBuildText(t *testing.T) {
	for _, c := range []struct {
		b    Build
		want []string
	}{
		{Build{Version: "0.1.0", Module: "v0.1.0", Commit: "abc123", CommitTime: "2026-12-03T17:00:00Z", Modified: true, Date: "2026-12-03T18:00:00Z", Go: "go1.26"},
			[]string{"tasksim 0.1.0\n", "module     v0.1.0\n", "commit     abc123 (with uncommitted changes)\n", "committed  2026-12-03T17:00:00Z\n", "built      2026-12-03T18:00:00Z\n", "go         go1.26\n"}},
		{Build{Version: "0.1.0", Module: "(devel)", Go: "go1.26"},
			[]string{"commit     unknown (built without VCS information)\n", "committed  unknown\n", "built      unknown (set runner.BuildDate"}},
	} {
		var sb strings.Builder
		if err := c.b.WriteText(&sb); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(sb.String(), w) {
				t.Errorf("%+v: text lacks %q:\n%s", c.b, w, sb.String())
			}
		}
	}
	if b := BuildInfo(); b.Version != Version || b.Go == "" {
		t.Errorf("BuildInfo() = %+v", b)
	}
}
