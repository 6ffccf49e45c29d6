package loadgen_test

// Sharded runs: N engines, each with its own server as N processes would have, run between
// them exactly the work of one engine running the whole scenario. Virtual time
// (testing/synctest) makes the counts exact.

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// shardWork is what a run did, in the figures a merge adds up.
type shardWork struct {
	counters [metrics.NumCounters]int64
	requests [mcp.NumOps]int64
}

func (w *shardWork) add(s *metrics.Snapshot) {
	for c := range metrics.NumCounters {
		w.counters[c] += s.Counters[c]
	}
	for op := range mcp.NumOps {
		w.requests[op] += s.RequestCount(op)
	}
}

// runShards runs cfg whole, then split into n shards, and returns both totals.
func runShards(t *testing.T, cfg loadgen.Config, n int) (whole, union shardWork) {
	t.Helper()
	srvCfg := mockserver.Config{PollInterval: 500 * time.Millisecond}
	snap, _ := runEmbedded(t, srvCfg, cfg, nil)
	whole.add(snap)
	for i := range n {
		c := cfg
		c.Shard = scenarios.Shard{Index: i, Count: n}
		snap, _ := runEmbedded(t, srvCfg, c, nil)
		union.add(snap)
	}
	return whole, union
}

// TestShardsAddUpClosed: the closed model's clients split over N shards create, poll and
// finish exactly the tasks the whole run does: every client keeps its global index, so its
// ramp start, its random stream and so its cancels are the whole run's.
func TestShardsAddUpClosed(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		synctest.Test(t, func(t *testing.T) {
			cfg := loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 1500},
				Clients: 10, Duration: 6 * time.Second, Grace: 10 * time.Second,
				Ramp: 2 * time.Second, Seed: 7,
				Poll:   loadgen.PollPolicy{Kind: loadgen.PollServer, Jitter: 0.3},
				Cancel: loadgen.CancelPolicy{Probability: 0.3},
			}
			whole, union := runShards(t, cfg, n)
			if whole.counters[metrics.TasksCreated] == 0 {
				t.Fatal("the whole run created no task")
			}
			for op := range mcp.NumOps {
				if op == mcp.OpInitialize || op == mcp.OpDelete || op == mcp.OpToolsList {
					continue // each shard's probe opens a session of its own
				}
				if whole.requests[op] != union.requests[op] {
					t.Errorf("N=%d %s: %d requests whole, %d in the shards", n, op.Name(), whole.requests[op], union.requests[op])
				}
			}
			for c := range metrics.NumCounters {
				if whole.counters[c] != union.counters[c] {
					t.Errorf("N=%d counter %s: %d whole, %d in the shards", n, c, whole.counters[c], union.counters[c])
				}
			}
		})
	}
}

// TestShardsAddUpOpen: the open model's arrivals (with a ramp) split over N shards are
// exactly the whole run's: created + dropped add up, and so does every request.
func TestShardsAddUpOpen(t *testing.T) {
	for _, n := range []int{1, 3, 4} {
		synctest.Test(t, func(t *testing.T) {
			cfg := loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 1200}, // never on a poll's instant: no race
				Model: loadgen.Open, Rate: 20, MaxInFlight: 200,
				Stages:   []loadgen.Stage{{Duration: 3 * time.Second, Target: 30}, {Duration: 2 * time.Second, Target: 10}},
				Duration: 6 * time.Second, Grace: 10 * time.Second, Seed: 3,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
			}
			whole, union := runShards(t, cfg, n)
			arrivals := func(w shardWork) int64 {
				return w.counters[metrics.TasksCreated] + w.counters[metrics.TasksDropped]
			}
			if arrivals(whole) < 50 || arrivals(whole) != arrivals(union) {
				t.Errorf("N=%d: %d arrivals whole, %d in the shards", n, arrivals(whole), arrivals(union))
			}
			for op := range mcp.NumOps {
				if op == mcp.OpInitialize || op == mcp.OpDelete || op == mcp.OpToolsList {
					continue
				}
				if whole.requests[op] != union.requests[op] {
					t.Errorf("N=%d %s: %d requests whole, %d in the shards", n, op.Name(), whole.requests[op], union.requests[op])
				}
			}
		})
	}
}
