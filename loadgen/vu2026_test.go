package loadgen_test

// The virtual client in 2026-07-28 (vu2026.go), end to end against the mock server's
// handler in virtual time: the lifecycle of the Tasks extension, input through
// tasks/update, cancel as an acknowledgement, the client fault points of the era, and the
// era found automatically against servers of one era or both. Every request the clients
// send and every reply they get is validated against the official schemas of 2026-07-28
// and the extension (modernWire).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// wireLog is what modernWire saw: the requests by method, and the first problem found.
type wireLog struct {
	mu      sync.Mutex
	methods map[string]int
	bad     []string
}

func (w *wireLog) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bad) < 5 {
		w.bad = append(w.bad, fmt.Sprintf(format, args...))
	}
}

func (w *wireLog) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.bad {
		t.Error(b)
	}
}

// modernWire wraps a handler: every POST must be a request of 2026-07-28 valid against the
// schemas, with the headers of E24 and E64 (Mcp-Name: the taskId of a task method), and
// every reply to it must be valid too.
func modernWire(log *wireLog) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct {
				Method string `json:"method"`
				Params struct {
					TaskID string `json:"taskId"`
					Name   string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &req)
			log.mu.Lock()
			if log.methods == nil {
				log.methods = map[string]int{}
			}
			log.methods[req.Method]++
			log.mu.Unlock()
			if err := mcptest.ValidateMessage2026(body); err != nil {
				log.fail("request %s: %v", req.Method, err)
			}
			name := req.Params.TaskID
			if req.Method == mcp.MethodToolsCall {
				name = req.Params.Name
			}
			if got := r.Header.Get(mcp.HeaderMethod); got != req.Method {
				log.fail("%s sent with Mcp-Method %q (E24)", req.Method, got)
			}
			if got := r.Header.Get(mcp.HeaderName); got != name {
				log.fail("%s sent with Mcp-Name %q, want %q (E24, E64)", req.Method, got, name)
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if err := mcptest.ValidateReply2026(req.Method, rec.Body.Bytes()); err != nil && req.Method != "" {
				log.fail("reply to %s: %v", req.Method, err)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
		})
	}
}

// modernServer is the mock server of 2026-07-28 only, advising 500 ms between polls.
var modernServer = mockserver.Config{PollInterval: 500 * time.Millisecond, Protocols: mockserver.ProtocolsModern}

// runModern runs cfg against srvCfg in 2026-07-28 (found by detection), through modernWire,
// reconciling lost creates through the server's ledger. Inside a synctest bubble.
func runModern(t *testing.T, srvCfg mockserver.Config, cfg loadgen.Config) (*faultRun, *wireLog) {
	t.Helper()
	log := &wireLog{}
	events := metrics.NewEvents(0)
	srvCfg.Events, cfg.Events = events, events
	r := runIn(t, srvCfg, cfg, harness{protocol: "auto", wrap: modernWire(log), setup: func(srv *mockserver.Server, cfg *loadgen.Config) {
		cfg.Reconciler = loadgen.ReconcilerFunc(func(_ context.Context, key string) (string, bool, error) {
			id, ok := srv.LookupKey("", key)
			return id, ok, nil
		})
	}})
	if r.manifest.Era != client.ProtocolModern {
		t.Fatalf("the run spoke %s, want %s", r.manifest.Era, client.ProtocolModern)
	}
	log.check(t)
	return &faultRun{snap: r.snap, eng: r.eng, server: r.server, events: events}, log
}

