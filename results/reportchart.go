package results

import (
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
)

// The charts of report.html, as data for the page's script.

// pctMantissas are the x values 1/(1-p) of a percentile chart within one decade, in
// hundredths: 1, 1.25, ... 8 (p = 0%, 20%, ... 87.5%), then 10 (90%), 12.5, ...
var pctMantissas = []float64{100, 125, 160, 200, 250, 320, 400, 500, 640, 800}

// pctChart is the percentile distribution of the histograms hs that hold values, or nil
// when none does. Each series runs up to the first x >= its count (where the value is its
// max): finer percentiles than 1/count say nothing about the run.
func pctChart(id, section, title, unit string, hists map[metrics.Hist]*hdrhistogram.Histogram, hs []metrics.Hist) *chartData {
	c := &chartData{ID: id, Section: section, Kind: "percentile", Title: title, Unit: unit}
	var top int64
	var use []metrics.Hist
	for _, h := range hs {
		if hh := hists[h]; hh != nil && hh.TotalCount() > 0 {
			use = append(use, h)
			top = max(top, hh.TotalCount())
		}
	}
	if len(use) == 0 {
		return nil
	}
grid:
	for dec := 1.0; ; dec *= 10 {
		for _, m := range pctMantissas {
			c.X = append(c.X, m*dec/100)
			if len(c.X) >= 2 && c.X[len(c.X)-1] >= float64(top) {
				break grid
			}
		}
	}
	for _, h := range use {
		hh := hists[h]
		n := len(c.X)
		for i, x := range c.X {
			if x >= float64(hh.TotalCount()) {
				n = i + 1
				break
			}
		}
		ps := make([]float64, n)
		for i := range n {
			ps[i] = 100 * (1 - 1/c.X[i])
		}
		vals := hh.ValueAtPercentilesSlice(ps)
		ys := make([]*float64, len(c.X))
		for i, v := range vals {
			ys[i] = point(float64(v) * h.Scale())
		}
		c.Series = append(c.Series, h.Name())
		c.Y = append(c.Y, ys)
	}
	return c
}

// rollbackMark is the marker of a rollback drill's switch (the rollback gate's
// switched_at_s), drawn on every time chart beside the fault markers; nil without one.
func rollbackMark(s *Summary) []marker {
	if g := s.Gates.Rollback; g.Evaluated {
		return []marker{{T: g.Evidence.SwitchedAtS, Kind: "rollback.switch"}}
	}
	return nil
}

// timeCharts adds the per-second charts, each with the fault markers (and the rollback
// switch's, extra): requests, errors
// and backpressure per second; latency p99 (requests on the left axis, tasks on the
// right); the downstream queue, drawn only when the embedded server ran it (embedded);
// and tasks created and finished per second beside the tasks in flight and retained.
func (p *reportPage) timeCharts(ts *timeseries, ev *faultLog, embedded bool, extra []marker) {
	x := ts.col("t_s")
	if x == nil {
		p.TSNote = "not recorded: " + TimeseriesFile + " has no t_s column"
		return
	}
	perS := perSecond(x)
	markers, faults := faultMarks(x, ev)
	markers = append(markers, extra...)
	newChart := func(id, title, unit, unit2 string) *chartData {
		return &chartData{ID: id, Section: "timeseries", Kind: "time", Title: title, Unit: unit, Unit2: unit2, X: x, Markers: markers}
	}

	rates := newChart("chart-ts-rates", "Requests, errors and backpressure per second", "per second", "")
	rates.add("requests/s", "", perS(ts.col("requests")))
	rates.add("errors/s", "", perS(ts.col("errors")))
	rates.add("backpressure/s", "", perS(ts.col("backpressure_signals")))
	if faults != nil {
		fs := perS(faults)
		for i, v := range fs {
			if v != nil && *v == 0 {
				fs[i] = nil // a point only where faults were injected
			}
		}
		rates.add("faults/s", "", fs)
	}
	p.addChart(rates.drawn())

	lat := newChart("chart-ts-latency", "Latency p99 per second", "request ms", "task ms")
	lat.add("tasks/get p99", "y", points(ts.col("latency_tasks_get_p99_ms")))
	lat.add("tools/call p99", "y", points(ts.col("latency_tools_call_p99_ms")))
	if res := ts.col("latency_tasks_result_p99_ms"); slices.ContainsFunc(res, func(v float64) bool { return v > 0 }) {
		lat.add("tasks/result p99", "y", points(res)) // none in 2026-07-28: the result comes inline
	}
	lat.add("task e2e p99", "y2", points(ts.col("task_e2e_p99_ms")))
	lat.add("detection lag p99", "y2", points(ts.col("detection_lag_p99_ms")))
	p.addChart(lat.drawn())

	if embedded {
		q := newChart("chart-ts-queue", "Downstream queue: waiting and in progress", "tasks", "")
		q.add("queue depth", "", points(ts.col("downstream_queue_depth")))
		q.add("downstream in flight", "", points(ts.col("downstream_in_flight")))
		p.addChart(q.drawn())
	} else {
		p.QueueNote = "The downstream queue is measured only inside the embedded mock server: not recorded against an external target."
	}

	results := make([]float64, len(x))
	for _, name := range []string{"completed", "failed", "cancelled", "expired"} {
		for i, v := range ts.col(name) {
			results[i] += v
		}
	}
	tasks := newChart("chart-ts-tasks", "Tasks created and finished per second, in flight and retained", "tasks per second", "tasks")
	tasks.add("created/s", "y", perS(ts.col("created")))
	tasks.add("finished/s", "y", perS(results))
	tasks.add("in flight", "y2", points(ts.col("in_flight")))
	if embedded { // the server's task store: not measured on an external target
		tasks.add("retained", "y2", points(ts.col("retained_tasks")))
	}
	p.addChart(tasks.drawn())
}

