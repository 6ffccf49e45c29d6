package loadgen_test

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// rollbackRun runs 4 closed-model clients calling tool (3 s tasks, polled every 500 ms) for
// 10 s and flips the switch 1.5 s in, when each client has one task running; the server's
// side of the drill is wired as `run` wires it. It returns the run, the client's counts and
// the server's reconciliation.
func rollbackRun(t *testing.T, protocol, tool string, srvCfg mockserver.Config, edit func(*loadgen.Config), restart bool) (*embeddedRun, *loadgen.RollbackStats, *mockserver.Reconciliation) {
	t.Helper()
	cfg := loadgen.Config{Tool: tool, Clients: 4, Duration: 10 * time.Second, Grace: 10 * time.Second,
		Args: map[string]any{"duration_ms": 3000}, Fallback: client.FallbackSync}
	if edit != nil {
		edit(&cfg)
	}
	srvCfg.PollInterval = 500 * time.Millisecond
	if protocol != "" {
		srvCfg.Protocols = mockserver.ProtocolsBoth
	}
	var srv *mockserver.Server
	r := runIn(t, srvCfg, cfg, harness{protocol: protocol,
		setup: func(s *mockserver.Server, c *loadgen.Config) {
			srv = s
			c.Rollback = loadgen.RollbackPolicy{On: true, Cancel: c.Rollback.Cancel,
				OnSwitch: func(at time.Time) { s.RollBack(at, restart) }}
		},
		during: func(e *loadgen.Engine) {
			time.Sleep(1500 * time.Millisecond)
			e.RollBack("at 1.5s")
		}})
	return r, r.eng.Rollback(), srv.Reconcile()
}

// TestRollbackDrill: in both eras, the four tasks running at the switch are watched to
// their end (settled, applied by the ledger, drained within 2 s), and every call after the
// switch is a plain tools/call: no task is created after it, on the wire or on the server.
func TestRollbackDrill(t *testing.T) {
	for _, protocol := range []string{"", "2026-07-28"} {
		t.Run("era "+protocol, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, rb, rc := rollbackRun(t, protocol, "work", mockserver.Config{}, nil, false)
				if rb.Trigger != "at 1.5s" || rb.PreSwitch != 4 || rb.Settled != 4 || rb.Listed != 0 || rb.Unlisted != 0 {
					t.Errorf("pre-switch tasks: %+v; want 4, all settled", rb)
				}
				if rb.CreatesAfter != 0 || rb.TasksAfter != 0 || rb.Refused != 0 || rb.FallbackCalls < 8 || rb.FallbackErrors != 0 {
					t.Errorf("after the switch: %+v; want plain calls only, none failed", rb)
				}
				if rb.Drain < 1500*time.Millisecond || rb.Drain > 2*time.Second {
					t.Errorf("drain %v: the 3 s tasks end 1.5 s after the switch, seen within a poll", rb.Drain)
				}
				if rc.InFlight != 4 || rc.CreatesAfter != 0 || len(rc.Applied) != 4 || rc.TasksLost != 0 {
					t.Errorf("server: %+v", rc)
				}
				if c := r.snap.Counters; c[metrics.TasksCreated] != 4 || r.server.TasksCreated != 4 || c[metrics.TasksCompleted] != 4+rb.FallbackCalls {
					t.Errorf("created %d (server %d), completed %d; want 4 tasks and the plain calls completed", c[metrics.TasksCreated], r.server.TasksCreated, c[metrics.TasksCompleted])
				}
			})
		})
	}
}

// TestRollbackWatcherCancels: the watcher cancels the pre-switch tasks only when told to;
// otherwise even their planned cancels are not sent.
func TestRollbackWatcherCancels(t *testing.T) {
	every := func(c *loadgen.Config) {
		c.Cancel = loadgen.CancelPolicy{Probability: 1, Delay: func(*rand.Rand) time.Duration { return 2 * time.Second }}
	}
	synctest.Test(t, func(t *testing.T) {
		r, rb, _ := rollbackRun(t, "", "work", mockserver.Config{}, every, false)
		if c := r.snap.Counters; c[metrics.CancelsSent] != 0 || c[metrics.TasksCancelled] != 0 || rb.Settled != 4 || rb.Cancelled != 0 {
			t.Errorf("planned cancels: %d sent, %d cancelled; rollback %+v; want none sent", c[metrics.CancelsSent], c[metrics.TasksCancelled], rb)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r, rb, rc := rollbackRun(t, "", "work", mockserver.Config{}, func(c *loadgen.Config) { c.Rollback.Cancel = true }, false)
		if c := r.snap.Counters; c[metrics.TasksCancelled] != 4 || rb.Cancelled != 4 || rb.Settled != 4 || len(rc.NotApplied) != 4 {
			t.Errorf("cancelled %d; rollback %+v, server %+v; want the 4 pre-switch tasks cancelled, not applied", c[metrics.TasksCancelled], rb, rc)
		}
	})
}

// TestRollbackLosesTasks: a switch that restarts a server without durable storage loses
// the four tasks in flight: the clients see them gone before their ttl (unknown, on no
// list), the server counts them lost and cannot say whether their work happened.
func TestRollbackLosesTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rb, rc := rollbackRun(t, "", "work", mockserver.Config{Faults: scenarios.ServerFaults{RestartLosesTasks: true}}, nil, true)
		if rb.PreSwitch != 4 || rb.Unlisted != 4 || len(rb.UnlistedSample) != 4 || rb.Settled != 0 {
			t.Errorf("rollback %+v: want the 4 pre-switch tasks unlisted", rb)
		}
		if rc.TasksLost != 4 || len(rc.Unknown) != 4 {
			t.Errorf("server %+v: want 4 lost, unknown", rc)
		}
	})
}

// TestRollbackRefusesWithoutPlainCall: a tool that requires tasks has no plain call to fall
// back to: new work after the switch is refused by the client, and nothing is sent for it.
func TestRollbackRefusesWithoutPlainCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, rb, rc := rollbackRun(t, "", "work_task", mockserver.Config{}, nil, false)
		if rb.Refused == 0 || rb.FallbackCalls != 0 || rb.CreatesAfter != 0 || rc.CreatesAfter != 0 {
			t.Errorf("rollback %+v, server %+v: want refusals only", rb, rc)
		}
		if n := r.snap.Counters[metrics.TasksCreated]; n != 4 {
			t.Errorf("%d tasks created, want the 4 before the switch", n)
		}
	})
}
