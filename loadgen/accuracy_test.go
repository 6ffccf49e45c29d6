package loadgen_test

// Accuracy tests: the engine against the mock server's handler, in-process and in virtual
// time (testing/synctest), so that the figures are exact and do not depend on the speed of
// the machine. The mock server is handed in as an http.Handler, as docs/ARCHITECTURE.md#imports
// allows for tests; loadgen itself never imports it.

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
)

// runEmbedded runs cfg against an in-process mock server with srvCfg and returns the run's
// totals. It must be called inside a synctest bubble.
func runEmbedded(t *testing.T, srvCfg mockserver.Config, cfg loadgen.Config, during func(*loadgen.Engine)) (*metrics.Snapshot, *loadgen.Engine) {
	t.Helper()
	r := runIn(t, srvCfg, cfg, harness{during: during})
	return r.snap, r.eng
}

// harness adjusts runIn; the zero harness runs the engine against the server as is.
type harness struct {
	wrap   func(http.Handler) http.Handler           // wraps the server's handler
	header http.Header                               // sent with every request (Authorization)
	setup  func(*mockserver.Server, *loadgen.Config) // before the engine is built
	during func(*loadgen.Engine)                     // runs beside the engine
	// protocol is the era the run speaks: "" 2025-11-25 without detection (client.Probe),
	// "auto" found as run finds it, or a version it is pinned to.
	protocol string
}

// embeddedRun is what one runIn left behind.
type embeddedRun struct {
	manifest *client.Manifest
	snap     *metrics.Snapshot
	eng      *loadgen.Engine
	server   mockserver.Stats // taken when the run ended, before the server closed
}

// runIn runs cfg against an in-process mock server with srvCfg, through the HandlerTransport,
// as `tasksim run` would (probe, decide, run). It must be called inside a synctest bubble.
func runIn(t *testing.T, srvCfg mockserver.Config, cfg loadgen.Config, h harness) *embeddedRun {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	handler := srv.Handler()
	if h.wrap != nil {
		handler = h.wrap(handler)
	}
	target := &client.Target{
		URL:        "http://embedded.test/mcp",
		Header:     h.header,
		Client:     &http.Client{Transport: client.HandlerTransport(handler)},
		ClientInfo: mcp.Implementation{Name: "tasksim-test", Version: "1"},
	}
	ctx := context.Background()
	var m *client.Manifest
	if h.protocol == "" {
		m, err = client.Probe(ctx, target, cfg.Tool)
	} else {
		target.Protocol = strings.TrimPrefix(h.protocol, "auto")
		m, err = client.ProbeWith(ctx, target, client.ProbeOptions{Tool: cfg.Tool})
	}
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := m.Decide(cfg.Fallback); err != nil {
		t.Fatalf("decide: %v", err)
	}
	if h.setup != nil {
		h.setup(srv, &cfg)
	}
	rec := metrics.NewRecorder(max(1, cfg.Shards), time.Now())
	eng, err := loadgen.New(cfg, target, m, rec)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	if h.during != nil {
		wg.Go(func() { h.during(eng) })
	}
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	rec.Flush(time.Now())
	return &embeddedRun{manifest: m, snap: rec.Total(), eng: eng, server: srv.Stats()}
}

// hdrPrecision is the relative error of a value read back from a 3-digit HDR histogram.
const hdrPrecision = 1.001

