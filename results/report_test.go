package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// reportRunDir is the saved run the report's golden outline is rendered from; `go test
// ./results -update` rewrites it from fixture() with the planted strings below.
var reportRunDir = filepath.Join("testdata", "report", "run")

// Strings planted in the data: the report must show them as text, never as markup.
const (
	plantedScenario = `golden</script><script>alert("scenario")</script>`
	plantedTask     = `task-</script><img src=x onerror=alert(1)>`
	plantedKind     = `crash</script><script>alert("kind")</script>`
)

// writeFixtureRun writes the files of a run (summary.json, summary.csv, timeseries.csv,
// histograms.hlog, events.csv) for fixture(), with faults, a failing hard gate with its
// samples, thresholds without data, a contract suite with failed cases, the summary fields
// of newer runs, and planted strings.
func writeFixtureRun(t testing.TB, dir string) {
	t.Helper()
	info, total, windows := fixture()
	info.Scenario = plantedScenario
	info.FaultsOn = true
	info.Faults = map[string]int64{"client.crash": 2, "server.http_5xx": 1, "client." + plantedKind: 1}
	info.InvalidTransitionSample = []string{plantedTask + " working->working"}
	info.SecondCreates, info.EffectsAfterCancel = 0, 0
	info.Security = &Security{Probes: true, Leaks: map[string]int64{"get": 2, "list": 1},
		ProbesSent: map[string]int64{"get": 10, "list": 5},
		LeakSample: []map[string]any{
			{"kind": "get", "task": plantedTask, "detail": "answered get for another tenant's task (R53)"},
			{"kind": "list", "task": "t-5", "detail": "tasks/list showed 3 task(s) of other tenants (R53)"},
		}}
	info.Unknown = map[string]int64{"create_lost": 1, "deadline": 1}
	info.UnknownSample = []map[string]any{
		{"idempotency_key": "k-7", "task_id": "t-7", "reason": "deadline"},
		{"idempotency_key": "k-8", "reason": "create_lost"},
	}
	info.Contract = fixtureContract()
	info.Contract.Target = "embedded" // the run's target
	events := []metrics.Event{
		{At: t0.Add(300 * time.Millisecond), Source: "client", Kind: "crash", Task: plantedTask},
		{At: t0.Add(1200 * time.Millisecond), Source: "server", Kind: "http_5xx"},
		{At: t0.Add(1700 * time.Millisecond), Source: "client", Kind: "crash", Task: "t-2"},
		{At: t0.Add(2500 * time.Millisecond), Source: "client", Kind: plantedKind, Task: "t-3"},
	}
	s := Build(info, total, windows)
	// Thresholds over metrics nothing recorded: one fails for it, one was allowed to pass.
	s.Thresholds = append(s.Thresholds,
		ThresholdResult{Expr: "cleanup_lag.p99 < 1s", Unit: "ms", NoData: true, WorstWindow: -1},
		ThresholdResult{Expr: "cancel_latency.p99 < 500ms", Unit: "ms", NoData: true, Pass: true, WorstWindow: -1})
	writeRun(t, dir, s, info.StartedAt, windows, events, 3)
	addNewerFields(t, dir)
}

