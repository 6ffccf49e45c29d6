package results

import (
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// TestCompatibilityGate: evaluated only when the target cannot take a task for the run's
// tool (R6, R7, a protocol without Tasks); it passes when no task parameter was sent and
// the declared sync fallback ran, and fails (exit code 99) on a task parameter seen by
// either end, or a fallback that did not run.
func TestCompatibilityGate(t *testing.T) {
	// Ten synchronous calls: 9 completed, 1 failed, no task created.
	syncRun := run(func(sh *metrics.Shard) {
		for range 10 {
			sh.Request(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200)
		}
		sh.Add(metrics.TasksCompleted, 9)
		sh.Add(metrics.TasksFailed, 1)
	})
	// Ten task-augmented calls, each creating a task.
	taskRun := run(func(sh *metrics.Shard) {
		for range 10 {
			sh.Request(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200)
		}
		sh.Add(metrics.TasksCreated, 10)
		sh.Add(metrics.TasksCompleted, 10)
	})
	noCap := Compat{Protocol: "2025-11-25", Tool: "work", TaskSupport: "forbidden",
		Why: "the target does not declare capabilities.tasks.requests.tools.call (R6)", Fallback: "sync",
		Taken: "sync: the target does not declare capabilities.tasks.requests.tools.call (R6)"}
	old := noCap
	old.Protocol, old.Why = "2025-06-18", "the target negotiated protocol 2025-06-18, which has no Tasks"
	sentAnyway := noCap // a client bug: it task-augmented its calls anyway
	sentAnyway.AsTask = true
	serverSaw := noCap // the client says it did not, the embedded server saw task params
	serverSaw.TaskParamsIgnored = 3
	silent := noCap
	silent.Taken = ""
	supported := Compat{Protocol: "2025-11-25", TasksDeclared: true, Cancel: true, ToolsCall: true, Tool: "work",
		TaskSupport: "optional", Supported: true, AsTask: true, Fallback: "refuse", TaskParamsIgnored: 0}

	for _, tc := range []struct {
		name      string
		compat    *Compat
		total     *metrics.Snapshot
		evaluated bool
		pass      bool
		failure   string // a substring of the failures; "" when it passes
	}{
		{"no manifest", nil, syncRun, false, true, ""},
		{"supported: no fallback needed", &supported, taskRun, false, true, ""},
		{"no capability, sync fallback ran (R6)", &noCap, syncRun, true, true, ""},
		{"2025-06-18 peer, sync fallback ran", &old, syncRun, true, true, ""},
		{"task parameter sent to a peer without the capability (R6)", &sentAnyway, taskRun, true, false, "task parameter to a target"},
		{"the server counted task parameters it ignored (R4)", &serverSaw, syncRun, true, false, "embedded server received"},
		{"the fallback made no call", &noCap, run(func(*metrics.Shard) {}), true, false, "no synchronous call"},
		{"the fallback was silent", &silent, syncRun, true, false, "silently"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Build(RunInfo{Compat: tc.compat}, tc.total, nil)
			g := s.Gates.Compatibility
			if g.Evaluated != tc.evaluated || g.Pass != tc.pass {
				t.Fatalf("evaluated %v pass %v, want %v %v; evidence %v", g.Evaluated, g.Pass, tc.evaluated, tc.pass, g.Evidence)
			}
			wantExit := 0
			if !tc.pass {
				wantExit = ExitGateFailed
			}
			if s.ExitCode() != wantExit {
				t.Errorf("ExitCode() = %d, want %d", s.ExitCode(), wantExit)
			}
			fails := g.Evidence.Failures
			if tc.failure != "" && !strings.Contains(strings.Join(fails, "; "), tc.failure) {
				t.Errorf("failures %q, want one mentioning %q", fails, tc.failure)
			}
			if tc.pass && len(fails) > 0 {
				t.Errorf("passing gate lists failures %q", fails)
			}
			if !tc.evaluated && g.Evidence.Reason == "" {
				t.Errorf("not evaluated without a reason: %v", g.Evidence)
			}
		})
	}

	// The evidence of a supported target carries the manifest leaves.
	g := Build(RunInfo{Compat: &supported}, taskRun, nil).Gates.Compatibility
	if ev := g.Evidence; ev.Reason != "the target supports tasks for this tool: no fallback needed" ||
		!ev.TasksToolsCall || !ev.TasksCancel || ev.ToolTaskSupport != "optional" {
		t.Errorf("supported evidence %v", g.Evidence)
	}
	// The evidence of a passing fallback counts what ran.
	g = Build(RunInfo{Compat: &noCap}, syncRun, nil).Gates.Compatibility
	if ev := g.Evidence; *ev.TaskParamsSent != 0 || *ev.SyncCalls != 10 ||
		*ev.SyncCompleted != 9 || *ev.SyncFailed != 1 || *ev.TasksCreated != 0 {
		t.Errorf("fallback evidence %v", g.Evidence)
	}
	// A modern-first client that fell back to 2025-11-25 is evaluated, and passes when the
	// fallback is said.
	fellBack := supported
	fellBack.Era, fellBack.EraFallback = "2025-11-25", "2026-07-28 was tried first and answered as a legacy server answers"
	g = Build(RunInfo{Compat: &fellBack}, taskRun, nil).Gates.Compatibility
	if !g.Evaluated || !g.Pass || g.Evidence.EraFallback != fellBack.EraFallback || g.Evidence.Era != "2025-11-25" {
		t.Errorf("era fallback: evaluated %v pass %v evidence %v", g.Evaluated, g.Pass, g.Evidence)
	}
	// ... and fails when nothing was called in the era fallen back to.
	g = Build(RunInfo{Compat: &fellBack}, run(func(*metrics.Shard) {}), nil).Gates.Compatibility
	if !g.Evaluated || g.Pass {
		t.Errorf("era fallback without a call: evaluated %v pass %v evidence %v", g.Evaluated, g.Pass, g.Evidence)
	}
}

