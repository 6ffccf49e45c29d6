package loadgen_test

import (
	"context"
	"runtime"
	rtmetrics "runtime/metrics"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// TestWaitingClientsHoldNoGoroutine: a client waiting for its next poll is an entry among
// the executor's sleepers, not a goroutine (executor.go). 1,000 closed-model clients poll 5 s tasks every second; once all
// of them are waiting, the run holds far fewer goroutines than clients.
func TestWaitingClientsHoldNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const clients = 1000
		before := runtime.NumGoroutine()
		var during int
		snap, _ := runEmbedded(t, mockserver.Config{PollInterval: time.Second},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 5000},
				Clients: clients, Ramp: time.Second, Duration: 4 * time.Second, Grace: 10 * time.Second,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
			}, func(*loadgen.Engine) {
				time.Sleep(2500 * time.Millisecond) // every client started, between two polls
				synctest.Wait()
				during = runtime.NumGoroutine() - before
			})
		// The bound: the idle senders kept (128), the run's own few, and this test's.
		if during >= 200 {
			t.Errorf("%d more goroutines while %d clients wait, want < 200", during, clients)
		}
		if n := snap.Counters[metrics.TasksCompleted]; n != clients {
			t.Errorf("%d tasks completed, want %d (one per client)", n, clients)
		}
	})
}

// TestPollWakeupsStartNoGoroutine guards the cost of the wait between two polls: a client
// that comes due is driven by the idle sender that received the executor's timer tick, on
// no goroutine of its own (a time.AfterFunc per wait started one for every poll, and handed
// the client to a sender from it). 20 clients poll 1 h tasks every 100 ms for 5 s: the
// goroutines started during the run are one per request (the in-process transport serves
// each on its own) and a few more, not two per poll.
func TestPollWakeupsStartNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		created := func() uint64 {
			s := []rtmetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
			rtmetrics.Read(s)
			return s[0].Value.Uint64()
		}
		before := created()
		snap, _ := runEmbedded(t, mockserver.Config{}, loadgen.Config{
			Tool: "work_task", Args: map[string]any{"duration_ms": 3_600_000},
			Clients: 20, Duration: 5 * time.Second, Grace: time.Second,
			Poll: loadgen.PollPolicy{Kind: loadgen.PollFixed, Interval: 100 * time.Millisecond},
		}, nil)
		n := created() - before
		polls := snap.RequestCount(mcp.OpTasksGet)
		requests := polls + snap.RequestCount(mcp.OpToolsCall) + snap.RequestCount(mcp.OpInitialize) +
			snap.RequestCount(mcp.OpDelete)
		if polls < 900 {
			t.Fatalf("%d polls, want about 1,000", polls)
		}
		t.Logf("%d goroutines started for %d requests (%d polls)", n, requests, polls)
		if extra := int64(n) - requests; extra > 200 {
			t.Errorf("%d goroutines started for %d requests (%d polls): %d beyond one a request, want at most 200",
				n, requests, polls, extra)
		}
	})
}

// TestThinkTimeEndsWithTheLoadPhase: a client thinking between tasks when the load phase ends
// stops thinking then, and the run ends with it, not when the think time would have.
func TestThinkTimeEndsWithTheLoadPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		snap, _ := runEmbedded(t, mockserver.Config{PollInterval: 250 * time.Millisecond},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 1000},
				Clients: 3, Duration: 5 * time.Second, Grace: 10 * time.Second, ThinkTime: time.Hour,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
			}, nil)
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("the run took %v, want 5s: the think time ends with the load phase", d)
		}
		if n := snap.Counters[metrics.TasksCompleted]; n != 3 {
			t.Errorf("%d tasks completed, want 3 (one per client before it thinks)", n)
		}
	})
}

// TestGraceEndCutsThePollWait: a task whose next poll is due after the grace period is
// abandoned when the grace period ends, as run_stopped, in both workload models; the run
// ends then.
func TestGraceEndCutsThePollWait(t *testing.T) {
	for name, model := range map[string]loadgen.Model{"closed": loadgen.Closed, "open": loadgen.Open} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := loadgen.Config{
					Tool: "work_task", Args: map[string]any{"duration_ms": 3_600_000},
					Clients: 4, Model: model, Rate: 2, MaxInFlight: 4,
					Duration: 2 * time.Second, Grace: 3 * time.Second,
					Poll: loadgen.PollPolicy{Kind: loadgen.PollFixed, Interval: time.Minute},
				}
				start := time.Now()
				snap, eng := runEmbedded(t, mockserver.Config{}, cfg, nil)
				if d := time.Since(start); d != 5*time.Second {
					t.Errorf("the run took %v, want 5s (load phase + grace)", d)
				}
				created := snap.Counters[metrics.TasksCreated]
				if created == 0 || snap.Counters[metrics.TasksUnknown] != created {
					t.Errorf("%d created, %d unknown: want every task unknown", created, snap.Counters[metrics.TasksUnknown])
				}
				if byReason, _ := eng.Unknown(); byReason[loadgen.ReasonStopped] != created {
					t.Errorf("unknown by reason %v, want all %d %s", byReason, created, loadgen.ReasonStopped)
				}
				// task_e2e runs to a known outcome: an abandoned task has none to measure.
				if n := snap.Summary(metrics.TaskE2E).Count; n != 0 {
					t.Errorf("task_e2e has %d samples, want 0: no task ended", n)
				}
			})
		})
	}
}

// TestEngineRunsOnce: a second Run is refused, not a second run on spent state.
func TestEngineRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, eng := runEmbedded(t, mockserver.Config{PollInterval: 250 * time.Millisecond},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 500},
				Clients: 2, Duration: time.Second, Grace: time.Second,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
			}, nil)
		if err := eng.Run(context.Background()); err == nil {
			t.Error("a second Run returned nil, want an error")
		}
	})
}

// TestGraceEndCutsARequestWithoutAnError: a tasks/get still waiting for its reply when the
// grace period ends is cut off by the run, not failed by the target: it counts as
// "stopped", not as an error.
func TestGraceEndCutsARequestWithoutAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mockserver.Config{Latency: map[string]scenarios.Dist{
			"tasks/get": {Kind: scenarios.DistFixed, Value: scenarios.Duration(time.Hour)}}}
		snap, _ := runEmbedded(t, srv, loadgen.Config{
			Tool: "work_task", Args: map[string]any{"duration_ms": 60_000},
			Clients: 2, Duration: 2 * time.Second, Grace: 3 * time.Second,
			Poll: loadgen.PollPolicy{Kind: loadgen.PollFixed, Interval: time.Second},
		}, nil)
		got := snap.Requests[mcp.OpTasksGet]
		if got[metrics.OutcomeStopped] != 2 || snap.ErrorCount(mcp.OpTasksGet) != 0 {
			t.Errorf("tasks/get outcomes %v, %d errors: want the 2 cut polls stopped, no error",
				got, snap.ErrorCount(mcp.OpTasksGet))
		}
	})
}
