package runner

// The shipped scenarios of the server tunables, each run whole in virtual time
// (testing/synctest) against the embedded server's handler in-process, through the same
// scenario mapping, collector and summary as Run: their effects must show in the
// summary and in timeseries.csv, whatever the speed of the machine.

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// runVirtual runs the built-in scenario name (with the --set overrides sets) through Run in
// process (Options.InProcess) in the caller's synctest bubble, and returns its summary and
// the directory holding its files. The verdict must be want.
func runVirtual(t *testing.T, name string, want string, sets ...string) (*results.Summary, string) {
	t.Helper()
	sc, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range sets {
		path, value, _ := strings.Cut(kv, "=")
		if err := sc.Set(path, value); err != nil {
			t.Fatal(err)
		}
	}
	if sc.Faults.Network.On() {
		t.Fatalf("%s needs the chaos proxy, which runs on real sockets: not in virtual time", name)
	}
	dir := t.TempDir()
	sum, err := Run(context.Background(), sc, Options{Dir: dir, InProcess: true})
	if sum == nil || errors.Is(err, ErrNoRunSummary) {
		t.Fatalf("%s: no summary: %v", name, err)
	}
	if sum.Verdict != want {
		g := sum.Gates
		var failed []string
		for _, th := range sum.Thresholds {
			if !th.Pass {
				failed = append(failed, fmt.Sprintf("%s = %v %s (%s %s)", th.Expr, th.Value, th.Unit, th.Source, th.Note))
			}
		}
		t.Errorf("%s: verdict %s (%v), want %s; failed thresholds %q; gates: hard %+v, recovery %+v, cancellation %+v", name, sum.Verdict, err, want, failed, g.Hard, g.Recovery, g.Cancellation)
	}
	return sum, dir
}

// counter is the run's counter c, as its summary holds it.
func counter(sum *results.Summary, c metrics.Counter) int64 { return sum.Counters[c.Name()] }

// column reads one column of timeseries.csv as numbers (an empty cell reads as 0).
func column(t *testing.T, dir, name string) []float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, results.TimeseriesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("timeseries.csv: %d rows, %v", len(rows), err)
	}
	i := slices.Index(rows[0], name)
	if i < 0 {
		t.Fatalf("timeseries.csv has no column %q", name)
	}
	var out []float64
	for _, r := range rows[1:] {
		v, _ := strconv.ParseFloat(r[i], 64)
		out = append(out, v)
	}
	return out
}

func TestScenarioBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, dir := runVirtual(t, "backpressure", results.VerdictPass)
		if n := counter(sum, metrics.BackpressureSignals); n == 0 {
			t.Error("no backpressure signals")
		}
		if sum.Tasks.Unknown != 0 {
			t.Errorf("%d tasks unknown: refused creates must count as refusals", sum.Tasks.Unknown)
		}
		depth := column(t, dir, "downstream_queue_depth")
		if slices.Max(depth) != 20 { // the scenario's queue_limit
			t.Errorf("downstream queue depth peaked at %v, want the limit 20 (saturated)", slices.Max(depth))
		}
	})
}

func TestScenarioPollStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "poll-storm", results.VerdictPass)
		if p50 := sum.Metrics[metrics.PollAmplification.Name()].P50; p50 <= 5 {
			t.Errorf("poll_amplification p50 %.2f, want > 5", p50)
		}
		if n := sum.Requests["tasks/get"].ByStatus["429"]; n == 0 {
			t.Error("no 429 on tasks/get")
		}
	})
}

func TestScenarioTTLExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "ttl-expiry", results.VerdictPass)
		if n := counter(sum, metrics.OrphanedTasks); n == 0 {
			t.Error("no orphaned tasks")
		}
		if lag := sum.Metrics[metrics.CleanupLag.Name()]; lag.Count == 0 || lag.Max <= 0 {
			t.Errorf("cleanup_lag %+v, want values above zero", lag)
		}
		if sum.Tasks.Expired == 0 || sum.Tasks.Lost != 0 || sum.Tasks.Completed == 0 {
			t.Errorf("expired %d, lost %d, completed %d: want tasks expired after their ttl, none lost, some seen completed first",
				sum.Tasks.Expired, sum.Tasks.Lost, sum.Tasks.Completed)
		}
	})
}

func TestScenarioSlowDownstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, dir := runVirtual(t, "slow-downstream", results.VerdictPass)
		ts := column(t, dir, "t_s")
		depth := column(t, dir, "downstream_queue_depth")
		var before, during, after float64 // the stall window is 15 s .. 25 s
		for i, at := range ts {
			switch {
			case at <= 15:
				before = max(before, depth[i])
			case at <= 26:
				during = max(during, depth[i])
			}
			after = depth[i]
		}
		if before > 2 || during < 50 || after != 0 {
			t.Errorf("downstream queue depth: max %v before the stall, %v during it, %v at the end; want ~0, a build (>= 50), drained (0)", before, during, after)
		}
	})
}

// The chaos scenarios, whole and in virtual time: each passes its gates on the
// embedded (correct) server, with the recovery and cancellation gates evaluated, except the
// demo of a known-bad server, which must fail the hard gate.

func TestScenarioReconnectStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "reconnect-storm", results.VerdictPass)
		if !sum.Gates.Recovery.Evaluated || !sum.Gates.Recovery.Pass {
			t.Errorf("recovery gate %+v", sum.Gates.Recovery)
		}
		for _, c := range []metrics.Counter{metrics.Reconnects, metrics.Resumed, metrics.Reconciled} {
			if counter(sum, c) == 0 {
				t.Errorf("%s = 0: the storm did not exercise it", c)
			}
		}
		if sum.Tasks.Unknown != 0 {
			t.Errorf("%d tasks unknown: %v %v", sum.Tasks.Unknown, sum.Gates.Recovery.Evidence.ReconciliationList, sum.Gates.Recovery.Evidence.ReconciliationSample)
		}
	})
}

func TestScenarioCancelStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "cancel-storm", results.VerdictPass)
		g := sum.Gates.Cancellation
		if !g.Evaluated || !g.Pass {
			t.Errorf("cancellation gate %+v", g)
		}
		if counter(sum, metrics.CancelsAcked) == 0 || counter(sum, metrics.CancelsLate) == 0 {
			t.Errorf("acked %d, late %d: want both (some cancels win, some lose the race)", counter(sum, metrics.CancelsAcked), counter(sum, metrics.CancelsLate))
		}
		if n := g.Evidence.EffectsAfterCancel; n == nil || *n == 0 {
			t.Errorf("effects_after_cancel = %v: effect_first should apply some before the cancel", n)
		}
	})
}

func TestScenarioInputRequired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "input-required", results.VerdictPass)
		if sum.Tasks.Unknown != 0 || sum.Tasks.Completed == 0 {
			t.Errorf("tasks %+v: every task must end", sum.Tasks)
		}
		faults := sum.Gates.Recovery.Evidence.FaultsInjected
		for _, k := range []string{"client.input_before_answer", "client.input_after_answer", "client.result_stream"} {
			if faults[k] == 0 {
				t.Errorf("no %s fault injected (%v)", k, faults)
			}
		}
	})
}

func TestScenarioServerRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "server-restart", results.VerdictPass)
		if counter(sum, metrics.Reconnects) == 0 || sum.Tasks.Unknown != 0 {
			t.Errorf("%d reconnects, %d unknown", counter(sum, metrics.Reconnects), sum.Tasks.Unknown)
		}
		faults := sum.Gates.Recovery.Evidence.FaultsInjected
		if faults["server.restart"] != 3 { // at 10, 20 and 30 s of a 35 s run
			t.Errorf("%d restarts, want 3", faults["server.restart"])
		}
	})
}

func TestScenarioDuplicateEffectsDemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "duplicate-effects-demo", results.VerdictFail)
		if sum.Gates.Hard.Pass || sum.Gates.Recovery.Pass {
			t.Errorf("hard %+v, recovery %+v: both must fail", sum.Gates.Hard, sum.Gates.Recovery)
		}
		if sum.ExitCode() != 99 {
			t.Errorf("exit code %d, want 99", sum.ExitCode())
		}
	})
}

// TestScenarioNoTasksPeer: against a server without the tasks capability the run takes the
// declared sync fallback: no task parameter is sent (R6), neither by the client's count nor
// by the server's count of task parameters it ignored (R4), every call is a synchronous
// tools/call, no task is created, and the compatibility gate is evaluated and passes.
func TestScenarioNoTasksPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "no-tasks-peer", results.VerdictPass)
		g := sum.Gates.Compatibility
		if !g.Evaluated || !g.Pass {
			t.Fatalf("compatibility gate %+v: want evaluated and passing", g)
		}
		ev := g.Evidence
		if *ev.TaskParamsSent != 0 || *ev.TaskParamsIgnored != 0 || ev.TasksDeclared {
			t.Errorf("compatibility evidence %+v", ev)
		}
		calls := sum.Requests["tools/call"].Count
		if calls == 0 || sum.Tasks.Created != 0 || sum.Tasks.Completed != calls {
			t.Errorf("%d tools/call, %d tasks created, %d completed: want only synchronous calls, all completed", calls, sum.Tasks.Created, sum.Tasks.Completed)
		}
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"} {
			if n := sum.Requests[m].Count; n != 0 {
				t.Errorf("%d %s sent to a peer without Tasks", n, m)
			}
		}
	})
}

// TestScenarioCanaryGateRunsTheContract: canary-gate (contract: true) runs the contract suite
// before its load, in process and in virtual time too, and the suite's verdict is the
// contract gate: evaluated, passing on the embedded server, its cases in the summary.
func TestScenarioCanaryGateRunsTheContract(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, dir := runVirtual(t, "canary-gate", results.VerdictPass, "duration=12s", "grace=12s")
		if g := sum.Gates.Contract; !g.Evaluated || !g.Pass || sum.Contract == nil || sum.Contract.Counts.Pass == 0 {
			t.Errorf("contract gate %+v, contract %v: want the suite run and passing", g, sum.Contract)
		}
		if _, err := os.Stat(filepath.Join(dir, "conform.json")); err != nil {
			t.Errorf("conform.json: %v", err)
		}
	})
}
