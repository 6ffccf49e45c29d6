package main

// The shipped scenarios of the server tunables, each run whole in virtual time
// (testing/synctest) against the embedded server's handler in-process, through the same
// scenario mapping, collector and summary as `tasksim run`: their effects must show in the
// summary and in timeseries.csv, whatever the speed of the machine.

import (
	"context"
	"encoding/csv"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// runVirtual runs the built-in scenario name in the caller's synctest bubble and returns
// its summary, its totals and the directory holding its files.
func runVirtual(t *testing.T, name string) (*results.Summary, *metrics.Snapshot, string) {
	t.Helper()
	sc, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sc); err != nil {
		t.Fatal(err)
	}
	cfg := engineConfig(sc)
	start := time.Now()
	rec := metrics.NewRecorder(cfg.Shards, start)
	scfg := serverConfig(sc)
	scfg.Metrics = rec.Shard(0)
	srv, err := mockserver.NewHandlerServer(scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	target := &loadgen.Target{URL: "http://embedded.test/mcp", Header: http.Header{},
		Client:     &http.Client{Transport: loadgen.HandlerTransport(srv.Handler())},
		ClientInfo: mcp.Implementation{Name: "tasksim-test", Version: version}}
	ctx := context.Background()
	m, err := loadgen.Probe(ctx, target, sc.Tool)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Decide(cfg.Fallback); err != nil {
		t.Fatal(err)
	}
	eng, err := loadgen.New(cfg, target, m, rec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	col, err := newCollector(dir, start, rec, eng, srv)
	if err != nil {
		t.Fatal(err)
	}
	col.begin()
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	col.stop()
	sum := summarize(sc, &cfg, start, m, srv, eng, rec, col.windows, false)
	if err := results.WriteSummary(dir, sum); err != nil {
		t.Fatal(err)
	}
	if sum.Verdict != results.VerdictPass {
		t.Errorf("verdict %s, want pass", sum.Verdict)
	}
	return sum, rec.Total(), dir
}

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
		sum, snap, dir := runVirtual(t, "backpressure")
		if n := snap.Counters[metrics.BackpressureSignals]; n == 0 {
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
		sum, snap, _ := runVirtual(t, "poll-storm")
		if p50 := snap.Summary(metrics.PollAmplification).P50; p50 <= 5 {
			t.Errorf("poll_amplification p50 %.2f, want > 5", p50)
		}
		if n := sum.Requests["tasks/get"].ByStatus["429"]; n == 0 {
			t.Error("no 429 on tasks/get")
		}
	})
}

func TestScenarioTTLExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, snap, _ := runVirtual(t, "ttl-expiry")
		if n := snap.Counters[metrics.OrphanedTasks]; n == 0 {
			t.Error("no orphaned tasks")
		}
		if lag := snap.Summary(metrics.CleanupLag); lag.Count == 0 || lag.Max <= 0 {
			t.Errorf("cleanup_lag %+v, want values above zero", lag)
		}
		if sum.Tasks.Expired == 0 {
			t.Error("clients saw no task expire")
		}
	})
}

func TestScenarioSlowDownstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, dir := runVirtual(t, "slow-downstream")
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
