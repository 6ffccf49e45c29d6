package results

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// run records into a one-shard recorder and returns the run's total after one window.
func run(record func(sh *metrics.Shard)) *metrics.Snapshot {
	rec := metrics.NewRecorder(1, t0)
	record(rec.Shard(0))
	rec.Flush(sec(1))
	return rec.Total()
}

func TestTrustworthy(t *testing.T) {
	lag := func(d time.Duration) *metrics.Snapshot {
		return run(func(sh *metrics.Shard) {
			for range 100 {
				sh.RecordDuration(metrics.ScheduleLag, d)
			}
		})
	}
	tests := []struct {
		name  string
		total *metrics.Snapshot
		poll  time.Duration
		ok    bool
		note  string
	}{
		{"well within", lag(20 * time.Millisecond), time.Second, true, ""},
		{"just under 10%", lag(99 * time.Millisecond), time.Second, true, ""},
		{"above 10%", lag(150 * time.Millisecond), time.Second, false,
			"schedule_lag p99 150.015ms exceeds 10% of the 1s poll interval (100ms): the load generator fell behind its own schedule"},
		{"short interval", lag(20 * time.Millisecond), 100 * time.Millisecond, false,
			"schedule_lag p99 20.015ms exceeds 10% of the 100ms poll interval (10ms)"},
		{"interval unknown", lag(time.Second), 0, true, "not checked: poll interval unknown"},
		{"no polls", run(func(*metrics.Shard) {}), time.Second, true, "not checked: no poll was scheduled"},
	}
	for _, tc := range tests {
		s := Build(RunInfo{PollInterval: tc.poll}, tc.total, nil)
		if s.Trustworthy != tc.ok || !strings.HasPrefix(s.TrustNote, tc.note) || (tc.note == "") != (s.TrustNote == "") {
			t.Errorf("%s: trustworthy %v, note %q; want %v, %q", tc.name, s.Trustworthy, s.TrustNote, tc.ok, tc.note)
		}
		// Trust is reported, it does not decide the verdict.
		if s.Verdict != VerdictPass {
			t.Errorf("%s: verdict %s", tc.name, s.Verdict)
		}
	}
	// The boundary: p99 equal to 10% of the interval is still trustworthy.
	if ok, _ := trust(metrics.Stat{Count: 1, P99: 100}, time.Second); !ok {
		t.Error("p99 = 10% of the interval is not trustworthy")
	}
	if ok, _ := trust(metrics.Stat{Count: 1, P99: 100.001}, time.Second); ok {
		t.Error("p99 just above 10% of the interval is trustworthy")
	}
}

func TestExitCode(t *testing.T) {
	clean := run(func(sh *metrics.Shard) {
		sh.Add(metrics.TasksCreated, 10)
		sh.Add(metrics.TasksCompleted, 10)
	})
	invalid := run(func(sh *metrics.Shard) { sh.Add(metrics.InvalidTransitions, 1) })
	th := func(exprs ...string) []scenarios.Threshold {
		var out []scenarios.Threshold
		for _, e := range exprs {
			out = append(out, scenarios.Threshold{Expr: e})
		}
		return out
	}
	tests := []struct {
		name  string
		info  RunInfo
		total *metrics.Snapshot
		code  int
	}{
		{"clean", RunInfo{}, clean, 0},
		{"thresholds pass", RunInfo{Thresholds: th("tasks.completed == 10", "tasks.failed_rate < 1%")}, clean, 0},
		{"a threshold fails", RunInfo{Thresholds: th("tasks.completed == 10", "tasks.completed > 10")}, clean, 99},
		{"a bad threshold", RunInfo{Thresholds: th("tasks.completed = 10")}, clean, 99},
		{"invalid transition", RunInfo{}, invalid, 99},
		{"duplicate effect", RunInfo{DuplicateEffects: 2}, clean, 99},
		{"duplicate effects unknown", RunInfo{DuplicateEffects: -1}, clean, 0},
		{"interrupted", RunInfo{Interrupted: true}, clean, ExitInterrupted},
		{"interrupted, a threshold fails", RunInfo{Interrupted: true, Thresholds: th("tasks.completed > 10")}, clean, 99},
		{"a runtime error", RunInfo{Error: "boom"}, clean, ExitRuntimeError},
		{"a runtime error, a threshold fails", RunInfo{Error: "boom", Thresholds: th("tasks.completed > 10")}, clean, ExitRuntimeError},
	}
	for _, tc := range tests {
		s := Build(tc.info, tc.total, nil)
		if got := s.ExitCode(); got != tc.code {
			t.Errorf("%s: ExitCode() = %d (verdict %s), want %d", tc.name, got, s.Verdict, tc.code)
		}
		if want := map[int]string{0: VerdictPass, ExitInterrupted: VerdictPass, 99: VerdictFail, ExitRuntimeError: VerdictError}[tc.code]; s.Verdict != want {
			t.Errorf("%s: verdict %q, want %q", tc.name, s.Verdict, want)
		}
	}
	if got := (&Summary{Verdict: "garbled"}).ExitCode(); got != ExitGateFailed {
		t.Errorf("unknown verdict: ExitCode() = %d", got)
	}
}

