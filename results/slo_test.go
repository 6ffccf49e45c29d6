package results

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// TestDefaultSLOFormulas: the limits follow the documented formulas of the advertised
// interval P, with their floors and ceiling; off, an override and a scenario threshold on
// the same metric each change one SLO only.
func TestDefaultSLOFormulas(t *testing.T) {
	known := func(p time.Duration) SLOInterval { return SLOInterval{P: p, Known: true, From: "advertised"} }
	exprs := func(slos []SLO) []string {
		var out []string
		for _, s := range slos {
			out = append(out, s.Th.Expr)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		cfg  scenarios.SLO
		p    SLOInterval
		ths  []scenarios.Threshold
		want []string
	}{
		{"250ms advice: the floors", scenarios.SLO{}, known(250 * time.Millisecond), nil,
			[]string{"detection_lag.p99 <= 1000ms", "latency_tasks_get.p99 <= 500ms", "tasks.unknown == 0", "requests.setup_errors_rate <= 1%"}},
		{"1s advice", scenarios.SLO{}, known(time.Second), nil,
			[]string{"detection_lag.p99 <= 2250ms", "latency_tasks_get.p99 <= 1000ms", "tasks.unknown == 0", "requests.setup_errors_rate <= 1%"}},
		{"10s advice: tasks/get capped", scenarios.SLO{}, known(10 * time.Second), nil,
			[]string{"detection_lag.p99 <= 20250ms", "latency_tasks_get.p99 <= 5000ms", "tasks.unknown == 0", "requests.setup_errors_rate <= 1%"}},
		{"not known yet: formulas only", scenarios.SLO{}, SLOInterval{}, nil,
			[]string{"", "", "tasks.unknown == 0", "requests.setup_errors_rate <= 1%"}},
		{"off and overrides", scenarios.SLO{DetectionLag: scenarios.SLOLimit{Off: true}, TasksGet: scenarios.SLOLimit{Value: "3s"},
			UnknownTasks: scenarios.SLOLimit{Value: "5"}, SetupErrors: scenarios.SLOLimit{Value: "2%"}}, known(time.Second), nil,
			[]string{"", "latency_tasks_get.p99 <= 3s", "tasks.unknown <= 5", "requests.setup_errors_rate <= 2%"}},
		{"superseded by the scenario", scenarios.SLO{}, known(time.Second), []scenarios.Threshold{{Expr: "latency_tasks_get.p99 < 50ms"}},
			[]string{"detection_lag.p99 <= 2250ms", "", "tasks.unknown == 0", "requests.setup_errors_rate <= 1%"}},
	} {
		got := DefaultSLOs(tc.cfg, tc.p, tc.ths)
		if g := exprs(got); strings.Join(g, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, g, tc.want)
		}
		for _, s := range got {
			if s.Th.Expr != "" {
				if _, err := ParseThreshold(s.Th.Expr); err != nil {
					t.Errorf("%s: %v", tc.name, err)
				}
			}
		}
	}
}

// TestFailingSLONamedInSummaryTextAndReport: a failing default SLO fails the run, is
// judged on the windows the tally kept before its limit was known, and is named, with
// what its limit came from, in summary.json, the text summary and the report's verdict.
func TestFailingSLONamedInSummaryTextAndReport(t *testing.T) {
	info, total, windows := fixture()
	info.Thresholds = nil // a run without thresholds of its own
	info.SLOs = DefaultSLOs(scenarios.SLO{DetectionLag: scenarios.SLOLimit{Value: "6ms"}},
		SLOInterval{P: time.Second, Known: true, From: "the pollInterval the target advertised"}, nil)
	wt := NewWindowTally(info.Thresholds, info.ErrorBudget).Defer(SLOMetrics...)
	for i := range windows {
		wt.Add(&windows[i])
	}
	info.Windows = wt
	s := Build(info, total, nil)
	if s.Verdict != VerdictFail {
		t.Fatalf("verdict %s, want fail", s.Verdict)
	}
	var lag, get *ThresholdResult
	for i, r := range s.Thresholds {
		switch {
		case r.Source == SourceSLO && strings.HasPrefix(r.Expr, "detection_lag.p99"):
			lag = &s.Thresholds[i]
		case r.Source == SourceSLO && strings.HasPrefix(r.Expr, "latency_tasks_get.p99"):
			get = &s.Thresholds[i]
		}
	}
	if lag == nil || lag.Expr != "detection_lag.p99 <= 6ms" || lag.Pass || lag.WindowsEvaluated != 1 || lag.WindowsFailed != 1 {
		t.Fatalf("detection lag SLO %+v, want detection_lag.p99 <= 6ms failing in its one window", lag)
	}
	if get == nil || !get.Pass || get.Note != "P = 1000ms, the pollInterval the target advertised" || get.WindowsEvaluated != 3 {
		t.Errorf("tasks/get SLO %+v, want a pass over 3 windows with its note", get)
	}
	var text bytes.Buffer
	if err := WriteText(&text, s, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL detection_lag.p99 <= 6ms: 8.003ms (default SLO: slo.detection_lag in the scenario)",
		"pass requests.setup_errors_rate <= 1%: no data (on_no_data: pass) (default SLO)", "FAIL tasks.unknown == 0: 2 (default SLO)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text summary lacks %q:\n%s", want, text.String())
		}
	}
	dir := t.TempDir()
	writeRun(t, dir, s, info.StartedAt, windows, nil, 0)
	page, err := RenderReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "default SLO detection_lag.p99 &lt;= 6ms failed"; !strings.Contains(string(page), want) {
		t.Errorf("report lacks %q in its verdict", want)
	}
}

// TestMergeJudgesTheShardsSLOs: a merge judges the whole by the default SLOs its shards
// were judged by, limits and notes as they were, over the merged run and its windows.
func TestMergeJudgesTheShardsSLOs(t *testing.T) {
	root := t.TempDir()
	a, b, out := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "out")
	writeShard(t, a, 0, 2, t0, 0, []shardWindow{{time.Second, 10, 5}, {2 * time.Second, 10, 5}})
	writeShard(t, b, 1, 2, t0, 0, []shardWindow{{time.Second, 10, 5}, {2 * time.Second, 10, 300}})
	slo := ThresholdResult{Expr: "latency_tasks_get.p99 <= 100ms", Source: SourceSLO, Note: "P = 100ms, the pollInterval the target advertised"}
	for _, dir := range []string{a, b} {
		s, err := ReadSummary(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Thresholds = append(s.Thresholds, slo)
		if err := WriteSummary(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	m, err := MergeRuns([]string{a, b}, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got *ThresholdResult
	for i := range m.Thresholds {
		if m.Thresholds[i].Source == SourceSLO {
			got = &m.Thresholds[i]
		}
	}
	if got == nil || got.Expr != slo.Expr || got.Note != slo.Note || got.Pass || got.WindowsEvaluated != 2 || got.WindowsFailed != 1 {
		t.Errorf("merged SLO %+v, want %q failing in 1 of 2 windows, its note kept", got, slo.Expr)
	}
	if m.Verdict != VerdictFail {
		t.Errorf("merged verdict %s, want fail", m.Verdict)
	}
}
