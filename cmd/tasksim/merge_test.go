package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
)

// runShards runs the N shards of smoke (2 s, the embedded server each), all told to start
// at one instant in the past, so that none waits; extra are more run flags. It returns
// their run directories, in index order.
func runShards(t *testing.T, n int, extra ...string) []string {
	t.Helper()
	return runShardsOf(t, "smoke", n, append([]string{"--duration", "2s", "--set", "grace=3s"}, extra...)...)
}

// runShardsOf runs the n shards of scenario name, as runShards does, with extra run flags.
func runShardsOf(t *testing.T, name string, n int, extra ...string) []string {
	t.Helper()
	root := t.TempDir()
	startAt := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	dirs := make([]string, n)
	codes := make([]int, n)
	stderrs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = filepath.Join(root, "shard-"+strconv.Itoa(i))
		args := append([]string{"run", name, "--out", dirs[i],
			"--no-progress", "--shard", strconv.Itoa(i) + "/" + strconv.Itoa(n), "--start-at", startAt}, extra...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, stderrs[i], codes[i] = tasksim(t, args...)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 && c != exitGate {
			t.Fatalf("shard %d: exit %d\n%s", i, c, stderrs[i])
		}
	}
	return dirs
}

func readSum(t *testing.T, dir string) *results.Summary {
	t.Helper()
	s, err := results.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMergeAddsUpShards: a merge of the 3 shards of one scenario has every count equal to
// the sum of the shards', every histogram equal to the merge of theirs (exact), per-second
// windows that add up to the whole, and a verdict, with run's exit code.
func TestMergeAddsUpShards(t *testing.T) {
	dirs := runShards(t, 3)
	out := filepath.Join(t.TempDir(), "merged")
	stdout, stderr, code := tasksim(t, append(append([]string{"merge"}, dirs...), "--out", out)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m := readSum(t, out)
	if m.Verdict != results.VerdictPass || m.Merge == nil || len(m.Merge.Merged) != 3 || m.Merge.Partial {
		t.Fatalf("verdict %q, merge block %+v", m.Verdict, m.Merge)
	}

	var tasks results.Tasks
	counters := map[string]int64{}
	requests := map[string]map[string]int64{}
	merged := map[metrics.Hist][]int64{}
	for _, d := range dirs {
		s := readSum(t, d)
		tasks.Created += s.Tasks.Created
		tasks.Completed += s.Tasks.Completed
		tasks.Failed += s.Tasks.Failed
		tasks.Unknown += s.Tasks.Unknown
		for k, v := range s.Counters {
			counters[k] += v
		}
		for op, rs := range s.Requests {
			if requests[op] == nil {
				requests[op] = map[string]int64{}
			}
			for o, v := range rs.ByOutcome {
				requests[op][o] += v
			}
		}
		hs, err := results.ReadHistogramLogTotals(d)
		if err != nil {
			t.Fatal(err)
		}
		for h, hh := range hs {
			c := hh.Export().Counts
			if merged[h] == nil {
				merged[h] = make([]int64, len(c))
			}
			for i, v := range c {
				merged[h][i] += v
			}
		}
	}
	if tasks.Created == 0 || m.Tasks.Created != tasks.Created || m.Tasks.Completed != tasks.Completed ||
		m.Tasks.Failed != tasks.Failed || m.Tasks.Unknown != tasks.Unknown {
		t.Errorf("tasks %+v, shards' sum %+v", m.Tasks, tasks)
	}
	for k, v := range counters {
		if m.Counters[k] != v {
			t.Errorf("counter %s = %d, shards' sum %d", k, m.Counters[k], v)
		}
	}
	for op, byOutcome := range requests {
		for o, v := range byOutcome {
			if got := m.Requests[op].ByOutcome[o]; got != v {
				t.Errorf("requests %s %s = %d, shards' sum %d", op, o, got, v)
			}
		}
	}
	hs, err := results.ReadHistogramLogTotals(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != len(merged) {
		t.Errorf("merged log has %d histograms, the shards %d", len(hs), len(merged))
	}
	for h, hh := range hs {
		if !slices.Equal(hh.Export().Counts, merged[h]) {
			t.Errorf("%s: the merged log's counts differ from the merge of the shards'", h.Name())
		}
		if st := m.Metrics[h.Name()]; st.Count != hh.TotalCount() {
			t.Errorf("%s: summary count %d, log %d", h.Name(), st.Count, hh.TotalCount())
		}
	}
	// The merged seconds add up to the whole, and the per-second thresholds saw them.
	created := column(t, out, "created")
	var sum float64
	for _, v := range created {
		sum += v
	}
	if int64(sum) != m.Tasks.Created {
		t.Errorf("timeseries.csv created sums to %v, summary %d", sum, m.Tasks.Created)
	}
	for _, th := range m.Thresholds {
		if th.Source == results.SourceErrorBudget && (th.WindowsEvaluated == 0 || th.WindowsEvaluated > len(created)) {
			t.Errorf("error budget judged %d windows of %d", th.WindowsEvaluated, len(created))
		}
	}
	if _, err := os.Stat(filepath.Join(out, results.ReportFile)); err != nil {
		t.Error(err)
	}
}

// TestMergeJudgesTheWhole: a threshold the shards fail fails the merge too, exit 99, as
// run exits.
func TestMergeJudgesTheWhole(t *testing.T) {
	dirs := runShards(t, 2, "--set", "thresholds=[{expr: 'task_e2e.p99 < 1ms'}]")
	out := filepath.Join(t.TempDir(), "merged")
	stdout, stderr, code := tasksim(t, append(append([]string{"merge"}, dirs...), "--out", out)...)
	if code != exitGate {
		t.Fatalf("merge: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitGate, stdout, stderr)
	}
	m := readSum(t, out)
	th := m.Thresholds[0]
	if th.Expr != "task_e2e.p99 < 1ms" || th.Pass || th.WindowsFailed == 0 || m.Verdict != results.VerdictFail {
		t.Errorf("verdict %q, threshold %+v", m.Verdict, th)
	}
}

// TestMergeRefuses: shards that do not belong together are refused, exit 2, naming the
// field; --allow-missing merges a partial set and says so.
func TestMergeRefuses(t *testing.T) {
	dirs := runShards(t, 3)
	tmp := t.TempDir()
	other := filepath.Join(tmp, "other")
	copyDir(t, dirs[1], other)
	editShard(t, other, func(sh map[string]any) { sh["protocol"] = "2026-07-28" })
	hashed := filepath.Join(tmp, "hashed")
	copyDir(t, dirs[1], hashed)
	editShard(t, hashed, func(sh map[string]any) { sh["scenario_hash"] = "sha256:0000" })
	twice := filepath.Join(tmp, "twice")
	copyDir(t, dirs[0], twice)
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"protocol", []string{dirs[0], other, dirs[2]}, "protocol differs"},
		{"scenario_hash", []string{dirs[0], hashed, dirs[2]}, "scenario_hash differs"},
		{"duplicate", []string{dirs[0], twice, dirs[1], dirs[2]}, "index 0 of 3 twice"},
		{"missing", []string{dirs[0], dirs[2]}, "shard index 1 of 3 missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(tmp, "out-"+tc.name)
			_, stderr, code := tasksim(t, append(append([]string{"merge"}, tc.dirs...), "--out", out)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q does not say %q", code, exitUsage, stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(out, results.SummaryJSONFile)); err == nil {
				t.Error("a refused merge wrote a summary")
			}
		})
	}
	out := filepath.Join(tmp, "partial")
	stdout, stderr, code := tasksim(t, "merge", dirs[0], dirs[2], "--out", out, "--allow-missing")
	if code != exitGate {
		t.Fatalf("--allow-missing: exit %d, want %d: a partial merge is never a pass\n%s%s", code, exitGate, stdout, stderr)
	}
	m := readSum(t, out)
	if m.Merge == nil || !m.Merge.Partial || !slices.Equal(m.Merge.Missing, []int{1}) || m.Verdict != results.VerdictFail {
		t.Errorf("verdict %s, merge block %+v", m.Verdict, m.Merge)
	}
	page, err := os.ReadFile(filepath.Join(out, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"stdout": stdout, "report.html": string(page)} {
		if n := strings.Count(text, "partial merge: shard 1 of 3 missing"); n != 1 {
			t.Errorf("%s says the merge is partial %d times, want once", where, n)
		}
	}
	// The partial merge is the verdict's only reason: the verdict line and the error say so,
	// not "a gate or threshold failed".
	if m.Merge == nil || !strings.Contains(m.Merge.FailedAsPartial, "2 of 3 shards merged, shard 1 missing") ||
		!strings.Contains(stdout, "verdict     FAIL (exit code 99): the partial merge alone") ||
		!strings.Contains(stderr, "tasksim merge: partial merge: 2 of 3 shards merged") || strings.Contains(stderr, "a gate or threshold failed") {
		t.Errorf("a partial merge's reason: failed_as_partial %q\nstdout:\n%s\nstderr:\n%s", m.Merge.FailedAsPartial, stdout, stderr)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// editShard rewrites dir's summary.json with its shard block edited.
func editShard(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, results.SummaryJSONFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	edit(s["shard"].(map[string]any))
	if b, err = json.Marshal(s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMergeRollbackGate: the rollback gate is judged on the whole, as a run judges it: the
// shards of the lost-tasks demo each fail it, and so does their merge, with the counts of
// both added up; the drill's shards pass, merged too.
func TestMergeRollbackGate(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
	}{{"rollback-lost-tasks-demo", exitGate}, {"rollback-drill", 0}} {
		t.Run(c.name, func(t *testing.T) {
			dirs := runShardsOf(t, c.name, 2, "--duration", "3s", "--set", "grace=6s", "--set", "rollback.at=1500ms",
				"--set", "workload.clients=10")
			out := filepath.Join(t.TempDir(), "merged")
			stdout, stderr, code := tasksim(t, append(append([]string{"merge"}, dirs...), "--out", out)...)
			m := readSum(t, out)
			g := m.Gates.Rollback
			var pre int64
			for _, d := range dirs {
				pre += readSum(t, d).Gates.Rollback.Evidence.PreSwitch
			}
			if code != c.code || !g.Evaluated || g.Pass != (c.code == 0) || g.Evidence.PreSwitch != pre || pre == 0 {
				t.Errorf("merge: exit %d, want %d; rollback gate %+v (shards' pre_switch %v)\n%s%s", code, c.code, g, pre, stdout, stderr)
			}
		})
	}
}