// TestInterruptionCutsAreNotTheTargets: in a run a signal cut short, the tasks the
// interruption cut off (run_stopped on the reconciliation list) are not unknown outcomes
// of the target: the default SLO tasks.unknown == 0 judges the others, the evidence
// threshold is not judged, and the run exits 130. An unknown task for any other reason still
// fails it, and a run that ended as planned is judged on every unknown task.
func TestInterruptionCutsAreNotTheTargets(t *testing.T) {
	cut := func(unknown int64) *metrics.Snapshot {
		return run(func(sh *metrics.Shard) {
			sh.Add(metrics.TasksCreated, 50)
			sh.Add(metrics.TasksUnknown, unknown)
			for range 50 {
				sh.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, time.Millisecond)
			}
		})
	}
	budget := 5.0
	slo := []SLO{{Key: scenarios.SLOUnknownTasks, Th: scenarios.Threshold{Expr: "tasks.unknown == 0"}}}
	for _, tc := range []struct {
		name        string
		interrupted bool
		unknown     int64
		reasons     map[string]int64
		code        int
	}{
		{"interrupted, every unknown cut off", true, 50, map[string]int64{reasonStopped: 50}, ExitInterrupted},
		{"interrupted, two unknown besides", true, 52, map[string]int64{reasonStopped: 50, "deadline": 2}, ExitGateFailed},
		{"ended as planned, cut off at the end of its grace", false, 50, map[string]int64{reasonStopped: 50}, ExitGateFailed},
	} {
		info := RunInfo{Interrupted: tc.interrupted, Unknown: tc.reasons, ErrorBudget: &budget, SLOs: slo}
		s := Build(info, cut(tc.unknown), nil)
		if got := s.ExitCode(); got != tc.code {
			t.Errorf("%s: exit %d (verdict %s), want %d; thresholds %+v", tc.name, got, s.Verdict, tc.code, s.Thresholds)
		}
		var text strings.Builder
		if err := WriteText(&text, s, "dir"); err != nil {
			t.Fatal(err)
		}
		if tc.interrupted && !strings.Contains(text.String(), "---- tasks.done > 0: 0 (evidence; not judged: the run was interrupted)") {
			t.Errorf("%s: the evidence threshold is not said to be unjudged:\n%s", tc.name, text.String())
		}
		if tc.interrupted && !strings.Contains(text.String(), "50 tasks the interruption cut off not counted") {
			t.Errorf("%s: the unknown SLO does not say what it left out:\n%s", tc.name, text.String())
		}
	}
}

