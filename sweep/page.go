package sweep

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The renderings of a Result: the printed answer, sweep.csv and sweep.html. Each is a
// function of the result alone, so a saved sweep.json renders the same bytes again.

// WriteFiles writes the files of a sweep into dir: sweep.json, then sweep.csv and
// sweep.html, the page rendered from the sweep.json just written, as `tasksim report` does.
func WriteFiles(dir string, r *Result) error {
	if err := WriteJSON(dir, r); err != nil {
		return err
	}
	if err := WriteCSV(filepath.Join(dir, CSVFile), dir, r); err != nil {
		return err
	}
	return WriteReport(dir)
}

// WriteReport renders dir/sweep.html from dir/sweep.json.
func WriteReport(dir string) error {
	r, err := ReadJSON(dir)
	if err != nil {
		return err
	}
	return WriteHTML(dir, r)
}

// WriteText prints the answer: for each client count the recommended cell, the runner-up
// and why each other cell lost, then the capacity when clients are varied. dir is joined
// before each cell's directory ("" gives paths relative to the sweep directory).
func WriteText(w io.Writer, r *Result, dir string) {
	grouped := r.clientsVar() >= 0
	if eras := r.Protocols(); eras != "" {
		fmt.Fprintf(w, "protocol    %s\n", eras)
	}
	lost := func(c *Cell) { fmt.Fprintf(w, "lost        %s: %s\n", r.label(c), c.Why) }
	if r.Interrupted {
		fmt.Fprintf(w, "recommended none: %s\n", r.NoRecommendation)
		if grouped {
			fmt.Fprintf(w, "capacity    none: %s\n", r.NoCapacity)
		}
		for i := range r.Cells {
			lost(&r.Cells[i])
		}
		return
	}
	for _, g := range r.groups() {
		best := g.pick(RoleRecommended)
		switch {
		case best != nil:
			fmt.Fprintf(w, "recommended %s: %s req/s, detection_lag p99 %sms, task_e2e p99 %sms (%s)\n",
				r.label(best), num(round3(best.Figures.RequestRate)), num(best.Figures.DetectionLagP99),
				num(best.Figures.TaskE2EP99), filepath.Join(dir, best.Cell))
			trustNote(w, best)
		case g.pick(RoleIndistinguishable) != nil:
			label := "none"
			if grouped {
				label = g.label + ": none"
			}
			fmt.Fprintf(w, "recommended %s: cells indistinguishable: %s\n", label, strings.TrimPrefix(g.pick(RoleIndistinguishable).Why, "indistinguishable: "))
		case grouped:
			fmt.Fprintf(w, "recommended %s: none: no cell passed and met every SLO\n", g.label)
		default:
			fmt.Fprintf(w, "recommended none: %s\n", r.NoRecommendation)
		}
		if ru := g.pick(RoleRunnerUp); ru != nil {
			fmt.Fprintf(w, "runner-up   %s: %s req/s\n", r.label(ru), num(round3(ru.Figures.RequestRate)))
			trustNote(w, ru)
		}
		for _, c := range g.cells {
			if c.Role == RoleLost {
				lost(c)
			}
		}
	}
	if grouped {
		for i, line := range capacityLines(r) {
			head := "capacity   "
			if i > 0 {
				head = "           "
			}
			fmt.Fprintf(w, "%s %s\n", head, line)
		}
	}
}

// trustNote warns, under a recommended cell, that its load generator fell behind.
func trustNote(w io.Writer, c *Cell) {
	if !c.Trustworthy {
		fmt.Fprintf(w, "            warning: %s\n", c.TrustNote)
	}
}

// capacityLines says what the capacity is and how far to trust it: the first line the
// figure, the others warnings.
func capacityLines(r *Result) []string {
	c := r.Capacity
	if c == nil {
		return []string{"none: " + r.NoCapacity}
	}
	name := r.Vary[r.clientsVar()].Name
	where := c.Cell
	if best := r.cell(c.Cell); best != nil {
		where = r.label(best) + ", " + c.Cell
	}
	first := fmt.Sprintf("%s=%d (%s): every count tried passed and met every SLO, so the server carries at least "+
		"that many; try larger counts to find the limit", name, c.Clients, where)
	if c.LimitFound {
		first = fmt.Sprintf("%s=%d (%s): the largest count below the first failing one; %s=%d failed: %s",
			name, c.Clients, where, name, c.FirstFailure.Clients, c.FirstFailure.Why)
	}
	lines := []string{first}
	if !c.Contiguous {
		lines = append(lines, "warning: "+countList(name, c.PassedAbove)+" passed above the first failure: the passing counts are "+
			"not contiguous, so the capacity stays below it (longer cells tell noise from a real limit)")
	}
	if c.Warning != "" {
		lines = append(lines, "warning: "+c.Warning)
	}
	return lines
}