// TestCompatibilityGateAgreesWithTheDrill: on a target that supports tasks, a rollback
// drill whose switch flipped is the fleet falling back: the compatibility gate is evaluated
// on the drill's own counts, and fails where the rollback gate's evidence shows tasks after
// the switch.
func TestCompatibilityGateAgreesWithTheDrill(t *testing.T) {
	supported := Compat{Protocol: "2025-11-25", TasksDeclared: true, ToolsCall: true, Tool: "work",
		TaskSupport: "optional", Supported: true, AsTask: true, Fallback: "sync"}
	total := run(func(sh *metrics.Shard) { sh.Request(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200) })
	for _, tc := range []struct {
		name    string
		drill   Rollback
		pass    bool
		failure string
	}{
		{"plain calls after the switch", Rollback{Trigger: "at 10s", AtS: 10, FallbackCalls: 200, ServerCreatesAfter: 0}, true, ""},
		{"new work refused (a required tool)", Rollback{Trigger: "at 10s", AtS: 10, Refused: 5}, true, ""},
		{"task-augmented calls after the switch", Rollback{Trigger: "at 10s", AtS: 10, FallbackCalls: 200, CreatesAfter: 3}, false, "still carried a task"},
		{"tasks for plain calls", Rollback{Trigger: "at 10s", AtS: 10, FallbackCalls: 200, TasksAfter: 2}, false, "answered 2 plain calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Build(RunInfo{Compat: &supported, Rollback: &tc.drill}, total, nil).Gates.Compatibility
			if !g.Evaluated || g.Pass != tc.pass {
				t.Fatalf("evaluated %v pass %v, want evaluated, pass %v; evidence %+v", g.Evaluated, g.Pass, tc.pass, g.Evidence)
			}
			if got := strings.Join(g.Evidence.Failures, "; "); tc.failure != "" && !strings.Contains(got, tc.failure) {
				t.Errorf("failures %q, want one mentioning %q", got, tc.failure)
			}
			if ev := g.Evidence; ev.FallbackTaken == nil || !strings.Contains(*ev.FallbackTaken, "rollback drill") ||
				*ev.SyncCalls != tc.drill.FallbackCalls || *ev.TaskParamsSent != tc.drill.CreatesAfter {
				t.Errorf("evidence %+v: want the drill's counts", ev)
			}
		})
	}
	// A switch after which no work started shows nothing of the fallback: not evaluated.
	g := Build(RunInfo{Compat: &supported, Rollback: &Rollback{Trigger: "at 10s", AtS: 10}}, total, nil).Gates.Compatibility
	if g.Evaluated || !g.Pass || !strings.Contains(g.Evidence.Reason, "no new work started after it") {
		t.Errorf("no work after the switch: evaluated %v pass %v reason %q, want not evaluated, saying why", g.Evaluated, g.Pass, g.Evidence.Reason)
	}
	// A drill whose switch never flipped leaves the gate as it was: no fallback needed.
	g = Build(RunInfo{Compat: &supported, Rollback: &Rollback{Planned: "at 10s"}}, total, nil).Gates.Compatibility
	if g.Evaluated || !g.Pass {
		t.Errorf("switch never flipped: evaluated %v pass %v, want not evaluated", g.Evaluated, g.Pass)
	}
}