func TestGates(t *testing.T) {
	total := run(func(sh *metrics.Shard) {
		sh.Add(metrics.InvalidTransitions, 3)
		sh.Add(metrics.TasksCancelled, 2)
		sh.Add(metrics.Reconnects, 5)
		sh.RecordDuration(metrics.CancelLatency, 40*time.Millisecond)
	})
	info := RunInfo{
		DuplicateEffects:         -1,
		InvalidTransitionSample:  []string{"t-1", "t-7"},
		LostAfterReconnectSample: []string{"t-3"},
	}
	s := Build(info, total, nil)
	hard := s.Gates.Hard
	if hard.Pass || !hard.Evaluated {
		t.Errorf("hard: pass %v evaluated %v, want a failure", hard.Pass, hard.Evaluated)
	}
	ev := hard.Evidence
	if ev.DuplicateWindowS != nil {
		t.Errorf("hard evidence: duplicate_window_s %v with duplicate_effects unknown, want absent", *ev.DuplicateWindowS)
	}
	// With the embedded server's ledger, the window that applied is in the evidence.
	measured := Build(RunInfo{DuplicateWindow: 90 * time.Second}, total, nil).Gates.Hard.Evidence
	if w := measured.DuplicateWindowS; w == nil || *w != 90 || measured.DuplicateEffects == nil {
		t.Errorf("hard evidence with a ledger: duplicate_window_s %v, duplicate_effects %v; want 90 and 0", w, measured.DuplicateEffects)
	}
	if ev.InvalidTransitions != 3 || ev.DuplicateEffects != nil ||
		!slices.Equal(ev.InvalidTransitionsDetail.([]string), []string{"t-1", "t-7"}) {
		t.Errorf("hard evidence: %+v", ev)
	}
	if nc := ev.NotChecked; !slices.Contains(nc, "duplicate_effects") || !slices.Contains(nc, "cross_tenant_leaks") {
		t.Errorf("hard not_checked: %v", nc)
	}
	if why := ev.Notes["duplicate_effects"]; !strings.Contains(why, "external target") {
		t.Errorf("hard notes: %v: want why duplicate_effects is null", ev.Notes)
	}
	for _, g := range s.Gates.list()[2:] {
		if !g.pass || g.evaluated || g.evidence["reason"] == "" {
			t.Errorf("%s: pass %v evaluated %v evidence %v; want not evaluated, with a reason", g.name, g.pass, g.evaluated, g.evidence)
		}
	}
	// Sessions were lost (5 reconnects): recovery is evaluated; no second create: it passes.
	if r := s.Gates.Recovery; !r.Pass || !r.Evaluated || r.Evidence.Reconnects != 5 {
		t.Errorf("recovery: %+v", r)
	}
	if d := s.Gates.Recovery.Evidence.TasksLostAfterReconnectDetail; !slices.Equal(d.([]string), []string{"t-3"}) {
		t.Errorf("recovery detail: %v", d)
	}
	c := s.Gates.Cancellation.Evidence
	if c.TasksCancelled != 2 || c.CancelLatencyCount != 1 || *c.CancelLatencyP99Ms != 40.031 {
		t.Errorf("cancellation evidence: %+v", c)
	}
	if s.Verdict != VerdictFail {
		t.Errorf("verdict %s, want fail", s.Verdict)
	}
}

// TestRecoveryGate: evaluated when faults were injected; fails on a second create of a key
// the server already had; an external target (-1) leaves that check listed as not checked.
func TestRecoveryGate(t *testing.T) {
	total := run(func(sh *metrics.Shard) { sh.Add(metrics.Reconciled, 2) })
	for _, tc := range []struct {
		name      string
		info      RunInfo
		evaluated bool
		pass      bool
	}{
		{"no faults", RunInfo{}, false, true},
		{"faults, clean", RunInfo{FaultsOn: true, Faults: map[string]int64{"client.create_reply": 2}}, true, true},
		{"second create", RunInfo{FaultsOn: true, SecondCreates: 1}, true, false},
		{"external", RunInfo{FaultsOn: true, SecondCreates: -1}, true, true},
	} {
		g := Build(tc.info, total, nil).Gates.Recovery
		if g.Evaluated != tc.evaluated || g.Pass != tc.pass {
			t.Errorf("%s: evaluated %v pass %v, want %v %v (%v)", tc.name, g.Evaluated, g.Pass, tc.evaluated, tc.pass, g.Evidence)
		}
		if g.Evidence.Reconciled != 2 {
			t.Errorf("%s: evidence %v", tc.name, g.Evidence)
		}
		if nc := g.Evidence.NotChecked; (tc.info.SecondCreates < 0) != slices.Contains(nc, "second_creates") {
			t.Errorf("%s: not_checked %v", tc.name, nc)
		}
	}
	// Every created task must end exactly once: 3 created, 1 completed, 1 unknown with an
	// id leaves one unaccounted for.
	three := run(func(sh *metrics.Shard) {
		sh.Add(metrics.TasksCreated, 3)
		sh.Add(metrics.TasksCompleted, 1)
		sh.Add(metrics.TasksUnknown, 1)
	})
	if g := Build(RunInfo{FaultsOn: true, UnknownCreated: 1}, three, nil).Gates.Recovery; g.Pass || *g.Evidence.TasksAccounted {
		t.Errorf("a task that never ended passed the recovery gate: %+v", g)
	}
	if g := Build(RunInfo{FaultsOn: true, UnknownCreated: 2}, three, nil).Gates.Recovery; !g.Pass || !*g.Evidence.TasksAccounted {
		t.Errorf("accounted tasks failed the recovery gate: %+v", g)
	}
	if g := Build(RunInfo{FaultsOn: true, LostAfterReconnect: 3}, total, nil).Gates.Recovery; !g.Pass || g.Evidence.Finding == "" {
		t.Errorf("tasks lost after a reconnect are a finding, not a failure: %+v", g)
	}
}

