package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/metrics"
)

// Tests of what report.html says, from summaries built for each case: the verdict and its
// reason, the headline figures, gates, thresholds and evidence tables.

// pageOf builds the page of s as summary.json would read back, without the keys drop (as a
// summary of an older run lacks them).
func pageOf(t *testing.T, s *Summary, drop ...string) *reportPage {
	t.Helper()
	b, err := summaryJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range drop {
		delete(keys, k)
	}
	if b, err = json.Marshal(keys); err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return buildPage(&back, nil, nil, nil)
}

// passingSummary is the fixture run with its failing thresholds dropped: a pass.
func passingSummary() *Summary {
	info, total, windows := fixture()
	info.Thresholds = info.Thresholds[:1]
	return Build(info, total, windows)
}

func TestReportVerdict(t *testing.T) {
	for _, c := range []struct {
		name         string
		edit         func(s *Summary)
		word, reason string
		notes        int
	}{
		{"pass", func(s *Summary) {}, "PASS", "the 3 evaluated gates passed; the 3 thresholds passed", 0},
		{"no threshold", func(s *Summary) { s.Thresholds = nil }, "PASS", "the 3 evaluated gates passed; no threshold was set", 0},
		{"interrupted", func(s *Summary) { s.Interrupted = true }, "INTERRUPTED", "interrupted by a signal after 3 s", 0},
		{"not trustworthy", func(s *Summary) { s.Trustworthy, s.TrustNote = false, "schedule_lag p99 50ms exceeds 10%" },
			"NOT TRUSTWORTHY", "gates and thresholds passed, but schedule_lag p99 50ms exceeds 10%", 0},
		{"threshold", func(s *Summary) {
			s.Thresholds[0].Pass, s.Verdict = false, VerdictFail
		}, "FAIL", "threshold latency_tasks_get.p99 < 200ms failed: value 58.015 ms", 0},
		{"gate", func(s *Summary) {
			s.Gates.Hard.Pass, s.Gates.Hard.Evidence.DuplicateEffects, s.Verdict = false, knownCount(2), VerdictFail
		}, "FAIL", "hard gate failed: duplicate_effects 2", 0},
		{"untrustworthy failure", func(s *Summary) {
			s.Thresholds[0].Pass, s.Verdict = false, VerdictFail
			s.Trustworthy, s.Interrupted, s.Aborted = false, true, "latency_tasks_get.p99 < 200ms failed in window 2"
		}, "FAIL", "threshold latency_tasks_get.p99 < 200ms failed", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := passingSummary()
			c.edit(s)
			v := pageOf(t, s).Verdict
			if v.Word != c.word || !strings.HasPrefix(v.Reason, c.reason) || len(v.Notes) != c.notes {
				t.Errorf("verdict %s: %q, notes %q; want %s: %q..., %d notes", v.Word, v.Reason, v.Notes, c.word, c.reason, c.notes)
			}
		})
	}
}

// TestReportVerdictLists checks that every failure is named: the first as the reason, the
// others under it.
func TestReportVerdictLists(t *testing.T) {
	info, total, windows := fixture()
	v := pageOf(t, Build(info, total, windows)).Verdict
	if v.Word != "FAIL" || !strings.HasPrefix(v.Reason, "threshold task_e2e.p99 < 2s failed: value 2101.247 ms; 1 of 2 windows failed; worst 2101.247 ms in window 2") {
		t.Errorf("reason %q", v.Reason)
	}
	if len(v.More) != 2 || !strings.HasPrefix(v.More[0], "threshold tasks.failed_rate < 10% failed") {
		t.Errorf("more %q, want the two other failing thresholds", v.More)
	}
	if v.Tally != "gates: 3 passed, 3 not evaluated; thresholds: 3 of 8 failed (1 without data, allowed)" {
		t.Errorf("tally %q", v.Tally)
	}
}