// TestModernLifecycle: tasks created by the server's decision, polled per pollIntervalMs,
// their results inline: no tasks/result, no initialize, no DELETE, result_lag 0.
func TestModernLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, log := runModern(t, modernServer, faultConfig(scenarios.ClientFaults{}))
		checkClean(t, r)
		created := r.c(metrics.TasksCreated)
		for m, n := range log.methods {
			if m != mcp.MethodToolsCall && m != mcp.MethodTasksGet && m != mcp.MethodServerDiscover && m != mcp.MethodToolsList {
				t.Errorf("%d requests of %s, which a run of 2026-07-28 never sends", n, m)
			}
		}
		if got := r.snap.RequestCount(mcp.OpTasksResult) + r.snap.RequestCount(mcp.OpInitialize) +
			r.snap.RequestCount(mcp.OpDelete); got != 0 {
			t.Errorf("%d tasks/result, initialize or DELETE counted", got)
		}
		lag := r.snap.Summary(metrics.ResultLag)
		if lag.Count != created || lag.Max != 0 {
			t.Errorf("result_lag: %d values, max %v; want one 0 per task (%d): the result comes with the status", lag.Count, lag.Max, created)
		}
		// 2 s tasks polled every 500 ms: four polls, a fifth when one races the end.
		if ppt := r.snap.Summary(metrics.PollsPerTask); ppt.Min < 4 || ppt.Max > 5 {
			t.Errorf("polls per task %v..%v, want 4..5", ppt.Min, ppt.Max)
		}
		if n := r.snap.ErrorCount(mcp.OpTasksGet) + r.snap.ErrorCount(mcp.OpToolsCall); n != 0 {
			t.Errorf("%d errors", n)
		}
	})
}

// TestModernOutcomes: a tool that ends in a JSON-RPC error makes a failed task, its error
// inline; one whose result has isError (the mock's outcome "failed") a completed task (E49)
// whose outcome is failed, as the same tool's is in 2025-11-25: tasks_failed counts the
// tool's failures in both eras.
func TestModernOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, outcome := range []string{"error", "failed"} {
			cfg := faultConfig(scenarios.ClientFaults{})
			cfg.Args = map[string]any{"duration_ms": 1000, "outcome": outcome}
			r, _ := runModern(t, modernServer, cfg)
			if created, failed := r.c(metrics.TasksCreated), r.c(metrics.TasksFailed); created == 0 || failed != created || r.c(metrics.TasksCompleted) != 0 {
				t.Errorf("outcome %s: failed %d of %d tasks, completed %d", outcome, failed, created, r.c(metrics.TasksCompleted))
			}
		}
	})
}

// TestModernInput: input_required tasks are answered through tasks/update, each key once,
// and end completed; the answers follow the input policy.
func TestModernInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig(scenarios.ClientFaults{})
		cfg.Args = map[string]any{"duration_ms": 2000, "input_required": true, "input_rounds": 2}
		r, log := runModern(t, modernServer, cfg)
		checkClean(t, r)
		created := r.c(metrics.TasksCreated)
		if got := r.c(metrics.Elicitations); got != 2*created {
			t.Errorf("%d input requests answered, want 2 per task (%d)", got, 2*created)
		}
		if got := r.snap.RequestCount(mcp.OpTasksUpdate); got != 2*created || int64(log.methods[mcp.MethodTasksUpdate]) != got {
			t.Errorf("%d tasks/update counted, %d seen by the server; want one per round (%d)", got, log.methods[mcp.MethodTasksUpdate], 2*created)
		}
		if got := r.c(metrics.InputRequired); got != 2*created {
			t.Errorf("input_required seen %d times, want %d", got, 2*created)
		}
		if r.snap.Summary(metrics.LatencyTasksUpdate).Count != 2*created {
			t.Error("tasks/update latency not recorded")
		}
	})
}

// TestModernCancel: every task is cancelled; the acknowledgement says nothing, the polls
// that follow show cancelled, and cancel_latency runs from the cancel to that poll.
func TestModernCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig(scenarios.ClientFaults{})
		cfg.Cancel = loadgen.CancelPolicy{Probability: 1, Delay: func(*rand.Rand) time.Duration { return 700 * time.Millisecond }}
		r, _ := runModern(t, modernServer, cfg)
		created := r.c(metrics.TasksCreated)
		if created == 0 || r.c(metrics.TasksCancelled) != created || r.c(metrics.CancelsAcked) != created {
			t.Errorf("created %d, cancelled %d, acked %d: want all", created, r.c(metrics.TasksCancelled), r.c(metrics.CancelsAcked))
		}
		if n := r.c(metrics.CancelledUnrequested) + r.c(metrics.CancelsLate) + r.c(metrics.CancelsBroken); n != 0 {
			t.Errorf("%d cancels unrequested, late or broken", n)
		}
		if cl := r.snap.Summary(metrics.CancelLatency); cl.Count != created || cl.Max <= 0 {
			t.Errorf("cancel_latency: %d values, max %v", cl.Count, cl.Max)
		}
	})
}

