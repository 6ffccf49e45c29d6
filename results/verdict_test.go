package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Nothing passes on missing evidence: a threshold over a metric without samples fails and
// says "no data", its value null in summary.json, unless the scenario opted in with
// on_no_data: pass.
func TestNoDataFails(t *testing.T) {
	total := run(func(sh *metrics.Shard) {
		sh.Add(metrics.TasksCreated, 2)
		sh.Add(metrics.TasksCompleted, 2)
	})
	info := RunInfo{Thresholds: []scenarios.Threshold{
		{Expr: "detection_lag.p99 < 1s"},
		{Expr: "cancel_latency.p99 < 1s", OnNoData: scenarios.NoDataPass},
		{Expr: "cleanup_lag.max > 0ms", OnNoData: scenarios.NoDataFail},
	}}
	s := Build(info, total, nil)
	for i, want := range []bool{false, true, false} {
		r := s.Thresholds[i]
		if !r.NoData || r.Pass != want || r.Value != 0 || r.WorstWindow != -1 {
			t.Errorf("%s: %+v, want no data and pass %v", r.Expr, r, want)
		}
	}
	if s.Thresholds[1].OnNoData != "pass" || s.Thresholds[0].OnNoData != "" {
		t.Errorf("on_no_data: %q, %q; want the opt-in said, and only there", s.Thresholds[0].OnNoData, s.Thresholds[1].OnNoData)
	}
	if s.Verdict != VerdictFail || s.ExitCode() != ExitGateFailed {
		t.Errorf("verdict %s, exit %d: a threshold without data must fail the run", s.Verdict, s.ExitCode())
	}
	js, err := summaryJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Thresholds []map[string]any `json:"thresholds"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	th := back.Thresholds[0]
	if v, ok := th["value"]; !ok || v != nil || th["pass"] != false || th["no_data"] != true || th["worst_value"] != nil {
		t.Errorf("summary.json threshold without data: %v; want value and worst_value null, pass false, no_data true", th)
	}
	var text bytes.Buffer
	if err := WriteText(&text, s, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL detection_lag.p99 < 1s: no data\n", "pass cancel_latency.p99 < 1s: no data (on_no_data: pass)\n",
		"FAIL cleanup_lag.max > 0ms: no data\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text summary lacks %q:\n%s", want, text.String())
		}
	}
}

// TestThresholdJSONKeys: summary.json's form of a threshold has ThresholdResult's keys in
// ThresholdResult's order.
func TestThresholdJSONKeys(t *testing.T) {
	tags := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			out = append(out, f.Tag.Get("json"))
		}
		return out
	}
	if got, want := tags(reflect.TypeFor[thresholdJSON]()), tags(reflect.TypeFor[ThresholdResult]()); !slices.Equal(got, want) {
		t.Errorf("thresholdJSON keys\n got %v\nwant %v", got, want)
	}
}

// Every run has an error budget, judged like a threshold and listed as one: more than the
// budget of failed requests fails the run (exit 99), none at all is no data (a failure),
// and backpressure and prescribed refusals are not errors. And every run must have
// measured something: a run in which no task reached an outcome fails, whatever its
// errors (every create refused by backpressure, say).
func TestErrorBudget(t *testing.T) {
	requests := func(ok, errs, backpressure, expected int) *metrics.Snapshot {
		return run(func(sh *metrics.Shard) {
			if ok > 0 {
				sh.Add(metrics.TasksCompleted, 1) // the ok replies brought one task to its end
			}
			for range ok {
				sh.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, ms(1))
			}
			for range errs {
				sh.Reply(mcp.OpToolsCall, metrics.OutcomeRPCError, -32602, 200, ms(1))
			}
			for range backpressure {
				sh.Reply(mcp.OpToolsCall, metrics.OutcomeBackpressure, 0, 429, ms(1))
			}
			for range expected {
				sh.Reply(mcp.OpTasksCancel, metrics.OutcomeExpected, -32602, 200, ms(1))
			}
		})
	}
	five := 5.0
	for _, tc := range []struct {
		name     string
		total    *metrics.Snapshot
		pass     bool // the budget
		noData   bool
		value    float64
		evidence bool // tasks.done > 0
	}{
		{"within", requests(96, 4, 0, 0), true, false, 4, true},
		{"at the budget", requests(95, 5, 0, 0), true, false, 5, true},
		{"over", requests(94, 6, 0, 0), false, false, 6, true},
		{"backpressure and late cancels are not errors", requests(10, 0, 60, 30), true, false, 0, true},
		{"every create refused by backpressure: no error, no evidence", requests(0, 0, 60, 0), true, false, 0, false},
		{"no request at all", requests(0, 0, 0, 0), false, true, 0, false},
	} {
		info := RunInfo{ErrorBudget: &five, Thresholds: []scenarios.Threshold{{Expr: "latency_tools_call.count >= 0"}}}
		info.Windows = NewWindowTally(info.Thresholds, info.ErrorBudget)
		s := Build(info, tc.total, nil)
		if len(s.Thresholds) != 3 {
			t.Fatalf("%s: %d thresholds, want the scenario's, the budget and the evidence", tc.name, len(s.Thresholds))
		}
		r, ev := s.Thresholds[1], s.Thresholds[2]
		if r.Expr != "requests.errors_rate <= 5%" || r.Source != SourceErrorBudget || s.Thresholds[0].Source != SourceScenario {
			t.Errorf("%s: budget %q source %q, scenario's source %q", tc.name, r.Expr, r.Source, s.Thresholds[0].Source)
		}
		if r.Pass != tc.pass || r.NoData != tc.noData || r.Value != tc.value {
			t.Errorf("%s: budget %+v, want pass %v no_data %v value %v", tc.name, r, tc.pass, tc.noData, tc.value)
		}
		if ev.Expr != "tasks.done > 0" || ev.Source != SourceEvidence || ev.Pass != tc.evidence {
			t.Errorf("%s: evidence %+v, want pass %v", tc.name, ev, tc.evidence)
		}
		if wantCode := map[bool]int{true: 0, false: ExitGateFailed}[tc.pass && tc.evidence]; s.ExitCode() != wantCode {
			t.Errorf("%s: exit %d, want %d", tc.name, s.ExitCode(), wantCode)
		}
	}
	// Without a budget (callers that judge no run) nothing is added.
	if s := Build(RunInfo{}, requests(0, 1, 0, 0), nil); len(s.Thresholds) != 0 {
		t.Errorf("no budget given: thresholds %+v", s.Thresholds)
	}
}

// The text summary names the top kinds of error with their first message, and shows the
// backpressure the server signalled; summary.json keeps up to MaxErrorKinds.
func TestTopErrors(t *testing.T) {
	var kinds []ErrorKind
	for i := range 12 {
		kinds = append(kinds, ErrorKind{Method: "tools/call", Outcome: "rpc_error", Code: -32000 - i, Count: int64(100 - i), Message: "boom"})
	}
	kinds[1] = ErrorKind{Method: "tasks/get", Outcome: "http_error", Status: 500, Count: 99, Message: "500 Internal Server Error"}
	total := run(func(sh *metrics.Shard) {
		sh.Reply(mcp.OpToolsCall, metrics.OutcomeRPCError, -32000, 200, ms(1))
		sh.Add(metrics.BackpressureSignals, 7)
	})
	s := Build(RunInfo{Errors: kinds}, total, nil)
	if len(s.Errors) != MaxErrorKinds || s.Errors[0] != kinds[0] {
		t.Errorf("summary errors: %d kinds, first %+v", len(s.Errors), s.Errors[0])
	}
	var text bytes.Buffer
	if err := WriteText(&text, s, ""); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{
		"backpressure_signals 7",
		"errors      tools/call -32000 x100: boom\n",
		"            tasks/get HTTP 500 x99: 500 Internal Server Error\n",
		"            tools/call -32004 x96: boom\n",
		"(5 more kinds in summary.json)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-32005") {
		t.Errorf("text summary shows more than %d kinds:\n%s", textErrorKinds, out)
	}
	if s := Build(RunInfo{}, total, nil); s.Errors == nil {
		t.Error("errors is null without kinds: want []")
	}
}

// A run that a runtime error stopped still has a summary: verdict "error", exit code 1,
// the reason, and nothing a reader could take for a pass.
func TestErrorSummary(t *testing.T) {
	five := 5.0
	s := ErrorSummary(RunInfo{Scenario: "baseline", Target: "http://127.0.0.1:9/mcp", Error: "probe: connection refused",
		Thresholds: []scenarios.Threshold{{Expr: "tasks.failed_rate < 1%"}}, ErrorBudget: &five})
	if s.Verdict != VerdictError || s.ExitCode() != ExitRuntimeError || s.Error != "probe: connection refused" {
		t.Errorf("verdict %q exit %d error %q", s.Verdict, s.ExitCode(), s.Error)
	}
	for _, g := range s.Gates.list() {
		if g.pass || g.evaluated {
			t.Errorf("gate %s: pass %v evaluated %v; want neither", g.name, g.pass, g.evaluated)
		}
	}
	if len(s.Thresholds) != 3 || s.Thresholds[0].Pass || s.Thresholds[1].Pass || s.Thresholds[1].Source != SourceErrorBudget ||
		s.Thresholds[2].Pass || s.Thresholds[2].Source != SourceEvidence {
		t.Errorf("thresholds %+v: want both listed, failed", s.Thresholds)
	}
	if s.Trustworthy {
		t.Error("an error summary is trustworthy")
	}
	dir := t.TempDir()
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Verdict != VerdictError || back.Error != s.Error || back.ExitCode() != ExitRuntimeError {
		t.Errorf("read back: verdict %q error %q", back.Verdict, back.Error)
	}
	var text bytes.Buffer
	if err := WriteText(&text, s, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "ERROR: probe: connection refused\n") || !strings.Contains(text.String(), "verdict     ERROR") {
		t.Errorf("text:\n%s", text.String())
	}
	// A runtime error after measuring keeps the figures, and the verdict is still error.
	m := Build(RunInfo{Error: "engine: boom"}, run(func(sh *metrics.Shard) { sh.Add(metrics.TasksCreated, 1) }), nil)
	if m.Verdict != VerdictError || m.Error != "engine: boom" || m.Tasks.Created != 1 || m.ExitCode() != ExitRuntimeError {
		t.Errorf("measured, then an error: verdict %q error %q tasks %+v", m.Verdict, m.Error, m.Tasks)
	}
}

// On an external target the embedded server's counters and gauges are not measured: they
// are left out (named in not_measured), and thresholds over them have no data.
func TestExternalTargetNotMeasured(t *testing.T) {
	total := run(func(sh *metrics.Shard) { sh.Add(metrics.Polls, 3) })
	info := RunInfo{Target: "https://mcp.example.com/mcp", Thresholds: []scenarios.Threshold{
		{Expr: "orphaned_tasks == 0"}, {Expr: "retained_tasks.max < 100"}, {Expr: "in_flight.max < 100"}, {Expr: "polls > 0"},
	}}
	s := Build(info, total, nil)
	if _, ok := s.Counters["orphaned_tasks"]; ok {
		t.Error("orphaned_tasks reported for an external target")
	}
	if _, ok := s.Gauges["retained_tasks"]; ok {
		t.Error("retained_tasks reported for an external target")
	}
	if !slices.Contains(s.NotMeasured, "orphaned_tasks") || !slices.Contains(s.NotMeasured, "retained_tasks") || slices.Contains(s.NotMeasured, "in_flight") {
		t.Errorf("not_measured %v", s.NotMeasured)
	}
	for i, noData := range []bool{true, true, false, false} {
		if r := s.Thresholds[i]; r.NoData != noData || r.Pass == noData {
			t.Errorf("%s: %+v, want no_data %v", r.Expr, r, noData)
		}
	}
	if emb := Build(RunInfo{Target: "embedded"}, total, nil); emb.NotMeasured != nil || len(emb.Counters) != int(metrics.NumCounters) {
		t.Errorf("embedded: not_measured %v, %d counters", emb.NotMeasured, len(emb.Counters))
	}
}

// Placeholders are not numbers: what an external target cannot show is null, with a note,
// in the gates' evidence and in fleet.
func TestPlaceholdersAreNull(t *testing.T) {
	info := RunInfo{FaultsOn: true, DuplicateEffects: -1, SecondCreates: -1, EffectsAfterCancel: -1,
		Compat: &Compat{TaskParamsIgnored: -1, Supported: true}}
	total := run(func(sh *metrics.Shard) { sh.Add(metrics.CancelsSent, 1) })
	s := Build(info, total, nil)
	for _, c := range []struct {
		evidence map[string]any
		key      string
	}{
		{s.Gates.Hard.EvidenceMap(), "duplicate_effects"},
		{s.Gates.Recovery.EvidenceMap(), "second_creates"},
		{s.Gates.Cancellation.EvidenceMap(), "effects_after_cancel"},
		{s.Gates.Cancellation.EvidenceMap(), "cancel_latency_p50_ms"},
		{s.Gates.Compatibility.EvidenceMap(), "task_params_ignored"},
	} {
		if v, ok := c.evidence[c.key]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", c.key, v, ok)
		}
		notes, _ := c.evidence["notes"].(map[string]any)
		name := strings.TrimSuffix(strings.TrimSuffix(c.key, "_p50_ms"), "_p99_ms")
		if notes[name] == nil {
			t.Errorf("%s: no note saying why (notes %v)", c.key, notes)
		}
	}
	js, err := summaryJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"fleet": {
    "poll_amplification": null,
    "status_reads_per_task": null,`)) {
		t.Errorf("fleet without tasks is not null:\n%s", js)
	}
	var text bytes.Buffer
	if err := WriteText(&text, s, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "not checked: duplicate_effects (not observable on an external target") {
		t.Errorf("text does not say why duplicate_effects was not checked:\n%s", text.String())
	}
	// Read back, null stays no data.
	dir := t.TempDir()
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if amp, reads, _ := back.Fleet.Measured(); amp || reads {
		t.Errorf("fleet read back as measured: %+v", back.Fleet)
	}
}