// TestCancellationGate: evaluated once a cancel was sent; an accepted cancel that did not
// end its task cancelled fails it; effects applied anyway are reported, not failed.
func TestCancellationGate(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		sent, acked, broken, cancel int64
		evaluated, pass             bool
	}{
		{"none sent", 0, 0, 0, 0, false, true},
		{"all honoured", 4, 3, 0, 3, true, true},
		{"broken", 4, 3, 1, 3, true, false},
	} {
		total := run(func(sh *metrics.Shard) {
			sh.Add(metrics.CancelsSent, tc.sent)
			sh.Add(metrics.CancelsAcked, tc.acked)
			sh.Add(metrics.CancelsBroken, tc.broken)
			sh.Add(metrics.TasksCancelled, tc.cancel)
		})
		g := Build(RunInfo{EffectsAfterCancel: 7}, total, nil).Gates.Cancellation
		if g.Evaluated != tc.evaluated || g.Pass != tc.pass || *g.Evidence.EffectsAfterCancel != 7 {
			t.Errorf("%s: evaluated %v pass %v, want %v %v (%v)", tc.name, g.Evaluated, g.Pass, tc.evaluated, tc.pass, g.Evidence)
		}
	}
}

func TestBuildRunInfo(t *testing.T) {
	total := run(func(sh *metrics.Shard) { sh.Add(metrics.Polls, 30) })
	s := Build(RunInfo{
		Target: "https://mcp.example.com/mcp", StartedAt: t0.In(time.FixedZone("CET", 3600)),
		Duration: 1500 * time.Millisecond, Interrupted: true,
	}, total, nil)
	if s.Target != "https://mcp.example.com/mcp" || s.StartedAt.Location() != time.UTC || !s.StartedAt.Equal(t0) ||
		s.DurationS != 1.5 || !s.Interrupted || !s.Server.IsZero() {
		t.Errorf("run info: target %q started %v duration %v interrupted %v server %v",
			s.Target, s.StartedAt, s.DurationS, s.Interrupted, s.Server)
	}
	// polls per second counts over the span the windows cover (1 s), not RunInfo.Duration.
	if s.Fleet.PollsPerSecond != 30 {
		t.Errorf("polls_per_second %v, want 30", s.Fleet.PollsPerSecond)
	}
	// Without a duration, the span of the windows is the duration.
	if s := Build(RunInfo{}, total, nil); s.DurationS != 1 {
		t.Errorf("duration_s %v, want 1", s.DurationS)
	}
}

func TestClamped(t *testing.T) {
	total := run(func(sh *metrics.Shard) {
		sh.Record(metrics.TaskE2E, metrics.HourUS+1)
		sh.Record(metrics.TaskE2E, -1)
	})
	s := Build(RunInfo{}, total, nil)
	if len(s.Clamped) != 1 || s.Clamped["task_e2e"] != 2 {
		t.Errorf("clamped: %v", s.Clamped)
	}
	if s := Build(RunInfo{}, run(func(*metrics.Shard) {}), nil); s.Clamped != nil {
		t.Errorf("clamped without clamping: %v", s.Clamped)
	}
}
