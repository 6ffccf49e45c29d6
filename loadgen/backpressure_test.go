package loadgen_test

// Backpressure as the clients see it: refused creates are refusals, never unknown; every
// throttling reply, capacity refusal and raised pollInterval is one backpressure signal,
// counted under the request outcome "backpressure", not as an error; Retry-After is
// honoured, and without one a refused client backs off. Virtual time, exact counts.

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
)

// TestCreateRefusals: W workers, a queue of Q, N > W+Q closed-model clients all starting at
// once, tasks longer than the load phase. The first W+Q creates are accepted; each of the
// other N-W-Q clients is refused at 0 s and then once per wait until the load phase ends
// (tasks never free a place before then): every one a refusal and a backpressure signal,
// none unknown, none an error; a client that did not wait would be refused far more often.
func TestCreateRefusals(t *testing.T) {
	const (
		workers, queue, clients = 2, 2, 6
		refusedClients          = clients - workers - queue
	)
	cases := []struct {
		name     string
		whenFull string
		poll     time.Duration // the client's fallback interval (not a wait between creates)
		load     time.Duration
		key      int // Engine.Refusals key
		perRef   int // refusals per refused client
	}{
		// Retry-After: 1 (s): attempts at 0, 1, ..., 10 s.
		{"refuse_429 waits Retry-After", "refuse_429", 500 * time.Millisecond, 10500 * time.Millisecond, http.StatusTooManyRequests, 11},
		// No Retry-After: the recovery backoff, 100 ms doubled per refusal in a row up to
		// 5 s, no jitter: attempts at 0, 0.1, 0.3, 0.7, 1.5, 3.1, 6.3 s (the next, 11.3 s,
		// is after the load phase).
		{"refuse_rpc backs off", "refuse_rpc", 500 * time.Millisecond, 10250 * time.Millisecond, mcp.CodeInternalError, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				snap, eng := runEmbedded(t, mockserver.Config{
					PollInterval: time.Second,
					Backpressure: mockserver.Backpressure{Workers: workers, Queue: queue,
						WhenFull: tc.whenFull, RetryAfter: time.Second},
				}, loadgen.Config{
					Tool: "work_task", Args: map[string]any{"duration_ms": 12000},
					Clients: clients, Duration: tc.load, Grace: 40 * time.Second,
					Poll: loadgen.PollPolicy{Kind: loadgen.PollServer, Interval: tc.poll},
				}, nil)
				want := int64(refusedClients * tc.perRef)
				refusals := eng.Refusals()
				if got := refusals[tc.key]; got != want || len(refusals) != 1 {
					t.Errorf("refusals %v, want exactly {%d: %d}", refusals, tc.key, want)
				}
				if got := snap.Counters[metrics.BackpressureSignals]; got != want {
					t.Errorf("backpressure_signals %d, want %d (one per refusal)", got, want)
				}
				if got := snap.Counters[metrics.TasksUnknown]; got != 0 {
					t.Errorf("tasks_unknown %d, want 0: a refused create is not unknown", got)
				}
				if got, errs := snap.Requests[mcp.OpToolsCall][metrics.OutcomeBackpressure], snap.ErrorCount(mcp.OpToolsCall); got != want || errs != 0 {
					t.Errorf("tools/call: %d backpressure, %d errors; want %d and 0", got, errs, want)
				}
				if c, d := snap.Counters[metrics.TasksCreated], snap.Counters[metrics.TasksCompleted]; c != workers+queue || d != c {
					t.Errorf("created %d, completed %d, want %d each", c, d, workers+queue)
				}
				if got := snap.RequestCount(mcp.OpToolsCall); got != want+workers+queue {
					t.Errorf("%d tools/call sent, want %d", got, want+workers+queue)
				}
			})
		})
	}
}

// TestRefusedArrivalsOpenModel: in the open model a refused arrival is simply refused: the
// client does not wait, and takes the next arrival.
func TestRefusedArrivalsOpenModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 10 arrivals a second for 2 s (at 0.1, 0.2, ..., 1.9 s: 19); one worker, no queue:
		// the first is accepted, the other 18 refused with 429 + Retry-After 5 s.
		snap, eng := runEmbedded(t, mockserver.Config{
			PollInterval: time.Second,
			Backpressure: mockserver.Backpressure{Workers: 1, WhenFull: "refuse_429", RetryAfter: 5 * time.Second},
		}, loadgen.Config{
			Tool: "work_task", Args: map[string]any{"duration_ms": 10000},
			Model: loadgen.Open, Rate: 10, MaxInFlight: 5,
			Duration: 2 * time.Second, Grace: 20 * time.Second,
		}, nil)
		if got := eng.Refusals()[http.StatusTooManyRequests]; got != 18 {
			t.Errorf("refused %d arrivals, want 18", got)
		}
		if got := snap.Counters[metrics.TasksDropped]; got != 0 {
			t.Errorf("%d arrivals dropped, want 0: refused clients must not sit out Retry-After", got)
		}
		if got := snap.Counters[metrics.BackpressureSignals]; got != 18 {
			t.Errorf("backpressure_signals %d, want 18", got)
		}
		if got := snap.Counters[metrics.TasksUnknown]; got != 0 {
			t.Errorf("tasks_unknown %d, want 0", got)
		}
	})
}

