package results

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
)

// ReportFile is the run's self-contained HTML report.
const ReportFile = "report.html"

//go:embed assets/report.html.tmpl assets/compare.html.tmpl assets/report.css assets/report.js assets/uPlot.iife.min.js assets/uPlot.min.css
var assets embed.FS

// WriteReport renders report.html from the files of the run directory dir (summary.json,
// and timeseries.csv, histograms.hlog and events.csv when present) and writes it into dir.
// It reads only files, so `tasksim report DIR` re-renders a saved run to the same bytes. A
// directory of the contract suite alone (conform.json, no summary.json) gets the page
// WriteContractReport writes.
func WriteReport(dir string) error {
	b, err := RenderReport(dir)
	if err != nil {
		return err
	}
	return writeAtomic(dir, ReportFile, b)
}

// RenderReport returns report.html for the run directory dir. summary.json must exist; a
// missing timeseries.csv, histograms.hlog or events.csv leaves its part of the report saying
// "not recorded". Without summary.json, a directory holding conform.json (`tasksim conform
// --out DIR`) gets the page of the contract suite alone. The page is self-contained
// (inline CSS, the chart library and the data inline; it fetches nothing) and
// deterministic: the same files give the same bytes.
func RenderReport(dir string) ([]byte, error) {
	s, err := ReadSummary(dir)
	if errors.Is(err, fs.ErrNotExist) {
		c, cerr := ReadContract(dir)
		switch {
		case cerr == nil:
			return renderContractPage(c)
		case !errors.Is(cerr, fs.ErrNotExist):
			return nil, cerr
		}
	}
	if err != nil {
		return nil, err
	}
	return renderRunPage(dir, s)
}

// renderRunPage renders the report of the run in dir whose summary is s, as summary.json
// reads back; the run's other files are read from dir.
func renderRunPage(dir string, s *Summary) ([]byte, error) {
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
	t, err := template.New(ReportFile).Funcs(template.FuncMap{"num": num, "thousands": thousands}).Parse(string(src))
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

// reportPage is what assets/report.html.tmpl renders, in page order: every string is
// data, escaped by html/template; Data goes into the page as JSON for the chart script.
type reportPage struct {
	S          *Summary
	ExitCode   int
	Verdict    verdictView
	Figures    []figure // the headline strip
	Gates      []gateRow
	Thresholds []thresholdRow
	Contract   *contractView // the contract suite's cases; nil = the run did not run it
	Rollback   *rollbackView // the rollback drill; nil = the run rehearsed none, or its switch never flipped
	Outcomes   []outcomeCell
	Requests   []requestRow // per method, then the total
	Input      evidence     // input_required and elicitations; empty = none seen
	Errors     *grid        // the top errors; nil = none listed
	Manifest   evidence     // the capability manifest; empty = not recorded
	Server     evidence     // the embedded server's figures; empty = not recorded
	Config     []fact
	Runtime    evidence
	Latency    []statRow // latency_* and task_e2e, in metrics.Hist order
	Polling    []statRow
	Fleet      []fact
	Lags       []statRow
	Clamped    []fact
	Faults     []fact // fault counts by source.kind; nil = none recorded
	FaultsMore int64  // events counted beyond the ones events.csv kept
	HlogNote   string // why the distribution charts are missing; "" = recorded
	TSNote     string // why the time series are missing; "" = recorded
	QueueNote  string // why the downstream queue chart is missing; "" = drawn
	EventsNote string // why the fault timeline is missing; "" = recorded
	RollbackAt string // when a rollback drill's switch flipped, in seconds; "" = none
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
// Scales, when set, puts series i on the left axis ("y", in Unit) or the right one ("y2",
// in Unit2).
type chartData struct {
	ID      string       `json:"id"`
	Section string       `json:"-"`
	Kind    string       `json:"kind"`
	Title   string       `json:"title"`
	Unit    string       `json:"unit"`
	Unit2   string       `json:"unit2,omitempty"`
	Series  []string     `json:"series"`
	Scales  []string     `json:"scales,omitempty"`
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

// buildPage assembles the page from the run's summary, as summary.json reads back (what an
// older or newer file lacks is absent in its types: summaryread.go), and its other files;
// hists, ts and ev may be nil.
func buildPage(s *Summary, hists map[metrics.Hist]*hdrhistogram.Histogram, ts *timeseries, ev *faultLog) *reportPage {
	p := &reportPage{
		S: s, ExitCode: s.ExitCode(),
		CSS: template.CSS(asset("report.css")), LibCSS: template.CSS(asset("uPlot.min.css")),
		Lib: template.JS(asset("uPlot.iife.min.js")), Script: template.JS(asset("report.js")),
	}
	for _, g := range s.Gates.list() {
		p.Gates = append(p.Gates, gateRowOf(g))
	}
	for _, r := range s.Thresholds {
		p.Thresholds = append(p.Thresholds, thresholdRowOf(r, ts))
	}
	if s.Contract != nil {
		p.Contract = contractViewOf(s.Contract.normalized())
	}
	p.Rollback = rollbackViewOf(s.Gates.Rollback)
	p.verdict(s)
	p.headline(s)
	p.outcomes(&s.Tasks)
	p.requests(s)
	p.input(s)
	errs, _ := generic(s.Errors).([]any)
	if g, ok := arrayGrid(errs); ok {
		p.Errors = &g
	}
	p.Manifest = viewObject(generic(s.Manifest), nil)
	p.Server = viewObject(generic(s.Server), nil)
	p.Runtime = viewObject(generic(s.Runtime), nil)
	p.config(s)
	p.stats(s)
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
		rb := rollbackMark(s)
		if len(rb) > 0 {
			p.RollbackAt = num(rb[0].T)
		}
		p.timeCharts(ts, ev, !s.Server.IsZero(), rb)
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
