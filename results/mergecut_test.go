package results

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// writeCutShard writes the run directory of shard index of 2: 50 tasks, unknown of them
// cut off at the run's end (run_stopped), interrupted or not, judged by tasks.unknown == 0.
func writeCutShard(t *testing.T, dir string, index int, interrupted bool, unknown int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder(1, t0)
	ts, err := NewTimeseries(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, HistogramLogFile))
	if err != nil {
		t.Fatal(err)
	}
	hl := metrics.NewLogWriter(f, t0)
	sh := rec.Shard(0)
	sh.Add(metrics.TasksCreated, 50)
	sh.Add(metrics.TasksCompleted, 50-unknown)
	sh.Add(metrics.TasksUnknown, unknown)
	for range 50 {
		sh.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, time.Millisecond)
	}
	win := rec.Flush(t0.Add(time.Second))
	if err := errors.Join(ts.Add(win), hl.Write(win), f.Close(), ts.Close()); err != nil {
		t.Fatal(err)
	}
	budget := 5.0
	s := Build(RunInfo{Version: "0.1.0", Scenario: "cut", Seed: 1, Protocol: "2026-07-28",
		Target: "http://127.0.0.1:1/mcp", StartedAt: t0, Duration: time.Second, Interrupted: interrupted,
		Thresholds:  []scenarios.Threshold{{Expr: "tasks.unknown == 0"}},
		Unknown:     map[string]int64{reasonStopped: unknown},
		ErrorBudget: &budget, DuplicateEffects: -1}, rec.Total(), []metrics.Window{win})
	s.Shard = NewShardInfo(s, index, 2, "sha256:cut", t0, 0)
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
}

// TestMergeCutAcrossShards: the tasks an interruption cut off are left out of a merge's
// thresholds for the shards a signal stopped only. Shard 0 was interrupted with 2 tasks cut
// off (alone: 130); shard 1 ran as planned and left 20 tasks unknown at the end of its grace
// (alone: 99). The merge fails, 99, judged on shard 1's 20; with shard 1 interrupted too it
// exits 130.
func TestMergeCutAcrossShards(t *testing.T) {
	root := t.TempDir()
	a, b, out := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "out")
	writeCutShard(t, a, 0, true, 2)
	writeCutShard(t, b, 1, false, 20)
	m, err := MergeRuns([]string{a, b}, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.ExitCode() != ExitGateFailed {
		t.Errorf("merged exit %d (verdict %s), want 99: shard 1's 20 unknown tasks were not the interruption's", m.ExitCode(), m.Verdict)
	}
	c := filepath.Join(root, "c")
	writeCutShard(t, c, 1, true, 20)
	both, err := MergeRuns([]string{a, c}, filepath.Join(root, "both"), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if both.ExitCode() != ExitInterrupted {
		t.Errorf("both shards interrupted: merged exit %d (verdict %s), want 130", both.ExitCode(), both.Verdict)
	}
}
