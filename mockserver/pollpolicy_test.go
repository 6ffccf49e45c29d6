package mockserver_test

// The pollInterval policy (pollpolicy.go): fixed, per_tool and adaptive, read back from
// task replies. Every value is exact: the loads are counts, and time is virtual.

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// pollOf returns the pollInterval of a task reply in ms, -1 when absent.
func pollOf(tk mcp.Task) int64 {
	if tk.PollInterval == nil {
		return -1
	}
	return int64(*tk.PollInterval)
}

// TestPollAdaptiveInFlight: with interval = min(3s, 1s + 250ms * in_flight), the interval
// advertised on one task grows with every task created (the create reply already counts
// the new task), never exceeds Max, and shrinks again as tasks end: cancelled, completed
// or expired. The interval of one task changes during its life.
func TestPollAdaptiveInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Poll: mockserver.PollPolicy{
			Kind: "adaptive", Signal: "in_flight", Base: time.Second, PerUnit: 250 * time.Millisecond, Max: 3 * time.Second,
		}})
		c := h.connect()
		want := func(load int64) int64 { return min(3000, 1000+250*load) }
		var ids []string
		prev := int64(0)
		for k := int64(1); k <= 12; k++ { // the table: in_flight 1..12
			tk := c.createTask("work_task", map[string]any{"duration_ms": 3_600_000})
			ids = append(ids, tk.TaskID)
			if got := pollOf(tk); got != want(k) {
				t.Errorf("create reply at in_flight %d: pollInterval %d, want %d", k, got, want(k))
			}
			first, _ := c.get(ids[0])
			got := pollOf(first)
			if got != want(k) || got < prev || got > 3000 {
				t.Errorf("in_flight %d: first task's pollInterval %d, want %d (after %d, at most 3000)", k, got, want(k), prev)
			}
			prev = got
		}
		// Down again: cancel tasks from the 12th back to the 3rd; 2 remain.
		for k := 11; k >= 2; k-- {
			c.call("tasks/cancel", map[string]any{"taskId": ids[k]})
			if tk, _ := c.get(ids[0]); pollOf(tk) != want(int64(k)) {
				t.Errorf("after cancel, in_flight %d: pollInterval %d, want %d", k, pollOf(tk), want(int64(k)))
			}
		}
		// A task that completes and one that expires leave the count too.
		c.createTask("work_task", map[string]any{"duration_ms": 1000})
		c.call("tools/call", map[string]any{"name": "work_task", "arguments": map[string]any{"duration_ms": 3_600_000}, "task": map[string]any{"ttl": 2000}})
		if tk, _ := c.get(ids[0]); pollOf(tk) != want(4) {
			t.Errorf("in_flight 4: pollInterval %d, want %d", pollOf(tk), want(4))
		}
		time.Sleep(1500 * time.Millisecond) // the 1s task completed
		synctest.Wait()
		if tk, _ := c.get(ids[0]); pollOf(tk) != want(3) {
			t.Errorf("after a completion, in_flight 3: pollInterval %d, want %d", pollOf(tk), want(3))
		}
		time.Sleep(time.Second) // the ttl of 2s ran out; the reaper swept it at 2s
		synctest.Wait()
		if tk, _ := c.get(ids[0]); pollOf(tk) != want(2) {
			t.Errorf("after an expiry, in_flight 2: pollInterval %d, want %d", pollOf(tk), want(2))
		}
	})
}

// TestPollAdaptiveRequestRate: with interval = 100ms + 10ms * (requests in the last whole
// second), the interval follows the request rate of the previous second.
func TestPollAdaptiveRequestRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		h := newHarness(t, mockserver.Config{Poll: mockserver.PollPolicy{
			Kind: "adaptive", Signal: "request_rate", Base: 100 * time.Millisecond, PerUnit: 10 * time.Millisecond,
		}})
		c := h.connect()                                                              // request 1 (initialize; the notification does not count)
		id := c.createTask("work_task", map[string]any{"duration_ms": 60_000}).TaskID // request 2: no whole second yet, load 0
		for range 30 {
			c.call("ping", nil)
		}
		steps := []struct {
			at   time.Duration
			want int64
		}{
			{999 * time.Millisecond, 100},          // still second 0
			{time.Second, 100 + 10*33},             // second 0 held 33 requests (the get at 0.999s included)
			{1500 * time.Millisecond, 100 + 33*10}, // still second 1: second 0 counts
			{2 * time.Second, 100 + 2*10},          // second 1: the gets at 1s and 1.5s
			{4 * time.Second, 100},                 // second 3 was quiet
		}
		for _, s := range steps {
			ruleUntil(t0, s.at)
			if tk, _ := c.get(id); pollOf(tk) != s.want {
				t.Errorf("at %v: pollInterval %d, want %d", s.at, pollOf(tk), s.want)
			}
		}
	})
}

// TestPollPerTool: per_tool advertises each tool's interval, and PollInterval for tools
// without one.
func TestPollPerTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{PollInterval: 2 * time.Second, Poll: mockserver.PollPolicy{
			Kind: "per_tool", PerTool: map[string]time.Duration{"work_task": 5 * time.Second},
		}})
		c := h.connect()
		slow := c.createTask("work_task", map[string]any{"duration_ms": 60_000})
		plain := c.createTask("work", map[string]any{"duration_ms": 60_000})
		if pollOf(slow) != 5000 || pollOf(plain) != 2000 {
			t.Errorf("create replies: work_task %d, work %d; want 5000 and 2000", pollOf(slow), pollOf(plain))
		}
		for id, want := range map[string]int64{slow.TaskID: 5000, plain.TaskID: 2000} {
			if tk, _ := c.get(id); pollOf(tk) != want {
				t.Errorf("tasks/get: pollInterval %d, want %d", pollOf(tk), want)
			}
		}
	})
}

// TestRequestPathConfigProblems: every bad request-path knob is reported, all at once.
func TestRequestPathConfigProblems(t *testing.T) {
	cfg := mockserver.Config{
		Latency: map[string]scenarios.Dist{"tasks/get": {Kind: "zipf"}},
		Stalls:  mockserver.Stalls{Probability: 1.5, Every: time.Second, Window: 2 * time.Second},
		Tools:   map[string]mockserver.ToolProfile{"nope": {Failed: -1, InputRounds: 99}},
		Poll:    mockserver.PollPolicy{Kind: "sometimes", Signal: "mood", PerUnit: -time.Second},
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad configuration")
	}
	for _, want := range []string{
		`latency[tasks/get]: unknown distribution "zipf"`, "stalls.probability", "stalls.duration",
		"stalls.window", `unknown tool "nope"`, "failed must be a weight", "input_rounds",
		"poll.kind", "poll.signal", "must not be negative",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error does not mention %q:\n%v", want, err)
		}
	}
}
