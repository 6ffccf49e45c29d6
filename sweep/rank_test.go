package sweep

// Tests of the sweep's answer on cells made by hand (no run): the recommendation for each
// client count, the capacity, an interrupted sweep, the exit codes, and the renderings of
// sweep.json, sweep.csv, sweep.html and the printout (golden files; go test -update
// rewrites them).

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// outcome is what a hand-made cell's run gave.
type outcome struct {
	rate      float64 // request rate, req/s
	slo       string  // an --slo it missed, with its value
	failed    string  // a gate or threshold of its run that failed: verdict fail, exit 99
	err       string  // its run failed: no figures, exit 1
	stopped   bool    // a signal interrupted it (and so the sweep)
	notRun    bool    // the sweep stopped before it
	untrusted string  // its trust note: the load generator fell behind
	refused   int64   // creates the server refused (backpressure: no failed verdict)
}

func pass(rate float64) outcome           { return outcome{rate: rate} }
func miss(rate float64) outcome           { return outcome{rate: rate, slo: "task_e2e.p99 < 900ms (1002.5ms)"} }
func fail(rate float64, w string) outcome { return outcome{rate: rate, failed: w} }
func broken(err string) outcome           { return outcome{err: err} }
func untrusted(rate float64) outcome {
	return outcome{rate: rate, untrusted: "schedule_lag p99 40ms > 10% of 100ms"}
}
func stoppedAt(rate float64) outcome          { return outcome{rate: rate, stopped: true} }
func saturated(rate float64, n int64) outcome { return outcome{rate: rate, refused: n} }
func notRun() outcome                         { return outcome{notRun: true} }
func vary(name string, vals ...string) Vary   { return Vary{Name: name, Values: vals} }

// handMade ranks the grid of vars whose cells, in grid order, gave outs. A cell's client
// count is its clients value, else 20.
func handMade(t *testing.T, vars []Vary, outs ...outcome) *Result {
	t.Helper()
	r := &Result{TasksimVersion: runner.Version, Scenario: "smoke", Vary: vars,
		SLOs: []string{"task_e2e.p99 < 900ms"}, Cells: grid(vars)}
	if len(outs) != len(r.Cells) {
		t.Fatalf("%d outcomes for %d cells", len(outs), len(r.Cells))
	}
	for i, o := range outs {
		c := &r.Cells[i]
		c.Clients = 20
		if n, err := strconv.Atoi(c.Values["clients"]); err == nil {
			c.Clients = n
		}
		switch {
		case o.notRun:
			c.Error = "not run: the sweep was interrupted"
			continue
		case o.err != "":
			c.Run, c.ExitCode, c.Error = true, exitRuntime, o.err
			continue
		}
		c.Run, c.Verdict, c.Trustworthy, c.TrustNote = true, results.VerdictPass, o.untrusted == "", o.untrusted
		c.Figures = &Figures{RequestRate: o.rate, PollsPerTaskMean: 5, PollAmplification: 1,
			DetectionLagP50: 4, DetectionLagP99: 6.5, TaskE2EP99: 506.25, TasksCompleted: 20, CreatesPushedBack: o.refused}
		if o.slo != "" {
			c.SLOFails = []string{o.slo}
		}
		if o.failed != "" {
			c.Verdict, c.ExitCode, c.Failed = results.VerdictFail, exitGate, []string{o.failed}
		}
		if o.stopped {
			c.Interrupted, c.ExitCode = true, exitSignal
			r.Interrupted, r.InterruptedIn = true, c.Cell+" ("+r.label(c)+")"
		}
	}
	rank(r)
	return r
}

func roles(r *Result) []string {
	var s []string
	for _, c := range r.Cells {
		s = append(s, c.Role)
	}
	return s
}