// Tasks seen terminal whose result could not be read are an outcome of their own, on the
// recovery gate's reconciliation list, and a threshold metric.
func TestResultLost(t *testing.T) {
	total := run(func(sh *metrics.Shard) {
		sh.Add(metrics.TasksCreated, 4)
		sh.Add(metrics.TasksCompleted, 3)
		sh.Add(metrics.ResultsLost, 1)
	})
	sample := []map[string]string{{"task_id": "t-9", "reason": "result_lost"}}
	s := Build(RunInfo{FaultsOn: true, UnknownSample: sample,
		Thresholds: []scenarios.Threshold{{Expr: "tasks.result_lost == 0"}, {Expr: "tasks.result_lost_rate < 50%"}}}, total, nil)
	if s.Tasks.ResultLost != 1 {
		t.Errorf("tasks.result_lost %d", s.Tasks.ResultLost)
	}
	ev := s.Gates.Recovery.Evidence
	if ev.ReconciliationList["result_lost"] != 1 || !reflect.DeepEqual(ev.ReconciliationSample, sample) || !*ev.TasksAccounted {
		t.Errorf("recovery evidence %v", ev)
	}
	if r := s.Thresholds; r[0].Pass || r[0].Value != 1 || !r[1].Pass || r[1].Value != 25 {
		t.Errorf("thresholds %+v", r)
	}
	if !strings.Contains(string(summaryCSV(s)), "tasks.result_lost,count,1,") {
		t.Errorf("summary.csv:\n%s", summaryCSV(s))
	}
}

