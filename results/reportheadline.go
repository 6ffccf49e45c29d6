package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/metrics"
)

// The strip of headline figures under the verdict, and how report.html writes numbers.

// figure is one headline figure: Value in Unit, or "no data" (Class "nodata"). Class
// "fail" marks a figure a failing threshold reads, "warn" errors that failed nothing.
type figure struct {
	ID, Label, Value, Unit, Sub, Class string
}

// headline computes the strip of figures under the verdict.
func (p *reportPage) headline(s *Summary) {
	var sent, errs, refused int64
	for _, rs := range s.Requests {
		sent, errs, refused = sent+rs.Count, errs+rs.Errors, refused+rs.ByOutcome["backpressure"]
	}
	t := s.Tasks
	tasks := figure{ID: "fig-tasks", Label: "Throughput", Unit: "tasks/s"}
	if t.Created > 0 && s.DurationS > 0 {
		tasks.Value = figureText(float64(t.Created)/s.DurationS, "")
		tasks.Sub = fmt.Sprintf("%s created, %s completed in %s s", thousands(t.Created), thousands(t.Completed), num(s.DurationS))
	} else {
		tasks.Sub = "no task was created"
	}
	errFig := figure{ID: "fig-errors", Label: "Errors", Unit: "errors"}
	if sent > 0 {
		errFig.Value = thousands(errs)
		errFig.Sub = figureText(100*float64(errs)/float64(sent), "%") + " of " + thousands(sent) + " requests"
		if errs > 0 {
			errFig.Class = "warn"
		}
	} else {
		errFig.Sub = "no request was sent"
	}
	polls := statFigure("fig-polls", "Polls per task", "polls, mean", s.Metrics[metrics.PollsPerTask.Name()], false)
	if amp, _, _ := s.Fleet.Measured(); polls.Value != "" && amp && s.Fleet.PollAmplification > 0 {
		polls.Sub += "; fleet amplification " + num(s.Fleet.PollAmplification)
	}
	bp := figure{ID: "fig-backpressure", Label: "Backpressure", Unit: "signals"}
	if n, ok := s.Counters[metrics.BackpressureSignals.Name()]; ok {
		bp.Value = thousands(n)
		bp.Sub = thousands(refused) + " requests refused (429, capacity), not errors"
	} else {
		bp.Sub = "not counted by this run"
	}
	missing := figure{ID: "fig-unknown", Label: "Lost or unknown", Unit: "tasks"}
	if t.Created > 0 || t.Unknown > 0 {
		n := t.Lost + t.Unknown + t.ResultLost
		missing.Value = thousands(n)
		missing.Sub = fmt.Sprintf("%s lost before their ttl, %s of unknown outcome, %s results lost", thousands(t.Lost), thousands(t.Unknown), thousands(t.ResultLost))
		if n > 0 {
			missing.Class = "warn"
		}
	} else {
		missing.Sub = "no task was created"
	}
	p.Figures = []figure{tasks, errFig, missing, polls,
		statFigure("fig-detection", "Detection lag p99", "ms", s.Metrics[metrics.DetectionLag.Name()], true),
		statFigure("fig-e2e", "Task e2e p99", "ms", s.Metrics[metrics.TaskE2E.Name()], true),
		bp}
	for i := range p.Figures {
		f := &p.Figures[i]
		if f.Value == "" {
			f.Value, f.Class = "no data", "nodata"
		}
	}
	p.markFailingFigures()
}

// statFigure is a histogram's p99 (p99 true) or mean as a figure.
func statFigure(id, label, unit string, st metrics.Stat, p99 bool) figure {
	f := figure{ID: id, Label: label, Unit: unit}
	if st.Count == 0 {
		f.Sub = "nothing recorded"
		return f
	}
	if p99 {
		f.Value = figureText(st.P99, "")
		f.Sub = "p50 " + figureText(st.P50, "") + " " + unit + ", max " + figureText(st.Max, "") + " " + unit
		return f
	}
	f.Value = figureText(st.Mean, "")
	f.Sub = "p99 " + figureText(st.P99, "")
	return f
}

// figureMetrics maps the metric a threshold reads (its whole left side, else the part
// before the first ".") to the headline figure it is about.
var figureMetrics = map[string]string{
	"requests.errors":        "fig-errors",
	"requests.errors_rate":   "fig-errors",
	"polls_per_task":         "fig-polls",
	"poll_amplification":     "fig-polls",
	"detection_lag":          "fig-detection",
	"task_e2e":               "fig-e2e",
	"backpressure_signals":   "fig-backpressure",
	"tasks.lost":             "fig-unknown",
	"tasks.lost_rate":        "fig-unknown",
	"tasks.unknown":          "fig-unknown",
	"tasks.unknown_rate":     "fig-unknown",
	"tasks.result_lost":      "fig-unknown",
	"tasks.result_lost_rate": "fig-unknown",
}

// markFailingFigures marks the figures that a failing threshold reads.
func (p *reportPage) markFailingFigures() {
	for _, r := range p.Thresholds {
		i := strings.IndexAny(r.Expr, "<>=!")
		if r.Class != "fail" || i < 0 {
			continue
		}
		left := strings.TrimSpace(r.Expr[:i])
		head, _, _ := strings.Cut(left, ".")
		id, ok := figureMetrics[left]
		if !ok {
			id = figureMetrics[head]
		}
		for j := range p.Figures {
			if id != "" && p.Figures[j].ID == id {
				p.Figures[j].Class = "fail"
			}
		}
	}
}

// figureText is a figure for a reader: thousands separated, three significant digits
// below 100 (58.9, 4.57, 0.134), a whole number above; units "%", "ms" and "per_s" are
// appended (12.5%, 4.57 ms, 15/s).
func figureText(v float64, unit string) string {
	var t string
	switch a := math.Abs(v); {
	case a >= 100 || v == math.Trunc(v):
		t = thousands(int64(math.Round(v)))
	case a >= 10:
		t = strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		t = strconv.FormatFloat(v, 'f', 2, 64)
	default:
		t = strconv.FormatFloat(v, 'g', 3, 64)
	}
	if strings.Contains(t, ".") && !strings.ContainsAny(t, "e") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	switch unit {
	case "%":
		return t + "%"
	case "ms":
		return t + " " + unit
	case "per_s":
		return t + "/s"
	}
	return t
}

// exactText is a figure as the summary holds it, with its unit: 58.015 ms, 12.5%, 1.75.
func exactText(v float64, unit string) string {
	switch unit {
	case "%":
		return num(v) + "%"
	case "ms":
		return num(v) + " ms"
	case "per_s":
		return num(v) + "/s"
	}
	return num(v)
}

// thousands is n with thousands separators: 12,345.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