// figure is one column of sweep.csv and one heatmap of sweep.html.
type figure struct {
	name      string
	unit      string
	lowIsGood bool
	value     func(f *Figures) float64
}

var figures = []figure{
	{"request_rate", "req/s", true, func(f *Figures) float64 { return round3(f.RequestRate) }},
	{"polls_per_task_mean", "polls", true, func(f *Figures) float64 { return f.PollsPerTaskMean }},
	{"poll_amplification", "ratio", true, func(f *Figures) float64 { return f.PollAmplification }},
	{"detection_lag_p50", "ms", true, func(f *Figures) float64 { return f.DetectionLagP50 }},
	{"detection_lag_p99", "ms", true, func(f *Figures) float64 { return f.DetectionLagP99 }},
	{"task_e2e_p99", "ms", true, func(f *Figures) float64 { return f.TaskE2EP99 }},
	{"errors", "count", true, func(f *Figures) float64 { return float64(f.Errors) }},
	{"backpressure_signals", "count", true, func(f *Figures) float64 { return float64(f.BackpressureSignals) }},
	{"creates_pushed_back", "count", true, func(f *Figures) float64 { return float64(f.CreatesPushedBack) }},
	{"tasks_completed", "count", false, func(f *Figures) float64 { return float64(f.TasksCompleted) }},
}

// WriteCSV writes one row per cell: the varied values, then every figure, the cell's
// verdict ("error" without a result), whether it met every SLO, whether it was trustworthy,
// the protocol version its run spoke, and its run directory under dir ("" for a cell not
// run).
func WriteCSV(path, dir string, r *Result) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{"cell"}
	for _, v := range r.Vary {
		head = append(head, v.Name)
	}
	for _, f := range figures {
		head = append(head, f.name)
	}
	head = append(head, "verdict", "meets_slo", "trustworthy", "protocol", "dir")
	_ = w.Write(head)
	for _, c := range r.Cells {
		row := []string{strconv.Itoa(c.Index)}
		for _, v := range r.Vary {
			row = append(row, c.Values[v.Name])
		}
		for _, f := range figures {
			if c.Figures == nil {
				row = append(row, "")
				continue
			}
			row = append(row, num(f.value(c.Figures)))
		}
		verdict, meets, trusted, cellDir := "error", "", "", ""
		if c.Figures != nil {
			verdict, meets, trusted = c.Verdict, strconv.FormatBool(len(c.SLOFails) == 0), strconv.FormatBool(c.Trustworthy)
		}
		if c.Run {
			cellDir = filepath.Join(dir, c.Cell)
		}
		_ = w.Write(append(row, verdict, meets, trusted, c.Protocol, cellDir))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// Protocols says which protocol versions the cells' runs spoke, in the order first met
// ("" when no cell has a result): the era is a figure of every sweep, varied or not.
func (r *Result) Protocols() string {
	var seen []string
	for _, c := range r.Cells {
		if c.Protocol != "" && !slices.Contains(seen, c.Protocol) {
			seen = append(seen, c.Protocol)
		}
	}
	return strings.Join(seen, ", ")
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

// pickRow is one row of the recommendations table of sweep.html.
type pickRow struct {
	Pick
	Label, DetectionLagP99, TaskE2EP99, Rate string
}

// WriteHTML renders r as dir/sweep.html.
func WriteHTML(dir string, r *Result) error {
	b, err := RenderHTML(r)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, HTMLFile), b, 0o644)
}

