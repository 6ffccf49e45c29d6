package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

func TestGoldenSummary(t *testing.T) {
	info, total, windows := fixture()
	s := Build(info, total, windows)
	dir := t.TempDir()
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SummaryJSONFile, SummaryCSVFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name+".golden", b)
	}
}

func TestGoldenTimeseries(t *testing.T) {
	_, _, windows := fixture()
	dir := filepath.Join(t.TempDir(), "run") // NewTimeseries creates it
	ts, err := NewTimeseries(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range windows {
		if err := ts.Add(w); err != nil {
			t.Fatal(err)
		}
		// Each row is in the file as soon as Add returns: a killed run keeps it.
		b, err := os.ReadFile(filepath.Join(dir, TimeseriesFile))
		if err != nil {
			t.Fatal(err)
		}
		if rows := strings.Count(string(b), "\n"); rows != i+2 {
			t.Fatalf("after %d Add: %d lines in the file, want %d", i+1, rows, i+2)
		}
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ts.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := ts.Add(windows[0]); err == nil {
		t.Error("Add after Close succeeded")
	}
	b, err := os.ReadFile(filepath.Join(dir, TimeseriesFile))
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(b), "\n")
	if want := strings.Join(timeseriesColumns, ","); header != want {
		t.Errorf("header %q, want %q", header, want)
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if n := strings.Count(line, ",") + 1; n != len(timeseriesColumns) {
			t.Errorf("line %d has %d columns, want %d", i+1, n, len(timeseriesColumns))
		}
	}
	golden(t, TimeseriesFile+".golden", b)
}

func TestGoldenText(t *testing.T) {
	info, total, windows := fixture()
	info.Thresholds = append(info.Thresholds, scenarios.Threshold{Expr: "latency_tasks_gett.p99 < 1s"})
	var buf bytes.Buffer
	if err := WriteText(&buf, Build(info, total, windows), "runs/golden"); err != nil {
		t.Fatal(err)
	}
	golden(t, "text.golden", buf.Bytes())
}

// TestSummaryShape pins the keys of summary.json and their order (docs/OUTPUTS.md#summary-json):
// the golden file pins the values, this test says what a change to it must not break.
func TestSummaryShape(t *testing.T) {
	info, total, windows := fixture()
	b, err := summaryJSON(Build(info, total, windows))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Error("summary.json does not end with a newline")
	}
	wantTop := []string{"tasksim_version", "scenario", "seed", "protocol", "target", "started_at",
		"duration_s", "interrupted", "trustworthy", "trust_note", "manifest", "runtime", "tasks", "input", "requests",
		"errors", "metrics", "fleet", "counters", "gauges", "server", "gates", "thresholds", "verdict"}
	if got := objectKeys(t, b); !slices.Equal(got, wantTop) {
		t.Errorf("top-level keys\n got %v\nwant %v", got, wantTop)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	sub := func(raw json.RawMessage, key string) json.RawMessage {
		var o map[string]json.RawMessage
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if o[key] == nil {
			t.Fatalf("no key %q", key)
		}
		return o[key]
	}
	checks := []struct {
		what string
		raw  json.RawMessage
		want []string
	}{
		{"tasks", m["tasks"], []string{"created", "completed", "failed", "cancelled", "expired", "lost", "result_lost", "unknown", "dropped"}},
		{"input", m["input"], []string{"input_required_seen", "elicitations_received", "accepted", "declined", "cancelled"}},
		{"requests[tasks/get]", sub(m["requests"], "tasks/get"), []string{"count", "errors", "by_outcome", "by_code", "by_status"}},
		{"metrics[latency_tasks_get]", sub(m["metrics"], "latency_tasks_get"), []string{"unit", "count", "min", "p50", "p90", "p99", "p999", "max", "mean"}},
		{"fleet", m["fleet"], []string{"poll_amplification", "status_reads_per_task", "polls_per_second"}},
		{"gates", m["gates"], []string{"hard", "recovery", "cancellation", "compatibility", "contract", "rollback"}},
		{"gates.hard", sub(m["gates"], "hard"), []string{"pass", "evaluated", "evidence"}},
		{"gates.recovery", sub(m["gates"], "recovery"), []string{"pass", "evaluated", "evidence"}},
		{"gauges[retained_tasks]", sub(m["gauges"], "retained_tasks"), []string{"last", "max"}},
	}
	for _, c := range checks {
		if got := objectKeys(t, c.raw); !slices.Equal(got, c.want) {
			t.Errorf("%s keys\n got %v\nwant %v", c.what, got, c.want)
		}
	}
	var ths []json.RawMessage
	if err := json.Unmarshal(m["thresholds"], &ths); err != nil || len(ths) == 0 {
		t.Fatalf("thresholds: %v, %d entries", err, len(ths))
	}
	if got := objectKeys(t, ths[0]); !slices.Equal(got[:3], []string{"expr", "value", "pass"}) {
		t.Errorf("threshold keys start %v, want expr, value, pass", got)
	}
	// Every Hist with values is in metrics, every Counter in counters.
	s := Build(info, total, windows)
	for h := range metrics.NumHists {
		if _, ok := s.Metrics[h.Name()]; ok != (total.Hists[h].TotalCount() > 0) {
			t.Errorf("metrics[%s] present %v, count %d", h, ok, total.Hists[h].TotalCount())
		}
	}
	if len(s.Counters) != int(metrics.NumCounters) || len(s.Gauges) != int(metrics.NumGauges) {
		t.Errorf("%d counters and %d gauges, want %d and %d", len(s.Counters), len(s.Gauges), metrics.NumCounters, metrics.NumGauges)
	}
	if got := s.Metrics["latency_tasks_get"].P50; got != round3(got) {
		t.Errorf("latency_tasks_get p50 %v is not rounded to 3 decimals", got)
	}
}

// objectKeys returns the keys of the JSON object raw, in document order.
func objectKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %.40s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestReadSummaryRoundTrip(t *testing.T) {
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
	a, _ := summaryJSON(s)
	b, err := summaryJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("summary.json read back and written again differs:\n%s\n---\n%s", a, b)
	}
	if !r.StartedAt.Equal(t0) || r.ExitCode() != s.ExitCode() {
		t.Errorf("read back: started %v, exit %d", r.StartedAt, r.ExitCode())
	}
	// The text summary reads the same from a saved run as from a fresh one.
	var x, y bytes.Buffer
	_ = WriteText(&x, s, dir)
	_ = WriteText(&y, r, dir)
	if x.String() != y.String() {
		t.Errorf("text of a read-back summary differs:\n%s\n---\n%s", x.String(), y.String())
	}
	if _, err := ReadSummary(t.TempDir()); err == nil {
		t.Error("ReadSummary of an empty directory succeeded")
	}
}

