package loadgen_test

// End-to-end tests of the five client-side fault points and of the recovery they
// demand, against the mock server's handler in virtual time. Each fault fires with
// probability 1 at its point, so the gate figures are exact: every count below is what the
// contract says must happen, not a range.

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// faultRun is what a faulty run left behind.
type faultRun struct {
	snap   *metrics.Snapshot
	eng    *loadgen.Engine
	server mockserver.Stats
	events *metrics.Events
}

func (r *faultRun) c(c metrics.Counter) int64 { return r.snap.Counters[c] }

// runFaulty runs cfg against an in-process mock server, reconciling lost creates through
// the server's ledger (as `tasksim run` does) when cfg.Recovery.Reconcile is on. It must be
// called inside a synctest bubble.
func runFaulty(t *testing.T, srvCfg mockserver.Config, cfg loadgen.Config) *faultRun {
	t.Helper()
	return runFaultyVia(t, srvCfg, cfg, nil)
}

// runFaultyVia is runFaulty with the server's handler wrapped by wrap (nil = as is).
func runFaultyVia(t *testing.T, srvCfg mockserver.Config, cfg loadgen.Config, wrap func(http.Handler) http.Handler) *faultRun {
	t.Helper()
	events := metrics.NewEvents(0)
	srvCfg.Events, cfg.Events = events, events
	r := runIn(t, srvCfg, cfg, harness{wrap: wrap, setup: func(srv *mockserver.Server, cfg *loadgen.Config) {
		if cfg.Recovery.Reconcile {
			cfg.Reconciler = loadgen.ReconcilerFunc(func(_ context.Context, key string) (string, bool, error) {
				id, ok := srv.LookupKey("", key)
				return id, ok, nil
			})
		}
	}})
	return &faultRun{snap: r.snap, eng: r.eng, server: r.server, events: events}
}

// always fires at every opportunity.
var always = scenarios.Trigger{Probability: 1}

// faultConfig is 5 clients running 2 s tasks for 10 s, polling every 500 ms, with the
// embedded server's idempotency argument.
func faultConfig(f scenarios.ClientFaults) loadgen.Config {
	return loadgen.Config{
		Tool: "work_task", Args: map[string]any{"duration_ms": 2000},
		Clients: 5, Duration: 10 * time.Second, Grace: 30 * time.Second,
		Poll:     loadgen.PollPolicy{Kind: loadgen.PollServer},
		Faults:   f,
		Recovery: scenarios.Recovery{Reconcile: true, IdempotencyArg: "idempotency_key"},
		Seed:     7,
	}
}

var faultServer = mockserver.Config{PollInterval: 500 * time.Millisecond}

// checkClean asserts what holds after every correct recovery: no unknown outcome, no
// second create, no duplicate effect, no invalid transition, every created task completed.
func checkClean(t *testing.T, r *faultRun) {
	t.Helper()
	created := r.c(metrics.TasksCreated)
	if created == 0 {
		t.Fatal("no task was created")
	}
	if got := r.c(metrics.TasksCompleted); got != created {
		t.Errorf("completed %d of %d created tasks", got, created)
	}
	if n := r.c(metrics.TasksUnknown); n != 0 {
		reasons, sample := r.eng.Unknown()
		t.Errorf("%d tasks unknown (%v, %v), want 0", n, reasons, sample)
	}
	if n := r.c(metrics.InvalidTransitions); n != 0 {
		t.Errorf("%d invalid transitions", n)
	}
	if s := r.server; s.DuplicateEffects != 0 || s.IdempotentReplays != 0 || s.IdempotentExpired != 0 {
		t.Errorf("server: %d duplicate effects, %d replays, %d expired replays; want none", s.DuplicateEffects, s.IdempotentReplays, s.IdempotentExpired)
	}
	if got := int64(r.server.TasksCreated); got != created {
		t.Errorf("server created %d tasks, clients know %d: a tools/call was repeated or lost", got, created)
	}
}

