package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/results"
)

// The comparison from the command line, against `tasksim serve` (docs/METRICS.md#compare).
//
// The servers answer every request after a fixed 2 ms (server.latency) and advertise a
// 500 ms pollInterval: the load generator's schedule then holds on a loaded CI machine
// (the trust check allows a poll 50 ms late), and the latencies compared are the server's
// more than the machine's.

// compareLoad are the run flags of every comparison test: 100 clients for 6 s (a
// comparison judges runs of at least 5 s: results.MinSections), tasks of 1 s, about 1500
// tasks/get per run, enough for a p99.
var compareLoad = []string{"--clients", "100", "--duration", "6s", "--args", `{"duration_ms":1000}`, "--no-progress"}

// compareServe starts a serve whose replies take 2 ms, with extra flags.
func compareServe(t *testing.T, extra ...string) string {
	t.Helper()
	args := append([]string{"--poll-interval", "500ms", "--set", "server.latency.*=2ms"}, extra...)
	return startServe(t, args...)
}

// runAgainst runs the comparison load against url into dir, seed seed, and fails the test
// unless the run passes its own gates.
func runAgainst(t *testing.T, url, dir string, seed int, extra ...string) {
	t.Helper()
	if code, out := runLoad(t, url, dir, seed, extra...); code != 0 {
		t.Fatalf("run against %s: exit %d\n%s", url, code, out)
	}
}

// runLoad runs the comparison load against url into dir and returns its exit code and
// output.
func runLoad(t *testing.T, url, dir string, seed int, extra ...string) (int, string) {
	t.Helper()
	args := append([]string{"run", "--target", url, "--out", dir, "--seed", strconv.Itoa(seed)}, compareLoad...)
	stdout, stderr, code := tasksim(t, append(args, extra...)...)
	return code, stdout + stderr
}

// compareExit runs tasksim compare and returns its output and exit code.
func compareExit(t *testing.T, args ...string) (string, int) {
	t.Helper()
	stdout, stderr, code := tasksim(t, append([]string{"compare"}, args...)...)
	return stdout + stderr, code
}