// TestReportHeadlineNoData checks that a figure with nothing behind it says "no data",
// never 0, and that a failing threshold marks the figure it reads.
func TestReportHeadlineNoData(t *testing.T) {
	empty := Build(RunInfo{Scenario: "empty"}, nil, nil)
	empty.Thresholds = []ThresholdResult{{Expr: "task_e2e.p99 < 1s", NoData: true, Unit: "ms", WorstWindow: -1}}
	p := pageOf(t, empty)
	for _, f := range p.Figures {
		want := "nodata"
		if f.ID == "fig-backpressure" {
			want = "" // the counter exists: 0 signals is a figure
		}
		if f.ID == "fig-e2e" {
			want = "fail" // no data, and a threshold failed on it
		}
		if f.Class != want || (f.Class != "" && f.Value != "no data") {
			t.Errorf("%s: %q class %q, want class %q", f.ID, f.Value, f.Class, want)
		}
	}

	info, total, windows := fixture()
	p = pageOf(t, Build(info, total, windows))
	got := map[string]string{}
	for _, f := range p.Figures {
		got[f.ID] = f.Class + " " + f.Value + " " + f.Unit
	}
	for id, want := range map[string]string{
		"fig-tasks":        " 2.67 tasks/s",
		"fig-errors":       "warn 2 errors",        // the 429 is backpressure, the late cancel expected
		"fig-polls":        "fail 3.5 polls, mean", // poll_amplification.fleet <= 1.5 failed
		"fig-detection":    " 8 ms",
		"fig-e2e":          "fail 2,101 ms", // task_e2e.p99 < 2s failed
		"fig-backpressure": " 1 signals",
		"fig-unknown":      "warn 3 tasks", // the fixture's unknown tasks and lost result
	} {
		if got[id] != want {
			t.Errorf("%s: %q, want %q", id, got[id], want)
		}
	}
}

// TestReportGates checks that a gate not evaluated is one line saying why, and that a
// failing gate names its failing figures and shows its samples as tables.
func TestReportGates(t *testing.T) {
	info, total, windows := fixture()
	info.Security = &Security{Probes: true, Leaks: map[string]int64{"get": 2},
		LeakSample: []map[string]any{{"kind": "get", "task": "t-1", "detail": "answered get"}}}
	p := pageOf(t, Build(info, total, windows))
	byName := map[string]gateRow{}
	for _, g := range p.Gates {
		byName[g.Name] = g
	}
	if g := byName[GateCompatibility]; g.Class != "na" || g.Why != "not evaluated: no capability manifest: the target's tasks capability was not compared" {
		t.Errorf("compatibility: %s %q", g.Class, g.Why)
	}
	if g := byName[GateCompatibility]; !g.Evidence.Empty() {
		t.Errorf("compatibility has evidence beyond its reason: %+v", g.Evidence)
	}
	if g := byName[GateCancellation]; g.Class != "pass" {
		t.Errorf("cancellation: %s %q, want an evaluated pass (a cancel was sent)", g.Class, g.Why)
	}
	hard := byName[GateHard]
	if hard.Class != "fail" || hard.Why != "cross_tenant_leaks 2" {
		t.Fatalf("hard: %s %q", hard.Class, hard.Why)
	}
	var sample *grid
	for i, g := range hard.Evidence.Tables {
		if g.Title == "leak_sample" {
			sample = &hard.Evidence.Tables[i]
		}
	}
	if sample == nil || strings.Join(sample.Cols, ",") != "kind,task,detail" || len(sample.Rows) != 1 ||
		strings.Join(sample.Rows[0], ",") != "get,t-1,answered get" {
		t.Errorf("leak_sample: %+v", sample)
	}
	for _, f := range hard.Evidence.Facts {
		if (f.K == "cross_tenant_leaks") != (f.Class == "fail") {
			t.Errorf("fact %s marked %q", f.K, f.Class)
		}
	}
}

func TestReportThresholdRows(t *testing.T) {
	for _, c := range []struct {
		result               string // as summary.json holds it
		value, status, class string
	}{
		{`{"expr": "a.p99 < 1s", "unit": "ms", "value": 0, "pass": false, "no_data": true}`, "no data", "FAIL", "fail"},
		{`{"expr": "a.p99 < 1s", "unit": "ms", "value": null, "pass": false}`, "no data", "FAIL", "fail"},
		{`{"expr": "a.p99 < 1s", "unit": "ms", "value": null, "pass": true, "no_data": true}`, "no data", "no data (allowed)", "na"},
		{`{"expr": "a.p99 < 1s", "unit": "ms", "value": 1500, "pass": false, "windows_evaluated": 3, "windows_failed": 2,
			"worst_window": 1, "worst_value": 1800}`, "1500 ms", "FAIL", "fail"},
		{`{"expr": "bad", "value": 0, "pass": false, "error": "threshold \"bad\": no operator"}`, "-", "FAIL", "fail"},
	} {
		var r ThresholdResult
		if err := json.Unmarshal([]byte(c.result), &r); err != nil {
			t.Fatal(err)
		}
		row := thresholdRowOf(r, nil)
		if row.Value != c.value || row.Status != c.status || row.Class != c.class {
			t.Errorf("%s: %q %q %q, want %q %q %q", c.result, row.Value, row.Status, row.Class, c.value, c.status, c.class)
		}
	}
}