// TestFaultCreateReplyReconciled: fault point 1. Every create's reply is lost; the client
// never re-sends it, finds the task by its idempotency key and observes it to the end.
func TestFaultCreateReplyReconciled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runFaulty(t, faultServer, faultConfig(scenarios.ClientFaults{CreateReply: always}))
		checkClean(t, r)
		created := r.c(metrics.TasksCreated)
		if got := r.c(metrics.Reconciled); got != created {
			t.Errorf("reconciled %d of %d tasks", got, created)
		}
		if got := r.c(metrics.FaultsInjected); got != created {
			t.Errorf("%d faults injected, want one per create (%d)", got, created)
		}
		if got := r.events.Counts()["client.create_reply"]; got != created {
			t.Errorf("events: %d create_reply, want %d", got, created)
		}
		if got := r.c(metrics.RetriedCreates); got != 0 {
			t.Errorf("%d creates retried, want 0", got)
		}
		// The replies tasksim dropped itself are its own doing, not the target's errors.
		if got, errs := r.snap.Requests[mcp.OpToolsCall][metrics.OutcomeInjected], r.snap.ErrorCount(mcp.OpToolsCall); got != created || errs != 0 {
			t.Errorf("tools/call: %d injected, %d errors; want %d and 0", got, errs, created)
		}
	})
}

// TestFaultCreateReplyWithoutReconciliation: without reconciliation a lost create stays
// unknown, on the reconciliation list with its key, and is never sent again.
func TestFaultCreateReplyWithoutReconciliation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig(scenarios.ClientFaults{CreateReply: always})
		cfg.Recovery.Reconcile = false
		r := runFaulty(t, faultServer, cfg)
		lost := r.c(metrics.FaultsInjected)
		if lost == 0 || r.c(metrics.TasksUnknown) != lost || r.c(metrics.TasksCreated) != 0 {
			t.Errorf("%d lost creates, %d unknown, %d created; want all lost creates unknown, none known",
				lost, r.c(metrics.TasksUnknown), r.c(metrics.TasksCreated))
		}
		reasons, sample := r.eng.Unknown()
		if reasons[loadgen.ReasonNoReconcile] != lost || len(sample) == 0 || sample[0].Key == "" || sample[0].TaskID != "" {
			t.Errorf("reconciliation list %v, sample %+v", reasons, sample)
		}
		if int64(r.server.TasksCreated) != lost || r.server.IdempotentReplays != 0 {
			t.Errorf("server created %d tasks for %d lost creates (%d replays): a create was repeated",
				r.server.TasksCreated, lost, r.server.IdempotentReplays)
		}
	})
}

// TestFaultCreateRetryOnNonIdempotentServer: the known-bad mode. Reconciliation finds
// nothing, the scenario allows a retry with the same key, and the server starts the work a
// second time: one duplicate domain effect per retry, which the hard gate reads.
func TestFaultCreateRetryOnNonIdempotentServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := faultServer
		srv.Faults.NonIdempotent = true
		cfg := faultConfig(scenarios.ClientFaults{CreateReply: scenarios.Trigger{Every: scenarios.Duration(time.Hour), Window: scenarios.Duration(5 * time.Second)}})
		cfg.Recovery.RetryCreate = true
		r := runFaulty(t, srv, cfg)
		retried := r.c(metrics.RetriedCreates)
		if retried == 0 {
			t.Fatal("no create was retried")
		}
		if got := int64(r.server.DuplicateEffects); got != retried {
			t.Errorf("%d duplicate effects for %d retried creates, want one each", got, retried)
		}
		if got := int64(r.server.Faults.NonIdempotent); got != retried {
			t.Errorf("server counted %d non-idempotent repeats, want %d", got, retried)
		}
	})
}

// TestFaultAfterCreate: fault point 2. The connection drops right after every
// CreateTaskResult; the client opens a new session and resumes the known id: a server that
// binds tasks to the authorization context, not the session, shows it (R52).
func TestFaultAfterCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runFaulty(t, faultServer, faultConfig(scenarios.ClientFaults{AfterCreate: always}))
		checkClean(t, r)
		created := r.c(metrics.TasksCreated)
		if got := r.c(metrics.Reconnects); got != created {
			t.Errorf("%d reconnects, want one per task (%d)", got, created)
		}
		if got := r.c(metrics.Resumed); got != created {
			t.Errorf("%d resumed observations, want %d", got, created)
		}
		if n, _ := r.eng.LostAfterReconnect(); n != 0 {
			t.Errorf("%d tasks lost after reconnect", n)
		}
	})
}

// TestFaultBeforeResult: fault point 3. The connection drops between the terminal status
// and tasks/result; the result is fetched on a new session.
func TestFaultBeforeResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runFaulty(t, faultServer, faultConfig(scenarios.ClientFaults{BeforeResult: always}))
		checkClean(t, r)
		created := r.c(metrics.TasksCreated)
		if got := r.c(metrics.Reconnects); got != created {
			t.Errorf("%d reconnects, want %d", got, created)
		}
		if got := r.c(metrics.Resumed); got != created {
			t.Errorf("%d resumed observations, want %d", got, created)
		}
		if got := r.snap.Summary(metrics.LatencyTasksResult).Count; got != created {
			t.Errorf("%d tasks/result replies, want one per task (%d)", got, created)
		}
	})
}