// TestSweepRecommendsPerClientCount: "recommended: for each client count, the qualifying
// cell with the lowest request rate, ties to the earlier cell; the next one is the
// runner-up". Clients are given out of order; the picks come in increasing count.
func TestSweepRecommendsPerClientCount(t *testing.T) {
	r := handMade(t, []Vary{vary("poll_interval", "250ms", "500ms", "1s"), vary("clients", "1000", "100")},
		pass(400), pass(40), // 250ms: 1000, 100
		miss(200), pass(20), // 500ms
		fail(100, "gate hard"), miss(10)) // 1s
	if got := roles(r); !slices.Equal(got, []string{"recommended", "runner-up", "lost", "recommended", "lost", "lost"}) {
		t.Errorf("roles %v", got)
	}
	if len(r.Recommended) != 2 {
		t.Fatalf("recommended %+v, want one per client count", r.Recommended)
	}
	p := r.Recommended[0]
	if p.Clients != 100 || p.PollInterval != "500ms" || p.Cell != "cell-03" || p.RunnerUp != "cell-01" || p.RequestRate != 20 {
		t.Errorf("at 100 clients: %+v; want poll_interval 500ms (cell-03), runner-up cell-01", p)
	}
	p = r.Recommended[1]
	if p.Clients != 1000 || p.PollInterval != "250ms" || p.Cell != "cell-00" || p.RunnerUp != "" {
		t.Errorf("at 1000 clients: %+v; want poll_interval 250ms (cell-00), no runner-up", p)
	}
	for cell, want := range map[string]string{
		"cell-01": "", // the runner-up is not lost: it has no reason
		"cell-02": "misses task_e2e.p99 < 900ms (1002.5ms)",
		"cell-04": "a gate or threshold of the scenario failed (verdict fail: gate hard)",
		"cell-05": "misses task_e2e.p99 < 900ms (1002.5ms)",
	} {
		if got := r.cell(cell).Why; got != want && !(want == "" && strings.Contains(got, "above the recommended 20 req/s")) {
			t.Errorf("%s: why %q, want %q", cell, got, want)
		}
	}
	if r.ExitCode != exitOK {
		t.Errorf("exit code %d, want 0", r.ExitCode)
	}
}

// TestSweepOneRecommendationWithoutClients: with only poll_interval varied there is one
// recommendation, as there always was, and no capacity.
func TestSweepOneRecommendationWithoutClients(t *testing.T) {
	r := handMade(t, []Vary{vary("poll_interval", "250ms", "500ms", "1s")}, pass(30), pass(20), pass(20))
	if len(r.Recommended) != 1 || r.Recommended[0].Cell != "cell-01" || r.Recommended[0].RunnerUp != "cell-02" {
		t.Errorf("recommended %+v, want cell-01 (the earlier of a tie), runner-up cell-02", r.Recommended)
	}
	if r.Capacity != nil || r.NoCapacity != "" || r.ExitCode != exitOK {
		t.Errorf("capacity %+v %q, exit %d; want none (clients not varied), exit 0", r.Capacity, r.NoCapacity, r.ExitCode)
	}
}

// TestSweepCapacity: "going up the counts tried, the largest count below the first count
// that has no qualifying cell. Counts that qualify above that failure do not raise it ...
// No capacity when the smallest count has no qualifying cell." A failed verdict (a gate,
// a scenario threshold, the default error budget) is a failure like a missed SLO. With
// --vary clients, the exit code follows the capacity.
func TestSweepCapacity(t *testing.T) {
	clients := []Vary{vary("clients", "100", "500", "1000")}
	for _, tc := range []struct {
		name        string
		outs        []outcome
		capacity    int // 0: none
		limit       int // the first failing count; 0: none
		above       []int
		noCapacity  string
		exit        int
		recommended int
	}{
		{"limit found", []outcome{pass(10), pass(50), miss(100)}, 500, 1000, nil, "", exitOK, 2},
		{"every count passed", []outcome{pass(10), pass(50), pass(100)}, 1000, 0, nil, "", exitOK, 3},
		{"not contiguous", []outcome{pass(10), miss(50), pass(100)}, 100, 500, []int{1000}, "", exitOK, 2},
		{"failed verdict", []outcome{pass(10), fail(50, "threshold requests.errors_rate < 1%"), pass(100)}, 100, 500, []int{1000}, "", exitOK, 2},
		{"runtime error", []outcome{pass(10), broken("target unreachable"), pass(100)}, 100, 500, []int{1000}, "", exitOK, 2},
		// A verdict of pass, but the server refused creates: backpressure, not an error, so
		// nothing failed; still, the server did not carry those clients.
		{"creates refused", []outcome{pass(10), saturated(50, 1942), saturated(100, 3000)}, 100, 500, nil, "", exitOK, 1},
		{"smallest fails", []outcome{miss(10), pass(50), pass(100)}, 0, 0, nil,
			"clients=100, the smallest count tried, failed: misses task_e2e.p99 < 900ms (1002.5ms) " +
				"(clients=500, clients=1000 passed above it: the passing counts are not contiguous)", exitGate, 2},
		{"none qualifies", []outcome{miss(10), miss(50), miss(100)}, 0, 0, nil,
			"clients=100, the smallest count tried, failed: misses task_e2e.p99 < 900ms (1002.5ms)", exitGate, 0},
		{"no result at all", []outcome{broken("x"), broken("x"), broken("x")}, 0, 0, nil,
			"clients=100, the smallest count tried, failed: no result: x", exitRuntime, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := handMade(t, clients, tc.outs...)
			if len(r.Recommended) != tc.recommended || r.ExitCode != tc.exit || r.NoCapacity != tc.noCapacity {
				t.Errorf("%d recommended, exit %d, no_capacity %q; want %d, %d, %q",
					len(r.Recommended), r.ExitCode, r.NoCapacity, tc.recommended, tc.exit, tc.noCapacity)
			}
			c := r.Capacity
			if tc.capacity == 0 {
				if c != nil {
					t.Errorf("capacity %+v, want none", c)
				}
				return
			}
			if c == nil {
				t.Fatalf("no capacity (%s), want %d", r.NoCapacity, tc.capacity)
			}
			if c.Clients != tc.capacity || c.LimitFound != (tc.limit > 0) || c.Contiguous != (len(tc.above) == 0) ||
				!slices.Equal(c.PassedAbove, append([]int{}, tc.above...)) {
				t.Errorf("capacity %+v; want %d, limit %d, passed above %v", c, tc.capacity, tc.limit, tc.above)
			}
			if tc.limit > 0 && (c.FirstFailure == nil || c.FirstFailure.Clients != tc.limit || c.FirstFailure.Why == "") {
				t.Errorf("first failure %+v, want %d with its reason", c.FirstFailure, tc.limit)
			}
			if want := r.cell(c.Cell); want == nil || want.Role != RoleRecommended || want.Clients != c.Clients {
				t.Errorf("capacity cell %s is not the recommendation at %d clients", c.Cell, c.Clients)
			}
		})
	}
}

