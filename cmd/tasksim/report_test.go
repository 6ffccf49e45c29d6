package main

// Tests of report.html end to end: a real run writes it, `tasksim report DIR` re-renders the
// same bytes, bad arguments get the right exit codes, and headless Chromium draws every chart
// of a real report without a script error.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/results"
)

// reportSections are the section ids every report has (input and errors only when the
// run saw input or errors).
var reportSections = []string{"verdict", "timeseries", "gates", "thresholds", "outcomes", "requests",
	"manifest", "latency", "polling", "lags", "faults", "server", "config"}

// faultyRun runs the smoke scenario with client crashes injected (so the report has a fault
// timeline) and returns its run directory.
func faultyRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, "run", "smoke", "--duration", "2s", "--set", "grace=3s",
		"--set", "faults.client.crash.probability=0.2", "--no-progress", "--out", dir)
	if code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	return dir
}

func TestReport(t *testing.T) {
	dir := faultyRun(t)
	path := filepath.Join(dir, results.ReportFile)
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the run wrote no report: %v", err)
	}
	for _, id := range reportSections {
		if !bytes.Contains(written, []byte(`<section id="`+id+`">`)) {
			t.Errorf("report lacks section %q", id)
		}
	}

	t.Run("rerender", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := tasksim(t, "report", dir)
		if code != 0 {
			t.Fatalf("report: exit %d\n%s", code, stderr)
		}
		if strings.TrimSpace(stdout) != path {
			t.Errorf("stdout %q, want the report's path %q", stdout, path)
		}
		again, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(written, again) {
			t.Error("tasksim report rendered different bytes from the report the run wrote")
		}
	})

	t.Run("chromium", func(t *testing.T) {
		dom := chromiumDOM(t, path)
		checkRenderedDOM(t, dom)
	})
}

// TestReportConform re-renders the page of a directory that holds only the contract
// suite's conform.json (`tasksim conform --out DIR`): the page WriteContractReport wrote.
func TestReportConform(t *testing.T) {
	dir := t.TempDir()
	c := &results.Contract{TasksimVersion: "0.1.0", Target: "http://127.0.0.1:9/mcp", Protocol: "2025-11-25",
		Server: "peer 1.0", StartedAt: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), DurationS: 1.5,
		Cases: []results.ContractCase{
			{ID: "cancel.terminal", Title: "a cancel of a terminal task is refused", Rules: []string{"R26"}, Verdict: results.CaseFail,
				Message: "expected -32602", Evidence: []results.Exchange{{Method: "tasks/cancel", Request: "{}", HTTPStatus: 200, Reply: "{}"}}},
			{ID: "create.working", Rules: []string{"R13"}, Verdict: results.CasePass},
		},
		Created: []string{"t-1"}, LeftBehind: []string{}, Notes: []string{}}
	c.Count()
	if err := results.WriteContract(dir, c); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteContractReport(dir, c); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, results.ReportFile)
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := tasksim(t, "report", dir)
	if code != 0 || strings.TrimSpace(stdout) != path {
		t.Fatalf("report: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	again, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, again) {
		t.Error("tasksim report rendered different bytes from the page the suite wrote")
	}
	for _, want := range []string{`<section id="contract">`, `<tr class="fail" id="case-cancel.terminal">`} {
		if !bytes.Contains(again, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	t.Run("chromium", func(t *testing.T) {
		dom := chromiumDOM(t, path)
		if !strings.Contains(dom, `id="contract-table"`) || !strings.Contains(dom, `data-errors="0"`) {
			t.Errorf("the contract table is not in the rendered DOM:\n%.2000s", dom)
		}
	})
}

func TestReportErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	_, stderr, code := tasksim(t, "report", missing)
	if code != exitRuntime || !strings.Contains(stderr, missing) {
		t.Errorf("report of a missing directory: exit %d, stderr %q; want 1 and the path", code, stderr)
	}
	empty := t.TempDir()
	_, stderr, code = tasksim(t, "report", empty)
	if code != exitRuntime || !strings.Contains(stderr, results.SummaryJSONFile) {
		t.Errorf("report of a directory without a summary: exit %d, stderr %q; want 1 naming %s", code, stderr, results.SummaryJSONFile)
	}
	for _, args := range [][]string{{"report"}, {"report", "a", "b"}, {"report", "--bogus", "a"}} {
		if _, stderr, code := tasksim(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", args, code, exitUsage, stderr)
		}
	}
	if _, _, code := tasksim(t, "report", "--help"); code != exitOK {
		t.Errorf("report --help: exit %d, want 0", code)
	}
}

// chromiumFlags are the flags of the render check.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"}

// chromiumDOM opens the page in headless Chromium and returns the DOM after its scripts
// ran. Without Chromium the test is skipped, unless TASKSIM_REQUIRE_CHROMIUM=1 (CI).
func chromiumDOM(t *testing.T, page string) string {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("TASKSIM_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("chromium is not installed and TASKSIM_REQUIRE_CHROMIUM=1 (install the Debian package chromium)")
		}
		t.Skip("chromium is not installed: the render check is skipped (set TASKSIM_REQUIRE_CHROMIUM=1 to make this a failure)")
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{}, chromiumFlags...),
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--dump-dom", "file://"+abs)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, errb.String())
	}
	if out.Len() == 0 {
		t.Fatalf("%s dumped no DOM\n%s", bin, errb.String())
	}
	return out.String()
}