// TestFaultResultStream: fault point 3, mid-stream. A blocking tasks/result stream is cut
// after its priming event; the client goes back to polling (R16) and fetches the result.
func TestFaultResultStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig(scenarios.ClientFaults{ResultStream: always})
		cfg.Result = loadgen.ResultBlock
		r := runFaulty(t, faultServer, cfg)
		checkClean(t, r)
		created := r.c(metrics.TasksCreated)
		if got := r.events.Counts()["client.result_stream"]; got != created {
			t.Errorf("%d streams cut, want one per task (%d)", got, created)
		}
		if got := r.c(metrics.Polls); got == 0 {
			t.Error("no poll after the cut stream: the client must fall back to polling (R16)")
		}
	})
}

// TestFaultResultStreamRetryField: fault point 3 with and without the SSE retry field (H5).
// A 2 s task's blocking stream is cut at once; with retry 2 s the client waits it out, and
// its one poll (at 2.5 s) finds the task done; without, it backs off 100 ms and polls at
// 0.6, 1.1, 1.6 and 2.1 s.
func TestFaultResultStreamRetryField(t *testing.T) {
	for _, tc := range []struct {
		retry time.Duration
		polls float64
	}{{2 * time.Second, 1}, {0, 4}} {
		synctest.Test(t, func(t *testing.T) {
			cfg := faultConfig(scenarios.ClientFaults{ResultStream: always})
			cfg.Result = loadgen.ResultBlock
			srv := faultServer
			srv.SSERetry = tc.retry
			r := runFaulty(t, srv, cfg)
			checkClean(t, r)
			if ppt := r.snap.Summary(metrics.PollsPerTask); ppt.Min != tc.polls || ppt.Max != tc.polls {
				t.Errorf("retry %v: polls_per_task in [%v, %v], want %v", tc.retry, ppt.Min, ppt.Max, tc.polls)
			}
		})
	}
}

// TestFaultInput: fault point 4. A task asks for input; the stream carrying the
// elicitation is cut before the answer (the server must ask again on the next stream) or
// right after it (the answer stands; the next stream brings the result).
func TestFaultInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    scenarios.ClientFaults
		kind string
	}{
		{"before answer", scenarios.ClientFaults{InputBeforeAnswer: always}, "client.input_before_answer"},
		{"after answer", scenarios.ClientFaults{InputAfterAnswer: always}, "client.input_after_answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := faultConfig(tc.f)
				cfg.Args = map[string]any{"duration_ms": 2000, "input_required": true}
				r := runFaulty(t, faultServer, cfg)
				checkClean(t, r)
				created := r.c(metrics.TasksCreated)
				if got := r.events.Counts()[tc.kind]; got != created {
					t.Errorf("%d streams cut, want one per task (%d)", got, created)
				}
			})
		})
	}
}

// TestFaultCancelReply: fault point 5. Every cancel reaches the server and its reply is
// lost; the client keeps polling and sees the task terminal cancelled (R25).
func TestFaultCancelReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig(scenarios.ClientFaults{CancelReply: always})
		cfg.Cancel = loadgen.CancelPolicy{Probability: 1, Delay: func(*rand.Rand) time.Duration { return 700 * time.Millisecond }}
		r := runFaulty(t, faultServer, cfg)
		created := r.c(metrics.TasksCreated)
		if created == 0 || r.c(metrics.CancelsSent) != created || r.c(metrics.TasksCancelled) != created {
			t.Errorf("%d created, %d cancels sent, %d cancelled; want all equal", created, r.c(metrics.CancelsSent), r.c(metrics.TasksCancelled))
		}
		if r.c(metrics.CancelsAcked) != 0 || r.c(metrics.CancelsBroken) != 0 || r.c(metrics.TasksUnknown) != 0 {
			t.Errorf("acked %d, broken %d, unknown %d; want 0 each", r.c(metrics.CancelsAcked), r.c(metrics.CancelsBroken), r.c(metrics.TasksUnknown))
		}
		// Every cancelled task was cancelled by its own client, reply lost or not.
		if n := r.c(metrics.CancelledUnrequested); n != 0 {
			t.Errorf("%d tasks counted cancelled by someone else, want 0", n)
		}
		if r.server.EffectsAfterCancel != 0 {
			t.Errorf("%d effects after cancel, want 0", r.server.EffectsAfterCancel)
		}
	})
}

