package results

import (
	"bytes"
	"encoding/json"
	"html"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// Tests of compare.html, rendered from the comparison of two small saved runs.

// plantedDir is in the name of the baseline's directory: the page must show it as text.
const plantedDir = `base<script>alert("dir")<`

// writeCompareRun writes into dir a trustworthy run of six one-second windows (a comparison judges a run of at least MinSections), each
// with 400 tasks/get replies of 10..49 ms times slow and 50 tasks created and completed.
// Its windows end lag after each second (a run's windows never end on the same instants
// as another's).
func writeCompareRun(t *testing.T, dir string, slow int64, lag time.Duration) {
	t.Helper()
	rec := metrics.NewRecorder(1, t0)
	sh := rec.Shard(0)
	var windows []metrics.Window
	for w := range 6 {
		for i := range int64(400) {
			sh.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, ms((10+i%40)*slow))
		}
		sh.Add(metrics.Polls, 400)
		for i := range int64(50) {
			sh.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, ms(20+i%10))
			sh.Reply(mcp.OpTasksResult, metrics.OutcomeOK, 0, 200, ms(5+i%5))
			sh.RecordDuration(metrics.TaskE2E, ms(500+10*i))
			sh.Record(metrics.PollsPerTask, 8)
		}
		sh.Add(metrics.TasksCreated, 50)
		sh.Add(metrics.TasksCompleted, 50)
		rec.SetGauge(metrics.InFlight, int64(10+w))
		windows = append(windows, rec.Flush(sec(w+1).Add(lag)))
	}
	budget := 1.0
	info := RunInfo{
		Version: "0.1.0", Scenario: "compare", Seed: 7, Protocol: "2025-11-25",
		StartedAt: t0, Duration: 6*time.Second + lag, PollInterval: time.Second, ErrorBudget: &budget,
		InvalidTransitionSample: []string{},
		Config:                  &RunConfig{ScenarioHash: "sha256:0123456789abcdef", DurationS: 6, Tool: "work_task", Clients: 4, Shards: "0/1"},
	}
	writeRun(t, dir, Build(info, rec.Total(), windows), t0, windows, nil, 0)
}

// comparedRuns writes a baseline and a candidate whose tasks/get is twice as slow, and
// returns their directories.
func comparedRuns(t *testing.T) (base, cand string) {
	t.Helper()
	root := t.TempDir()
	base, cand = filepath.Join(root, plantedDir), filepath.Join(root, "cand")
	writeCompareRun(t, base, 1, 0)
	writeCompareRun(t, cand, 2, 7*time.Millisecond)
	return base, cand
}

