package mockserver_test

// The server's one seeded random source (rng.go): the same seed and configuration, fed the
// same sequence of calls, make the same sequence of decisions.

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// decisions runs a fixed sequence of calls against a server seeded with seed, where every
// request-path knob draws (stalls, latency per method, tool durations, outcomes, input), and
// returns what the server decided, observed from outside: the virtual time of each reply
// and how each call ended.
func decisions(t *testing.T, seed uint64) []string {
	var out []string
	synctest.Test(t, func(t *testing.T) {
		uniform := func(lo, hi time.Duration) scenarios.Dist {
			return scenarios.Dist{Kind: scenarios.DistUniform, Min: scenarios.Duration(lo), Max: scenarios.Duration(hi)}
		}
		h := newHarness(t, mockserver.Config{
			Seed:    seed,
			Latency: map[string]scenarios.Dist{"tasks/get": uniform(0, 100*time.Millisecond), "*": uniform(0, 50*time.Millisecond)},
			Stalls:  mockserver.Stalls{Probability: 0.1, Duration: 7 * time.Second},
			Tools: map[string]mockserver.ToolProfile{
				"work_sync": {Duration: scenarios.Dist{Kind: scenarios.DistLognormal, P50: scenarios.Duration(time.Second), P99: scenarios.Duration(10 * time.Second)}, Failed: 0.2, Error: 0.1},
				"work_task": {Duration: uniform(time.Second, 5*time.Second), InputProbability: 0.5, InputRounds: 1},
			},
		})
		c := h.connect()
		for i := range 40 {
			took, end := syncCall(t, c, "work_sync", nil)
			out = append(out, fmt.Sprintf("sync %d: %s after %v", i, end, took))
			var id string
			took = timed(func() { id = c.createTask("work_task", nil).TaskID })
			out = append(out, fmt.Sprintf("create %d after %v", i, took))
			time.Sleep(3 * time.Second)
			var st string
			took = timed(func() { tk, _ := c.get(id); st = tk.Status.String() })
			out = append(out, fmt.Sprintf("get %d: %s after %v", i, st, took))
		}
	})
	return out
}

// TestSameSeedSameDecisions: two servers with seed 42 decide alike, call for call; a server
// with seed 43 decides otherwise.
func TestSameSeedSameDecisions(t *testing.T) {
	a, b, other := decisions(t, 42), decisions(t, 42), decisions(t, 43)
	if !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("seed 42 twice: decision %d differs: %q vs %q", i, a[i], b[i])
			}
		}
		t.Fatalf("seed 42 twice: %d vs %d decisions", len(a), len(b))
	}
	same := 0
	for i := range a {
		if a[i] == other[i] {
			same++
		}
	}
	if same > len(a)/4 {
		t.Errorf("seeds 42 and 43 agree on %d of %d decisions, want them to differ", same, len(a))
	}
	t.Logf("first decisions of seed 42: %q", a[:6])
}