// TestFaultCrashResumes: a client crashes once per task, loses its memory and session, and
// resumes from its persisted record: the tool is never called again.
func TestFaultCrashResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runFaulty(t, faultServer, faultConfig(scenarios.ClientFaults{Crash: always}))
		checkClean(t, r)
		created := r.c(metrics.TasksCreated)
		if got := r.events.Counts()["client.crash"]; got != created {
			t.Errorf("%d crashes, want one per task (%d)", got, created)
		}
		if got := r.c(metrics.Resumed); got != created {
			t.Errorf("%d resumed observations, want one per crash (%d)", got, created)
		}
	})
}

// TestResultGoneAfterTerminal: a task seen completed whose tasks/result answers -32602 (it
// was purged in between) ends result_lost, not completed: its payload never arrived. It is
// asked once (the client must not loop on tasks/result) and listed for reconciliation.
func TestResultGoneAfterTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gone := intercept(mcp.MethodTasksResult, func(w http.ResponseWriter, _ *http.Request, msg *mcp.Message, _ http.Handler) bool {
			replyError(w, msg, mcp.Errorf(mcp.CodeInvalidParams, "task not found"))
			return true
		})
		r := runFaultyVia(t, faultServer, faultConfig(scenarios.ClientFaults{}), gone)
		created := r.c(metrics.TasksCreated)
		if created == 0 || r.c(metrics.TasksCompleted) != 0 || r.c(metrics.ResultsLost) != created {
			t.Errorf("%d created, %d completed, %d results lost; want none completed, every one lost", created, r.c(metrics.TasksCompleted), r.c(metrics.ResultsLost))
		}
		if lost := r.eng.ResultsLost(); len(lost) == 0 || lost[0].Reason != loadgen.ReasonResultLost || lost[0].TaskID == "" {
			t.Errorf("ResultsLost() = %v, want a sample of task ids with reason %s", lost, loadgen.ReasonResultLost)
		}
		if got := r.snap.Summary(metrics.LatencyTasksResult).Count; got != created {
			t.Errorf("%d tasks/result calls for %d tasks: want one each, no loop", got, created)
		}
		if r.c(metrics.TasksExpired) != 0 {
			t.Errorf("%d expired: a task seen completed did not expire", r.c(metrics.TasksExpired))
		}
	})
}

// TestLateCancelIsNotExpiry: a cancel that arrives after the task finished is refused with
// -32602 (R26); the task's outcome is what the next tasks/get shows (completed), not expired.
func TestLateCancelIsNotExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig(scenarios.ClientFaults{})
		cfg.Args = map[string]any{"duration_ms": 300}
		// Polls at 0.5 s; the cancel is due at 0.4 s, after the 0.3 s task finished.
		cfg.Cancel = loadgen.CancelPolicy{Probability: 1, Delay: func(*rand.Rand) time.Duration { return 400 * time.Millisecond }}
		r := runFaulty(t, faultServer, cfg)
		created := r.c(metrics.TasksCreated)
		if created == 0 || r.c(metrics.CancelsLate) != created || r.c(metrics.TasksCompleted) != created {
			t.Errorf("%d created, %d late cancels, %d completed; want all equal", created, r.c(metrics.CancelsLate), r.c(metrics.TasksCompleted))
		}
		if n := r.c(metrics.TasksExpired) + r.c(metrics.TasksCancelled); n != 0 {
			t.Errorf("%d tasks expired or cancelled: a late cancel changed the outcome", n)
		}
		// The task was terminal: the -32602 is the reply R26 prescribes, not a refusal.
		if got, refused := r.snap.Requests[mcp.OpTasksCancel][metrics.OutcomeExpected], r.c(metrics.CancelsRefused); got != created || refused != 0 {
			t.Errorf("tasks/cancel: %d expected, %d refused while working; want %d and 0", got, refused, created)
		}
	})
}