// TestSweepCapacityAcrossIntervals: a count qualifies when any of its cells does; the
// capacity names the cell recommended at that count, and carries its trust warning.
func TestSweepCapacityAcrossIntervals(t *testing.T) {
	r := handMade(t, []Vary{vary("poll_interval", "250ms", "1s"), vary("clients", "100", "500")},
		pass(40), miss(200), // 250ms
		pass(10), untrusted(50)) // 1s
	c := r.Capacity
	if c == nil || c.Clients != 500 || c.Cell != "cell-03" || c.PollInterval != "1s" || c.LimitFound || c.Warning == "" {
		t.Fatalf("capacity %+v; want 500 clients at 1s (cell-03), no limit found, the trust warning", c)
	}
}

// TestSweepInterruptedRecommendsNothing: "a sweep a signal stopped recommends nothing and
// reports no capacity", says why, and exits 130, even with cells that qualified before.
func TestSweepInterruptedRecommendsNothing(t *testing.T) {
	r := handMade(t, []Vary{vary("clients", "100", "500", "1000")}, pass(10), stoppedAt(50), notRun())
	if len(r.Recommended) != 0 || r.Capacity != nil || r.ExitCode != exitSignal {
		t.Errorf("recommended %+v, capacity %+v, exit %d; want none, none, 130", r.Recommended, r.Capacity, r.ExitCode)
	}
	const in = "interrupted in cell-01 (clients=500)"
	if !strings.Contains(r.NoRecommendation, in) || !strings.Contains(r.NoCapacity, in) {
		t.Errorf("no_recommendation %q, no_capacity %q: want both to say %q", r.NoRecommendation, r.NoCapacity, in)
	}
	for i, want := range []string{
		"passed and met every SLO, but the sweep was interrupted",
		"interrupted before its end",
		"no result: not run: the sweep was interrupted",
	} {
		if c := r.Cells[i]; c.Why != want || c.Role != RoleLost {
			t.Errorf("%s: %s %q, want lost %q", c.Cell, c.Role, c.Why, want)
		}
	}
	var text bytes.Buffer
	WriteText(&text, r, "runs/x")
	if !strings.HasPrefix(text.String(), "recommended none: the sweep was interrupted in cell-01 (clients=500): a partial sweep recommends nothing\n"+
		"capacity    none: the sweep was interrupted in cell-01 (clients=500): a partial sweep reports no capacity\n") {
		t.Errorf("printout:\n%s", text.String())
	}
}

// mixed is a two-dimensional sweep with every kind of cell: a non-contiguous capacity, an
// untrustworthy recommendation, a runner-up, missed SLOs, a failed verdict and a run that
// failed.
func mixed(t *testing.T) *Result {
	return handMade(t, []Vary{vary("poll_interval", "250ms", "1s"), vary("clients", "100", "500", "1000")},
		pass(40), miss(200), pass(400), // 250ms
		untrusted(10.1234), fail(50, "threshold requests.errors_rate < 1%"), broken("cell failed: connection refused")) // 1s
}

