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

// timeCharts adds the per-second charts: levels and rates, with the fault markers.
func (p *reportPage) timeCharts(ts *timeseries, ev *faultLog) {
	x := ts.col("t_s")
	if x == nil {
		p.TSNote = "not recorded: " + TimeseriesFile + " has no t_s column"
		return
	}
	length := make([]float64, len(x))
	for i := range x {
		prev := 0.0
		if i > 0 {
			prev = x[i-1]
		}
		length[i] = x[i] - prev
	}
	perS := func(v []float64) []*float64 {
		out := make([]*float64, len(v))
		for i := range v {
			if length[i] > 0 {
				out[i] = point(v[i] / length[i])
			}
		}
		return out
	}
	var markers []marker
	var faults []float64
	if ev != nil {
		seen := map[marker]bool{}
		faults = make([]float64, len(x))
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
	}
	levels := &chartData{ID: "chart-ts-levels", Section: "timeseries", Kind: "time",
		Title: "Tasks in flight, retained tasks and downstream queue", Unit: "tasks", X: x, Markers: markers}
	for _, name := range []string{"in_flight", "retained_tasks", "downstream_queue_depth"} {
		if v := ts.col(name); v != nil {
			levels.Series = append(levels.Series, name)
			levels.Y = append(levels.Y, points(v))
		}
	}
	rates := &chartData{ID: "chart-ts-rates", Section: "timeseries", Kind: "time",
		Title: "Creates, polls, results and errors per second", Unit: "per second", X: x, Markers: markers}
	results := make([]float64, len(x))
	for _, name := range []string{"completed", "failed", "cancelled"} {
		for i, v := range ts.col(name) {
			results[i] += v
		}
	}
	for _, s := range []struct {
		name string
		v    []float64
	}{{"creates/s", ts.col("created")}, {"polls/s", ts.col("polls")}, {"results/s", results},
		{"errors/s", ts.col("errors")}, {"faults/s", faults}} {
		if s.v != nil {
			rates.Series = append(rates.Series, s.name)
			rates.Y = append(rates.Y, perS(s.v))
		}
	}
	p.addChart(levels)
	p.addChart(rates)
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
