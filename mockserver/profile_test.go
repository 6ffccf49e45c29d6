package mockserver_test

// Tool profiles (profile.go): durations, outcome mix and input needs drawn per call from
// Config.Tools, with the call's arguments overriding them. Durations are read as the
// virtual time a synchronous call takes (exact in a synctest bubble); statistical bounds
// are exact binomial 99% intervals (binom99) over fixed seeds.

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// syncCall calls tool synchronously with args and returns the virtual time it took and how
// it ended: "completed", "failed" (isError result) or "error" (JSON-RPC error).
func syncCall(t *testing.T, c *client, tool string, args map[string]any) (time.Duration, string) {
	t.Helper()
	var r reply
	took := timed(func() { r = c.call("tools/call", map[string]any{"name": tool, "arguments": args}) })
	if r.Err != nil {
		return took, "error"
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("tools/call %s: %v: %s", tool, err, r.Raw)
	}
	if res.IsError {
		return took, "failed"
	}
	return took, "completed"
}

// TestProfileDurationFixed: a fixed profile duration is exactly the work time; duration_ms
// still overrides it; a tool without a profile keeps DefaultDuration.
func TestProfileDurationFixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{DefaultDuration: 2 * time.Second, Tools: map[string]mockserver.ToolProfile{
			"work_sync": {Duration: fixedDist(1500 * time.Millisecond)},
		}})
		c := h.connect()
		for _, tc := range []struct {
			tool string
			args map[string]any
			want time.Duration
		}{
			{"work_sync", nil, 1500 * time.Millisecond},
			{"work_sync", map[string]any{"duration_ms": 200}, 200 * time.Millisecond},
			{"work", nil, 2 * time.Second},
		} {
			if got, end := syncCall(t, c, tc.tool, tc.args); got != tc.want || end != "completed" {
				t.Errorf("%s %v: %s after %v, want completed after %v", tc.tool, tc.args, end, got, tc.want)
			}
		}
	})
}

// TestProfileDurationLognormal: with lognormal(p50=200ms, p99=2s), the number of N calls
// shorter than p50 lies in the binomial 99% interval of (N, 0.5), and the number shorter
// than p99 in that of (N, 0.99): the empirical quantiles sit where the profile says.
func TestProfileDurationLognormal(t *testing.T) {
	const n = 1000
	p50, p99 := 200*time.Millisecond, 2*time.Second
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Seed: 11, Tools: map[string]mockserver.ToolProfile{
			"work_sync": {Duration: scenarios.Dist{Kind: scenarios.DistLognormal, P50: scenarios.Duration(p50), P99: scenarios.Duration(p99)}},
		}})
		c := h.connect()
		below50, below99 := 0, 0
		for range n {
			got, _ := syncCall(t, c, "work_sync", nil)
			if got < p50 {
				below50++
			}
			if got < p99 {
				below99++
			}
		}
		if lo, hi := binom99(n, 0.5); below50 < lo || below50 > hi {
			t.Errorf("%d of %d durations below p50 %v, want within [%d, %d]", below50, n, p50, lo, hi)
		}
		if lo, hi := binom99(n, 0.99); below99 < lo || below99 > hi {
			t.Errorf("%d of %d durations below p99 %v, want within [%d, %d]", below99, n, p99, lo, hi)
		}
	})
}

// TestProfileOutcomeMix: {failed: 0.1, error: 0.05} over N tasks: the failed tasks whose
// result has isError and those whose tasks/result is a JSON-RPC error each lie in their
// binomial 99% interval; completed takes the rest. An outcome argument overrides the mix.
func TestProfileOutcomeMix(t *testing.T) {
	const n = 600
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Seed: 5, Tools: map[string]mockserver.ToolProfile{
			"work_task": {Duration: fixedDist(time.Second), Failed: 0.1, Error: 0.05},
		}})
		c := h.connect()
		ids := make([]string, n)
		for i := range ids {
			ids[i] = c.createTask("work_task", nil).TaskID
		}
		forced := c.createTask("work_task", map[string]any{"outcome": "completed"}).TaskID
		time.Sleep(time.Second)
		synctest.Wait()
		counts := map[string]int{}
		for _, id := range ids {
			tk, _ := c.get(id)
			end := tk.Status.String()
			if tk.Status == mcp.StatusFailed {
				if r := c.call("tasks/result", map[string]any{"taskId": id}); r.Err != nil {
					end = "error"
				}
			}
			counts[end]++
		}
		for _, want := range []struct {
			end string
			p   float64
		}{{"failed", 0.1}, {"error", 0.05}, {"completed", 0.85}} {
			if lo, hi := binom99(n, want.p); counts[want.end] < lo || counts[want.end] > hi {
				t.Errorf("%d of %d tasks ended %s, want within the binomial 99%% interval [%d, %d]", counts[want.end], n, want.end, lo, hi)
			}
		}
		if tk, _ := c.get(forced); tk.Status != mcp.StatusCompleted {
			t.Errorf(`task called with outcome "completed" ended %s`, tk.Status)
		}
	})
}

// TestProfileInput: with input_probability 0.3 and 2 rounds, the tasks asking for input
// halfway through their first phase lie in the binomial 99% interval, each asks for round 1
// of 2; input_required false overrides the profile; a synchronous call ignores a drawn
// input need and completes.
func TestProfileInput(t *testing.T) {
	const n = 500
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Seed: 9, Tools: map[string]mockserver.ToolProfile{
			"work_task": {Duration: fixedDist(3 * time.Second), InputProbability: 0.3, InputRounds: 2},
			"work":      {Duration: fixedDist(time.Second), InputProbability: 1},
		}})
		c := h.connect()
		ids := make([]string, n)
		for i := range ids {
			ids[i] = c.createTask("work_task", nil).TaskID
		}
		noInput := c.createTask("work_task", map[string]any{"input_required": false}).TaskID
		time.Sleep(1500 * time.Millisecond) // phases of 1s with input, one of 3s without
		synctest.Wait()
		asking := 0
		for _, id := range ids {
			tk, _ := c.get(id)
			switch tk.Status {
			case mcp.StatusInputRequired:
				asking++
				if !strings.Contains(tk.StatusMessage, "round 1 of 2") {
					t.Errorf("input_required task says %q, want round 1 of 2", tk.StatusMessage)
				}
			case mcp.StatusWorking:
			default:
				t.Fatalf("task %s at 1.5s, want working or input_required", tk.Status)
			}
		}
		if lo, hi := binom99(n, 0.3); asking < lo || asking > hi {
			t.Errorf("%d of %d tasks asked for input, want within the binomial 99%% interval [%d, %d]", asking, n, lo, hi)
		}
		if tk, _ := c.get(noInput); tk.Status != mcp.StatusWorking {
			t.Errorf("task called with input_required false is %s, want working", tk.Status)
		}
		if took, end := syncCall(t, c, "work", nil); took != time.Second || end != "completed" {
			t.Errorf("synchronous call with a drawn input need: %s after %v, want completed after 1s", end, took)
		}
	})
}