// TestRaisedPollIntervalSignals: raise_poll_interval with one worker and a queue of one.
// Client A creates at 0 s (a worker free: 1 s advertised); client B at 0.4 s is queued and
// the server is full, so B's create reply already advertises the raised 4 s and A's poll at
// 1 s sees 4 s: one raise. When A's task ends (20 s) B's starts and the server is no
// longer full: the interval falls back to 1 s, which is not a raise. Exactly one signal.
func TestRaisedPollIntervalSignals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		snap, _ := runEmbedded(t, mockserver.Config{
			PollInterval: time.Second,
			Backpressure: mockserver.Backpressure{Workers: 1, Queue: 1,
				WhenFull: "raise_poll_interval", RaisedPollInterval: 4 * time.Second},
		}, loadgen.Config{
			Tool: "work_task", Args: map[string]any{"duration_ms": 20000},
			Clients: 2, Ramp: 800 * time.Millisecond, Duration: 500 * time.Millisecond, Grace: 60 * time.Second,
			Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
		}, nil)
		if c, d := snap.Counters[metrics.TasksCreated], snap.Counters[metrics.TasksCompleted]; c != 2 || d != 2 {
			t.Fatalf("created %d, completed %d, want 2 each", c, d)
		}
		if got := snap.Counters[metrics.BackpressureSignals]; got != 1 {
			t.Errorf("backpressure_signals %d, want 1 (A's poll at 1 s sees 1 s raised to 4 s)", got)
		}
	})
}

// TestLifecycleRaises: every reply advertising a longer interval than the task's previous
// advertised one is one raise; a fall, a repeat or a reply without an interval is none.
func TestLifecycleRaises(t *testing.T) {
	lc := loadgen.Lifecycle{Policy: &loadgen.PollPolicy{}}
	now := time.Unix(0, 0)
	task := func(d time.Duration) *mcp.Task {
		t := &mcp.Task{TaskID: "t", Status: mcp.StatusWorking}
		if d > 0 {
			t.PollInterval = mcp.Millis(d)
		}
		return t
	}
	lc.Start(now, task(time.Second), 0)
	for i, d := range []time.Duration{4 * time.Second, 4 * time.Second, 0, time.Second, 2 * time.Second, 8 * time.Second, time.Second} {
		lc.Observed(now.Add(time.Duration(i+1)*time.Second), task(d))
	}
	// 1 -> 4 (raise), 4, none, 1, 2 (raise), 8 (raise), 1.
	if lc.Raises != 3 {
		t.Errorf("Raises = %d, want 3", lc.Raises)
	}
}

// TestPollRateLimitHonoured: a client polling every 200 ms against a tasks/get limit of one a
// second (burst 1) meets 429 + Retry-After: 1 and waits it out. One 5 s task:
//
//	0.2 ok, 0.4 429 (retry at 1.4; next poll 1.6), 1.6 ok, 1.8 429, 3.0 ok, 3.2 429,
//	4.4 ok, 4.6 429, 5.8 ok: completed.
//
// 9 polls, 4 of them 429: 4 signals (one per 429; honouring it is not a second), counted
// as backpressure, not errors. Ignoring Retry-After it would have sent 29 polls.
func TestPollRateLimitHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		snap, _ := runEmbedded(t, mockserver.Config{
			PollInterval: time.Second,
			Backpressure: mockserver.Backpressure{GetRatePerClient: 1, Burst: 1},
		}, loadgen.Config{
			Tool: "work_task", Args: map[string]any{"duration_ms": 5000},
			Clients: 1, Duration: time.Second, Grace: 30 * time.Second,
			Poll: loadgen.PollPolicy{Kind: loadgen.PollFixed, Interval: 200 * time.Millisecond},
		}, nil)
		if c := snap.Counters[metrics.TasksCompleted]; c != 1 {
			t.Fatalf("completed %d, want 1", c)
		}
		if got := snap.Counters[metrics.Polls]; got != 9 {
			t.Errorf("polls %d, want 9", got)
		}
		if got, errs := snap.Requests[mcp.OpTasksGet][metrics.OutcomeBackpressure], snap.ErrorCount(mcp.OpTasksGet); got != 4 || errs != 0 {
			t.Errorf("tasks/get: %d backpressure, %d errors; want 4 (the 429s) and 0", got, errs)
		}
		if got := snap.Counters[metrics.BackpressureSignals]; got != 4 {
			t.Errorf("backpressure_signals %d, want 4", got)
		}
	})
}