// perSecond returns the function that turns a column of per-window counts into rates, for
// the windows that end at the times x (each starts where the previous one ended, the first at
// 0): a rate is a count divided by its window's length.
func perSecond(x []float64) func([]float64) []*float64 {
	length := make([]float64, len(x))
	for i := range x {
		prev := 0.0
		if i > 0 {
			prev = x[i-1]
		}
		length[i] = x[i] - prev
	}
	// A window shorter than half a second (the last, cut by the run's end, where the
	// sessions' DELETEs land) makes a poor rate: 300 requests in 0.05 s would draw as
	// 6,000/s and flatten every other second of the chart. It is left out of the rates;
	// timeseries.csv keeps it.
	const minRateWindow = 0.5
	return func(v []float64) []*float64 {
		out := make([]*float64, len(v))
		for i := range v {
			if length[i] >= minRateWindow {
				out[i] = point(v[i] / length[i])
			}
		}
		return out
	}
}

// add appends a series on scale ("" = the only one, "y" left, "y2" right), unless v is nil
// (the column is not in the file).
func (c *chartData) add(name, scale string, v []*float64) {
	if v == nil {
		return
	}
	c.Series = append(c.Series, name)
	c.Y = append(c.Y, v)
	if scale != "" {
		c.Scales = append(c.Scales, scale)
	}
}

// drawn is c, or nil when none of its series is in the file. A chart whose series are all
// on one axis drops the second.
func (c *chartData) drawn() *chartData {
	if len(c.Series) == 0 {
		return nil
	}
	if !slices.Contains(c.Scales, "y2") {
		c.Scales, c.Unit2 = nil, ""
	} else if !slices.Contains(c.Scales, "y") {
		c.Scales, c.Unit = nil, c.Unit2
		c.Unit2 = ""
	}
	return c
}

// faultMarks returns the fault markers (the first fault of each kind in a second) and the
// faults counted per window of x; both nil without a fault log.
func faultMarks(x []float64, ev *faultLog) ([]marker, []float64) {
	if ev == nil {
		return nil, nil
	}
	var markers []marker
	seen := map[marker]bool{}
	faults := make([]float64, len(x))
	for _, e := range ev.events {
		sec := marker{T: math.Floor(e.OffsetS), Kind: e.Key}
		if !seen[sec] {
			seen[sec] = true
			markers = append(markers, marker{T: e.OffsetS, Kind: e.Key})
		}
		if i, _ := slices.BinarySearch(x, e.OffsetS); i < len(x) {
			faults[i]++
		}
	}
	return markers, faults
}

// point is v rounded to 3 decimals, or nil (a gap) when v is not a number.
func point(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	r := round3(v)
	return &r
}

func points(v []float64) []*float64 {
	out := make([]*float64, len(v))
	for i := range v {
		out[i] = point(v[i])
	}
	return out
}