func TestReportEvidenceView(t *testing.T) {
	e := viewObject(map[string]any{
		"count":     float64(3),
		"none":      nil,
		"empty":     []any{},
		"ids":       []any{"a", "b"},
		"by_kind":   map[string]any{"get": float64(1), "list": float64(2)},
		"per":       map[string]any{"x": map[string]any{"ok": float64(1)}, "y": map[string]any{"ok": float64(2), "err": float64(1)}},
		"nested":    map[string]any{"inner": map[string]any{"deep": map[string]any{"v": true}}, "w": "s"},
		"headers":   map[string]any{"Authorization": "Bearer x"},
		"sample":    []any{map[string]any{"message": "m", "task": "t", "kind": "k", "extra": []any{"p", "q"}}},
		"mixed_arr": []any{float64(1), map[string]any{"a": float64(1)}},
	}, nil)
	var facts []string
	for _, f := range e.Facts {
		facts = append(facts, f.K+"="+f.V)
	}
	if got, want := strings.Join(facts, "; "), `count=3; empty=none; headers=(not shown); ids=a, b; mixed_arr=1, {"a":1}; nested.w=s; none=not recorded`; got != want {
		t.Errorf("facts:\n got %s\nwant %s", got, want)
	}
	var tables []string
	for _, g := range e.Tables {
		var rows []string
		for _, r := range g.Rows {
			rows = append(rows, strings.Join(r, ","))
		}
		tables = append(tables, g.Title+"["+strings.Join(g.Cols, ",")+"]"+strings.Join(rows, "/"))
	}
	if got, want := strings.Join(tables, "; "), "by_kind[get,list]1,2; nested.inner[,v]deep,true; per[,err,ok]x,,1/y,1,2; sample[kind,task,extra,message]k,t,p, q,m"; got != want {
		t.Errorf("tables:\n got %s\nwant %s", got, want)
	}
}

// TestReportOlderAndNullSummary renders summaries that lack the fields newer runs write,
// or hold null where a figure was not measured: the parts say "not recorded" or
// "no data", and nothing fails.
func TestReportOlderAndNullSummary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(reportRunDir, SummaryJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"input", "errors", "counters", "gauges", "clamped", "runtime", "client"} {
		delete(raw, k)
	}
	delete(raw["tasks"].(map[string]any), "result_lost")
	delete(raw["tasks"].(map[string]any), "lost") // added later than the others
	raw["manifest"], raw["fleet"] = nil, nil
	raw["metrics"].(map[string]any)["detection_lag"] = nil
	raw["gates"].(map[string]any)["recovery"].(map[string]any)["evidence"] = nil
	raw["thresholds"].([]any)[0].(map[string]any)["value"] = nil
	b, err = json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	page := renderSummaryOnly(t, b)
	o := outline(page)
	for _, want := range []string{
		"figure fig-detection nodata: no data",
		"figure fig-backpressure nodata: no data", // no counters at all
		"section manifest\n  h2 Capability manifest\n  note not recorded",
		"table outcomes-table:  | created | completed | failed | cancelled | expired | unknown | dropped",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("outline lacks %q:\n%s", want, o)
		}
	}
	for _, absent := range []string{"section input", "section errors", "result_lost"} {
		if strings.Contains(o, absent) {
			t.Errorf("outline has %q:\n%s", absent, o)
		}
	}
	if !bytes.Contains(page, []byte(`<td>detection_lag</td><td colspan="8" class="na">not recorded`)) {
		t.Error("a null histogram is not shown as not recorded")
	}
}

// TestReportInputFromCounters checks that a summary without an input block (an older run's)
// shows the input counters when one is not 0, and no input section when all are.
func TestReportInputFromCounters(t *testing.T) {
	s := passingSummary()
	for _, c := range []metrics.Counter{metrics.InputRequired, metrics.Elicitations, metrics.ElicitAccepted,
		metrics.ElicitDeclined, metrics.ElicitCancelled} {
		s.Counters[c.Name()] = 0
	}
	if p := pageOf(t, s, "input"); !p.Input.Empty() {
		t.Errorf("input shown with every counter 0: %+v", p.Input)
	}
	s.Input = &Input{}
	if p := pageOf(t, s); !p.Input.Empty() {
		t.Errorf("input shown with an input block of zeros: %+v", p.Input)
	}
	s.Counters[metrics.Elicitations.Name()] = 2
	p := pageOf(t, s, "input")
	if len(p.Input.Facts) != 5 || p.Input.Facts[3].K != "elicitations_received" || p.Input.Facts[3].V != "2" {
		t.Errorf("input: %+v", p.Input.Facts)
	}
}
