package results

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
)

// compare.html: the comparison as a self-contained page, in the order of the text
// (WriteComparisonText) — the verdict, the budget table, what changed or was not judged,
// the two runs — then what the text cannot show: both runs' latency distributions
// overlaid, and their per-second series on one time axis (seconds from each run's start).
// It reuses report.html's stylesheet, chart library and chart script.

// RenderComparison renders compare.html. The charts are read from the runs' directories
// (c.Baseline.Dir and c.Candidate.Dir, as given on the command line): a file missing or
// unreadable there puts a note on the page in place of its charts, never an error, so
// that the page of a comparison is written whenever compare.json is.
func RenderComparison(c *Comparison) ([]byte, error) {
	p := buildComparePage(c, readCompareFiles(c.Baseline.Dir), readCompareFiles(c.Candidate.Dir))
	src, err := assets.ReadFile("assets/compare.html.tmpl")
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	tmpl, err := template.New(CompareHTMLFile).Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("results: compare template: %w", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("results: rendering %s: %w", CompareHTMLFile, err)
	}
	return buf.Bytes(), nil
}

// compareFiles are the files of one run that the page's charts read; a nil field has
// its note, saying why.
type compareFiles struct {
	hists    map[metrics.Hist]*hdrhistogram.Histogram
	ts       *timeseries
	histNote string
	tsNote   string
}

// readCompareFiles reads the histograms and the time series of the run in dir.
func readCompareFiles(dir string) compareFiles {
	var f compareFiles
	var err error
	if f.hists, err = ReadHistogramLogTotals(dir); err != nil {
		f.histNote = fileNote(dir, HistogramLogFile, err)
	}
	if f.ts, err = readTimeseries(dir); err != nil {
		f.tsNote = fileNote(dir, TimeseriesFile, err)
	} else if f.ts.rows == 0 || f.ts.col("t_s") == nil {
		f.ts, f.tsNote = nil, "no rows (or no t_s column) in "+dir+"/"+TimeseriesFile
	}
	return f
}

// fileNote says why name could not be read from dir.
func fileNote(dir, name string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no " + name + " in " + dir
	}
	return strings.TrimPrefix(err.Error(), "results: ")
}

// comparePage is what assets/compare.html.tmpl renders, in page order. Every string is
// data, escaped by html/template; Data goes into the page as JSON for report.js.
type comparePage struct {
	C           *Comparison
	ExitCode    int
	Word, Class string // the verdict in capitals, and the banner's class (pass, fail, warn)
	Reason      string // verdictLine without the verdict and exit code the banner shows
	Metrics     []metricRow
	Changed     []verdictRow // gates, thresholds and contract cases shown (VerdictChange.shown)
	Runs        []runFact
	PctNotes    []string // why a run's distributions are missing
	TSNotes     []string // why a run's time series are missing
	PctCharts   []*compareChart
	TimeCharts  []*compareChart
	Data        compareData
	CSS, LibCSS template.CSS
	Lib, Script template.JS
}

// metricRow is one row of the budget table, formatted as the text table formats it;
// Class is the row's highlight (fail for a regression).
type metricRow struct {
	Metric, Class                 string
	Baseline, Candidate           estimateCell
	Change, Interval, RelInterval string
	Budget, Source, Verdict, Note string
}

// estimateCell is a run's figure, with its 95% interval and sample count as small text
// (Detail) and as the cell's title.
type estimateCell struct{ Value, Detail string }

// verdictRow is a gate, threshold or contract case that changed or fails.
type verdictRow struct{ What, Name, Baseline, Candidate, Verdict, Class string }

// runFact is one line of the runs' identities.
type runFact struct{ K, Baseline, Candidate string }

// compareData is the page's inline JSON, read by report.js as it reads report.html's.
type compareData struct {
	Charts []*compareChart `json:"charts"`
}

// compareChart is a chart of two runs. A percentile chart is a chartData whose series
// are "baseline" and "candidate". A time chart also has XS: series i's own x values (its
// run's window ends), Y[i] the values at them, X their union (what the page counts as
// its points). The runs' windows end at different instants, so report.js aligns the
// series with uPlot.join, which spans one run's line over the other run's instants
// instead of breaking it there; a run's own empty window stays a gap.
type compareChart struct {
	*chartData
	XS [][]float64 `json:"xs,omitempty"`
}

// compareSides names the two runs, in series order.
var compareSides = [2]string{"baseline", "candidate"}