// addNewerFields adds to dir/summary.json, where it does not have them, the fields that
// newer runs write and the report shows: the result_lost outcome, the input block and the
// top errors.
func addNewerFields(t testing.TB, dir string) {
	t.Helper()
	path := filepath.Join(dir, SummaryJSONFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if tasks, ok := raw["tasks"].(map[string]any); ok && tasks["result_lost"] == nil {
		tasks["result_lost"] = 1
	}
	if raw["input"] == nil {
		raw["input"] = map[string]any{"input_required_seen": 2, "elicitations_received": 2,
			"elicitations_accepted": 1, "elicitations_declined": 1, "elicitations_cancelled": 0}
	}
	if l, _ := raw["errors"].([]any); len(l) == 0 {
		raw["errors"] = []map[string]any{
			{"method": "tasks/get", "outcome": "rpc_error", "code": -32602, "count": 1, "message": "Task not found: " + plantedTask},
			{"method": "tasks/result", "outcome": "transport", "count": 1, "message": "read tcp: connection reset by peer"},
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(raw); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeRun writes a run directory as `tasksim run` does.
func writeRun(t testing.TB, dir string, s *Summary, start time.Time, windows []metrics.Window, events []metrics.Event, dropped int64) {
	t.Helper()
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	ts, err := NewTimeseries(dir, start)
	if err != nil {
		t.Fatal(err)
	}
	var hlog bytes.Buffer
	lw := metrics.NewLogWriter(&hlog, start)
	for _, w := range windows {
		if err := ts.Add(w); err != nil {
			t.Fatal(err)
		}
		if err := lw.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HistogramLogFile), hlog.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if events != nil {
		if err := WriteEvents(dir, start, events, dropped); err != nil {
			t.Fatal(err)
		}
	}
}

// fixtureReport renders the saved fixture run (rewriting it first with -update).
func fixtureReport(t *testing.T) []byte {
	t.Helper()
	if *update {
		if err := os.RemoveAll(reportRunDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(reportRunDir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFixtureRun(t, reportRunDir)
		_ = os.Remove(filepath.Join(reportRunDir, SummaryCSVFile)) // the report does not read it
	}
	b, err := RenderReport(reportRunDir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outlineRe finds what the outline keeps of a page, in document order.
var outlineRe = regexp.MustCompile(`<section id="([^"]*)">` +
	`|<h([123])>([^<]*)</h[123]>` +
	`|<p class="word">([^<]*)<` +
	`|<p class="reason">([^<]*)</p>` +
	`|<div class="fig ([^"]*)" id="([^"]*)"><p class="label"[^>]*>[^<]*</p><p class="value">([^<]*)` +
	`|<(?:div|p|details) class="gate ([^"]*)" id="gate-([^"]*)">` +
	`|<table(?: id="([^"]*)"| class="([^"]*)")>` +
	`|<caption>([^<]*)</caption>` +
	`|<tr class="([^"]*)"><td><code>([^<]*)</code></td><td class="num">([^<]*)</td><td class="status">([^<]*)</td>` +
	`|<th>([^<]*)</th>` +
	`|</thead>` +
	`|<figure class="chart" id="([^"]*)" data-kind="([^"]*)" data-points="(\d+)" data-series="(\d+)"` +
	`|<p class="none">([^<]*)</p>` +
	`|<tr class="([^"]*)" id="case-([^"]*)">` +
	`|<details class="exchanges"><summary>([^<]*)</summary>`)

// outline is the structure of a report, one line per section, heading, verdict, headline
// figure (with its class and value), gate (with its status), table (with its caption and
// column headers), threshold (with its value and status), chart (with its points and
// series), "not recorded" note, contract case (with its class) and folded evidence.
func outline(page []byte) string {
	var b strings.Builder
	var ths []string
	for _, m := range outlineRe.FindAllSubmatch(page, -1) {
		s := func(i int) string { return html.UnescapeString(string(m[i])) }
		switch {
		case len(m[1]) > 0:
			fmt.Fprintf(&b, "section %s\n", s(1))
		case len(m[2]) > 0:
			fmt.Fprintf(&b, "  h%s %s\n", s(2), s(3))
		case bytes.HasPrefix(m[0], []byte(`<p class="word">`)):
			fmt.Fprintf(&b, "  verdict %s\n", strings.TrimSpace(s(4)))
		case bytes.HasPrefix(m[0], []byte(`<p class="reason">`)):
			fmt.Fprintf(&b, "  reason %s\n", s(5))
		case len(m[7]) > 0:
			fmt.Fprintf(&b, "  figure %s %s: %s\n", s(7), strings.TrimSpace(s(6)), strings.TrimSpace(s(8)))
		case len(m[10]) > 0:
			fmt.Fprintf(&b, "  gate %s %s\n", s(10), s(9))
		case bytes.HasPrefix(m[0], []byte("<table")):
			fmt.Fprintf(&b, "  table %s%s", s(11), s(12))
			ths = ths[:0]
		case bytes.HasPrefix(m[0], []byte("<caption>")):
			fmt.Fprintf(&b, " (%s)", s(13))
		case len(m[15]) > 0:
			fmt.Fprintf(&b, "    %s = %s: %s (%s)\n", s(15), s(16), s(17), s(14))
		case bytes.HasPrefix(m[0], []byte("<th>")):
			ths = append(ths, s(18))
		case bytes.Equal(m[0], []byte("</thead>")):
			fmt.Fprintf(&b, ": %s\n", strings.Join(ths, " | "))
		case len(m[19]) > 0:
			fmt.Fprintf(&b, "  chart %s %s points=%s series=%s\n", s(19), s(20), s(21), s(22))
		case len(m[25]) > 0:
			fmt.Fprintf(&b, "    case %s %s\n", s(25), s(24))
		case len(m[26]) > 0:
			fmt.Fprintf(&b, "      %s\n", s(26))
		default:
			fmt.Fprintf(&b, "  note %s\n", s(23))
		}
	}
	return b.String()
}

// reportSections are the sections of every report, in page order; contract, input and
// errors appear only when the run has them.
var reportSections = []string{"verdict", "timeseries", "gates", "thresholds", "contract", "outcomes", "requests",
	"input", "errors", "manifest", "latency", "polling", "lags", "faults", "server", "config"}

func TestReportOutline(t *testing.T) {
	page := fixtureReport(t)
	golden(t, filepath.Join("report", "outline.golden"), []byte(outline(page)))
	last := -1
	for _, id := range reportSections {
		i := bytes.Index(page, []byte(`<section id="`+id+`">`))
		if i < 0 {
			t.Errorf("no section %q", id)
			continue
		}
		if i < last {
			t.Errorf("section %q is out of order", id)
		}
		last = i
	}
}

func TestReportDeterministic(t *testing.T) {
	a, err := RenderReport(reportRunDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{SummaryJSONFile, TimeseriesFile, HistogramLogFile, EventsFile} {
		b, err := os.ReadFile(filepath.Join(reportRunDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteReport(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two renderings of the same files differ")
	}
}

// TestReportOffline checks that the page can fetch nothing: no URL but the chart library's
// license comment, no src or href attribute, no CSS url() or @import.
func TestReportOffline(t *testing.T) {
	page := string(fixtureReport(t))
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
}

// TestReportEscapes checks that "</script>" planted in a scenario name, a task id in the
// evidence and a fault kind (inside the inline JSON) stays data.
func TestReportEscapes(t *testing.T) {
	page := string(fixtureReport(t))
	if n := strings.Count(strings.ToLower(page), "</script"); n != 4 {
		t.Errorf("%d </script in the page, want the 4 of its own script elements", n)
	}
	if n := strings.Count(strings.ToLower(page), "<script"); n != 4 {
		t.Errorf("%d <script in the page, want 4", n)
	}
	for _, s := range []string{plantedScenario, plantedTask, plantedKind, plantedExcerpt} {
		if strings.Contains(page, s) {
			t.Errorf("planted %q appears unescaped", s)
		}
	}
	for _, want := range []string{
		html.EscapeString(plantedScenario)[:20],                // in the title and the headings
		`\u003c/script\u003e\u003cscript\u003ealert(\"kind\")`, // in the inline JSON
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(html.UnescapeString(page), plantedTask) {
		t.Error("the planted task id is not shown as text")
	}
}

// TestReportMissingFiles renders a run with only summary.json: every part that needs
// another file says "not recorded", and no chart is drawn.
func TestReportMissingFiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(reportRunDir, SummaryJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	page := renderSummaryOnly(t, b)
	o := outline(page)
	if strings.Contains(o, "  chart ") {
		t.Errorf("charts without data files:\n%s", o)
	}
	for _, want := range []string{
		"note Percentile distributions not recorded: the run directory has no histograms.hlog.",
		"note Time series not recorded: the run directory has no timeseries.csv rows.",
	} {
		if !strings.Contains(o, want) {
			t.Errorf("outline lacks %q:\n%s", want, o)
		}
	}
	// The fault counts come from the summary; the timeline is what is missing.
	if !strings.Contains(o, "table fault-counts: fault | count") {
		t.Errorf("no fault counts:\n%s", o)
	}
	if _, err := RenderReport(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing summary: %v, want an error naming the path", err)
	}
}

// TestHistogramLogTotals checks that merging the interval log gives the run's totals:
// the figures of summary.json, which were computed from the recorder itself.
func TestHistogramLogTotals(t *testing.T) {
	hists, err := ReadHistogramLogTotals(reportRunDir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(reportRunDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(hists) != len(s.Metrics) {
		t.Errorf("%d histograms in the log, %d metrics in the summary", len(hists), len(s.Metrics))
	}
	for h, hh := range hists {
		if got, want := roundStat(metrics.Summarize(h, hh)), s.Metrics[h.Name()]; got != want {
			t.Errorf("%s: log total %+v, summary %+v", h, got, want)
		}
	}
	if _, err := ReadHistogramLogTotals(t.TempDir()); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("no log: %v, want not exist", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// TestZigzag checks the LEB128 decoder against hdrhistogram-go's encoder through a round
// trip of extreme counts.
func TestZigzag(t *testing.T) {
	hh := metrics.NewHistogram(metrics.LatencyTasksGet)
	for _, v := range []int64{1, 127, 128, 1 << 20, metrics.HourUS} {
		if err := hh.RecordValues(v, v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := hh.EncodeV2()
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int64, len(hh.Export().Counts))
	var d hlogDecoder
	if ok, err := d.add(counts, metrics.LatencyTasksGet, enc); !ok || err != nil {
		t.Fatalf("add: %v %v", ok, err)
	}
	for i, c := range hh.Export().Counts {
		if counts[i] != c {
			t.Fatalf("count %d: %d, want %d", i, counts[i], c)
		}
	}
}

// BenchmarkRenderReport renders the report of a 10-minute run with faults: 600 windows of
// ten histograms each, 600 timeseries rows, 10,000 events.
func BenchmarkRenderReport(b *testing.B) {
	dir := b.TempDir()
	info, total, windows, events := longRun(600)
	writeRun(b, dir, Build(info, total, windows), info.StartedAt, windows, events, 0)
	b.ResetTimer()
	for b.Loop() {
		if _, err := RenderReport(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// longRun is a synthetic run of n one-second windows.
func longRun(n int) (RunInfo, *metrics.Snapshot, []metrics.Window, []metrics.Event) {
	rng := rand.New(rand.NewPCG(1, 2))
	rec := metrics.NewRecorder(1, t0)
	sh := rec.Shard(0)
	var windows []metrics.Window
	var events []metrics.Event
	for s := range n {
		for range 200 {
			sh.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, time.Duration(rng.ExpFloat64()*float64(20*time.Millisecond)))
			sh.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, time.Duration(rng.ExpFloat64()*float64(30*time.Millisecond)))
			sh.RecordDuration(metrics.ScheduleLag, time.Duration(rng.IntN(2000))*time.Microsecond)
		}
		for range 50 {
			sh.Reply(mcp.OpTasksResult, metrics.OutcomeOK, 0, 200, time.Duration(rng.IntN(50))*time.Millisecond)
			sh.RecordDuration(metrics.TaskE2E, time.Duration(1000+rng.IntN(5000))*time.Millisecond)
			sh.RecordDuration(metrics.DetectionLag, time.Duration(rng.IntN(1000))*time.Millisecond)
			sh.RecordDuration(metrics.ResultLag, time.Duration(rng.IntN(100))*time.Millisecond)
			sh.Record(metrics.PollsPerTask, int64(2+rng.IntN(6)))
			sh.RecordPollAmplification(int64(2+rng.IntN(6)), 3)
		}
		sh.Add(metrics.TasksCreated, 50)
		sh.Add(metrics.TasksCompleted, 50)
		sh.Add(metrics.Polls, 200)
		rec.SetGauge(metrics.InFlight, int64(rng.IntN(500)))
		for range 16 {
			events = append(events, metrics.Event{At: sec(s).Add(time.Duration(rng.IntN(1000)) * time.Millisecond),
				Source: "client", Kind: "crash", Task: "t-" + strconv.Itoa(len(events))})
		}
		windows = append(windows, rec.Flush(sec(s+1)))
	}
	info, _, _ := fixture()
	info.Duration = time.Duration(n) * time.Second
	info.FaultsOn = true
	return info, rec.Total(), windows, events[:10000]
}

// renderSummaryOnly renders the report of a run directory that holds summary.json (b)
// and no other file.
func renderSummaryOnly(t *testing.T, b []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SummaryJSONFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	page, err := RenderReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	return page
}