// TestPollAccuracyServerPolicy: 5 s tasks, a 1 s advised pollInterval, policy server
// without jitter: a task is polled at 1, 2, 3, 4 and 5 s (and once more at 6 s when the
// 5 s poll races the completion), so polls_per_task is 5 or 6 and poll_amplification lies
// in [1.0, 1.2] (R15).
func TestPollAccuracyServerPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		snap, _ := runEmbedded(t, mockserver.Config{PollInterval: time.Second},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 5000},
				Clients: 20, Duration: 30 * time.Second, Grace: 30 * time.Second,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
			}, nil)
		if got := snap.Counters[metrics.TasksCompleted]; got < 100 {
			t.Fatalf("completed %d tasks, want >= 100", got)
		}
		ppt := snap.Summary(metrics.PollsPerTask)
		if ppt.Min < 5 || ppt.Max > 6 {
			t.Errorf("polls_per_task in [%v, %v], want within [5, 6]", ppt.Min, ppt.Max)
		}
		amp := snap.Summary(metrics.PollAmplification)
		if amp.Min < 1.0 || amp.Max > 1.2*hdrPrecision {
			t.Errorf("poll_amplification in [%v, %v], want within [1.0, 1.2]", amp.Min, amp.Max)
		}
		if f := snap.FleetPollAmplification(); f < 1.0 || f > 1.2 {
			t.Errorf("fleet poll_amplification %v, want within [1.0, 1.2]", f)
		}
		if n := snap.Counters[metrics.InvalidTransitions]; n != 0 {
			t.Errorf("%d invalid transitions, want 0", n)
		}
		if n := snap.Counters[metrics.TasksUnknown] + snap.Counters[metrics.TasksFailed]; n != 0 {
			t.Errorf("%d tasks unknown or failed, want 0", n)
		}
	})
}

// TestPollAccuracyFixedPolicy: policy fixed at 250 ms polls a 1 s task about 4 times,
// whatever the server advertises.
func TestPollAccuracyFixedPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		snap, _ := runEmbedded(t, mockserver.Config{PollInterval: 5 * time.Second},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 1000},
				Clients: 10, Duration: 10 * time.Second, Grace: 10 * time.Second,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollFixed, Interval: 250 * time.Millisecond},
			}, nil)
		ppt := snap.Summary(metrics.PollsPerTask)
		if ppt.Min < 4 || ppt.Max > 5 {
			t.Errorf("polls_per_task in [%v, %v], want 4 (5 when the 1 s poll races the completion)", ppt.Min, ppt.Max)
		}
		// Against a 5 s advice, a 1 s task is advised one poll: amplification is the poll count.
		if amp := snap.Summary(metrics.PollAmplification); amp.Min < 4 || amp.Max > 5*hdrPrecision {
			t.Errorf("poll_amplification in [%v, %v], want [4, 5]", amp.Min, amp.Max)
		}
	})
}

// TestLittlesLaw: in the open model the mean number of tasks in flight equals the arrival
// rate times the mean time a task spends in flight (Little's law, L = lambda W), within 5%.
// W is the measured task_e2e: the 2 s of work plus the wait for the first poll after
// completion.
func TestLittlesLaw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, dur = 50.0, 2 * time.Second
		var sum, n float64
		snap, _ := runEmbedded(t, mockserver.Config{PollInterval: 500 * time.Millisecond},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": dur.Milliseconds()},
				Model: loadgen.Open, Rate: rate, MaxInFlight: 1000,
				Duration: 20 * time.Second, Grace: 10 * time.Second,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
			}, func(e *loadgen.Engine) {
				time.Sleep(5 * time.Second) // past the fill-up
				for range 100 {             // sample 10 s of steady state
					time.Sleep(100 * time.Millisecond)
					sum += float64(e.InFlight())
					n++
				}
			})
		w := snap.Summary(metrics.TaskE2E).Mean / 1000 // seconds
		if w < dur.Seconds() || w > dur.Seconds()+0.5 {
			t.Fatalf("mean task_e2e %.3f s, want within [2.0, 2.5] s", w)
		}
		mean, want := sum/n, rate*w
		if math.Abs(mean-want)/want > 0.05 {
			t.Errorf("mean in flight %.1f, want %.1f = rate x mean task_e2e within 5%%", mean, want)
		}
		if d := snap.Counters[metrics.TasksDropped]; d != 0 {
			t.Errorf("%d arrivals dropped with 1000 slots for ~110 in flight, want 0", d)
		}
	})
}