// Each gate's evidence agrees with the task counts: cancelled tasks whose own client sent
// no cancel were cancelled by someone else, and the gate says so.
func TestCancelledUnrequested(t *testing.T) {
	total := run(func(sh *metrics.Shard) {
		sh.Add(metrics.TasksCancelled, 11)
		sh.Add(metrics.CancelledUnrequested, 11)
	})
	g := Build(RunInfo{}, total, nil).Gates.Cancellation
	reason := g.Evidence.Reason
	if g.Evaluated || !strings.Contains(reason, "sent no tasks/cancel") || !strings.Contains(reason, "11 tasks cancelled were cancelled by someone else") {
		t.Errorf("reason %q", reason)
	}
	if g.Evidence.CancelledUnrequested != 11 || g.Evidence.CancelledByOwnCancel != 0 || g.Evidence.Finding == "" {
		t.Errorf("evidence %v", g.Evidence)
	}
}

// Gate evidence agrees with the task counts: tasks of unknown outcome in a run without
// faults are named by the recovery gate's reason, and a synchronous fallback run does not
// read as tasks completed without any created.
func TestEvidenceAgreesWithCounts(t *testing.T) {
	total := run(func(sh *metrics.Shard) {
		sh.Add(metrics.TasksCreated, 30)
		sh.Add(metrics.TasksCompleted, 10)
		sh.Add(metrics.TasksUnknown, 20)
	})
	g := Build(RunInfo{Unknown: map[string]int64{"token_revoked": 20}}, total, nil).Gates.Recovery
	if reason := g.Evidence.Reason; g.Evaluated || !strings.Contains(reason, "20 tasks are on the reconciliation list") {
		t.Errorf("recovery reason %q: want the 20 unknown tasks named", reason)
	}

	sync := run(func(sh *metrics.Shard) {
		sh.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, ms(1))
		sh.Add(metrics.TasksCompleted, 1)
	})
	s := Build(RunInfo{Compat: &Compat{Fallback: "sync", Taken: "sync: no tasks capability", TaskSupport: "forbidden"}}, sync, nil)
	var text bytes.Buffer
	if err := WriteText(&text, s, ""); err != nil {
		t.Fatal(err)
	}
	if out := text.String(); !strings.Contains(out, "tasks       none created: tools/call ran synchronously") || strings.Contains(out, "created 0, completed 1") {
		t.Errorf("sync fallback text:\n%s", out)
	}
}

