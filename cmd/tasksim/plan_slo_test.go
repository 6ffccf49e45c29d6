package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDryRunPrintsDefaultSLOs: --dry-run prints every default SLO, resolved from the
// embedded server's interval, as "from the advertised interval" against a target, and as
// set or off by the scenario's slo section.
func TestDryRunPrintsDefaultSLOs(t *testing.T) {
	stdout, stderr, code := runCLI("run", "smoke", "--dry-run", "--poll-interval", "250ms")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"detection_lag  detection_lag.p99 <= 1000ms  (detection_lag.p99 <= max(2*P + 250ms, 1s); P = 250ms, the embedded server's server.poll_interval)",
		"tasks_get      latency_tasks_get.p99 <= 500ms  (latency_tasks_get.p99 <= min(max(P, 500ms), 5s); P = 250ms",
		"unknown_tasks  tasks.unknown == 0", "setup_errors   requests.setup_errors_rate <= 1%",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}

	stdout, stderr, code = runCLI("run", "smoke", "--dry-run", "--target", "http://127.0.0.1:9/mcp", "--poll-interval", "2s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"polling      clients follow the target's advertised pollInterval (not known before the run); --poll-interval 2s is only the fallback when it advertises none",
		"detection_lag  detection_lag.p99 <= max(2*P + 250ms, 1s), P from the advertised interval",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run against a target lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "poll interval 2s") {
		t.Errorf("dry run against a target still promises a poll interval of 2s:\n%s", stdout)
	}

	file := filepath.Join(t.TempDir(), "slo.yaml")
	if err := os.WriteFile(file, []byte("name: slo\nduration: 5s\nworkload: {clients: 1}\nslo:\n  detection_lag: off\n  tasks_get: 3s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLI("run", file, "--dry-run")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"detection_lag  not judged: off in the scenario (slo.detection_lag: off)",
		"tasks_get      latency_tasks_get.p99 <= 3s  (slo.tasks_get in the scenario)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run of a scenario with an slo section lacks %q:\n%s", want, stdout)
		}
	}
}

// TestSLOSectionErrorsAreLocated: a bad limit in the slo section is a usage error naming
// file:line and the key.
func TestSLOSectionErrorsAreLocated(t *testing.T) {
	file := filepath.Join(t.TempDir(), "slo.yaml")
	if err := os.WriteFile(file, []byte("name: slo\nduration: 5s\nworkload: {clients: 1}\nslo:\n  tasks_get: 3\n  setup_errors: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI("validate", file)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	for _, want := range []string{file + ":5:3: slo.tasks_get: want off or a duration", file + ":6:3: slo.setup_errors: want off or a percentage like 2%"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q:\n%s", want, stderr)
		}
	}
}
