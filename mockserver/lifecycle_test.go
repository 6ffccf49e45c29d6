package mockserver_test

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
)

// TestLifecycle walks one task through working -> completed in virtual time and fetches its
// result (R13, R17, R19).
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{PollInterval: 500 * time.Millisecond})
		c := h.connect()
		tk := c.createTask("work", map[string]any{"duration_ms": 5000})
		if tk.Status != mcp.StatusWorking {
			t.Fatalf("new task status %v, want working (R13)", tk.Status)
		}
		if tk.PollInterval == nil || *tk.PollInterval != 500 {
			t.Fatalf("pollInterval %v, want 500", tk.PollInterval)
		}
		time.Sleep(4999 * time.Millisecond)
		if got, _ := c.get(tk.TaskID); got.Status != mcp.StatusWorking {
			t.Fatalf("at 4.999s status %v, want working", got.Status)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got, _ := c.get(tk.TaskID); got.Status != mcp.StatusCompleted {
			t.Fatalf("at 5s status %v, want completed", got.Status)
		}
		r := c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
		var res mcp.CallToolResult
		if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError {
			t.Fatalf("tasks/result: %s", r.Raw)
		}
		if got := mcp.RelatedTaskID(res.Meta); got != tk.TaskID {
			t.Fatalf("related-task _meta %q, want %q (R19)", got, tk.TaskID)
		}
	})
}

// TestServerMetrics: the reaper records each purge's cleanup lag (expiry -> deletion) and
// counts orphaned tasks (terminal, never fetched) into Config.Metrics.
func TestServerMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := metrics.NewRecorder(1, time.Now())
		h := newHarness(t, mockserver.Config{DefaultTTL: 1500 * time.Millisecond, ReaperInterval: time.Second, Metrics: rec.Shard(0)})
		c := h.connect()
		c.createTask("work", map[string]any{"duration_ms": 100}) // finishes, never fetched: an orphan
		time.Sleep(2 * time.Second)                              // expiry at 1.5 s, swept at 2 s
		synctest.Wait()
		rec.Flush(time.Now())
		snap := rec.Total()
		lag := snap.Summary(metrics.CleanupLag)
		if lag.Count != 1 || lag.Max < 499 || lag.Max > 501 {
			t.Errorf("cleanup_lag count %d max %.3f ms, want one value of 500 ms", lag.Count, lag.Max)
		}
		if n := snap.Counters[metrics.OrphanedTasks]; n != 1 {
			t.Errorf("orphaned_tasks %d, want 1", n)
		}
	})
}
