package results

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
)

// ReportFile is the run's self-contained HTML report.
const ReportFile = "report.html"

//go:embed assets/report.html.tmpl assets/report.css assets/report.js assets/uPlot.iife.min.js assets/uPlot.min.css
var assets embed.FS

// WriteReport renders report.html from the files of the run directory dir (summary.json,
// and timeseries.csv, histograms.hlog and events.csv when present) and writes it into dir.
// It reads only files, so `tasksim report DIR` re-renders a saved run to the same bytes.
func WriteReport(dir string) error {
	b, err := RenderReport(dir)
	if err != nil {
		return err
	}
	return writeAtomic(dir, ReportFile, b)
}

// RenderReport returns report.html for the run directory dir. summary.json must exist; a
// missing timeseries.csv, histograms.hlog or events.csv leaves its part of the report saying
// "not recorded". The page is self-contained (inline CSS, the chart library and the data
// inline; it fetches nothing) and deterministic: the same files give the same bytes.
func RenderReport(dir string) ([]byte, error) {
	s, err := ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	hists, err := ReadHistogramLogTotals(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ts, err := readTimeseries(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ev, err := readFaultEvents(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	p := buildPage(s, hists, ts, ev)
	tmpl, err := reportTemplate()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("results: rendering %s: %w", ReportFile, err)
	}
	return buf.Bytes(), nil
}

// reportTemplate parses the embedded template with its helpers.
func reportTemplate() (*template.Template, error) {
	src, err := assets.ReadFile("assets/report.html.tmpl")
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	t, err := template.New(ReportFile).Funcs(template.FuncMap{"num": num}).Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("results: report template: %w", err)
	}
	return t, nil
}

// asset returns an embedded file; the names are fixed by the go:embed line, so a failure is
// a build defect.
func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// jsonText is v as compact JSON with sorted keys, for evidence values that are not scalars.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // html/template escapes the page; keep < and > readable
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// reportPage is what assets/report.html.tmpl renders: every string is data, escaped by
// html/template; Data goes into the page as JSON for the chart script.
type reportPage struct {
	S          *Summary
	Verdict    string // "PASS" or "FAIL"
	ExitCode   int
	Gates      []gateRow
	Thresholds []thresholdRow
	Config     []kv
	Manifest   []kv // flattened capability manifest; nil = not recorded
	Server     []kv // flattened embedded-server figures; nil = not recorded
	Outcomes   []kv
	Requests   []requestRow
	Latency    []statRow // latency_* and task_e2e, in metrics.Hist order
	Polling    []statRow
	Fleet      []kv
	Lags       []statRow
	Clamped    []kv
	Faults     []kv   // fault counts by source.kind; nil = none recorded
	FaultsMore int64  // events counted beyond the ones events.csv kept
	HlogNote   string // why the distribution charts are missing; "" = recorded
	TSNote     string // why the time series are missing; "" = recorded
	EventsNote string // why the fault timeline is missing; "" = recorded
	Charts     []*chartData
	Data       reportData
	CSS        template.CSS
	LibCSS     template.CSS
	Lib        template.JS
	Script     template.JS
}

// ChartsIn returns the charts of one section, in order.
func (p *reportPage) ChartsIn(section string) []*chartData {
	var out []*chartData
	for _, c := range p.Charts {
		if c.Section == section {
			out = append(out, c)
		}
	}
	return out
}

// reportData is the page's inline JSON: what the chart script draws.
type reportData struct {
	Scenario string       `json:"scenario"`
	Charts   []*chartData `json:"charts"`
}

// chartData is one chart. Kind "percentile": X is 1/(1-p) for percentile p (drawn on a
// log axis labelled in %), Y the value at p in Unit, null beyond the series' last sample.
// Kind "time": X is seconds since the run's start (the end of each one-second window).
type chartData struct {
	ID      string       `json:"id"`
	Section string       `json:"-"`
	Kind    string       `json:"kind"`
	Title   string       `json:"title"`
	Unit    string       `json:"unit"`
	Series  []string     `json:"series"`
	X       []float64    `json:"x"`
	Y       [][]*float64 `json:"y"`
	Markers []marker     `json:"markers,omitempty"`
}

// Points is the number of x values of the chart.
func (c *chartData) Points() int { return len(c.X) }

// marker is a fault injected at T seconds since the start (the first of its kind in that
// second: one line per kind and second).
type marker struct {
	T    float64 `json:"t"`
	Kind string  `json:"kind"`
}

type kv struct{ K, V string }

type gateRow struct {
	Name, Status, Class string
	Evidence            []kv
}

type thresholdRow struct {
	Expr, Value, Status, Class, Windows string
}

type statRow struct {
	Name, Unit                    string
	Recorded                      bool
	Count                         int64
	P50, P90, P99, P999, Max, Avg string
}

type requestRow struct {
	Method                      string
	Count, Errors               int64
	ByOutcome, ByCode, ByStatus string
}

// buildPage assembles the page from the run's files; hists, ts and ev may be nil.
func buildPage(s *Summary, hists map[metrics.Hist]*hdrhistogram.Histogram, ts *timeseries, ev *faultLog) *reportPage {
	p := &reportPage{
		S: s, Verdict: strings.ToUpper(s.Verdict), ExitCode: s.ExitCode(),
		CSS: template.CSS(asset("report.css")), LibCSS: template.CSS(asset("uPlot.min.css")),
		Lib: template.JS(asset("uPlot.iife.min.js")), Script: template.JS(asset("report.js")),
	}
	for _, g := range s.Gates.list() {
		row := gateRow{Name: g.name, Status: "pass", Class: "pass"}
		switch {
		case !g.gate.Evaluated:
			row.Status, row.Class = "not evaluated", "na"
		case !g.gate.Pass:
			row.Status, row.Class = "FAIL", "fail"
		}
		for _, k := range slices.Sorted(maps.Keys(g.gate.Evidence)) {
			row.Evidence = append(row.Evidence, kv{k, valueText(g.gate.Evidence[k])})
		}
		p.Gates = append(p.Gates, row)
	}
	for _, r := range s.Thresholds {
		row := thresholdRow{Expr: r.Expr, Value: withUnit(r.Value, r.Unit), Status: "pass", Class: "pass"}
		if !r.Pass {
			row.Status, row.Class = "FAIL", "fail"
		}
		switch {
		case r.Error != "":
			row.Value, row.Windows = "-", r.Error
		case r.NoData:
			row.Windows = "no data"
		case r.WindowsEvaluated > 0:
			row.Windows = fmt.Sprintf("%d of %d failed; worst %s in window %d",
				r.WindowsFailed, r.WindowsEvaluated, withUnit(r.WorstValue, r.Unit), r.WorstWindow)
		default:
			row.Windows = "whole run only"
		}
		p.Thresholds = append(p.Thresholds, row)
	}
	trust := "yes"
	if !s.Trustworthy {
		trust = "NO"
	}
	note := s.TrustNote
	if note == "" {
		note = "-"
	}
	p.Config = []kv{
		{"scenario", s.Scenario}, {"seed", strconv.FormatUint(s.Seed, 10)}, {"target", s.Target},
		{"protocol", s.Protocol}, {"tasksim version", s.TasksimVersion},
		{"started at", s.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z")},
		{"duration", num(s.DurationS) + " s"}, {"interrupted", strconv.FormatBool(s.Interrupted)},
		{"trustworthy", trust}, {"trust note", note},
	}
	p.Manifest = flatten(s.Manifest)
	p.Server = flatten(s.Server)
	for _, oc := range outcomeCounters {
		p.Outcomes = append(p.Outcomes, kv{oc.name, strconv.FormatInt(taskCount(s.Tasks, oc.name), 10)})
	}
	for _, m := range slices.Sorted(maps.Keys(s.Requests)) {
		rs := s.Requests[m]
		p.Requests = append(p.Requests, requestRow{Method: m, Count: rs.Count, Errors: rs.Errors,
			ByOutcome: countsText(rs.ByOutcome), ByCode: countsText(rs.ByCode), ByStatus: countsText(rs.ByStatus)})
	}
	for _, name := range metricNames(s.Metrics) {
		h, _ := metrics.ParseHist(name)
		if strings.HasPrefix(name, "latency_") || h == metrics.TaskE2E {
			p.Latency = append(p.Latency, statRowOf(name, s.Metrics))
		}
	}
	p.Polling = []statRow{statRowOf(metrics.PollsPerTask.Name(), s.Metrics), statRowOf(metrics.PollAmplification.Name(), s.Metrics)}
	p.Fleet = []kv{
		{"fleet poll amplification (sum polls / sum advised)", num(s.Fleet.PollAmplification)},
		{"status reads per task", num(s.Fleet.StatusReadsPerTask)},
		{"polls per second", num(s.Fleet.PollsPerSecond)},
	}
	for _, h := range []metrics.Hist{metrics.DetectionLag, metrics.ResultLag, metrics.CleanupLag,
		metrics.CancelLatency, metrics.ScheduleLag, metrics.DownstreamWait} {
		if _, ok := s.Metrics[h.Name()]; ok || h <= metrics.CleanupLag {
			p.Lags = append(p.Lags, statRowOf(h.Name(), s.Metrics))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Clamped)) {
		p.Clamped = append(p.Clamped, kv{k, strconv.FormatInt(s.Clamped[k], 10)})
	}
	p.faults(s, ev)

	if hists == nil {
		p.HlogNote = "not recorded: the run directory has no " + HistogramLogFile
	} else {
		var lat []metrics.Hist
		for h := range metrics.TaskE2E {
			lat = append(lat, h)
		}
		p.addChart(pctChart("chart-latency", "latency", "Request latency by method", "ms", hists, lat))
		p.addChart(pctChart("chart-task-e2e", "latency", "Task end to end (intended start to outcome known)", "ms", hists, []metrics.Hist{metrics.TaskE2E}))
		p.addChart(pctChart("chart-polls", "polling", "Polls per task", "polls", hists, []metrics.Hist{metrics.PollsPerTask}))
		p.addChart(pctChart("chart-amplification", "polling", "Poll amplification per task (polls / advised)", "ratio", hists, []metrics.Hist{metrics.PollAmplification}))
		p.addChart(pctChart("chart-lags", "lags", "Detection, result and cleanup lag", "ms", hists,
			[]metrics.Hist{metrics.DetectionLag, metrics.ResultLag, metrics.CleanupLag}))
	}
	if ts == nil || ts.rows == 0 {
		p.TSNote = "not recorded: the run directory has no " + TimeseriesFile + " rows"
	} else {
		p.timeCharts(ts, ev)
	}
	if ev == nil {
		p.EventsNote = "not recorded: the run injected no faults (no " + EventsFile + ")"
	}
	p.Data = reportData{Scenario: s.Scenario, Charts: p.Charts}
	return p
}

// addChart appends c unless it is nil (nothing recorded).
func (p *reportPage) addChart(c *chartData) {
	if c != nil {
		p.Charts = append(p.Charts, c)
	}
}

// faults fills the fault counts: the recovery gate's faults_injected (every fault, exact)
// when present, else the events events.csv kept.
func (p *reportPage) faults(s *Summary, ev *faultLog) {
	if fi, ok := s.Gates.Recovery.Evidence["faults_injected"].(map[string]any); ok && len(fi) > 0 {
		for _, k := range slices.Sorted(maps.Keys(fi)) {
			p.Faults = append(p.Faults, kv{k, valueText(fi[k])})
		}
	} else if ev != nil && len(ev.events) > 0 {
		n := map[string]int64{}
		for _, e := range ev.events {
			n[e.Key]++
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			p.Faults = append(p.Faults, kv{k, strconv.FormatInt(n[k], 10)})
		}
	}
	if ev != nil {
		p.FaultsMore = ev.moreNotKept
	}
}

func statRowOf(name string, m map[string]metrics.Stat) statRow {
	st, ok := m[name]
	if !ok {
		return statRow{Name: name}
	}
	return statRow{Name: name, Unit: st.Unit, Recorded: true, Count: st.Count, P50: num(st.P50),
		P90: num(st.P90), P99: num(st.P99), P999: num(st.P999), Max: num(st.Max), Avg: num(st.Mean)}
}

func taskCount(t Tasks, name string) int64 {
	switch name {
	case "created":
		return t.Created
	case "completed":
		return t.Completed
	case "failed":
		return t.Failed
	case "cancelled":
		return t.Cancelled
	case "expired":
		return t.Expired
	case "result_lost":
		return t.ResultLost
	case "unknown":
		return t.Unknown
	}
	return t.Dropped
}

// countsText is "k=v, k=v" in key order, or "-".
func countsText(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+strconv.FormatInt(m[k], 10))
	}
	return strings.Join(parts, ", ")
}