// comparePageOf compares the runs and renders the page.
func comparePageOf(t *testing.T, base, cand string) (*Comparison, string) {
	t.Helper()
	c, err := Compare(base, cand, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := RenderComparison(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, string(b)
}

// comparedPage renders the page of comparedRuns.
func comparedPage(t *testing.T) (*Comparison, string) {
	t.Helper()
	base, cand := comparedRuns(t)
	return comparePageOf(t, base, cand)
}

// pageCharts decodes the page's inline chart data.
func pageCharts(t *testing.T, page string) map[string]compareChartJSON {
	t.Helper()
	m := regexp.MustCompile(`const TASKSIM_REPORT = (.*);</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no TASKSIM_REPORT in the page")
	}
	var data struct{ Charts []compareChartJSON }
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	out := map[string]compareChartJSON{}
	for _, c := range data.Charts {
		out[c.ID] = c
	}
	return out
}

// compareChartJSON is a chart as report.js reads it.
type compareChartJSON struct {
	ID, Kind string
	Series   []string
	X        []float64
	XS       [][]float64
	Y        [][]*float64
}

func TestCompareReportPage(t *testing.T) {
	c, page := comparedPage(t)
	if c.Verdict != CompareVerdictFail {
		var b bytes.Buffer
		_ = WriteComparisonText(&b, c)
		t.Fatalf("verdict %s, want fail:\n%s", c.Verdict, b.String())
	}
	verdict, table := strings.Index(page, `<section id="verdict">`), strings.Index(page, `<table id="budget-table">`)
	if verdict < 0 || table < 0 || verdict > table {
		t.Errorf("verdict at %d, budget table at %d: want the verdict first", verdict, table)
	}
	if !strings.Contains(page, `<p class="word">FAIL <span class="exit">exit code 99</span></p>`) {
		t.Error("no FAIL verdict with exit code 99")
	}
	for _, f := range c.Failures {
		if !strings.Contains(html.UnescapeString(page), "<li>"+f+"</li>") {
			t.Errorf("failure %q not listed", f)
		}
	}
	regressions := 0
	for _, m := range c.Metrics {
		row := regexp.MustCompile(`<tr(?: class="([a-z]*)")? id="metric-` + regexp.QuoteMeta(m.Metric) + `">.*</tr>`).FindStringSubmatch(page)
		switch {
		case row == nil:
			t.Errorf("no row of %s", m.Metric)
		case m.Verdict == MetricRegression:
			regressions++
			if row[1] != "fail" || !strings.Contains(row[0], `<td class="status">REGRESSION</td>`) {
				t.Errorf("regression %s not marked: %s", m.Metric, row[0])
			}
		case row[1] == "fail":
			t.Errorf("%s (%s) is marked as a regression", m.Metric, m.Verdict)
		}
	}
	if regressions == 0 {
		t.Error("no regression in the comparison: the test runs do not test the marking")
	}
	if !regexp.MustCompile(`[0-9.]+ms<span class="detail">95%: [0-9.]+ms\.\.[0-9.]+ms, n = 2,400</span>`).MatchString(page) {
		t.Error("no 95% interval and sample count of a figure")
	}
}

func TestCompareReportCharts(t *testing.T) {
	_, page := comparedPage(t)
	charts := pageCharts(t, page)
	get, ok := charts["chart-pct-latency_tasks_get"]
	if !ok || get.Kind != "percentile" {
		t.Fatalf("no percentile chart of latency_tasks_get: %v", slices.Collect(maps.Keys(charts)))
	}
	if !slices.Equal(get.Series, []string{"baseline", "candidate"}) || len(get.Y) != 2 {
		t.Fatalf("series %q, want baseline and candidate", get.Series)
	}
	for i, ys := range get.Y {
		if len(ys) != len(get.X) || ys[0] == nil {
			t.Errorf("%s: %d values for %d x, first %v", get.Series[i], len(ys), len(get.X), ys[0])
		}
	}
	if b, c := get.Y[0][0], get.Y[1][0]; b != nil && c != nil && *c <= *b {
		t.Errorf("candidate's p0 %v is not above the baseline's %v", *c, *b)
	}
	for _, id := range []string{"chart-pct-latency_tools_call", "chart-pct-latency_tasks_result", "chart-pct-task_e2e"} {
		if _, ok := charts[id]; !ok {
			t.Errorf("no chart %s", id)
		}
	}
	for _, id := range []string{"chart-pct-detection_lag", "chart-ts-detection_lag_p99_ms"} {
		if _, ok := charts[id]; ok {
			t.Errorf("chart %s of detection_lag, which neither run recorded", id)
		}
	}
	for _, col := range []string{"requests", "errors", "latency_tasks_get_p99_ms", "task_e2e_p99_ms", "in_flight"} {
		ts, ok := charts["chart-ts-"+col]
		if !ok || ts.Kind != "time" {
			t.Errorf("no time chart of %s", col)
			continue
		}
		if !slices.Equal(ts.Series, []string{"baseline", "candidate"}) || len(ts.XS) != 2 || len(ts.XS[0]) != 6 || len(ts.Y[1]) != 6 {
			t.Errorf("%s: series %q, xs %v", col, ts.Series, ts.XS)
			continue
		}
		if want := []float64{1, 1.007, 2, 2.007, 3, 3.007, 4, 4.007, 5, 5.007, 6, 6.007}; !slices.Equal(ts.X, want) {
			t.Errorf("%s: x %v, want the union of both runs' %v", col, ts.X, want)
		}
	}
}

// TestCompareReportOffline checks that the page fetches nothing and shows a planted
// directory name as text.
func TestCompareReportOffline(t *testing.T) {
	_, page := comparedPage(t)
	rest := strings.Replace(page, "/*! https://github.com/leeoniya/uPlot (v1.6.32) */", "", 1)
	rest = regexp.MustCompile(`xmlns(:\w+)?="http://www\.w3\.org/[^"]*"`).ReplaceAllString(rest, "")
	if m := regexp.MustCompile(`(?i)https?://\S{0,40}`).FindAllString(rest, -1); len(m) > 0 {
		t.Errorf("URLs in the page: %q", m)
	}
	for _, re := range []string{`(?i)<[a-z]+[^>]*\s(src|href|srcset|poster|action)\s*=`, `(?i)url\(`, `(?i)@import`, `(?i)<link\b`, `(?i)<iframe\b`} {
		if m := regexp.MustCompile(re).FindAllString(page, 3); len(m) > 0 {
			t.Errorf("%s in the page: %q", re, m)
		}
	}
	if n := strings.Count(strings.ToLower(page), "<script"); n != 4 {
		t.Errorf("%d <script in the page, want the 4 of its own", n)
	}
	if !strings.Contains(page, `base&lt;script&gt;alert(&#34;dir&#34;)&lt;`) {
		t.Error("the planted directory name is not shown as text")
	}
}

// TestCompareReportMissingFiles checks that a run file the charts cannot read gives a
// note in place of its charts, and the rest of the page.
func TestCompareReportMissingFiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, base, cand string)
		notes  []string
		charts bool // percentile charts are still drawn
	}{
		{"no candidate hlog", func(t *testing.T, base, cand string) { remove(t, filepath.Join(cand, HistogramLogFile)) },
			[]string{"Distributions not drawn for the candidate: no histograms.hlog in " + "CAND"}, true},
		{"corrupt baseline hlog", func(t *testing.T, base, cand string) {
			write(t, filepath.Join(base, HistogramLogFile), "Tag=latency_tasks_get,0,1,2,!!!\n")
		}, []string{"Distributions not drawn for the baseline: " + "BASE" + "/histograms.hlog:1: latency_tasks_get: "}, true},
		{"no baseline timeseries", func(t *testing.T, base, cand string) { remove(t, filepath.Join(base, TimeseriesFile)) },
			[]string{"Time series not drawn for the baseline: no timeseries.csv in " + "BASE"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cand := comparedRuns(t)
			tc.spoil(t, base, cand)
			c, page := comparePageOf(t, base, cand)
			for _, n := range tc.notes {
				n = strings.NewReplacer("BASE", base, "CAND", cand).Replace(n)
				if !strings.Contains(html.UnescapeString(page), n) {
					t.Errorf("no note %q", n)
				}
			}
			if !strings.Contains(page, `<table id="budget-table">`) || len(c.Metrics) == 0 {
				t.Error("no budget table")
			}
			if _, ok := pageCharts(t, page)["chart-pct-latency_tasks_get"]; ok != tc.charts {
				t.Errorf("percentile chart drawn: %v, want %v", ok, tc.charts)
			}
		})
	}
	t.Run("run directories gone", func(t *testing.T) {
		base, cand := comparedRuns(t)
		c, err := Compare(base, cand, CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		remove(t, base)
		remove(t, cand)
		b, err := RenderComparison(c)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `<p class="none">`+"Distributions not drawn"); n != 2 {
			t.Errorf("%d notes of missing distributions, want 2", n)
		}
		if len(pageCharts(t, string(b))) != 0 {
			t.Error("charts drawn without the runs' files")
		}
	})
}

