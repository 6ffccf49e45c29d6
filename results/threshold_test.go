package results

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		expr   string
		metric string
		op     Op
		limit  float64
		unit   string
	}{
		// every operator
		{"latency_tasks_get.p99 < 200ms", "latency_tasks_get.p99", OpLT, 200, "ms"},
		{"latency_tasks_get.p99 <= 200ms", "latency_tasks_get.p99", OpLE, 200, "ms"},
		{"latency_tasks_get.p99 > 200ms", "latency_tasks_get.p99", OpGT, 200, "ms"},
		{"latency_tasks_get.p99 >= 200ms", "latency_tasks_get.p99", OpGE, 200, "ms"},
		{"latency_tasks_get.p99 == 200ms", "latency_tasks_get.p99", OpEQ, 200, "ms"},
		{"latency_tasks_get.p99 != 200ms", "latency_tasks_get.p99", OpNE, 200, "ms"},
		{"  latency_tasks_get.p99<200ms  ", "latency_tasks_get.p99", OpLT, 200, "ms"},
		// every duration unit, converted to ms
		{"task_e2e.p50 < 1500us", "task_e2e.p50", OpLT, 1.5, "ms"},
		{"task_e2e.p50 < 1500µs", "task_e2e.p50", OpLT, 1.5, "ms"},
		{"task_e2e.p50 < 1.1s", "task_e2e.p50", OpLT, 1100, "ms"},
		{"task_e2e.p50 < 2m", "task_e2e.p50", OpLT, 120_000, "ms"},
		{"task_e2e.p50 < 2 s", "task_e2e.p50", OpLT, 2000, "ms"},
		{"task_e2e.p50 < 1e3ms", "task_e2e.p50", OpLT, 1000, "ms"},
		{"task_e2e.p50 > 0", "task_e2e.p50", OpGT, 0, "ms"},
		// every statistic
		{"detection_lag.min >= 0ms", "detection_lag.min", OpGE, 0, "ms"},
		{"detection_lag.p90 < 1s", "detection_lag.p90", OpLT, 1000, "ms"},
		{"detection_lag.p999 < 1s", "detection_lag.p999", OpLT, 1000, "ms"},
		{"detection_lag.max < 1s", "detection_lag.max", OpLT, 1000, "ms"},
		{"detection_lag.mean < 1s", "detection_lag.mean", OpLT, 1000, "ms"},
		{"detection_lag.count > 10", "detection_lag.count", OpGT, 10, "count"},
		// histograms in other units
		{"polls_per_task.p99 <= 5", "polls_per_task.p99", OpLE, 5, "count"},
		{"poll_amplification.p50 <= 1.2", "poll_amplification.p50", OpLE, 1.2, "ratio"},
		// fleet figures
		{"poll_amplification.fleet < 1.5", "poll_amplification.fleet", OpLT, 1.5, "ratio"},
		{"status_reads_per_task <= 10", "status_reads_per_task", OpLE, 10, "ratio"},
		{"polls_per_second < 5000", "polls_per_second", OpLT, 5000, "per_s"},
		// tasks, rates, requests
		{"tasks.failed == 0", "tasks.failed", OpEQ, 0, "count"},
		{"tasks.created >= 100", "tasks.created", OpGE, 100, "count"},
		{"tasks.failed_rate < 1%", "tasks.failed_rate", OpLT, 1, "%"},
		{"tasks.dropped_rate < 0.5 %", "tasks.dropped_rate", OpLT, 0.5, "%"},
		{"requests.errors_rate < 2%", "requests.errors_rate", OpLT, 2, "%"},
		{"requests.errors < 10", "requests.errors", OpLT, 10, "count"},
		{"requests.count > 10", "requests.count", OpGT, 10, "count"},
		// counters and gauges
		{"invalid_transitions == 0", "invalid_transitions", OpEQ, 0, "count"},
		{"backpressure_signals < 100", "backpressure_signals", OpLT, 100, "count"},
		{"retained_tasks.max < 1e4", "retained_tasks.max", OpLT, 10_000, "count"},
		{"retained_tasks.last <= -1", "retained_tasks.last", OpLE, -1, "count"},
		{"task_e2e.max < 1e303ms", "task_e2e.max", OpLT, 1e303, "ms"},
	}
	for _, tc := range tests {
		got, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", tc.expr, err)
			continue
		}
		if got.Metric != tc.metric || got.Op != tc.op || got.Limit != tc.limit || got.Unit != tc.unit {
			t.Errorf("ParseThreshold(%q) = %s %s %v %s, want %s %s %v %s", tc.expr,
				got.Metric, got.Op, got.Limit, got.Unit, tc.metric, tc.op, tc.limit, tc.unit)
		}
		if got.Expr != strings.TrimSpace(tc.expr) {
			t.Errorf("ParseThreshold(%q).Expr = %q", tc.expr, got.Expr)
		}
	}
}

func TestParseThresholdErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"", "empty expression"},
		{"latency_tasks_get.p99 200ms", "no comparison operator (want one of < <= > >= == !=)"},
		{"latency_tasks_get.p99 = 200ms", `"=" is not an operator: write ==`},
		{"latency_tasks_get.p99 ! 200ms", `"!" is not an operator: write !=`},
		{"< 200ms", "no metric before <"},
		{"latency_tasks_get.p99 <=", "no number after <="},
		{"latency_tasks_get.p99 < 200ms < 300ms", "more than one comparison operator"},
		{"latency_tasks_gett.p99 < 200ms", `unknown metric "latency_tasks_gett.p99" (did you mean latency_tasks_get, latency_tasks_list, latency_tasks_result?)`},
		{"latncy_tasks_get.p99 < 200ms", `(did you mean latency_tasks_get`},
		{"wibble < 3", `unknown metric "wibble" (want a histogram statistic like latency_tasks_get.p99`},
		{"latency_tasks_get.p95 < 200ms", `unknown statistic "p95" of latency_tasks_get (want one of min, p50, p90, p99, p999, max, mean, count)`},
		{"poll_amplification.flet < 2", `unknown statistic "flet" of poll_amplification (want one of min, p50, p90, p99, p999, max, mean, count, fleet)`},
		{"latency_tasks_get < 200ms", "latency_tasks_get is a histogram: name a statistic, like latency_tasks_get.p99"},
		{"latency_tasks_get.p99 < 200", "latency_tasks_get.p99 is a duration: the number needs a unit (us, ms, s or m), like 200ms"},
		{"latency_tasks_get.p99 < 200h", `bad unit "h" for latency_tasks_get.p99, a duration: want us, ms, s or m`},
		{"latency_tasks_get.p99 < 2%", `bad unit "%" for latency_tasks_get.p99, a duration`},
		{"latency_tasks_get.p99 < fast", `bad number "fast"`},
		{"latency_tasks_get.p99 < .", `bad number "."`},
		{"latency_tasks_get.p99 < NaN", `bad number "NaN"`},
		{"latency_tasks_get.p99 < 1e999ms", `number "1e999" is out of range`},
		{"latency_tasks_get.p99 < 1e306m", `number "1e306" is out of range`},
		{"tasks.failed_rate < 1", "tasks.failed_rate is a percentage: write the number with %, like 1%"},
		{"tasks.failed_rate < 1ms", `bad unit "ms" for tasks.failed_rate, a percentage: want %`},
		{"tasks.failed < 1%", `bad unit "%" for tasks.failed, a count: write a plain number`},
		{"poll_amplification.fleet < 1.5x", `bad unit "x" for poll_amplification.fleet, a ratio`},
		{"polls_per_second < 5/s", `bad unit "/s" for polls_per_second, a rate per second`},
		{"tasks.faild_rate < 1%", `unknown metric "tasks.faild_rate" (did you mean tasks.failed_rate`},
		{"tasks.vanished_everywhere < 1", `unknown metric "tasks.vanished_everywhere" (want tasks.<outcome> or tasks.<outcome>_rate`},
		{"requests.latency < 1", `unknown metric "requests.latency" (want requests.count, requests.errors, requests.errors_rate, requests.setup_errors or requests.setup_errors_rate)`},
		{"polls.count < 1", "polls is a counter: write it without .count"},
		{"retained_tasks < 10", "retained_tasks is a gauge: write retained_tasks.last (level at the end) or retained_tasks.max (highest level)"},
	}
	for _, tc := range tests {
		_, err := ParseThreshold(tc.expr)
		if err == nil {
			t.Errorf("ParseThreshold(%q) succeeded, want %q", tc.expr, tc.want)
			continue
		}
		prefix := "threshold " + `"` + tc.expr + `": `
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.want) {
			t.Errorf("ParseThreshold(%q):\n got %s\nwant %s...%s...", tc.expr, msg, prefix, tc.want)
		}
	}
}