// valueText is a JSON value as the report shows it: numbers in as few digits as they
// take, strings as they are, anything else as compact JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case float64:
		return num(x)
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return jsonText(v)
}

// flatten lists a JSON value's leaves as path = value rows in key order, or nil for null.
// Values under keys that name credentials (headers, authorization, tokens, cookies,
// passwords) are never shown.
func flatten(v any) []kv {
	if v == nil {
		return nil
	}
	var out []kv
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				out = append(out, kv{path, "{}"})
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if secretKey(k) {
					out = append(out, kv{p, "(not shown)"})
					continue
				}
				walk(p, x[k])
			}
		case []any:
			if len(x) == 0 {
				out = append(out, kv{path, "[]"})
			}
			if scalars(x) {
				parts := make([]string, len(x))
				for i, e := range x {
					parts[i] = valueText(e)
				}
				out = append(out, kv{path, strings.Join(parts, ", ")})
				return
			}
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		default:
			out = append(out, kv{path, valueText(x)})
		}
	}
	walk("", v)
	return out
}

// scalars says no element of x is an object or an array.
func scalars(x []any) bool {
	for _, e := range x {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// secretKey says a manifest or server key may hold a credential.
func secretKey(k string) bool {
	switch strings.ToLower(k) {
	case "header", "headers", "authorization", "token", "tokens", "cookie", "cookies", "password", "secret":
		return true
	}
	return false
}
