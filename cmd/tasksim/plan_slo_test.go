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

// TestSweepVaryPollIntervalAgainstTarget: against a target whose advice the clients follow,
// --vary poll_interval is a usage error naming what to vary instead, and no directory is
// made; with clients that poll by their own policy it is meaningful, and said so.
func TestSweepVaryPollIntervalAgainstTarget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	_, stderr, code := runCLI("sweep", "smoke", "--target", "http://127.0.0.1:9/mcp", "--vary", "poll_interval=250ms,1s", "--out", out)
	if code != exitUsage || !strings.Contains(stderr, "--set client.poll.policy=fixed --vary client.poll.interval=250ms,1s") {
		t.Errorf("exit %d, want %d naming client.poll.interval:\n%s", code, exitUsage, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused sweep made %s", out)
	}
	_, stderr, code = runCLI("sweep", "smoke", "--target", "http://127.0.0.1:9/mcp", "--vary", "server.ttl=1m,2m", "--out", out)
	if code != exitUsage || !strings.Contains(stderr, "server.* configures the embedded server") {
		t.Errorf("--vary server.ttl against a target: exit %d\n%s", code, stderr)
	}

	f, name, vars, err := parseSweepFlags([]string{"smoke", "--target", "http://127.0.0.1:9/mcp", "--set", "client.poll.policy=fixed",
		"--vary", "poll_interval=250ms,1s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	note, err := sweepPlan(f, name, vars).TargetNote()
	if err != nil || !strings.Contains(note, "client.poll.policy fixed, not by the target's advice") {
		t.Errorf("fixed clients: note %q, err %v; want a note that the values are the clients' own", note, err)
	}
	f, name, vars, _ = parseSweepFlags([]string{"smoke", "--vary", "poll_interval=250ms,1s"}, nil)
	if note, err := sweepPlan(f, name, vars).TargetNote(); note != "" || err != nil {
		t.Errorf("the embedded server: note %q, err %v; want neither", note, err)
	}
}
