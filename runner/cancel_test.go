package runner

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
)

// TestCanaryGateCancelIgnored: canary-gate against a 2026-07-28 server whose tasks/cancel
// acknowledges and does nothing (known-bad cancel_ignored) fails the cancellation gate with
// the counts: every cancel sent was ignored (the cancels go out 0.5-3 s into 2 s tasks that
// then complete), none counted late, no task cancelled, and the evidence says E60 allows
// the behaviour up to the documented share. (Before, every one counted late and the
// scenario passed.) Against the default server the same run passes with no ignored cancel.
func TestCanaryGateCancelIgnored(t *testing.T) {
	for _, tc := range []struct {
		name, mode, verdict string
	}{
		{"cancel_ignored", "server.known_bad=[cancel_ignored]", results.VerdictFail},
		{"default", "server.known_bad=[]", results.VerdictPass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sum, _ := runVirtual(t, "canary-gate", tc.verdict, "protocol="+client.ProtocolModern,
					"duration=12s", "grace=12s", "contract=false", tc.mode)
				g := sum.Gates.Cancellation
				ev := g.Evidence
				t.Logf("verdict %s: cancels_sent=%d acked=%d ignored=%d late=%d tasks_cancelled=%d; failures %v",
					sum.Verdict, ev.CancelsSent, ev.CancelsAcked, ev.CancelsIgnored, ev.CancelsLate, ev.TasksCancelled, ev.Failures)
				if !g.Evaluated || ev.CancelsSent == 0 {
					t.Fatalf("cancellation gate %+v: want evaluated, with cancels sent", g)
				}
				if tc.verdict == results.VerdictPass {
					if !g.Pass || ev.CancelsIgnored != 0 || ev.CancelsAcked == 0 {
						t.Errorf("default server: gate %+v; want passed, cancels acked and none ignored", g)
					}
					return
				}
				if g.Pass || ev.CancelsIgnored == 0 || ev.TasksCancelled != 0 || ev.CancelsAcked != 0 {
					t.Errorf("gate %+v: want failed, the cancels ignored and no task cancelled", g)
				}
				// A cancel drawn after its task ended is late; every other one was ignored.
				if ev.CancelsIgnored+ev.CancelsLate != ev.CancelsSent || ev.CancelsIgnored < ev.CancelsLate {
					t.Errorf("sent %d, ignored %d, late %d: want most ignored, the rest late", ev.CancelsSent, ev.CancelsIgnored, ev.CancelsLate)
				}
				if !strings.Contains(ev.IgnoredRule, "E60") || ev.CancelsIgnoredLimit != results.IgnoredCancelLimit2026 {
					t.Errorf("ignored_rule %q, limit %v: want E60 named and the documented limit", ev.IgnoredRule, ev.CancelsIgnoredLimit)
				}
				if sum.Counters[metrics.CancelsIgnored.Name()] != ev.CancelsIgnored {
					t.Errorf("counter cancels_ignored %d, evidence %d", sum.Counters[metrics.CancelsIgnored.Name()], ev.CancelsIgnored)
				}
			})
		})
	}
}

// TestCancelIgnoredLegacy: in 2025-11-25 a server that answers a valid cancel with the task
// still working and goes on (cancel_ignored) breaks R27: any ignored cancel fails the gate.
func TestCancelIgnoredLegacy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "canary-gate", results.VerdictFail, "protocol="+client.ProtocolLegacy,
			"duration=12s", "grace=12s", "contract=false", "server.known_bad=[cancel_ignored]")
		g := sum.Gates.Cancellation
		if !g.Evaluated || g.Pass || g.Evidence.CancelsIgnored == 0 || g.Evidence.CancelsIgnoredLimit != 0 || !strings.Contains(g.Evidence.IgnoredRule, "R27") {
			t.Errorf("cancellation gate %+v: want failed on ignored cancels, R27 named", g)
		}
	})
}

// TestCancelStormCancelTerminal: against a server that turns a completed task cancelled on a
// late cancel (known-bad cancel_terminal), cancel-storm sees it in both eras: the late
// cancels its clients send to tasks they saw completed come back cancelled (2025-11-25: the
// reply; 2026-07-28: the read after the acknowledgement), so they are counted undone, the
// tasks stay completed, the R14 violation fails the hard gate and the undone cancels the
// cancellation gate. (Before, the run reported those tasks cancelled and passed.)
func TestCancelStormCancelTerminal(t *testing.T) {
	for _, proto := range []string{client.ProtocolLegacy, client.ProtocolModern} {
		t.Run(proto, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sum, _ := runVirtual(t, "cancel-storm", results.VerdictFail, "protocol="+proto,
					"duration=12s", "grace=12s", "server.known_bad=[cancel_terminal]")
				undone := sum.Counters[metrics.CancelsUndone.Name()]
				g := sum.Gates
				t.Logf("undone %d, invalid transitions %d, cancelled %d, completed %d", undone, g.Hard.Evidence.InvalidTransitions, sum.Tasks.Cancelled, sum.Tasks.Completed)
				if undone == 0 || g.Cancellation.Pass || g.Cancellation.Evidence.CancelsUndone != undone {
					t.Errorf("cancels_undone %d, cancellation gate %+v: want undone cancels failing the gate", undone, g.Cancellation)
				}
				if g.Hard.Pass || g.Hard.Evidence.InvalidTransitions < undone {
					t.Errorf("hard gate %+v: want the completed -> cancelled transitions (%d) failing it", g.Hard, undone)
				}
			})
		})
	}
}

// TestCancelStormDefaultLateCancels: on the default server the late cancels cancel-storm
// sends to tasks seen completed change nothing: none undone, the gates pass.
func TestCancelStormDefaultLateCancels(t *testing.T) {
	for _, proto := range []string{client.ProtocolLegacy, client.ProtocolModern} {
		t.Run(proto, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sum, _ := runVirtual(t, "cancel-storm", results.VerdictPass, "protocol="+proto, "duration=12s", "grace=12s")
				if n := sum.Counters[metrics.CancelsUndone.Name()]; n != 0 || sum.Counters[metrics.CancelsLate.Name()] == 0 {
					t.Errorf("undone %d, late %d: want late cancels, none undone", n, sum.Counters[metrics.CancelsLate.Name()])
				}
			})
		})
	}
}