func TestCompareReportDeterministic(t *testing.T) {
	base, cand := comparedRuns(t)
	_, a := comparePageOf(t, base, cand)
	_, b := comparePageOf(t, base, cand)
	if a != b {
		t.Error("two renderings of the same runs differ")
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompareReportInconclusive renders a comparison as compare.json holds it, its run
// directories gone: the verdict with its reasons, and notes for the charts.
func TestCompareReportInconclusive(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	c := &Comparison{Baseline: CompareRun{Dir: gone}, Candidate: CompareRun{Dir: gone + "2"},
		Failures: []string{}, NotJudged: []string{"latencies: no histograms.hlog"},
		Inconclusive: []string{"the candidate run was interrupted: it is not whole"}, Verdict: CompareVerdictInconclusive}
	b, err := RenderComparison(c)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(b))
	for _, want := range []string{
		`<div class="banner warn">`, `<p class="word">INCONCLUSIVE <span class="exit">exit code 99</span></p>`,
		`<p class="reason">the candidate run was interrupted: it is not whole</p>`,
		`<li>the candidate run was interrupted: it is not whole</li>`, `<li>latencies: no histograms.hlog</li>`,
		"Time series not drawn for the candidate: no timeseries.csv in " + gone + "2",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s", want)
		}
	}
	if strings.Contains(page, "Failures:") {
		t.Error("a Failures list without failures")
	}
}