// A cancel refused -32602 while its task was still working fails the cancellation gate
// (R26 allows that reply for a terminal task only; R27 wants a valid cancel carried out).
func TestCancelsRefusedFailTheGate(t *testing.T) {
	for _, refused := range []int64{0, 1} {
		total := run(func(sh *metrics.Shard) {
			sh.Add(metrics.CancelsSent, 2)
			sh.Add(metrics.CancelsLate, 2)
			sh.Add(metrics.CancelsRefused, refused)
		})
		g := Build(RunInfo{}, total, nil).Gates.Cancellation
		if !g.Evaluated || g.Pass != (refused == 0) || g.Evidence.CancelsRefused != refused {
			t.Errorf("%d refused: gate %+v", refused, g)
		}
	}
}

// The evidence is a task that ended without failing: a run in which every task failed, or
// lost its result, fails on it; a run a signal cut short before any task ended exits 130,
// not 99.
func TestEvidenceIsATaskThatDidNotFail(t *testing.T) {
	five := 5.0
	for _, tc := range []struct {
		name        string
		add         func(sh *metrics.Shard)
		interrupted bool
		exit        int
	}{
		{"every task failed", func(sh *metrics.Shard) { sh.Add(metrics.TasksFailed, 200) }, false, ExitGateFailed},
		{"every result lost", func(sh *metrics.Shard) { sh.Add(metrics.ResultsLost, 200) }, false, ExitGateFailed},
		{"every task expired (no one saw it end before its ttl)", func(sh *metrics.Shard) { sh.Add(metrics.TasksExpired, 20) }, false, ExitGateFailed},
		{"every task lost", func(sh *metrics.Shard) { sh.Add(metrics.TasksLost, 20) }, false, ExitGateFailed},
		{"one task completed", func(sh *metrics.Shard) { sh.Add(metrics.TasksCompleted, 1); sh.Add(metrics.TasksExpired, 20) }, false, 0},
		{"cut short before any task ended", func(sh *metrics.Shard) {}, true, ExitInterrupted},
	} {
		total := run(func(sh *metrics.Shard) {
			sh.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, ms(1))
			tc.add(sh)
		})
		s := Build(RunInfo{ErrorBudget: &five, Interrupted: tc.interrupted}, total, nil)
		if s.ExitCode() != tc.exit {
			t.Errorf("%s: exit %d (verdict %s), want %d", tc.name, s.ExitCode(), s.Verdict, tc.exit)
		}
	}
}

