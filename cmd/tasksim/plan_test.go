package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestDryRunShownScenarios: --dry-run on the shipped scenarios shows their cancels (share
// and delay), every fault that is on (where, what, how often) and every threshold, with
// the abort_on_fail ones marked.
func TestDryRunShownScenarios(t *testing.T) {
	cases := map[string][]string{
		"smoke": {
			"cancel       none", "faults       none", "thresholds   none of the scenario's",
			"recovery     no idempotency key sent",
		},
		"flaky-network": {
			"faults       network.latency ", "normal(mean=20ms, stddev=5ms, min=5ms) added to every chunk",
			"network.reset ", "5% of connections: reset (TCP RST) after 100 bytes to the client",
			"network.black_hole ", "2% of connections: accepted, then nothing is forwarded",
			"network.half_open ", "2% of connections: upstream closed after 1s",
			"lost creates reconciled by it",
		},
		"cancel-storm": {
			"cancel       60% of tasks, uniform(200ms..4.5s) after their creation",
			"client.cancel_reply ", "20% of cancels: tasks/cancel reaches the server, its reply is lost",
			"server.effect_first ", "30% of tasks: the domain effect is applied when the work starts",
		},
		"reconnect-storm": {
			"client.create_reply ", "5% of creates (tools/call)", "client.after_create ", "client.before_result ",
			"client.crash ", "10% of tasks (once, at a poll)", "server.session_expiry ", "2% of requests with a session",
		},
		"server-restart": {"server.restart ", "every 10s from the server's start: every session forgotten"},
		"tenant-isolation": {
			"tenants      3 (server.tokens)", "10% of clients are isolation probes", "initech's token revoked at 10s (all)",
		},
		"canary-gate": {
			"cancel       10% of tasks, uniform(500ms..3s)", "faults       none",
			"thresholds   judged over the whole run (a failure exits 99; no data fails", "error budget 5% of requests may fail",
			"\n             latency_tasks_get.p99 < 200ms\n", "\n             tasks.unknown == 0\n",
		},
	}
	for name, wants := range cases {
		stdout, stderr, code := runCLI("run", name, "--dry-run")
		if code != exitOK {
			t.Fatalf("run %s --dry-run: exit %d\n%s", name, code, stderr)
		}
		for _, want := range wants {
			if !strings.Contains(stdout, want) {
				t.Errorf("run %s --dry-run lacks %q:\n%s", name, want, stdout)
			}
		}
		if name == "canary-gate" {
			abort := regexp.MustCompile(`(?m)^ +(\S.*?) +abort_on_fail$`).FindAllStringSubmatch(stdout, -1)
			if len(abort) != 1 || abort[0][1] != "requests.errors_rate < 5%" {
				t.Errorf("canary-gate: abort_on_fail marks %q, want only requests.errors_rate < 5%%:\n%s", abort, stdout)
			}
		}
	}
}

// TestDryRunServerFaultsWithTarget: against a real target the embedded server's faults do
// not apply, and the plan says so; network faults still do.
func TestDryRunServerFaultsWithTarget(t *testing.T) {
	stdout, stderr, code := runCLI("run", "cancel-storm", "--dry-run", "--target", "http://127.0.0.1:9/mcp",
		"--set", "faults.server.http_5xx={every: 10s, window: 2s}", "--set", "faults.server.status=502",
		"--set", "faults.network.bandwidth=1000")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	spaces := regexp.MustCompile(` +`)
	plan := spaces.ReplaceAllString(stdout, " ") // column widths aside
	for _, want := range []string{
		" server.effect_first 30% of tasks: the domain effect is applied when the work starts [not applied: the target is not the embedded server]\n",
		" server.http_5xx all POSTs in the first 2s of every 10s: answered HTTP 502, not processed [not applied",
		" network.bandwidth each direction of each connection capped at 1000 bytes/s\n",
		" client.cancel_reply 20% of cancels: tasks/cancel reaches the server, its reply is lost\n",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
}

// TestDryRunKnownBad: --dry-run names each known-bad mode of the embedded server.
func TestDryRunKnownBad(t *testing.T) {
	stdout, stderr, code := runCLI("run", "smoke", "--dry-run", "--set", "server.known_bad=[early_result, sessionless]")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := "\n             known-bad server mode early_result\n             known-bad server mode sessionless\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("plan lacks %q:\n%s", want, stdout)
	}
	if stdout, _, _ := runCLI("run", "smoke", "--dry-run"); strings.Contains(stdout, "known-bad") {
		t.Errorf("a plan without known-bad modes names one:\n%s", stdout)
	}
}