var (
	bodyRe    = regexp.MustCompile(`<body[^>]*\sdata-errors="(\d+)"[^>]*\sdata-charts="(\d+)"`)
	markersRe = regexp.MustCompile(`<figure class="chart" id="chart-ts-rates"[^>]*\sdata-markers="(\d+)"`)
	figureRe  = regexp.MustCompile(`(?s)<figure class="chart" id="([^"]+)"[^>]*\sdata-rendered="([^"]*)"[^>]*>(.*?)</figure>`)
)

// checkRenderedDOM checks a dumped DOM: every section, every chart drawn (a canvas and
// data-rendered="true" set by the script after drawing), fault markers drawn on the time
// series (data-markers), and no script error.
func checkRenderedDOM(t *testing.T, dom string) {
	t.Helper()
	for _, id := range reportSections {
		if !strings.Contains(dom, `<section id="`+id+`">`) {
			t.Errorf("rendered DOM lacks section %q", id)
		}
	}
	m := bodyRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no <body data-errors data-charts> in the rendered DOM:\n%.2000s", dom)
	}
	if m[1] != "0" {
		t.Errorf("data-errors=%s: the page's scripts failed", m[1])
	}
	figs := figureRe.FindAllStringSubmatch(dom, -1)
	if want := m[2]; want == "0" || len(figs) == 0 || want != strconv.Itoa(len(figs)) {
		t.Errorf("%d charts in the DOM, the page declares %s", len(figs), want)
	}
	ids := map[string]bool{}
	for _, f := range figs {
		ids[f[1]] = true
		if f[2] != "true" {
			t.Errorf("chart %s: data-rendered=%q", f[1], f[2])
		}
		if !strings.Contains(f[3], "<canvas") {
			t.Errorf("chart %s has no canvas", f[1])
		}
	}
	if mk := markersRe.FindStringSubmatch(dom); mk == nil || mk[1] == "0" {
		t.Errorf("no fault marker drawn on chart-ts-rates (data-markers %v)", mk)
	}
	for _, id := range []string{"chart-latency", "chart-task-e2e", "chart-polls", "chart-lags",
		"chart-ts-rates", "chart-ts-latency", "chart-ts-queue", "chart-ts-tasks"} {
		if !ids[id] {
			t.Errorf("chart %s missing from the rendered DOM", id)
		}
	}
}

// TestReportFixtureInChromium renders results' saved fixture run, whose scenario name, task
// ids and fault kinds carry planted "</script>" and <img onerror> strings: the page must
// draw every chart with no script running but its own.
func TestReportFixtureInChromium(t *testing.T) {
	src := filepath.Join("..", "..", "results", "testdata", "report", "run")
	dir := t.TempDir()
	for _, name := range []string{results.SummaryJSONFile, results.TimeseriesFile, results.HistogramLogFile, results.EventsFile} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, code := tasksim(t, "report", dir); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	dom := chromiumDOM(t, filepath.Join(dir, results.ReportFile))
	checkRenderedDOM(t, dom)
	if strings.Contains(dom, "<img") || strings.Count(dom, "<script") != 4 {
		t.Errorf("planted markup became elements: %d <script, <img present: %v",
			strings.Count(dom, "<script"), strings.Contains(dom, "<img"))
	}
}