// TestCancelAndInput covers the client's cancel policy, its answers to elicitation/create on
// the tasks/result stream (R37), and the block strategy (R18), each with exact outcomes.
func TestCancelAndInput(t *testing.T) {
	fixed := func(d time.Duration) func(*rand.Rand) time.Duration {
		return func(*rand.Rand) time.Duration { return d }
	}
	cases := []struct {
		name  string
		cfg   loadgen.Config
		want  metrics.Counter // every task ends here
		check metrics.Hist    // and this histogram has one value per task
	}{
		{"cancel every task after 300 ms (R27)", loadgen.Config{
			Args:   map[string]any{"duration_ms": 5000},
			Cancel: loadgen.CancelPolicy{Probability: 1, Delay: fixed(300 * time.Millisecond)},
		}, metrics.TasksCancelled, metrics.CancelLatency},
		{"accept every elicitation", loadgen.Config{
			Args: map[string]any{"duration_ms": 2000, "input_required": true},
		}, metrics.TasksCompleted, metrics.ResultLag},
		{"decline every elicitation", loadgen.Config{
			Args:  map[string]any{"duration_ms": 2000, "input_required": true},
			Input: loadgen.InputPolicy{Decline: 1},
		}, metrics.TasksFailed, metrics.TaskE2E},
		{"block on tasks/result", loadgen.Config{
			Args:   map[string]any{"duration_ms": 2000},
			Result: loadgen.ResultBlock,
		}, metrics.TasksCompleted, metrics.LatencyTasksResult},
		{"isError results end failed (R51)", loadgen.Config{
			Args: map[string]any{"duration_ms": 1000, "outcome": "failed"},
		}, metrics.TasksFailed, metrics.ResultLag},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := tc.cfg
				cfg.Tool, cfg.Clients, cfg.Duration, cfg.Grace = "work_task", 5, 10*time.Second, 10*time.Second
				snap, _ := runEmbedded(t, mockserver.Config{PollInterval: 500 * time.Millisecond}, cfg, nil)
				created := snap.Counters[metrics.TasksCreated]
				if created == 0 || snap.Counters[tc.want] != created {
					t.Fatalf("%s = %d of %d created; counters %v", tc.want, snap.Counters[tc.want], created, snap.Counters)
				}
				if n := snap.Summary(tc.check).Count; n != created {
					t.Errorf("%s has %d values, want one per task (%d)", tc.check, n, created)
				}
				if n := snap.Counters[metrics.InvalidTransitions]; n != 0 {
					t.Errorf("%d invalid transitions", n)
				}
			})
		})
	}
}

// TestCleanupProbes: with CleanupProbes every finished task is polled from its expiry
// (createdAt + ttl) until tasks/get answers -32602; the mock deletes an expired task on the
// first lookup, so each probe measures a lag of at most one probe step.
func TestCleanupProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		snap, _ := runEmbedded(t, mockserver.Config{PollInterval: 250 * time.Millisecond},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 500}, TaskTTL: 1500 * time.Millisecond,
				Clients: 4, Duration: 5 * time.Second, Grace: 10 * time.Second, CleanupProbes: 1,
			}, nil)
		done := snap.Counters[metrics.TasksCompleted]
		lag := snap.Summary(metrics.CleanupLag)
		if done == 0 || lag.Count != done {
			t.Fatalf("cleanup_lag has %d values for %d finished tasks, want one each", lag.Count, done)
		}
		if lag.Max > 250*hdrPrecision {
			t.Errorf("cleanup_lag max %.3f ms, want <= one probe step (250 ms)", lag.Max)
		}
	})
}

