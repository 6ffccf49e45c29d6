package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
)

// TestRollbackDrillCounts: the rollback-drill in virtual time, its counts exact: every task
// running at the switch is counted once, settled, and applied by the ledger; no task is
// created after the switch (the server created exactly the tasks the clients saw created
// before it); new work went on as plain calls.
func TestRollbackDrillCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, dir := runVirtual(t, "rollback-drill", results.VerdictPass, "duration=12s", "grace=12s", "rollback.at=5s")
		page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`<section id="rollback">`, "The kill switch flipped 5", "tasks running at the switch",
			`"kind":"rollback.switch"`, "The solid blue line is the rollback's switch"} {
			if !strings.Contains(string(page), want) {
				t.Errorf("report.html lacks %q", want)
			}
		}
		g := sum.Gates.Rollback
		ev := g.Evidence
		pre := ev.PreSwitch
		rc := ev.Reconciliation
		if !g.Evaluated || !g.Pass || pre == 0 || ev.PreSwitchSettled != pre || ev.PreSwitchListed != 0 ||
			ev.PreSwitchUnlisted != 0 || rc.InFlight != int(pre) || rc.Applied != int(pre) {
			t.Fatalf("rollback gate %+v", g)
		}
		if ev.CreatesAfter != 0 || *ev.ServerCreatesAfter != 0 || ev.Trigger != "at 5s" {
			t.Errorf("after the switch: %+v", ev)
		}
		calls := ev.FallbackCalls
		if calls == 0 || ev.FallbackErrors != 0 || counter(sum, metrics.SyncCalls) != calls {
			t.Errorf("fallback calls %d, sync_calls %d", calls, counter(sum, metrics.SyncCalls))
		}
		if created := sum.Tasks.Created; created == 0 || sum.Tasks.Completed != created+calls {
			t.Errorf("created %d, completed %d: the tasks and the plain calls", created, sum.Tasks.Completed)
		}
		if sum.Server.Run == nil || int64(sum.Server.Run.TasksCreated) != sum.Tasks.Created {
			t.Errorf("the server created %+v, the clients saw %d", sum.Server.Run, sum.Tasks.Created)
		}
	})
}

// TestRollbackOnAbort: with rollback.on_abort, the abort_on_fail threshold that fails flips
// the switch instead of stopping the load: the gate names it, the load went on through the
// fallback, and the threshold still fails the run.
func TestRollbackOnAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "rollback-drill", results.VerdictFail, "duration=12s", "grace=12s",
			"rollback={on_abort: true}", "thresholds=[{expr: 'task_e2e.max < 1ms', abort_on_fail: true}]")
		ev := sum.Gates.Rollback.Evidence
		trigger := ev.Trigger
		if !strings.HasPrefix(trigger, `on_abort: threshold "task_e2e.max < 1ms" failed in window`) || sum.Aborted != "" {
			t.Fatalf("trigger %q, aborted %q: the threshold flips the switch, it does not stop the load", trigger, sum.Aborted)
		}
		if !sum.Gates.Rollback.Pass || ev.FallbackCalls == 0 || ev.PreSwitch == 0 {
			t.Errorf("rollback gate %+v", sum.Gates.Rollback)
		}
		if th := sum.Thresholds[0]; th.Pass || !th.AbortOnFail {
			t.Errorf("threshold %+v: it still fails the run", th)
		}
	})
}

// TestRollbackLostTasksDemo: the demo fails for the reason it demonstrates: its rollback gate
// fails on the tasks the restarted server forgot, every one running at the switch, and the
// ledger lists their operations as unknown, lost.
func TestRollbackLostTasksDemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, dir := runVirtual(t, "rollback-lost-tasks-demo", results.VerdictFail, "duration=12s", "grace=12s", "rollback.at=5s")
		if page, err := os.ReadFile(filepath.Join(dir, results.ReportFile)); err != nil || !strings.Contains(string(page), `<tr class="fail"><th>of them, lost: unknown and on no list</th>`) {
			t.Errorf("report.html does not mark the lost tasks failed (%v)", err)
		}
		g := sum.Gates.Rollback
		ev := g.Evidence
		failures := ev.Failures
		pre := ev.PreSwitch
		rc := ev.Reconciliation
		if !g.Evaluated || g.Pass || len(failures) != 1 || !strings.Contains(failures[0], "the recovery gate lists them for reconciliation") {
			t.Fatalf("rollback gate %+v", g)
		}
		if pre == 0 || ev.PreSwitchUnlisted != pre || *ev.TasksLost < pre || rc.Unknown != int(pre) {
			t.Errorf("pre_switch %d, unlisted %v, tasks_lost %v, unknown %v: every task running at the switch lost", pre, ev.PreSwitchUnlisted, *ev.TasksLost, rc.Unknown)
		}
	})
}