// TestModernFaults: each client fault point of the era, at every opportunity, and the
// recovery it demands: every task still ends completed, none is created twice.
func TestModernFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults scenarios.ClientFaults
		args   map[string]any
		check  func(t *testing.T, r *faultRun)
	}{
		{name: "create_reply", faults: scenarios.ClientFaults{CreateReply: always}, check: func(t *testing.T, r *faultRun) {
			if got, want := r.c(metrics.Reconciled), r.c(metrics.TasksCreated); got != want {
				t.Errorf("reconciled %d of %d orphans (docs/RULES.md#ext-gap-9)", got, want)
			}
		}},
		{name: "after_create", faults: scenarios.ClientFaults{AfterCreate: always}, check: func(t *testing.T, r *faultRun) {
			if got, want := r.c(metrics.Resumed), r.c(metrics.TasksCreated); got != want {
				t.Errorf("resumed %d of %d tasks", got, want)
			}
			if r.c(metrics.Reconnects) != 0 {
				t.Error("reconnects counted in an era without sessions")
			}
		}},
		{name: "result_stream", faults: scenarios.ClientFaults{ResultStream: always}, check: func(t *testing.T, r *faultRun) {
			if got, want := r.events.Counts()["client.result_stream"], r.c(metrics.TasksCreated); int64(got) != want {
				t.Errorf("%d payload replies lost, want one per task (%d)", got, want)
			}
		}},
		{name: "before_result", faults: scenarios.ClientFaults{BeforeResult: always}, check: func(t *testing.T, r *faultRun) {
			if got, want := r.events.Counts()["client.before_result"], r.c(metrics.TasksCreated); int64(got) != want {
				t.Errorf("%d payload replies lost, want one per task (%d)", got, want)
			}
		}},
		{name: "input_before_answer", faults: scenarios.ClientFaults{InputBeforeAnswer: always}, args: inputArgs, check: func(t *testing.T, r *faultRun) {
			if got, want := r.snap.RequestCount(mcp.OpTasksUpdate), r.c(metrics.TasksCreated); got != want {
				t.Errorf("%d tasks/update, want one per task (%d): the dropped answer is given at the next poll", got, want)
			}
		}},
		{name: "input_after_answer", faults: scenarios.ClientFaults{InputAfterAnswer: always}, args: inputArgs, check: func(t *testing.T, r *faultRun) {
			if got, want := r.snap.RequestCount(mcp.OpTasksUpdate), r.c(metrics.TasksCreated); got != want {
				t.Errorf("%d tasks/update, want one per task (%d): an answered key is never answered again", got, want)
			}
		}},
		{name: "crash", faults: scenarios.ClientFaults{Crash: always}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := faultConfig(tc.faults)
				if tc.args != nil {
					cfg.Args = tc.args
				}
				r, _ := runModern(t, modernServer, cfg)
				checkClean(t, r)
				if r.c(metrics.FaultsInjected) == 0 {
					t.Error("no fault injected")
				}
				if tc.check != nil {
					tc.check(t, r)
				}
			})
		})
	}
}

var inputArgs = map[string]any{"duration_ms": 2000, "input_required": true, "input_rounds": 1}

// TestModernCancelReplyLost: the acknowledgement of every cancel is lost; the tasks still
// end cancelled, seen by polling, without a second cancel.
func TestModernCancelReplyLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := faultConfig(scenarios.ClientFaults{CancelReply: always})
		cfg.Cancel = loadgen.CancelPolicy{Probability: 1, Delay: func(*rand.Rand) time.Duration { return 700 * time.Millisecond }}
		r, log := runModern(t, modernServer, cfg)
		created := r.c(metrics.TasksCreated)
		if created == 0 || r.c(metrics.TasksCancelled) != created {
			t.Errorf("cancelled %d of %d", r.c(metrics.TasksCancelled), created)
		}
		if int64(log.methods[mcp.MethodTasksCancel]) != created {
			t.Errorf("%d tasks/cancel for %d tasks: a cancel was repeated", log.methods[mcp.MethodTasksCancel], created)
		}
	})
}