// TestBrokenWorkloadSendsATrickle: a workload the server refuses outright (every create
// answered -32602: an argument the tool does not take) backs off instead of flooding. Three
// closed-model clients for 10 s, recovery backoff 100 ms doubled per refusal in a row up to
// 5 s, no jitter: creates at 0, 0.1, 0.3, 0.7, 1.5, 3.1 and 6.3 s, 7 per client (a client
// that did not wait would send thousands). Every refusal is an error, sampled with its
// message; none is unknown, and the run ends with its load phase.
func TestBrokenWorkloadSendsATrickle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		snap, eng := runEmbedded(t, mockserver.Config{PollInterval: time.Second}, loadgen.Config{
			Tool: "work_task", Args: map[string]any{"bogus": 1},
			Clients: 3, Duration: 10 * time.Second, Grace: 5 * time.Second,
		}, nil)
		if took := time.Since(start); took != 10*time.Second {
			t.Errorf("the run took %v, want the load phase, 10 s: a backoff must not hold the drain", took)
		}
		calls := snap.RequestCount(mcp.OpToolsCall)
		if calls != 21 || snap.ErrorCount(mcp.OpToolsCall) != 21 {
			t.Errorf("%d tools/call sent, %d errors; want 21 and 21 (7 per client)", calls, snap.ErrorCount(mcp.OpToolsCall))
		}
		if got := eng.Refusals()[mcp.CodeInvalidParams]; got != 21 {
			t.Errorf("refusals %v, want {-32602: 21}", eng.Refusals())
		}
		if n := snap.Counters[metrics.TasksUnknown] + snap.Counters[metrics.TasksCreated]; n != 0 {
			t.Errorf("%d tasks created or unknown, want 0", n)
		}
		samples := eng.ErrorSamples()
		if len(samples) != 1 || samples[0].Method != "tools/call" || samples[0].Code != mcp.CodeInvalidParams ||
			samples[0].Count != 21 || !strings.Contains(samples[0].Message, `"bogus"`) {
			t.Errorf("error samples %+v, want one: tools/call -32602 x 21 naming the argument", samples)
		}
	})
}

// TestUnreachableTargetSendsATrickle: a target that refuses every connection gets a trickle
// of initialize attempts, not a flood: each failed create holds its client off by the same
// backoff (attempts at 0, 0.1, 0.3, 0.7, 1.5, 3.1, 6.3 s over 10 s), and a create that never
// left the client is not a task of unknown outcome.
func TestUnreachableTargetSendsATrickle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := mockserver.NewHandlerServer(mockserver.Config{PollInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		var down atomic.Bool
		var attempts atomic.Int64
		h := srv.Handler()
		target := &client.Target{URL: "http://embedded.test/mcp", Client: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if down.Load() {
				attempts.Add(1)
				return nil, syscall.ECONNREFUSED
			}
			return client.HandlerTransport(h).RoundTrip(r)
		})}}
		m, err := client.Probe(context.Background(), target, "work_task")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Decide(client.FallbackRefuse); err != nil {
			t.Fatal(err)
		}
		down.Store(true) // the target went away after the probe
		rec := metrics.NewRecorder(1, time.Now())
		eng, err := loadgen.New(loadgen.Config{Tool: "work_task", Clients: 3, Duration: 10 * time.Second, Grace: 5 * time.Second}, target, m, rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		rec.Flush(time.Now())
		snap := rec.Total()
		if got := attempts.Load(); got != 21 {
			t.Errorf("%d connection attempts, want 21 (7 per client)", got)
		}
		if n := snap.Counters[metrics.TasksUnknown]; n != 0 {
			t.Errorf("%d tasks unknown, want 0: no create left the client", n)
		}
		if got := snap.ErrorCount(mcp.OpInitialize); got != 21 {
			t.Errorf("%d initialize errors, want 21", got)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