// TestCompareCopyOfARun: a run compared with a copy of itself (the same figures in another
// directory) passes, exit 0, every figure without change. That the runs of one
// configuration with different seeds compare clean is runner's
// TestCompareRunsOfOneConfiguration, in virtual time: real runs one after the other on a
// shared machine differ by its load, which no test can hold still.
func TestCompareCopyOfARun(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runAgainst(t, compareServe(t), a, 1)
	if err := os.CopyFS(b, os.DirFS(a)); err != nil {
		t.Fatal(err)
	}
	out, code := compareExit(t, a, b, "--out", filepath.Join(dir, "cmp"))
	if code != 0 || !strings.Contains(out, "pass (exit 0)") {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	c, err := results.ReadComparison(filepath.Join(dir, "cmp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Metrics {
		if m.Change != nil && m.Change.Abs != 0 {
			t.Errorf("%s: change %v between a run and its copy", m.Metric, m.Change.Abs)
		}
	}
}

// TestCompareCatchesRegressions: +30 ms on tasks/get (a 2 ms median), 1% of requests
// failing (HTTP 500), and a pollInterval halved are each caught, exit 99, the metric named; the
// pollInterval's change shows in the request rate too.
func TestCompareCatchesRegressions(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	runAgainst(t, compareServe(t), base, 1)
	for _, c := range []struct {
		name    string
		serve   []string
		metrics []string
	}{
		{"latency", []string{"--set", "server.latency.tasks/get=32ms"}, []string{"latency_tasks_get.p50", "latency_tasks_get.p95"}},
		{"errors", []string{"--set", "faults.server.http_5xx.probability=0.01", "--set", "faults.server.status=500"}, []string{"requests.errors_rate"}},
		{"poll-interval", []string{"--poll-interval", "250ms"}, []string{"polls_per_task.mean"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each effect is far beyond the noise of runs side by side
			cand := filepath.Join(dir, c.name)
			// A create answered 500 may have made its task: the candidate with errors fails its
			// own tasks.unknown SLO too (exit 99); the comparison is what is checked here.
			if code, out := runLoad(t, compareServe(t, c.serve...), cand, 2); code != 0 && code != 99 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			out, code := compareExit(t, base, cand, "--out", filepath.Join(dir, c.name+"-cmp"))
			if code != 99 {
				t.Fatalf("exit %d, want 99\n%s", code, out)
			}
			cmp, err := results.ReadComparison(filepath.Join(dir, c.name+"-cmp"))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range c.metrics {
				if v := metricVerdict(cmp, m); v != results.MetricRegression {
					t.Errorf("%s: %s, want regression\n%s", m, v, out)
				}
				if !strings.Contains(out, "  - "+m+": ") {
					t.Errorf("the output does not name %s among the failures\n%s", m, out)
				}
			}
			if c.name == "poll-interval" {
				if r := metricRow(cmp, "request_rate"); r == nil || r.Change == nil || r.Change.AbsLow <= 0 {
					t.Errorf("request_rate: %+v, want a rise beyond its noise", r)
				}
			}
		})
	}
}

func metricRow(c *results.Comparison, name string) *results.MetricChange {
	for i := range c.Metrics {
		if c.Metrics[i].Metric == name {
			return &c.Metrics[i]
		}
	}
	return nil
}

func metricVerdict(c *results.Comparison, name string) string {
	if r := metricRow(c, name); r != nil {
		return r.Verdict
	}
	return "absent"
}

// TestCompareRefusals: runs of other client counts are refused, exit 2, naming the field,
// unless --allow names it; a directory without a run and a bad budget are usage errors.
func TestCompareRefusals(t *testing.T) {
	url := compareServe(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runAgainst(t, url, a, 1, "--duration", "1s")
	runAgainst(t, url, b, 1, "--duration", "1s", "--clients", "30")
	out, code := compareExit(t, a, b)
	if code != 2 || !strings.Contains(out, "clients: baseline 100, candidate 30") || !strings.Contains(out, "--allow clients") {
		t.Errorf("other client counts: exit %d, want 2 naming clients\n%s", code, out)
	}
	cmpDir := filepath.Join(dir, "cmp")
	if out, code := compareExit(t, a, b, "--allow", "clients, tool", "--budget", "throughput off", "--out", cmpDir); code == 2 {
		t.Errorf("--allow 'clients, tool': exit 2\n%s", out)
	}
	if out, code := compareExit(t, a, b, "--allow", "clients", "--out", cmpDir); code != 2 || !strings.Contains(out, "already holds a comparison") {
		t.Errorf("--out holding a comparison: exit %d, want 2\n%s", code, out)
	}
	if out, code := compareExit(t, a, b, "--allow", "clients", "--out", cmpDir, "--force"); code == 2 {
		t.Errorf("--out holding a comparison, --force: exit 2\n%s", out)
	}
	if out, code := compareExit(t, a, dir); code != 2 || !strings.Contains(out, "is not a run directory") {
		t.Errorf("a directory without a run: exit %d\n%s", code, out)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, results.SummaryJSONFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := compareExit(t, a, empty); code != 2 || !strings.Contains(out, "is not a run's summary") {
		t.Errorf("a summary.json of {}: exit %d, want 2\n%s", code, out)
	}
	if out, code := compareExit(t, a, a+"/."); code != 2 || !strings.Contains(out, "one directory") {
		t.Errorf("a run compared with itself: exit %d\n%s", code, out)
	}
	if out, code := compareExit(t, a, b, "--allow", "clients", "--budget", "throughput +10%"); code != 2 || !strings.Contains(out, "worse when lower") {
		t.Errorf("a bad budget: exit %d\n%s", code, out)
	}
}

// TestRunWithBaseline: run --baseline judges the run against a saved one and writes the
// comparison beside its summary; a slower server fails it (exit 99), and a baseline of
// another configuration is refused before any load (exit 2).
func TestRunWithBaseline(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	runAgainst(t, compareServe(t), base, 1)
	slow := compareServe(t, "--set", "server.latency.tasks/get=32ms")
	out := filepath.Join(dir, "cand")
	args := append([]string{"run", "--target", slow, "--out", out, "--baseline", base}, compareLoad...)
	stdout, stderr, code := tasksim(t, args...)
	if code != 99 || !strings.Contains(stdout, "compared with the baseline") || !strings.Contains(stdout, "latency_tasks_get.p50") {
		t.Fatalf("exit %d, want 99 with the comparison\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{results.SummaryJSONFile, results.CompareJSONFile, results.CompareHTMLFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	args = append([]string{"run", "--target", slow, "--out", filepath.Join(dir, "other"), "--baseline", base}, compareLoad...)
	_, stderr, code = tasksim(t, append(args, "--clients", "10")...)
	if code != 2 || !strings.Contains(stderr, "clients: baseline 100, candidate 10") {
		t.Errorf("another client count: exit %d, want 2 before the run\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); err == nil {
		t.Error("the refused run wrote its directory")
	}
}

// TestABRun: an A/B run against two servers with identical settings passes; against a
// canary 30 ms slower on tasks/get it fails, naming the canary, and `tasksim compare` of
// the A/B directory gives the same verdict.
func TestABRun(t *testing.T) {
	stable, same, slow := compareServe(t), compareServe(t), compareServe(t, "--set", "server.latency.tasks/get=32ms")
	dir := t.TempDir()
	ab := func(canary, out string, extra ...string) (string, string, int) {
		args := append([]string{"run", "--target", canary, "--baseline-target", stable, "--out", out}, compareLoad...)
		return tasksim(t, append(args, extra...)...)
	}
	// With the contract suite first (as canary-gate runs it), the sides meet after their
	// suites: their loads start together however long each suite took.
	stdout, stderr, code := ab(same, filepath.Join(dir, "same"), "--set", "contract=true")
	if code != 0 {
		t.Errorf("identical servers: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	var starts []string
	for _, side := range []string{results.ABCanary, results.ABBaseline} {
		sh := abShard(t, filepath.Join(dir, "same", side))
		if sh.LateByS != 0 || sh.StartAt == nil {
			t.Errorf("identical servers, %s side: start_at %v, late_by_s %v: want the common start, not late", side, sh.StartAt, sh.LateByS)
		} else {
			starts = append(starts, sh.StartAt.String())
		}
	}
	if len(starts) == 2 && starts[0] != starts[1] {
		t.Errorf("identical servers: the sides started at %q: want one common start", starts)
	}
	stdout, stderr, code = ab(slow, filepath.Join(dir, "slow"))
	if code != 99 || !strings.Contains(stderr, "canary "+slow+" against stable "+stable) {
		t.Fatalf("slow canary: exit %d, want 99 naming the canary\n%s\n%s", code, stdout, stderr)
	}
	for _, side := range []string{results.ABCanary, results.ABBaseline} {
		if sh := abShard(t, filepath.Join(dir, "slow", side)); sh.ABSide != side {
			t.Errorf("%s/summary.json: shard.ab_side %q, want %q", side, sh.ABSide, side)
		}
	}
	if out, code := compareExit(t, filepath.Join(dir, "slow")); code != 99 || !strings.Contains(out, "latency_tasks_get.p50") {
		t.Errorf("compare ABDIR: exit %d, want 99\n%s", code, out)
	}
	checkComparePage(t, filepath.Join(dir, "slow", results.CompareHTMLFile))
}

// abShard is the shard block of the run in dir.
func abShard(t *testing.T, dir string) results.ShardInfo {
	t.Helper()
	var s struct {
		Shard *results.ShardInfo `json:"shard"`
	}
	b, err := os.ReadFile(filepath.Join(dir, results.SummaryJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Shard == nil {
		t.Fatalf("%s: no shard block (%v)", filepath.Join(dir, results.SummaryJSONFile), err)
	}
	return *s.Shard
}

// checkComparePage renders compare.html in headless Chromium: no script error, and every
// chart the page declares drawn on a canvas.
func checkComparePage(t *testing.T, page string) {
	t.Helper()
	dom := chromiumDOM(t, page)
	m := bodyRe.FindStringSubmatch(dom)
	if m == nil || m[1] != "0" {
		t.Fatalf("compare.html: <body data-errors> %v: the page's scripts failed", m)
	}
	figs := figureRe.FindAllStringSubmatch(dom, -1)
	if len(figs) == 0 || strconv.Itoa(len(figs)) != m[2] {
		t.Errorf("compare.html: %d charts in the DOM, the page declares %s", len(figs), m[2])
	}
	for _, f := range figs {
		if f[2] != "true" || !strings.Contains(f[3], "<canvas") {
			t.Errorf("compare.html: chart %s not drawn (data-rendered=%q)", f[1], f[2])
		}
	}
}

// TestABRunShardsMerge: an A/B run in two shards (--shard 0/2 and 1/2, one --start-at)
// writes four sides; `tasksim merge` of each side's directories merges that side whole
// (its even or odd shards of 4, none missing), and the merged sides compare: comparable,
// each with the tasks of both its shards.
func TestABRunShardsMerge(t *testing.T) {
	stable, canary := compareServe(t), compareServe(t)
	dir := t.TempDir()
	at := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			args := append([]string{"run", "--target", canary, "--baseline-target", stable, "--shard", strconv.Itoa(i) + "/2",
				"--start-at", at, "--out", filepath.Join(dir, "shard"+strconv.Itoa(i))}, compareLoad...)
			_, _, codes[i] = tasksim(t, args...)
		})
	}
	wg.Wait()
	for i, code := range codes {
		if code != 0 && code != 99 {
			t.Fatalf("shard %d: exit %d", i, code)
		}
	}
	for _, side := range []string{results.ABCanary, results.ABBaseline} {
		stdout, stderr, code := tasksim(t, "merge", filepath.Join(dir, "shard0", side), filepath.Join(dir, "shard1", side),
			"--out", filepath.Join(dir, "merged", side))
		if code != 0 && code != 99 {
			t.Fatalf("merge %s: exit %d\n%s\n%s", side, code, stdout, stderr)
		}
		merged, err := results.ReadSummary(filepath.Join(dir, "merged", side))
		if err != nil {
			t.Fatal(err)
		}
		var created int64
		for i := range 2 {
			s, err := results.ReadSummary(filepath.Join(dir, "shard"+strconv.Itoa(i), side))
			if err != nil {
				t.Fatal(err)
			}
			created += s.Tasks.Created
		}
		if merged.Tasks.Created != created || len(merged.Merge.Missing) != 0 || merged.Config == nil || merged.Config.Shards != "0/2" {
			t.Errorf("merged %s: %d tasks created (shards: %d), missing %v, config %+v", side, merged.Tasks.Created, created, merged.Merge.Missing, merged.Config)
		}
	}
	out, code := compareExit(t, filepath.Join(dir, "merged", results.ABBaseline), filepath.Join(dir, "merged", results.ABCanary), "--out", filepath.Join(dir, "cmp"))
	if code == 2 {
		t.Fatalf("merged sides not comparable:\n%s", out)
	}
	c, err := results.ReadComparison(filepath.Join(dir, "cmp"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Differences) != 0 || len(c.Metrics) == 0 {
		t.Errorf("merged sides: differences %+v, %d metrics", c.Differences, len(c.Metrics))
	}
}

// TestABRunRefusals: an A/B run that cannot be fair is refused before any load (exit 2):
// no canary, the same URL twice, an odd client count (one side would carry more load),
// and run --baseline writing over its own baseline.
func TestABRunRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--baseline-target", "http://127.0.0.1:9/mcp"}, "needs --target"},
		{[]string{"--target", "http://127.0.0.1:9/mcp", "--baseline-target", "http://127.0.0.1:9/mcp"}, "compares two servers"},
		{[]string{"--target", "http://127.0.0.1:9/mcp", "--baseline-target", "http://127.0.0.1:8/mcp", "--clients", "5"}, "split 3:2"},
		{[]string{"--baseline", dir, "--out", dir}, "would replace the run it is judged against"},
		{[]string{"--budget", "throughput -5%"}, "give --baseline DIR or --baseline-target URL"},
		{[]string{"--baseline-target", "http://127.0.0.1:9/mcp", "--dry-run"}, "needs --target"}, // the plan refuses what the run would
		{[]string{"--target", "http://127.0.0.1:9/mcp", "--baseline-target", "http://127.0.0.1:9/mcp", "--dry-run"}, "compares two servers"},
	} {
		_, stderr, code := tasksim(t, append([]string{"run", "--no-progress"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 saying %q\n%s", c.args, code, c.want, stderr)
		}
	}
}