func TestOpHolds(t *testing.T) {
	for _, tc := range []struct {
		op            Op
		less, eq, gtr bool // holds for 1 op 2, 2 op 2, 3 op 2
	}{
		{OpLT, true, false, false},
		{OpLE, true, true, false},
		{OpGT, false, false, true},
		{OpGE, false, true, true},
		{OpEQ, false, true, false},
		{OpNE, true, false, true},
	} {
		if tc.op.holds(1, 2) != tc.less || tc.op.holds(2, 2) != tc.eq || tc.op.holds(3, 2) != tc.gtr {
			t.Errorf("%s: holds(1,2)=%v holds(2,2)=%v holds(3,2)=%v", tc.op,
				tc.op.holds(1, 2), tc.op.holds(2, 2), tc.op.holds(3, 2))
		}
	}
	if got := Op(0).String(); got != "op(0)" {
		t.Errorf("Op(0).String() = %q", got)
	}
}

// Thresholds evaluated over the fixture: the whole-run value decides, windows are reported.
func TestEvalThreshold(t *testing.T) {
	info, total, windows := fixture()
	s := Build(info, total, windows)
	tests := []struct {
		expr             string
		value            float64
		pass, noData     bool
		evaluated, wfail int
		worst            int
		worstValue       float64
	}{
		// failed 1 of 8 created = 12.5%; windows, of the tasks that ended in each: none ended
		// (skipped), 1 of 4, 0 of the last window's
		{"tasks.failed_rate < 10%", 12.5, false, false, 2, 1, 1, 25},
		{"tasks.failed_rate >= 10%", 12.5, true, false, 2, 1, 2, 0},
		// dropped share of arrivals: 2 / (8 + 2); windows 0/4, 0/4, 2/2
		{"tasks.dropped_rate == 20%", 20, true, false, 3, 3, 2, 100},
		// counts are totals: no window evaluation
		{"tasks.completed == 3", 3, true, false, 0, 0, -1, 0},
		{"tasks.result_lost == 1", 1, true, false, 0, 0, -1, 0},
		{"tasks.result_lost_rate < 10%", 12.5, false, false, 2, 1, 1, 25},
		{"tasks.unknown != 2", 2, false, false, 0, 0, -1, 0},
		{"invalid_transitions == 0", 0, true, false, 0, 0, -1, 0},
		{"requests.count == 35", 35, true, false, 0, 0, -1, 0},
		// the 429 is backpressure and the late cancel's -32602 is expected: not errors
		{"requests.errors == 2", 2, true, false, 0, 0, -1, 0},
		{"latency_tasks_get.count == 19", 19, true, false, 0, 0, -1, 0},
		// 2 errors of 35 requests; windows 0/10, 1/20, 1/5 (backpressure and expected
		// outcomes are requests, not errors, in every window too)
		{"requests.errors_rate < 5%", 5.714, false, false, 3, 2, 2, 20},
		// tasks/get latencies: window 1 holds 40..58 ms
		{"latency_tasks_get.max < 50ms", 58.015, false, false, 3, 1, 1, 58.015},
		{"latency_tasks_get.min > 4ms", 3, false, false, 3, 1, 1, 3},
		{"latency_tasks_get.p50 < 1s", 40.031, true, false, 3, 0, 1, 46.015},
		// cancel latency: one value, in window 2
		{"cancel_latency.p99 == 30ms", 30.015, false, false, 1, 1, 2, 30.015},
		// no initialize was sent: no data fails, whatever the comparison
		{"latency_initialize.p99 < 1ms", 0, false, true, 0, 0, -1, 0},
		{"latency_initialize.p99 > 1ms", 0, false, true, 0, 0, -1, 0},
		{"cleanup_lag.p99 < 2s", 0, false, true, 0, 0, -1, 0},
		{"poll_amplification.fleet <= 1.5", 1.75, false, false, 1, 1, 1, 1.75},
		{"poll_amplification.p50 <= 1.5", 1.5, true, false, 1, 0, 1, 1.5},
		{"status_reads_per_task < 3", 2.375, true, false, 2, 1, 1, 3},
		{"polls_per_second > 1", 6.333, true, false, 3, 1, 2, 1},
		// the level 8 is held at the start of window 2 too
		{"retained_tasks.max < 8", 8, false, false, 3, 2, 1, 8},
		{"retained_tasks.last == 6", 6, true, false, 3, 2, 0, 4},
	}
	for _, tc := range tests {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := th.Eval(s, windows)
		if r.Value != tc.value || r.Pass != tc.pass || r.NoData != tc.noData || r.WindowsEvaluated != tc.evaluated ||
			r.WindowsFailed != tc.wfail || r.WorstWindow != tc.worst || r.WorstValue != tc.worstValue {
			t.Errorf("%s:\n got value %v pass %v no_data %v windows %d failed %d worst %d (%v)\nwant value %v pass %v no_data %v windows %d failed %d worst %d (%v)",
				tc.expr, r.Value, r.Pass, r.NoData, r.WindowsEvaluated, r.WindowsFailed, r.WorstWindow, r.WorstValue,
				tc.value, tc.pass, tc.noData, tc.evaluated, tc.wfail, tc.worst, tc.worstValue)
		}
		if r.Expr != tc.expr || r.Unit != th.Unit {
			t.Errorf("%s: result expr %q unit %q", tc.expr, r.Expr, r.Unit)
		}
	}
}