// TestDrainEndsWhenNothingIsInFlight: against a target whose store tasksim cannot see
// (cleanup probes on), a run whose tasks are all done ends then, not at the end of the grace
// period: the probes of tasks that expire after it are cut, and said to be. Load 2 s, tasks
// of 1 s polled every 250 ms, ttl 60 s, grace 30 s: the last task, created just before 2 s,
// ends by 3.25 s; the run used to wait until 32 s.
func TestDrainEndsWhenNothingIsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		snap, eng := runEmbedded(t, mockserver.Config{PollInterval: 250 * time.Millisecond},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 1000}, TaskTTL: time.Minute,
				Clients: 2, Duration: 2 * time.Second, Grace: 30 * time.Second, CleanupProbes: 1,
			}, nil)
		if took := time.Since(start); took > 3250*time.Millisecond {
			t.Errorf("the run took %v, want it over when its last task was (<= 3.25 s)", took)
		}
		done := snap.Counters[metrics.TasksCompleted]
		if st := eng.CleanupProbes(); done == 0 || st.Cut != done || st.Blind != 0 {
			t.Errorf("probes %+v for %d finished tasks, want one cut each, none blind", st, done)
		}
		if n := snap.Summary(metrics.CleanupLag).Count; n != 0 {
			t.Errorf("cleanup_lag has %d values, want none: no task expired during the run", n)
		}
	})
}

// TestCleanupProbesBlindToSessionBoundTasks: against a server that binds tasks to the
// session that created them (as the TypeScript SDK's stores do), the probes' own session
// cannot see a task; a "not found" after its expiry would measure nothing, so no lag is
// recorded and every probe is counted blind.
func TestCleanupProbesBlindToSessionBoundTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		snap, eng := runEmbedded(t, mockserver.Config{PollInterval: 250 * time.Millisecond, Insecure: mockserver.Insecure{SessionBound: true}},
			loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 500}, TaskTTL: 1500 * time.Millisecond,
				Clients: 2, Duration: 3 * time.Second, Grace: 10 * time.Second, CleanupProbes: 1,
			}, nil)
		done := snap.Counters[metrics.TasksCompleted]
		if st := eng.CleanupProbes(); done == 0 || st.Blind != done || st.Cut != 0 {
			t.Errorf("probes %+v for %d finished tasks, want every one blind", st, done)
		}
		if n := snap.Summary(metrics.CleanupLag).Count; n != 0 {
			t.Errorf("cleanup_lag has %d values, want none", n)
		}
	})
}

// TestFailedTaskResultIsNotARequestError: a task that fails with a JSON-RPC error hands
// that error back from tasks/result (R17): once the client has seen the task failed, that
// reply is the outcome it expects, counted "expected", not a request error; the task
// counts failed, once.
// The same with client.result: block, where the error comes before any terminal status
// was seen: one status read tells the task failed, and the reply stays expected.
func TestFailedTaskResultIsNotARequestError(t *testing.T) {
	for _, strategy := range []loadgen.ResultStrategy{loadgen.ResultPoll, loadgen.ResultBlock} {
		synctest.Test(t, func(t *testing.T) {
			snap, _ := runEmbedded(t, mockserver.Config{PollInterval: 250 * time.Millisecond},
				loadgen.Config{
					Tool: "work_task", Args: map[string]any{"duration_ms": 500, "outcome": "error"},
					Clients: 2, Duration: 3 * time.Second, Grace: 5 * time.Second, Result: strategy,
				}, nil)
			failed := snap.Counters[metrics.TasksFailed]
			if failed == 0 || failed != snap.Counters[metrics.TasksCreated] {
				t.Fatalf("strategy %d: %d failed of %d created, want every one", strategy, failed, snap.Counters[metrics.TasksCreated])
			}
			if got, errs := snap.Requests[mcp.OpTasksResult][metrics.OutcomeExpected], snap.ErrorCount(mcp.OpTasksResult); got != failed || errs != 0 {
				t.Errorf("strategy %d: tasks/result: %d expected, %d errors; want %d and 0", strategy, got, errs, failed)
			}
			if strategy == loadgen.ResultBlock && snap.Counters[metrics.Polls] != 0 {
				t.Errorf("block: %d polls, want 0: the status read after the error is no poll", snap.Counters[metrics.Polls])
			}
		})
	}
}