// TestModernEraFound: the client finds the era by itself: a server of 2026-07-28 only or of
// both eras is run in 2026-07-28, one of 2025-11-25 only in 2025-11-25 (the fallback said in
// the manifest), and every run ends clean.
func TestModernEraFound(t *testing.T) {
	for _, tc := range []struct {
		protocols mockserver.Protocols
		want      string
	}{
		{mockserver.ProtocolsModern, client.ProtocolModern},
		{mockserver.ProtocolsBoth, client.ProtocolModern},
		{mockserver.ProtocolsLegacy, client.ProtocolLegacy},
	} {
		t.Run(string(tc.protocols), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := faultServer
				srv.Protocols = tc.protocols
				r := runIn(t, srv, faultConfig(scenarios.ClientFaults{}), harness{protocol: "auto"})
				if r.manifest.Era != tc.want {
					t.Errorf("era %s, want %s (detection: %s)", r.manifest.Era, tc.want, r.manifest.EraDetection)
				}
				if fell := r.manifest.EraFallback != ""; fell != (tc.want == client.ProtocolLegacy) ||
					fell && !strings.Contains(r.manifest.EraDetection, "falling back to initialize") {
					t.Errorf("era_fallback %q, era_detection %q: want the fallback said exactly when taken", r.manifest.EraFallback, r.manifest.EraDetection)
				}
				checkClean(t, &faultRun{snap: r.snap, eng: r.eng, server: r.server})
			})
		})
	}
}

// TestModernWithoutExtension: a modern server that does not advertise the Tasks extension
// gets plain tools/call with fallback sync (no extension declared, no task), and the run
// is refused before it starts without.
func TestModernWithoutExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := modernServer
		srv.NoTasks = true
		cfg := faultConfig(scenarios.ClientFaults{})
		cfg.Tool, cfg.Fallback = "work", client.FallbackSync
		log := &wireLog{}
		r := runIn(t, srv, cfg, harness{protocol: "auto", wrap: modernWire(log)})
		log.check(t)
		if r.manifest.AsTask || !strings.Contains(r.manifest.Fallback, mcp.ExtTasks) {
			t.Errorf("as_task %v, fallback %q: want the sync fallback, naming the extension", r.manifest.AsTask, r.manifest.Fallback)
		}
		if r.snap.Counters[metrics.TasksCreated] != 0 || r.snap.Counters[metrics.TasksCompleted] == 0 {
			t.Errorf("created %d tasks, completed %d calls: want plain calls", r.snap.Counters[metrics.TasksCreated], r.snap.Counters[metrics.TasksCompleted])
		}
	})
}

// TestModernQuirksNoted: a target whose tasks/get replies lack resultType (read as
// "complete", E12) is run to the end, and the manifest says what was read leniently.
func TestModernQuirksNoted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		noType := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				body := rec.Body.Bytes()
				if r.Header.Get(mcp.HeaderMethod) == (mcp.V20260728{}).Method(mcp.OpTasksGet) {
					body = bytes.Replace(body, []byte(`"resultType":"complete",`), nil, 1)
				}
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.Header().Del("Content-Length")
				w.WriteHeader(rec.Code)
				w.Write(body)
			})
		}
		r := runIn(t, modernServer, faultConfig(scenarios.ClientFaults{}), harness{protocol: "auto", wrap: noType})
		if created := r.snap.Counters[metrics.TasksCreated]; created == 0 || r.snap.Counters[metrics.TasksCompleted] != created {
			t.Errorf("completed %d of %d", r.snap.Counters[metrics.TasksCompleted], created)
		}
		if notes := strings.Join(r.manifest.Notes, "; "); !strings.Contains(notes, "read leniently") {
			t.Errorf("notes %q: want the missing resultType said", notes)
		}
	})
}