// buildComparePage assembles the page of c from the files of its two runs.
func buildComparePage(c *Comparison, base, cand compareFiles) *comparePage {
	p := &comparePage{
		C: c, ExitCode: c.ExitCode(), Word: strings.ToUpper(c.Verdict),
		CSS: template.CSS(asset("report.css")), LibCSS: template.CSS(asset("uPlot.min.css")),
		Lib: template.JS(asset("uPlot.iife.min.js")), Script: template.JS(asset("report.js")),
	}
	if _, p.Reason, _ = strings.Cut(verdictLine(c), ": "); p.Reason == "" {
		p.Reason = verdictLine(c)
	}
	switch c.Verdict {
	case CompareVerdictPass:
		p.Class = "pass"
	case CompareVerdictFail:
		p.Class = "fail"
	default:
		p.Class = "warn"
	}
	for _, m := range c.Metrics {
		p.Metrics = append(p.Metrics, metricRowOf(m))
	}
	for _, set := range c.rowSets() {
		what, _, _ := strings.Cut(set.what, " ")
		for _, r := range set.rows {
			if r.shown() {
				p.Changed = append(p.Changed, verdictRow{What: what, Name: r.Name, Baseline: orDash(r.Baseline),
					Candidate: orDash(r.Candidate), Verdict: strings.ToUpper(r.Verdict), Class: changeClass(r.Verdict)})
			}
		}
	}
	p.Runs = runFacts(c.Baseline, c.Candidate)
	for i, f := range [2]compareFiles{base, cand} {
		if f.histNote != "" {
			p.PctNotes = append(p.PctNotes, compareSides[i]+": "+f.histNote)
		}
		if f.tsNote != "" {
			p.TSNotes = append(p.TSNotes, compareSides[i]+": "+f.tsNote)
		}
	}
	hs := append(slices.Clone(latencyHists), metrics.PollsPerTask, metrics.PollAmplification)
	for _, h := range hs {
		if ch := pctPair(h, base.hists, cand.hists); ch != nil {
			p.PctCharts = append(p.PctCharts, &compareChart{chartData: ch})
		}
	}
	p.TimeCharts = timePairs(base.ts, cand.ts)
	p.Data.Charts = append(slices.Clone(p.PctCharts), p.TimeCharts...)
	return p
}

// changeClass is the highlight of a gate, threshold or case row.
func changeClass(v string) string {
	switch v {
	case "regression", "failing":
		return "fail"
	case "fixed":
		return "pass"
	}
	return "na"
}

// metricRowOf formats one metric of the comparison.
func metricRowOf(m MetricChange) metricRow {
	r := metricRow{Metric: m.Metric, Baseline: estimateCellOf(m.Unit, m.Baseline), Candidate: estimateCellOf(m.Unit, m.Candidate),
		Budget: m.Budget, Source: m.Source, Verdict: verdictCell(m.Verdict), Note: m.Note}
	switch m.Verdict {
	case MetricRegression:
		r.Class = "fail"
	case MetricWithinNoise:
		r.Class = "warn"
	case MetricTooFewSamples, MetricNoData:
		r.Class = "na"
	case MetricPass:
		r.Class = "pass"
	}
	if ch := m.Change; ch != nil {
		r.Change = changeText(m.Unit, ch)
		if m.Unit != "count" || m.Baseline.Low != m.Baseline.High || m.Candidate.Low != m.Candidate.High {
			r.Interval = intervalText(m.Unit, ch)
		}
		if ch.RelLow != nil && ch.RelHigh != nil {
			r.RelInterval = signed(100**ch.RelLow) + "%.." + signed(100**ch.RelHigh) + "%"
		}
	}
	return r
}

// estimateCellOf formats a run's figure; a count without an interval (a rare event's)
// shows its samples only.
func estimateCellOf(unit string, e *Estimate) estimateCell {
	c := estimateCell{Value: estimateText(unit, e)}
	if e == nil {
		c.Detail = "not measured"
		return c
	}
	n := "n = " + thousands(e.Samples)
	if unit == "count" && e.Low == e.High {
		c.Detail = n
		return c
	}
	at := func(v float64) string { return estimateText(unit, &Estimate{Value: v}) }
	c.Detail = "95%: " + at(e.Low) + ".." + at(e.High) + ", " + n
	return c
}