// A threshold over a saved summary gives the whole-run verdict Build gave.
func TestEvalFromReadSummary(t *testing.T) {
	info, total, windows := fixture()
	s := Build(info, total, windows)
	dir := t.TempDir()
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	r, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range info.Thresholds {
		p, _ := ParseThreshold(th.Expr)
		a, b := p.Eval(s, nil), p.Eval(r, nil)
		if a != b {
			t.Errorf("%s: fresh %+v, read back %+v", th.Expr, a, b)
		}
	}
}

func TestCheckThresholds(t *testing.T) {
	src := `name: t
duration: 10s
workload:
  clients: 1
thresholds:
  - "latency_tasks_get.p99 < 200ms"
  - "latency_tasks_get.p99 < 200"
  - "tasks.failed_rate < 1%"
  - "nope < 1"
`
	s, err := scenarios.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckThresholds(s)
	if err == nil {
		t.Fatal("CheckThresholds passed two bad expressions")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "t.yaml:7:5: thresholds[1]: threshold \"latency_tasks_get.p99 < 200\": ") ||
		!strings.HasPrefix(lines[1], "t.yaml:9:5: thresholds[3]: threshold \"nope < 1\": unknown metric") {
		t.Errorf("CheckThresholds:\n%v", err)
	}
	code := &scenarios.Scenario{Thresholds: []scenarios.Threshold{{Expr: "x < 1"}}}
	if err := CheckThresholds(code); err == nil || !strings.HasPrefix(err.Error(), "thresholds[0]: threshold") {
		t.Errorf("CheckThresholds of a scenario built in code: %v", err)
	}
	if err := CheckThresholds(&scenarios.Scenario{}); err != nil {
		t.Errorf("no thresholds: %v", err)
	}
}

// A bad expression that reaches Build fails the run with its parse error.
func TestBuildBadThreshold(t *testing.T) {
	s := Build(RunInfo{Thresholds: []scenarios.Threshold{{Expr: "tasks.failed_rate < 1"}}}, nil, nil)
	r := s.Thresholds[0]
	if r.Pass || !strings.Contains(r.Error, "percentage") || r.WorstWindow != -1 || s.Verdict != VerdictFail {
		t.Errorf("bad threshold: %+v, verdict %s", r, s.Verdict)
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, seed := range []string{
		"latency_tasks_get.p99 < 200ms", "tasks.failed_rate < 1%", "poll_amplification.fleet <= 1.2",
		"retained_tasks.max != -1e3", "task_e2e.p50 >= 1.5s", "requests.errors_rate==0", "x", "<",
		"a.b.c < 1", "tasks. < 1e", "latency_tasks_get.p99 < 1e-3us", "polls == +.5", "µs < µs",
	} {
		f.Add(seed)
	}
	empty := &Summary{}
	var win metrics.Window
	win.End = win.Start.Add(time.Second)
	f.Fuzz(func(t *testing.T, expr string) {
		th, err := ParseThreshold(expr)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "threshold ") {
				t.Errorf("error %q does not name the expression", err)
			}
			return
		}
		if math.IsNaN(th.Limit) || math.IsInf(th.Limit, 0) || th.Op < OpLT || th.Op > OpNE || th.Unit == "" {
			t.Errorf("ParseThreshold(%q) = %+v", expr, th)
		}
		again, err := ParseThreshold(th.Expr)
		if err != nil || again.Limit != th.Limit || again.Metric != th.Metric {
			t.Errorf("re-parse of %q: %+v, %v", th.Expr, again, err)
		}
		_ = th.Eval(empty, []metrics.Window{win})
	})
}

