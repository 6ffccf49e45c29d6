package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/results"
)

// TestProbePinExpect is the canary step from the command line: pin the manifest of one
// server at approval time, expect it on every promotion. The same server passes; a server
// whose pollInterval changed drifts (exit 99, a diff naming the field, the pinned value and
// the value now) until the pin allows the change; a bad pin file is a usage error that says
// where.
func TestProbePinExpect(t *testing.T) {
	approved := startServe(t, "--poll-interval", "1s")
	pin := filepath.Join(t.TempDir(), "pin.yaml")
	if _, stderr, code := tasksim(t, "probe", "--target", approved, "--create-task", "--pin", pin); code != 0 {
		t.Fatalf("--pin: exit %d\n%s", code, stderr)
	}
	text, err := os.ReadFile(pin)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tasksim_pin: 1", `poll_interval_ms: "1000"`, "tools.work_task.input_schema: sha256:", "server.name: tasksim-mock"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the pin file does not say %q:\n%s", want, text)
		}
	}
	if _, stderr, code := tasksim(t, "probe", "--target", approved, "--create-task", "--expect", pin); code != 0 || !strings.Contains(stderr, "matches the pin") {
		t.Errorf("the approved server against its own pin: exit %d\n%s", code, stderr)
	}

	changed := startServe(t, "--poll-interval", "1500ms")
	stdout, stderr, code := tasksim(t, "probe", "--target", changed, "--create-task", "--expect", pin)
	if code != exitGate || !strings.Contains(stdout, `"poll_interval_ms": 1500`) {
		t.Fatalf("a changed server: exit %d, want %d\n%s%s", code, exitGate, stdout, stderr)
	}
	row := strings.Fields(lineWith(stderr, "poll_interval_ms"))
	if len(row) != 3 || row[1] != "1000" || row[2] != "1500" {
		t.Errorf("drift row %q: want poll_interval_ms 1000 1500\n%s", row, stderr)
	}
	if !strings.Contains(stderr, "drifted from the pin") || strings.Count(stderr, "\n") != 3 {
		t.Errorf("stderr is not the header, one drift and the verdict:\n%s", stderr)
	}
	// Without --create-task the pollInterval cannot be seen: that is not a pass.
	if _, stderr, code := tasksim(t, "probe", "--target", approved, "--expect", pin); code != exitGate || !strings.Contains(stderr, "not observed") {
		t.Errorf("a pin with a pollInterval checked without a task: exit %d\n%s", code, stderr)
	}

	allowed := string(text[:strings.LastIndex(string(text), "\nallow:")]) + "\nallow:\n  poll_interval_ms: {min: 500, max: 2000}\n"
	if err := os.WriteFile(pin, []byte(allowed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := tasksim(t, "probe", "--target", changed, "--create-task", "--expect", pin); code != 0 {
		t.Errorf("a change the pin allows: exit %d\n%s", code, stderr)
	}
	// Pinning again (the change approved) keeps what the reviewer allowed.
	if _, stderr, code := tasksim(t, "probe", "--target", changed, "--create-task", "--pin", pin); code != 0 || !strings.Contains(stderr, "kept the 1 allow entries") {
		t.Errorf("re-pin: exit %d\n%s", code, stderr)
	}
	if again, _ := os.ReadFile(pin); !strings.Contains(string(again), "poll_interval_ms: {min: 500, max: 2000}") || !strings.Contains(string(again), `poll_interval_ms: "1500"`) {
		t.Errorf("the re-pin lost the allow section or kept the old value:\n%s", again)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("tasksim_pin: 1\nfields:\n  era: x\n  colour: blue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := tasksim(t, "probe", "--target", approved, "--expect", bad); code != exitUsage || !strings.Contains(stderr, "bad.yaml:4: fields.colour: not a pinned field") {
		t.Errorf("a bad pin file: exit %d\n%s", code, stderr)
	}
	if _, _, code := tasksim(t, "probe", "--target", approved, "--expect", pin, "--pin", pin); code != exitUsage {
		t.Errorf("--pin with --expect: exit %d, want %d", code, exitUsage)
	}
}

// lineWith is the first line of s that contains sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestRunExpectManifest: a run whose scenario names expect_manifest compares the target's
// manifest with the pin at its end: the approved server passes the compatibility gate, a
// changed one fails it (exit 99) with the drift in summary.json; a pin that cannot be read
// refuses the run before it starts (exit 2, naming the file).
func TestRunExpectManifest(t *testing.T) {
	approved := startServe(t, "--poll-interval", "500ms") // a trust limit of 50 ms: a loaded machine keeps it
	dir := t.TempDir()
	pin := filepath.Join(dir, "approved.yaml")
	if _, stderr, code := tasksim(t, "probe", "--target", approved, "--create-task", "--pin", pin); code != 0 {
		t.Fatalf("--pin: exit %d\n%s", code, stderr)
	}
	sc := filepath.Join(dir, "canary.yaml")
	if err := os.WriteFile(sc, []byte("name: canary\nduration: 1s\ngrace: 3s\ntool: work_task\nargs: {duration_ms: 200}\n"+
		"workload: {clients: 3}\nexpect_manifest: approved.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runAgainst := func(url string) (*results.Summary, string, int) {
		out := filepath.Join(t.TempDir(), "run")
		_, stderr, code := tasksim(t, "run", sc, "--target", url, "--out", out, "--no-progress")
		s, err := results.ReadSummary(out)
		if err != nil {
			t.Fatalf("exit %d, %v\n%s", code, err, stderr)
		}
		return s, stderr, code
	}
	s, stderr, code := runAgainst(approved)
	g := s.Gates.Compatibility
	if code != 0 || !g.Evaluated || !g.Pass || g.Evidence.ExpectedManifest != pin {
		t.Fatalf("the approved server: exit %d, gate %+v\n%s", code, g, stderr)
	}
	s, _, code = runAgainst(startServe(t, "--poll-interval", "1s"))
	g = s.Gates.Compatibility
	drift := g.Evidence.ManifestDrift
	if code != exitGate || g.Pass || len(drift) != 1 || drift[0].Now != "1000" {
		t.Errorf("a changed server: exit %d, gate %+v", code, g)
	}
	if err := os.Remove(pin); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := tasksim(t, "run", sc, "--target", approved, "--out", t.TempDir(), "--no-progress"); code != exitUsage || !strings.Contains(stderr, "expect_manifest: pin: open "+pin) {
		t.Errorf("a missing pin: exit %d\n%s", code, stderr)
	}
}