// TestFaultScheduleIsDeterministic: the same seed gives the same faults, task for task.
func TestFaultScheduleIsDeterministic(t *testing.T) {
	run := func() map[string]int64 {
		var out map[string]int64
		synctest.Test(t, func(t *testing.T) {
			half := scenarios.Trigger{Probability: 0.5}
			cfg := faultConfig(scenarios.ClientFaults{AfterCreate: half, BeforeResult: half, Crash: half})
			// 2.1 s tasks polled every 0.5 s: no poll lands on a completion instant, whose
			// order in virtual time is not defined (it would change a client's path).
			cfg.Args = map[string]any{"duration_ms": 2100}
			cfg.Duration = 9700 * time.Millisecond // nor does the end of the load phase (tasks end at multiples of 0.5 s)
			r := runFaulty(t, faultServer, cfg)
			out = r.events.Counts()
			out["created"] = r.c(metrics.TasksCreated)
		})
		return out
	}
	a, b := run(), run()
	if len(a) < 3 || !mapsEqual(a, b) {
		t.Errorf("two runs with one seed injected %v and %v", a, b)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCancelledWhileBlockedOnResult: a client blocks on tasks/result and someone else
// cancels its task meanwhile. The reply to tasks/result of a cancelled task is not defined
// (the mock answers an isError result); the client reads the task once more, sees it
// cancelled, and counts it cancelled (by someone else), not failed.
func TestCancelledWhileBlockedOnResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cancelFirst := intercept(mcp.MethodTasksResult, func(_ http.ResponseWriter, r *http.Request, msg *mcp.Message, next http.Handler) bool {
			cancel := r.Clone(r.Context())
			cb := mcp.AppendRequest(nil, mcp.StringID("other"), mcp.MethodTasksCancel, msg.Params)
			cancel.Body, cancel.ContentLength = io.NopCloser(bytes.NewReader(cb)), int64(len(cb))
			next.ServeHTTP(httptest.NewRecorder(), cancel)
			return false // then the tasks/result itself
		})
		cfg := faultConfig(scenarios.ClientFaults{})
		cfg.Result = loadgen.ResultBlock
		cfg.ThinkTime = time.Second // tasks end at once: without a pause the clients never wait
		r := runFaultyVia(t, faultServer, cfg, cancelFirst)
		created := r.c(metrics.TasksCreated)
		if created == 0 || r.c(metrics.TasksCancelled) != created || r.c(metrics.TasksFailed) != 0 {
			t.Errorf("%d created, %d cancelled, %d failed; want every one cancelled", created, r.c(metrics.TasksCancelled), r.c(metrics.TasksFailed))
		}
		if got := r.c(metrics.CancelledUnrequested); got != created {
			t.Errorf("cancelled_unrequested %d, want %d: no client asked for these cancels", got, created)
		}
	})
}

// TestCancelRefusedWhileWorking: a server that refuses every tasks/cancel with -32602, as
// if every task were already terminal, while the task still works. The client reads the
// task next: still working, so the refusal was no late cancel (R26) but a cancel refused
// (R27): counted cancels_refused, and the request an error after all.
func TestCancelRefusedWhileWorking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refuse := intercept(mcp.MethodTasksCancel, func(w http.ResponseWriter, _ *http.Request, msg *mcp.Message, _ http.Handler) bool {
			replyError(w, msg, mcp.Errorf(mcp.CodeInvalidParams, "task is terminal"))
			return true
		})
		cfg := faultConfig(scenarios.ClientFaults{})
		cfg.Cancel = loadgen.CancelPolicy{Probability: 1}
		r := runFaultyVia(t, faultServer, cfg, refuse)
		sent := r.c(metrics.CancelsSent)
		if sent == 0 || r.c(metrics.CancelsRefused) != sent {
			t.Errorf("%d cancels sent, %d refused while working; want every one", sent, r.c(metrics.CancelsRefused))
		}
		if got := r.snap.Requests[mcp.OpTasksCancel][metrics.OutcomeRPCError]; got != sent {
			t.Errorf("%d tasks/cancel errors, want %d: the refusals were not the expected reply", got, sent)
		}
		if r.c(metrics.TasksCompleted) != r.c(metrics.TasksCreated) {
			t.Errorf("completed %d of %d: the refused cancels left the tasks to complete", r.c(metrics.TasksCompleted), r.c(metrics.TasksCreated))
		}
	})
}

// intercept wraps a server handler: requests of method go to f first, which reports whether
// it answered them itself; everything else, and what f leaves, goes to the server.
func intercept(method string, f func(w http.ResponseWriter, r *http.Request, msg *mcp.Message, next http.Handler) (answered bool)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			if msg, perr := mcp.Decode(body); perr == nil && msg.Method == method && f(w, r, &msg, next) {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// replyError answers msg with the JSON-RPC error e.
func replyError(w http.ResponseWriter, msg *mcp.Message, e *mcp.Error) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(mcp.AppendError(nil, msg.ID, e))
}