// A task lost before its ttl makes the recovery gate evaluated, and fail, even when no fault
// was injected and no session was lost (a 2026-07-28 target restarted without durable
// storage); expired tasks alone do not.
func TestLostTasksFailTheRecoveryGate(t *testing.T) {
	for _, tc := range []struct {
		name            string
		lost, expired   int64
		evaluated, pass bool
	}{
		{"lost", 3, 0, true, false},
		{"expired", 0, 3, false, true},
	} {
		total := run(func(sh *metrics.Shard) {
			sh.Add(metrics.TasksCreated, 10)
			sh.Add(metrics.TasksCompleted, 10-tc.lost-tc.expired)
			sh.Add(metrics.TasksLost, tc.lost)
			sh.Add(metrics.TasksExpired, tc.expired)
		})
		s := Build(RunInfo{}, total, nil)
		g := s.Gates.Recovery
		if g.Evaluated != tc.evaluated || g.Pass != tc.pass {
			t.Errorf("%s: recovery gate evaluated %v pass %v, want %v %v (%+v)", tc.name, g.Evaluated, g.Pass, tc.evaluated, tc.pass, g.Evidence)
		}
		if g.Evidence.TasksLost != tc.lost || g.Evidence.ReconciliationList["lost"] != tc.lost || s.Tasks.Lost != tc.lost {
			t.Errorf("%s: tasks_lost %d, listed %d, tasks.lost %d; want %d", tc.name, g.Evidence.TasksLost, g.Evidence.ReconciliationList["lost"], s.Tasks.Lost, tc.lost)
		}
	}
}