// An interrupted write leaves the previous file (or none), never a half file, and no
// temporary file stays behind.
func TestWriteSummaryAtomic(t *testing.T) {
	info, total, windows := fixture()
	s := Build(info, total, windows)
	dir := t.TempDir()
	for range 2 { // the second write replaces the files
		if err := WriteSummary(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{SummaryCSVFile, SummaryJSONFile}) {
		t.Errorf("files after WriteSummary: %v", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, SummaryJSONFile)); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("summary.json: %v, mode %v", err, fi.Mode())
	}

	// A rename that fails (summary.csv is a non-empty directory) removes its temporary file.
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, SummaryCSVFile, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(dir, s); err == nil || !strings.Contains(err.Error(), SummaryCSVFile) {
		t.Errorf("WriteSummary over a directory: %v, want an error naming %s", err, SummaryCSVFile)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{SummaryCSVFile, SummaryJSONFile}) {
		t.Errorf("files after a failed write: %v (a temporary file was left behind?)", got)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestSummaryCSVColumns(t *testing.T) {
	info, total, windows := fixture()
	b := summaryCSV(Build(info, total, windows))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != "metric,unit,count,min,p50,p90,p99,p999,max,mean" {
		t.Errorf("header %q", lines[0])
	}
	var names []string
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 10 {
			t.Errorf("row %q has %d columns", l, len(f))
		}
		names = append(names, f[0]+"/"+f[1])
	}
	for _, want := range []string{"latency_tasks_get/ms", "polls_per_task/count", "poll_amplification/ratio",
		"tasks.created/count", "tasks.dropped/count", "fleet.poll_amplification/ratio",
		"fleet.status_reads_per_task/ratio", "fleet.polls_per_second/per_s"} {
		if !slices.Contains(names, want) {
			t.Errorf("no row %s in %v", want, names)
		}
	}
}

// An empty run (no windows, nil total) still makes a complete, writable summary.
func TestBuildEmpty(t *testing.T) {
	s := Build(RunInfo{Version: "0.1.0", StartedAt: t0, Duration: time.Second, DuplicateEffects: -1}, nil, nil)
	if s.Verdict != VerdictPass || s.Target != "embedded" || s.Requests == nil || s.Metrics == nil || s.Thresholds == nil {
		t.Errorf("empty run: %+v", s)
	}
	if err := WriteSummary(t.TempDir(), s); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s, ""); err != nil {
		t.Fatal(err)
	}
}

// TestTimeseriesWithoutServerGauges: against an external target the cells that only the
// embedded server measures are empty, never 0, in every row; the load generator's own stay.
func TestTimeseriesWithoutServerGauges(t *testing.T) {
	_, _, windows := fixture()
	dir := t.TempDir()
	ts, err := NewTimeseries(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	ts.OmitServerGauges()
	for _, w := range windows {
		w.Gauges[metrics.RetainedTasks], w.Gauges[metrics.Sessions] = 7, 3 // would show if written
		if err := ts.Add(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, TimeseriesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != len(windows)+1 {
		t.Fatalf("%d rows, err %v", len(rows), err)
	}
	for _, row := range rows[1:] {
		for i, col := range rows[0] {
			empty := row[i] == ""
			switch {
			case slices.Contains(serverColumns, col) && !empty:
				t.Errorf("%s = %q against a target, want an empty cell", col, row[i])
			case (col == "in_flight" || col == "in_flight_max" || col == "created") && empty:
				t.Errorf("%s is empty: the load generator's own figures are measured", col)
			}
		}
	}
}