// runFacts are the two runs' identities, side by side.
func runFacts(b, c CompareRun) []runFact {
	row := func(k string, f func(r CompareRun) string) runFact {
		return runFact{K: k, Baseline: f(b), Candidate: f(c)}
	}
	yes := func(v bool) string { return strconv.FormatBool(v) }
	return []runFact{
		row("dir", func(r CompareRun) string { return r.Dir }),
		row("scenario", func(r CompareRun) string { return r.Scenario }),
		row("target", func(r CompareRun) string { return orDash(r.Target) }),
		row("protocol", func(r CompareRun) string { return r.Protocol }),
		row("seed", func(r CompareRun) string { return strconv.FormatUint(r.Seed, 10) }),
		row("started_at", func(r CompareRun) string { return r.StartedAt.UTC().Format("2006-01-02T15:04:05Z") }),
		row("duration", func(r CompareRun) string { return num(r.DurationS) + " s" }),
		row("verdict", func(r CompareRun) string { return r.Verdict }),
		row("trustworthy", func(r CompareRun) string { return yes(r.Trustworthy) }),
		row("interrupted", func(r CompareRun) string { return yes(r.Interrupted) }),
	}
}

// pctPair is the percentile chart of h with both runs overlaid, or nil when neither
// recorded a value of it. Each run's series is pctChart's, on the grid of the larger run:
// pctChart's grid runs through fixed x values up to the first at or beyond the run's
// count, so the smaller run's grid is a prefix of it, and its series ends there (null).
// A run without h keeps its series, all null, so that a run's colour is the same on
// every chart.
func pctPair(h metrics.Hist, base, cand map[metrics.Hist]*hdrhistogram.Histogram) *chartData {
	id, title := "chart-pct-"+h.Name(), h.Name()+" by percentile"
	var sides [2]*chartData
	var grid []float64
	for i, hists := range [2]map[metrics.Hist]*hdrhistogram.Histogram{base, cand} {
		if sides[i] = pctChart(id, "latency", title, h.Unit(), hists, []metrics.Hist{h}); sides[i] != nil && len(sides[i].X) > len(grid) {
			grid = sides[i].X
		}
	}
	if grid == nil {
		return nil
	}
	c := &chartData{ID: id, Section: "latency", Kind: "percentile", Title: title, Unit: h.Unit(), X: grid}
	for i, s := range sides {
		ys := make([]*float64, len(grid))
		if s != nil {
			copy(ys, s.Y[0])
		}
		c.Series = append(c.Series, compareSides[i])
		c.Y = append(c.Y, ys)
	}
	return c
}

// timeSeries are the per-second charts, one column of timeseries.csv each: Rate
// divides a window's count by the window's length.
var timeSeries = []struct {
	col, title, unit string
	rate             bool
}{
	{"requests", "Requests per second", "per second", true},
	{"errors", "Errors per second", "per second", true},
	{"latency_tasks_get_p99_ms", "tasks/get latency p99", "ms", false},
	{"latency_tools_call_p99_ms", "tools/call latency p99", "ms", false},
	{"task_e2e_p99_ms", "Task end to end p99", "ms", false},
	{"detection_lag_p99_ms", "Detection lag p99", "ms", false},
	{"in_flight", "Tasks in flight", "tasks", false},
}

// timePairs are the per-second charts of both runs, each on seconds since its own start;
// a chart of which neither run has a value is left out.
func timePairs(base, cand *timeseries) []*compareChart {
	var out []*compareChart
	for _, spec := range timeSeries {
		c := &compareChart{chartData: &chartData{ID: "chart-ts-" + spec.col, Section: "timeseries", Kind: "time",
			Title: spec.title, Unit: spec.unit, X: []float64{}}}
		drawn := false
		for i, ts := range [2]*timeseries{base, cand} {
			x, y := runSeries(ts, spec.col, spec.rate)
			drawn = drawn || slices.ContainsFunc(y, func(v *float64) bool { return v != nil })
			c.Series = append(c.Series, compareSides[i])
			c.XS = append(c.XS, orEmpty(x))
			c.Y = append(c.Y, orEmpty(y))
			c.X = append(c.X, x...)
		}
		if !drawn {
			continue
		}
		slices.Sort(c.X)
		c.X = slices.Compact(c.X)
		out = append(out, c)
	}
	return out
}

// runSeries is column col of ts against t_s, per second of each window when rate; nil
// when ts or the column is missing. A window shorter than half a second (the last, cut by
// the run's end) is left out of a rate, as report.html leaves it out: its few requests
// over a sliver of a second would draw as a spike. A row without a time cannot be placed
// and is skipped.
func runSeries(ts *timeseries, col string, rate bool) ([]float64, []*float64) {
	if ts == nil || ts.col(col) == nil {
		return nil, nil
	}
	v := ts.col(col)
	var xs []float64
	var ys []*float64
	prev := 0.0
	for i, t := range ts.col("t_s") {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			continue
		}
		var y *float64
		switch d := t - prev; {
		case !rate:
			y = point(v[i])
		case d >= 0.5:
			y = point(v[i] / d)
		}
		prev = t
		xs, ys = append(xs, t), append(ys, y)
	}
	return xs, ys
}
