package runner

import (
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
)

// TestLostIsNotExpired: a server restarted mid-run without durable storage forgets its tasks
// long before their 300 s ttl. In both eras the clients count them lost, not expired: on the
// reconciliation list, and failing the recovery gate, though the outage is short enough for
// the error budget to pass. (Before, they were counted expired, and expired counted as
// "done without failing".)
func TestLostIsNotExpired(t *testing.T) {
	for _, proto := range []string{client.ProtocolLegacy, client.ProtocolModern} {
		t.Run(proto, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sum, _ := runVirtual(t, "smoke", results.VerdictFail, "protocol="+proto,
					"args.duration_ms=3000", "server.ttl=300s",
					"faults.server.restart={at: [2s]}", "faults.server.restart_loses_tasks=true")
				tk := sum.Tasks
				if tk.Lost == 0 || tk.Expired != 0 {
					t.Fatalf("lost %d, expired %d: want the tasks the restart forgot lost, none expired", tk.Lost, tk.Expired)
				}
				g := sum.Gates.Recovery
				if !g.Evaluated || g.Pass || g.Evidence.TasksLost != tk.Lost || g.Evidence.ReconciliationList["lost"] != tk.Lost || len(g.Evidence.Failures) != 1 {
					t.Errorf("recovery gate %+v: want evaluated, failed on %d lost tasks listed for reconciliation", g, tk.Lost)
				}
				if tasks := g.Evidence.TasksAccounted; tasks == nil || !*tasks {
					t.Errorf("tasks_accounted %v: %s", tasks, g.Evidence.Accounting)
				}
				if counter(sum, metrics.TasksLost) != tk.Lost {
					t.Errorf("counter tasks_lost %d, tasks.lost %d", counter(sum, metrics.TasksLost), tk.Lost)
				}
				for _, th := range sum.Thresholds {
					if th.Source == results.SourceErrorBudget && !th.Pass {
						t.Errorf("the error budget failed (%v): the outage was meant to be short enough for it to pass", th.Value)
					}
				}
			})
		})
	}
}

// TestExpiredAfterTTLStaysExpired: tasks that never end (the stuck fault) and vanish once
// their 2 s ttl has run out are expired, not lost, in both eras, and do not fail the
// recovery gate: the server kept them as long as it granted (R45).
func TestExpiredAfterTTLStaysExpired(t *testing.T) {
	for _, proto := range []string{client.ProtocolLegacy, client.ProtocolModern} {
		t.Run(proto, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sum, _ := runVirtual(t, "smoke", results.VerdictPass, "protocol="+proto,
					"server.ttl=2s", "server.reaper_interval=100ms", "faults.server.stuck={probability: 0.3}",
					"error_budget=50%")
				tk := sum.Tasks
				if tk.Expired == 0 || tk.Lost != 0 {
					t.Fatalf("expired %d, lost %d: want the stuck tasks expired after their ttl, none lost", tk.Expired, tk.Lost)
				}
				if g := sum.Gates.Recovery; !g.Evaluated || !g.Pass {
					t.Errorf("recovery gate %+v: want evaluated and passed", g)
				}
			})
		})
	}
}
