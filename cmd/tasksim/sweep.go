package main

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
)

// `tasksim sweep` answers the tuning question of issue 7: which pollInterval and concurrency
// keep the server's request rate lowest while meeting every SLO. It runs one `tasksim run`
// per cell of the grid of --vary values, each into a directory of its own (kept), reads
// each cell's summary.json, and writes sweep.csv, sweep.html and a recommendation.

// Files of a sweep directory.
const (
	sweepCSVFile  = "sweep.csv"
	sweepHTMLFile = "sweep.html"
)

// variable is one --vary: a name and its values, in the order given.
type variable struct {
	name   string
	values []string
}

// varyAliases map the short names of --vary onto run flags; any other name is a scenario
// path passed as --set.
var varyAliases = map[string]string{
	"poll_interval": "--poll-interval", // advertised by the embedded server and the clients' fallback
	"clients":       "--clients",
	"rate":          "--rate",
	"duration":      "--duration",
}

type sweepFlags struct {
	vary, slo, sets, headers []string
	target, out              string
	cellDuration             time.Duration
	noProgress               bool
}

func parseSweepFlags(args []string, stderr io.Writer) (*sweepFlags, string, []variable, error) {
	f := &sweepFlags{}
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tasksim sweep [NAME|FILE] --vary NAME=V1,V2,... [--vary ...] [flags]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Runs the scenario once per cell of the grid of --vary values and recommends the cell")
		fmt.Fprintln(stderr, "with the lowest server request rate that meets every --slo. NAME is poll_interval,")
		fmt.Fprintln(stderr, "clients, rate, duration or any scenario path (as for --set). Writes sweep.csv,")
		fmt.Fprintln(stderr, "sweep.html and one run directory per cell under --out.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	fs.StringArrayVar(&f.vary, "vary", nil, "NAME=V1,V2,...: a dimension of the grid (repeatable)")
	fs.StringArrayVar(&f.slo, "slo", nil, "threshold expression every recommended cell must meet (repeatable), e.g. 'detection_lag.p99 < 2s'")
	fs.DurationVar(&f.cellDuration, "cell-duration", 0, "load phase of each cell (default: the scenario's duration)")
	fs.StringVar(&f.target, "target", "", "URL of a real MCP endpoint (default: the embedded mock server)")
	fs.StringArrayVar(&f.headers, "header", nil, "extra HTTP header for the target, 'K: V' (repeatable; values are never printed)")
	fs.StringArrayVar(&f.sets, "set", nil, "override a scenario field in every cell, path=value (repeatable)")
	fs.StringVar(&f.out, "out", "", "output directory (default runs/sweep-<scenario>-<UTC time>)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress bars")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, "", nil, err
		}
		return nil, "", nil, usageError{err}
	}
	if fs.NArg() > 1 {
		return nil, "", nil, usagef("sweep takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	name := "baseline"
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	if len(f.vary) == 0 {
		return nil, "", nil, usagef("sweep needs at least one --vary NAME=V1,V2,...")
	}
	vars, err := parseVary(f.vary)
	if err != nil {
		return nil, "", nil, err
	}
	for _, s := range f.slo {
		if _, err := results.ParseThreshold(s); err != nil {
			return nil, "", nil, usagef("--slo %q: %v", s, err)
		}
	}
	return f, name, vars, nil
}

// parseVary reads the --vary flags: each NAME=V1,V2,... with at least one value, no value
// twice, no name twice, and at most one of the names that set the client count.
func parseVary(flags []string) ([]variable, error) {
	var vars []variable
	for _, v := range flags {
		k, list, ok := strings.Cut(v, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usagef("--vary %q: want NAME=V1,V2,...", v)
		}
		if slices.ContainsFunc(vars, func(x variable) bool { return x.name == k }) {
			return nil, usagef("--vary %s given twice", k)
		}
		if isClientsVar(k) && slices.ContainsFunc(vars, func(x variable) bool { return isClientsVar(x.name) }) {
			return nil, usagef("--vary clients and --vary workload.clients set the same field: give one")
		}
		var vals []string
		for _, x := range strings.Split(list, ",") {
			x = strings.TrimSpace(x)
			if x == "" {
				continue
			}
			if slices.Contains(vals, x) {
				return nil, usagef("--vary %s: value %s given twice", k, x)
			}
			vals = append(vals, x)
		}
		if len(vals) == 0 {
			return nil, usagef("--vary %q: want NAME=V1,V2,...", v)
		}
		vars = append(vars, variable{name: k, values: vals})
	}
	return vars, nil
}

func isClientsVar(name string) bool { return name == "clients" || name == "workload.clients" }

// cell is one point of the grid and what its run measured.
type cell struct {
	index  int
	values []string // one per variable
	dir    string

	sum      *results.Summary
	exit     int    // the cell run's exit code (99 = a gate or threshold failed)
	err      string // why the cell has no figures
	reqRate  float64
	sloFails []string // SLOs not met, with their values
}

// label names the cell by its values: "poll_interval=1s clients=500".
func (c *cell) label(vars []variable) string {
	parts := make([]string, len(vars))
	for i, v := range vars {
		parts[i] = v.name + "=" + c.values[i]
	}
	return strings.Join(parts, " ")
}

// grid returns every combination of the variables' values, the last varying fastest.
func grid(vars []variable) []*cell {
	cells := []*cell{{}}
	for _, v := range vars {
		var next []*cell
		for _, c := range cells {
			for _, val := range v.values {
				next = append(next, &cell{values: append(slices.Clone(c.values), val)})
			}
		}
		cells = next
	}
	for i, c := range cells {
		c.index = i
	}
	return cells
}

// cellArgs is the `tasksim run` command line of cell c, without --out and --no-progress.
func cellArgs(f *sweepFlags, name string, vars []variable, c *cell) []string {
	args := []string{name}
	if f.cellDuration > 0 {
		args = append(args, "--duration", f.cellDuration.String())
	}
	if f.target != "" {
		args = append(args, "--target", f.target)
	}
	for _, h := range f.headers {
		args = append(args, "--header", h)
	}
	for _, s := range f.sets {
		args = append(args, "--set", s)
	}
	for i, v := range vars {
		if flag, ok := varyAliases[v.name]; ok {
			args = append(args, flag, c.values[i])
		} else {
			args = append(args, "--set", v.name+"="+c.values[i])
		}
	}
	return args
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	f, name, vars, err := parseSweepFlags(args, stderr)
	if err != nil {
		return err
	}
	cells := grid(vars)
	if err := checkSweep(f, name, vars, cells); err != nil { // before anything is created
		return err
	}
	dir := f.out
	if dir == "" {
		base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		dir = filepath.Join("runs", "sweep-"+base+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	fmt.Fprintf(stderr, "tasksim sweep: %s, %d cells\n", name, len(cells))

	var bars *sweepBars
	if !f.noProgress && isTerminal(stderr) {
		bars = newSweepBars(stderr, len(cells))
	}
	var stoppedAt *cell // the cell a signal interrupted: the sweep stops there
	for _, c := range cells {
		if stoppedAt != nil {
			c.err = "not run: the sweep was interrupted"
			continue
		}
		c.dir = filepath.Join(dir, fmt.Sprintf("cell-%02d", c.index))
		bars.startCell(c.label(vars))
		runErr := runRun(append(cellArgs(f, name, vars, c), "--out", c.dir, "--no-progress"),
			io.Discard, io.Discard) // its figures are read from its files
		bars.endCell()
		c.exit = exitCode(runErr)
		if c.exit == exitSignal { // Ctrl-C or SIGTERM stopped the cell: it stops the sweep too
			stoppedAt = c
		}
		var ue usageError
		switch {
		case errors.As(runErr, &ue): // checked before the sweep began: not expected
			return usagef("cell %s: %v", c.label(vars), ue.err)
		case c.exit != exitOK && c.exit != exitGate && c.exit != exitSignal:
			c.err = redactKnown(runErr.Error()) // the cell's own error, never a token
			fmt.Fprintf(stderr, "tasksim sweep: cell %s failed: %s\n", c.label(vars), c.err)
			continue
		}
		sum, err := results.ReadSummary(c.dir)
		if err != nil {
			c.err = err.Error()
			continue
		}
		c.sum = sum
		c.reqRate = requestRate(sum)
		if sum.Interrupted { // also when a gate failed in what the cell measured (exit 99)
			stoppedAt = c
		}
		for _, slo := range f.slo {
			th, _ := results.ParseThreshold(slo) // parsed once already
			if r := th.Eval(sum, nil); !r.Pass {
				c.sloFails = append(c.sloFails, fmt.Sprintf("%s (%s%s)", slo, num(r.Value), unitSuffix(r.Unit)))
			}
		}
	}
	bars.wait()

	rec := recommend(cells, vars)
	if err := writeSweepCSV(filepath.Join(dir, sweepCSVFile), vars, cells); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := writeSweepHTML(filepath.Join(dir, sweepHTMLFile), name, vars, cells, f.slo, rec); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	fmt.Fprint(stdout, rec.text)
	fmt.Fprintf(stdout, "files       %s, %s and one run directory per cell in %s\n", sweepCSVFile, sweepHTMLFile, filepath.Clean(dir))
	if stoppedAt != nil { // a partial sweep is never a pass, whatever it recommends
		return interruptedError{what: "the sweep stopped in cell " + stoppedAt.label(vars) +
			": the files hold the cells run so far, that one included"}
	}
	if rec.best == nil {
		for _, c := range cells {
			if c.sum != nil {
				return gateError{} // cells ran, none qualified: a failed gate (99)
			}
		}
		return errors.New("no cell produced a result") // runtime errors only (1)
	}
	return nil
}

// requestRate is the requests the cell sent per second of its run: what the server had to
// serve (embedded or not, every request counts once).
func requestRate(s *results.Summary) float64 {
	if s.DurationS <= 0 {
		return 0
	}
	var n int64
	for _, r := range s.Requests {
		n += r.Count
	}
	return float64(n) / s.DurationS
}

// recommendation is the sweep's answer.
type recommendation struct {
	best, runnerUp *cell
	text           string
}

// recommend picks, among the cells whose run passed and met every SLO, the one with the
// lowest request rate (ties: the earlier cell), and says why each other cell lost. A cell
// whose load generator fell behind its schedule (not trustworthy) still competes, since its
// figures are what the server saw, but the recommendation carries the warning.
func recommend(cells []*cell, vars []variable) recommendation {
	var ok []*cell
	for _, c := range cells {
		if c.sum != nil && len(c.sloFails) == 0 && c.exit == exitOK {
			ok = append(ok, c)
		}
	}
	slices.SortStableFunc(ok, func(a, b *cell) int { return cmp.Compare(a.reqRate, b.reqRate) })
	var rec recommendation
	var b strings.Builder
	if len(ok) > 0 {
		rec.best = ok[0]
		fmt.Fprintf(&b, "recommended %s: %s req/s, detection_lag p99 %sms, task_e2e p99 %sms (%s)\n",
			rec.best.label(vars), num(round3(rec.best.reqRate)), num(stat(rec.best.sum, "detection_lag").P99),
			num(stat(rec.best.sum, "task_e2e").P99), rec.best.dir)
		trustNote(&b, rec.best)
	} else {
		b.WriteString("recommended none: no cell passed and met every SLO\n")
	}
	if len(ok) > 1 {
		rec.runnerUp = ok[1]
		fmt.Fprintf(&b, "runner-up   %s: %s req/s\n", rec.runnerUp.label(vars), num(round3(rec.runnerUp.reqRate)))
		trustNote(&b, rec.runnerUp)
	}
	for _, c := range cells {
		if c == rec.best || c == rec.runnerUp {
			continue
		}
		fmt.Fprintf(&b, "lost        %s: %s\n", c.label(vars), whyLost(c, rec.best))
	}
	rec.text = b.String()
	return rec
}

// trustNote warns, under a recommended cell, that its load generator fell behind.
func trustNote(b *strings.Builder, c *cell) {
	if !c.sum.Trustworthy {
		fmt.Fprintf(b, "            warning: %s\n", c.sum.TrustNote)
	}
}

// whyLost says why c is not the recommendation.
func whyLost(c, best *cell) string {
	switch {
	case c.sum == nil:
		return "no result: " + c.err
	case len(c.sloFails) > 0:
		return "misses " + strings.Join(c.sloFails, ", ")
	case c.sum.Interrupted:
		return "interrupted before its end"
	case c.exit != exitOK:
		return "a gate or threshold of the scenario failed (verdict " + c.sum.Verdict + ")"
	case best != nil:
		why := fmt.Sprintf("%s req/s, above the recommended %s req/s", num(round3(c.reqRate)), num(round3(best.reqRate)))
		if !c.sum.Trustworthy {
			why += " (and not trustworthy: " + c.sum.TrustNote + ")"
		}
		return why
	}
	return "not recommended"
}

// figure is one column of sweep.csv and one heatmap of sweep.html.
type figure struct {
	name      string
	unit      string
	lowIsGood bool
	value     func(c *cell) float64
}

func stat(s *results.Summary, name string) metrics.Stat { return s.Metrics[name] }

var figures = []figure{
	{"request_rate", "req/s", true, func(c *cell) float64 { return round3(c.reqRate) }},
	{"polls_per_task_mean", "polls", true, func(c *cell) float64 { return stat(c.sum, "polls_per_task").Mean }},
	{"poll_amplification", "ratio", true, func(c *cell) float64 { return c.sum.Fleet.PollAmplification }},
	{"detection_lag_p50", "ms", true, func(c *cell) float64 { return stat(c.sum, "detection_lag").P50 }},
	{"detection_lag_p99", "ms", true, func(c *cell) float64 { return stat(c.sum, "detection_lag").P99 }},
	{"task_e2e_p99", "ms", true, func(c *cell) float64 { return stat(c.sum, "task_e2e").P99 }},
	{"errors", "count", true, func(c *cell) float64 {
		var n int64
		for _, r := range c.sum.Requests {
			n += r.Errors
		}
		return float64(n)
	}},
	{"backpressure_signals", "count", true, func(c *cell) float64 {
		return float64(c.sum.Counters[metrics.BackpressureSignals.Name()])
	}},
	{"tasks_completed", "count", false, func(c *cell) float64 { return float64(c.sum.Tasks.Completed) }},
}

// writeSweepCSV writes one row per cell: the varied values, then every figure, the SLO
// verdict and the cell's directory.
func writeSweepCSV(path string, vars []variable, cells []*cell) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{"cell"}
	for _, v := range vars {
		head = append(head, v.name)
	}
	for _, f := range figures {
		head = append(head, f.name)
	}
	head = append(head, "verdict", "meets_slo", "trustworthy", "dir")
	_ = w.Write(head)
	for _, c := range cells {
		row := append([]string{strconv.Itoa(c.index)}, c.values...)
		for _, f := range figures {
			if c.sum == nil {
				row = append(row, "")
				continue
			}
			v := f.value(c)
			row = append(row, num(v))
		}
		verdict, meets, trusted := "error", "", ""
		if c.sum != nil {
			verdict, meets, trusted = c.sum.Verdict, strconv.FormatBool(len(c.sloFails) == 0), strconv.FormatBool(c.sum.Trustworthy)
		}
		row = append(row, verdict, meets, trusted, c.dir)
		_ = w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// heatmap is one figure over the grid: rows are the first variable's values, columns the
// second's (a single column for a one-dimensional sweep; further variables, if any, are
// listed per cell in the tooltip and sweep.csv).
type heatmap struct {
	Name, Unit string
	Rows, Cols []string
	RowVar     string
	ColVar     string
	Cells      [][]heatCell
}

type heatCell struct {
	Text, Title string
	Color       template.CSS
	Best        bool
}

func writeSweepHTML(path, scenario string, vars []variable, cells []*cell, slos []string, rec recommendation) error {
	rowVar, colVar := vars[0], variable{name: "", values: []string{""}}
	if len(vars) > 1 {
		colVar = vars[1]
	}
	var maps []heatmap
	for _, f := range figures {
		hm := heatmap{Name: f.name, Unit: f.unit, Rows: rowVar.values, Cols: colVar.values, RowVar: rowVar.name, ColVar: colVar.name}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range cells {
			if c.sum != nil {
				v := f.value(c)
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		hm.Cells = make([][]heatCell, len(rowVar.values))
		for r := range rowVar.values {
			hm.Cells[r] = make([]heatCell, len(colVar.values))
		}
		for _, c := range cells {
			r := slices.Index(rowVar.values, c.values[0])
			col := 0
			if len(vars) > 1 {
				col = slices.Index(colVar.values, c.values[1])
			}
			hc := heatCell{Text: "n/a", Title: c.label(vars), Color: "#eee", Best: c == rec.best}
			if c.sum != nil {
				v := f.value(c)
				hc.Text = num(v)
				hc.Color = heatColor(v, lo, hi, f.lowIsGood)
				if len(c.sloFails) > 0 {
					hc.Title += ": misses " + strings.Join(c.sloFails, ", ")
				}
			}
			if hm.Cells[r][col].Text == "" { // with more than two variables: the first cell shown
				hm.Cells[r][col] = hc
			}
		}
		maps = append(maps, hm)
	}
	var b bytes.Buffer
	err := sweepPage.Execute(&b, map[string]any{
		"Scenario": scenario, "Vars": vars, "SLOs": slos, "Maps": maps, "Recommendation": rec.text,
	})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// heatColor maps v in [lo, hi] to green (good) .. red (bad).
func heatColor(v, lo, hi float64, lowIsGood bool) template.CSS {
	t := 0.5
	if hi > lo {
		t = (v - lo) / (hi - lo)
	}
	if !lowIsGood {
		t = 1 - t
	}
	hue := 120 * (1 - t) // 120 green .. 0 red
	return template.CSS(fmt.Sprintf("hsl(%d, 70%%, 80%%)", int(hue)))
}

var sweepPage = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tasksim sweep: {{.Scenario}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table.hm{border-collapse:collapse;margin:0 0 1.5em}
table.hm td,table.hm th{border:1px solid #999;padding:.3em .7em;text-align:right}
td.best{outline:3px solid #222}
pre{background:#f6f6f6;padding:1em}
@media print{body{margin:0}section{break-inside:avoid}}
</style></head><body>
<h1>tasksim sweep: {{.Scenario}}</h1>
<section id="recommendation"><h2>Recommendation</h2>
<p>SLOs: {{range $i, $s := .SLOs}}{{if $i}}, {{end}}<code>{{$s}}</code>{{else}}none{{end}}</p>
<pre>{{.Recommendation}}</pre></section>
{{range $hm := .Maps}}<section class="heatmap" id="hm-{{$hm.Name}}"><h2>{{$hm.Name}} ({{$hm.Unit}})</h2>
<table class="hm"><tr><th>{{$hm.RowVar}}{{if $hm.ColVar}} \ {{$hm.ColVar}}{{end}}</th>{{range $hm.Cols}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $row := $hm.Cells}}<tr><th>{{index $hm.Rows $i}}</th>{{range $row}}<td style="background:{{.Color}}" title="{{.Title}}"{{if .Best}} class="best"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table></section>
{{end}}</body></html>
`))

// exitCode is the exit code run would give err (see main.go).
func exitCode(err error) int {
	switch {
	case err == nil || errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)):
		return exitUsage
	case errors.As(err, new(gateError)):
		return exitGate
	case errors.As(err, new(interruptedError)):
		return exitSignal
	}
	return exitRuntime
}

// num formats a figure with at most 3 decimals and no trailing zeros.
func num(v float64) string { return strconv.FormatFloat(round3(v), 'f', -1, 64) }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// unitSuffix is how a threshold's unit follows its value in a message.
func unitSuffix(unit string) string {
	switch unit {
	case "ms", "%":
		return unit
	case "per_s":
		return "/s"
	}
	return ""
}

// sweepBars are the sweep's progress bars (mpb): one overall bar (cells done of all) and
// one per cell, which shows the cell's values and its elapsed time and stays when it ends.
// A nil *sweepBars shows nothing (stderr not a terminal, or --no-progress).
type sweepBars struct {
	p       *mpb.Progress
	overall *mpb.Bar
	cell    *mpb.Bar
}

func newSweepBars(w io.Writer, cells int) *sweepBars {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(250*time.Millisecond))
	overall := p.AddBar(int64(cells), mpb.BarPriority(1<<30), // always the last line
		mpb.PrependDecorators(decor.Name("sweep "), decor.CountersNoUnit("%d/%d cells")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	return &sweepBars{p: p, overall: overall}
}

func (b *sweepBars) startCell(label string) {
	if b == nil {
		return
	}
	b.cell = b.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerClearOnComplete(),
		mpb.PrependDecorators(decor.Name(label+" ")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
}

func (b *sweepBars) endCell() {
	if b == nil {
		return
	}
	b.cell.SetTotal(-1, true)
	b.overall.Increment()
}

func (b *sweepBars) wait() {
	if b == nil {
		return
	}
	b.overall.SetTotal(-1, true)
	b.p.Wait()
}