// A WindowTally fed the windows one by one gives Build the same threshold results as the
// windows themselves.
func TestWindowTallyMatchesWindows(t *testing.T) {
	info, total, windows := fixture()
	want := Build(info, total, windows).Thresholds
	info.Windows = NewWindowTally(info.Thresholds, info.ErrorBudget)
	for i := range windows {
		info.Windows.Add(&windows[i])
	}
	got := Build(info, total, nil).Thresholds
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with a tally:\n%+v\nwith the windows:\n%+v", got, want)
	}
	evaluated := 0
	for _, r := range got {
		evaluated += r.WindowsEvaluated
	}
	if evaluated == 0 {
		t.Fatal("the fixture's thresholds evaluated no window: the comparison proves nothing")
	}
}

// TestWithoutServerSide: against an external target, a threshold over a metric only the
// embedded server records is not judged window by window (its windows read a 0 nobody
// measured); thresholds over the load generator's own metrics are.
func TestWithoutServerSide(t *testing.T) {
	ths := []scenarios.Threshold{{Expr: "retained_tasks.max < 1"}, {Expr: "orphaned_tasks < 1"},
		{Expr: "latency_tasks_get.p99 < 1s"}, {Expr: "in_flight.max < 1"}}
	for i, want := range []bool{true, true, false, false} {
		th, err := ParseThreshold(ths[i].Expr)
		if err != nil || th.ServerSide() != want {
			t.Errorf("%s: ServerSide() = %v, %v; want %v", ths[i].Expr, th.ServerSide(), err, want)
		}
	}
	wt := NewWindowTally(ths, nil).WithoutServerSide()
	var judged []string
	for _, e := range wt.ths {
		if e.ok {
			judged = append(judged, e.th.Expr)
		}
	}
	if got := strings.Join(judged, ", "); got != "latency_tasks_get.p99 < 1s, in_flight.max < 1" {
		t.Errorf("judged per window: %s", got)
	}
}

// TestWindowRateIsAShare: in a window, tasks.<outcome>_rate is the outcome's share of the
// tasks that ended in it; a window with 7 failures and 1 create reads 87.5%, not 700%.
func TestWindowRateIsAShare(t *testing.T) {
	th, err := ParseThreshold("tasks.failed_rate < 1%")
	if err != nil {
		t.Fatal(err)
	}
	var w metrics.Window
	w.Counters[metrics.TasksCreated] = 1
	w.Counters[metrics.TasksFailed] = 7
	w.Counters[metrics.TasksCompleted] = 1
	if v, failed := th.FailsIn(&w); v != 87.5 || !failed {
		t.Errorf("window value %v (failed %v), want 87.5", v, failed)
	}
}

// TestWindowTallyWorst: the progress line's worst threshold is the one failed in the most
// windows, with its count and its worst value; none has failed: "".
func TestWindowTallyWorst(t *testing.T) {
	ths := []scenarios.Threshold{{Expr: "tasks.created >= 0"}, {Expr: "latency_tasks_get.p99 <= 10ms"}, {Expr: "latency_tasks_get.p50 <= 1ms"}}
	wt := NewWindowTally(ths, nil)
	if got := wt.Worst(); got != "" {
		t.Errorf("before any window: %q, want none", got)
	}
	window := func(us ...int64) *metrics.Window {
		w := &metrics.Window{}
		h := metrics.NewHistogram(metrics.LatencyTasksGet)
		for _, v := range us {
			_ = h.RecordValue(v)
		}
		w.Hists[metrics.LatencyTasksGet] = h
		w.Requests[mcp.OpTasksGet][metrics.OutcomeOK] = int64(len(us))
		return w
	}
	wt.Add(window(500, 500, 500))    // both pass
	wt.Add(window(2000, 2000, 2000)) // p50 fails, p99 passes
	wt.Add(window(2000, 20000))      // both fail: p50 in 2 windows, p99 in 1
	if got, want := wt.Worst(), "latency_tasks_get.p50 <= 1ms: failed 2 of 3 windows, worst 2"; !strings.HasPrefix(got, want) {
		t.Errorf("Worst() = %q, want it to start %q", got, want)
	}
}