// RenderHTML is sweep.html: the recommendations, the capacity, the printed answer and
// one heatmap per figure. It is self-contained: links go only to the cells' report.html.
func RenderHTML(r *Result) ([]byte, error) {
	var text bytes.Buffer
	WriteText(&text, r, "")
	var picks []pickRow
	for _, p := range r.Recommended {
		row := pickRow{Pick: p, Rate: num(round3(p.RequestRate))}
		if c := r.cell(p.Cell); c != nil && c.Figures != nil {
			row.Label, row.DetectionLagP99, row.TaskE2EP99 = r.label(c), num(c.Figures.DetectionLagP99), num(c.Figures.TaskE2EP99)
		}
		picks = append(picks, row)
	}
	var capacity []string
	var headline string
	if r.clientsVar() >= 0 {
		capacity, headline = capacityLines(r), capacityHeadline(r)
	}
	var b bytes.Buffer
	err := page.Execute(&b, map[string]any{
		"R": r, "Picks": picks, "Capacity": capacity, "Maps": heatmaps(r), "Text": text.String(),
		"CapacityHeadline": headline,
	})
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// heatmaps are the figures over the grid, the recommended cells outlined.
func heatmaps(r *Result) []heatmap {
	rowVar, colVar := r.Vary[0], Vary{Values: []string{""}}
	if len(r.Vary) > 1 {
		colVar = r.Vary[1]
	}
	var maps []heatmap
	for _, f := range figures {
		hm := heatmap{Name: f.name, Unit: f.unit, Rows: rowVar.Values, Cols: colVar.Values, RowVar: rowVar.Name, ColVar: colVar.Name}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range r.Cells {
			if c.Figures != nil {
				v := f.value(c.Figures)
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		hm.Cells = make([][]heatCell, len(rowVar.Values))
		for i := range hm.Cells {
			hm.Cells[i] = make([]heatCell, len(colVar.Values))
		}
		for i := range r.Cells {
			c := &r.Cells[i]
			row, col := slices.Index(rowVar.Values, c.Values[rowVar.Name]), 0
			if len(r.Vary) > 1 {
				col = slices.Index(colVar.Values, c.Values[colVar.Name])
			}
			if row < 0 || col < 0 || hm.Cells[row][col].Text != "" {
				continue // with more than two variables: the first cell shown
			}
			hc := heatCell{Text: "n/a", Title: r.label(c), Color: "#eee", Best: c.Role == RoleRecommended}
			if c.Figures != nil {
				v := f.value(c.Figures)
				hc.Text, hc.Color = num(v), heatColor(v, lo, hi, f.lowIsGood)
			}
			if c.Why != "" {
				hc.Title += ": " + c.Why
			}
			hm.Cells[row][col] = hc
		}
		maps = append(maps, hm)
	}
	return maps
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

// capacityHeadline is the capacity in a few words: "clients=500", "at least clients=1000"
// (no count tried failed) or "none".
func capacityHeadline(r *Result) string {
	c := r.Capacity
	switch {
	case c == nil:
		return "none"
	case !c.LimitFound:
		return "at least " + r.Vary[r.clientsVar()].Name + "=" + strconv.Itoa(c.Clients)
	}
	return r.Vary[r.clientsVar()].Name + "=" + strconv.Itoa(c.Clients)
}

var page = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tasksim sweep: {{.R.Scenario}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:0 0 1.5em}
td,th{border:1px solid #999;padding:.3em .7em;text-align:right}
td.best{outline:3px solid #222}
.warn{color:#a40}
pre{background:#f6f6f6;padding:1em}
@media print{body{margin:0}section{break-inside:avoid}}
</style></head><body>
<h1>tasksim sweep: {{.R.Scenario}}</h1>
{{with .R.Protocols}}<p id="protocol">Protocol: {{.}} (what each figure measures in each era: docs/METRICS.md#eras)</p>
{{end}}{{if .R.Interrupted}}<p class="warn" id="interrupted">Interrupted in {{.R.InterruptedIn}}: a partial sweep recommends nothing and reports no capacity.</p>
{{end}}<section id="recommendation"><h2>Recommendation</h2>
<p>SLOs: {{range $i, $s := .R.SLOs}}{{if $i}}, {{end}}<code>{{$s}}</code>{{else}}none{{end}}</p>
{{if .Picks}}<table class="picks"><tr><th>clients</th><th>recommended</th><th>cell</th><th>request_rate (req/s)</th><th>detection_lag p99 (ms)</th><th>task_e2e p99 (ms)</th><th>runner-up</th><th>warning</th></tr>
{{range .Picks}}<tr><td>{{.Clients}}</td><td>{{.Label}}</td><td><a href="{{.Cell}}/report.html">{{.Cell}}</a></td><td>{{.Rate}}</td><td>{{.DetectionLagP99}}</td><td>{{.TaskE2EP99}}</td><td>{{.RunnerUp}}</td><td class="warn">{{.Warning}}</td></tr>
{{end}}</table>
{{else}}<p>Recommended: none: {{.R.NoRecommendation}}</p>
{{end}}<pre>{{.Text}}</pre></section>
{{if .Capacity}}<section id="capacity"><h2>Capacity: {{.CapacityHeadline}}</h2>
{{range $i, $l := .Capacity}}<p{{if $i}} class="warn"{{end}}>{{$l}}</p>
{{end}}</section>
{{end}}{{range $hm := .Maps}}<section class="heatmap" id="hm-{{$hm.Name}}"><h2>{{$hm.Name}} ({{$hm.Unit}})</h2>
<table class="hm"><tr><th>{{$hm.RowVar}}{{if $hm.ColVar}} \ {{$hm.ColVar}}{{end}}</th>{{range $hm.Cols}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $row := $hm.Cells}}<tr><th>{{index $hm.Rows $i}}</th>{{range $row}}<td style="background:{{.Color}}" title="{{.Title}}"{{if .Best}} class="best"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table></section>
{{end}}</body></html>
`))