// TestSweepOutputs: the printout, sweep.json, sweep.csv and sweep.html of fixed results.
func TestSweepOutputs(t *testing.T) {
	for name, r := range map[string]*Result{
		"mixed":       mixed(t),
		"interrupted": handMade(t, []Vary{vary("clients", "100", "500")}, stoppedAt(10), notRun()),
		"single":      handMade(t, []Vary{vary("poll_interval", "100ms", "1s")}, pass(70), miss(20)),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var text bytes.Buffer
			WriteText(&text, r, "runs/sweep")
			sweepGolden(t, name+".txt", text.Bytes())
			if err := WriteJSON(dir, r); err != nil {
				t.Fatal(err)
			}
			if err := WriteCSV(filepath.Join(dir, CSVFile), "runs/sweep", r); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(dir, r); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{JSONFile, CSVFile, HTMLFile} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				sweepGolden(t, name+"."+strings.TrimPrefix(filepath.Ext(f), "."), b)
			}
		})
	}
}

// TestSweepReportRerenders: sweep.html rendered from the saved sweep.json is the page
// rendered from the result in memory, byte for byte.
func TestSweepReportRerenders(t *testing.T) {
	r := mixed(t)
	want, err := RenderHTML(r)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteJSON(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("sweep.html from sweep.json differs from the page of the result it was written from")
	}
}

// TestSweepJSONChecked: a sweep.json rendering cannot rely on is refused, saying why.
func TestSweepJSONChecked(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"vary": []}`, "vary: no dimension"},
		{`{"vary": [{"name": "clients", "values": []}]}`, "vary[0] clients: no values"},
		{`{"vary": [{"name": "clients", "values": ["1"]}], "cells": [{"values": {"clients": "2"}}]}`, `cells[0]: clients="2" is not one of its values`},
		{`{"vary": [{"name": "clients", "values": ["1"]}], "cells": [{"values": {"clients": "1"}, "role": "recommended"}]}`, "recommended without figures"},
		{`{"vary": [{"name": "clients", "values": ["1"]}], "capacity": {"limit_found": true}}`, "limit_found without first_failure"},
		{`{"vary": `, "unexpected end"},
	} {
		if _, err := ParseJSON([]byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.json, err, tc.want)
		}
	}
}

// FuzzSweepJSON: whatever a saved sweep.json holds, parsing it either refuses it or gives
// a result that renders.
func FuzzSweepJSON(f *testing.F) {
	for _, name := range []string{"mixed.json", "interrupted.json", "single.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseJSON(b)
		if err != nil {
			return
		}
		if _, err := RenderHTML(r); err != nil {
			t.Fatalf("render: %v", err)
		}
		var text bytes.Buffer
		WriteText(&text, r, "")
	})
}

// sweepGolden compares got with testdata/name, or rewrites it with -update.
func sweepGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./sweep -run TestSweepOutputs -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./sweep -run TestSweepOutputs -update accepts the change):\n%s", path, got)
	}
}

// TestSweepRefusedCreatesSayWhy: a cell whose server refused creates says so, with the
// count, as why it does not qualify.
func TestSweepRefusedCreatesSayWhy(t *testing.T) {
	r := handMade(t, []Vary{vary("clients", "100", "400")}, pass(10), saturated(50, 1942))
	if got, want := r.cell("cell-01").Why, "the server pushed back 1942 creates: it did not carry every client"; got != want {
		t.Errorf("why %q, want %q", got, want)
	}
	if r.Capacity == nil || r.Capacity.Clients != 100 {
		t.Errorf("capacity %+v, want 100 clients", r.Capacity)
	}
}

// TestMeasureCellCountsPushBackOnly: a cell's creates_pushed_back is its tools/call requests
// of outcome backpressure; other refusals (a 404 for a session the scenario's own fault
// dropped, in client.creates_refused) do not keep it from qualifying.
func TestMeasureCellCountsPushBackOnly(t *testing.T) {
	s := &results.Summary{Verdict: results.VerdictPass, Trustworthy: true,
		Requests: map[string]results.RequestStats{"tools/call": {Count: 12, ByOutcome: map[string]int64{"ok": 7, "backpressure": 5}}},
		Client:   &results.Client{CreatesRefused: map[string]int64{"404": 2, "429": 5}}}
	var c Cell
	measureCell(&c, s, nil)
	if c.Figures.CreatesPushedBack != 5 {
		t.Errorf("creates_pushed_back %d, want 5", c.Figures.CreatesPushedBack)
	}
	s.Requests["tools/call"] = results.RequestStats{Count: 9, ByOutcome: map[string]int64{"ok": 7, "http_error": 2}}
	c = Cell{}
	measureCell(&c, s, nil)
	if c.Figures.CreatesPushedBack != 0 {
		t.Errorf("creates_pushed_back %d, want 0: a 404 is not backpressure", c.Figures.CreatesPushedBack)
	}
}
