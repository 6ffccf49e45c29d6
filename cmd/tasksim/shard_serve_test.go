package main

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
)

// fleetScenario is the scenario of the tests below: 30 closed-model clients over three
// tenants against a target, tasks of 200 to 400 ms (serveFleet) polled every 100 ms. With 3 shards, client i
// belongs to shard i mod 3 and to tenant i mod 3 (tenants are taken in name order), so
// each shard speaks for one tenant alone: what the server does to one tenant happens to
// one shard.
const fleetScenario = `name: fleet
seed: 7
duration: 3s
grace: 3s
tool: work_task
workload:
  model: closed
  clients: 30
client:
  poll:
    policy: server
    interval: 100ms
  request_timeout: 10s
security:
  tenants:
    a: tok-fleet-a
    b: tok-fleet-b
    c: tok-fleet-c
`

// serveFleet starts `tasksim serve` for fleetScenario's three tenants, with extra flags.
// Its tasks never expire, so that the runs send no cleanup probe (probes are not counted in
// a run's requests, docs/METRICS.md#cleanup_probes_unmeasured) and the server's counts
// are the runs' counts.
func serveFleet(t *testing.T, extra ...string) string {
	t.Helper()
	return startServe(t, append([]string{"--poll-interval", "100ms", "--null-ttl",
		"--set", "server.tools.work_task.duration={dist: uniform, min: 200ms, max: 400ms}",
		"--token", "a=tok-fleet-a", "--token", "b=tok-fleet-b", "--token", "c=tok-fleet-c"}, extra...)...)
}

// runFleetShards runs the n shards of scenario file sc against url, all starting their load
// at startAt, and returns their run directories in index order and exit codes.
func runFleetShards(t *testing.T, sc, url string, n int, startAt time.Time) ([]string, []int) {
	t.Helper()
	root := t.TempDir()
	dirs, codes, stderrs := make([]string, n), make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = filepath.Join(root, "shard-"+strconv.Itoa(i))
		wg.Go(func() {
			_, stderrs[i], codes[i] = tasksim(t, "run", sc, "--target", url, "--out", dirs[i], "--no-progress",
				"--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt.UTC().Format(time.RFC3339Nano))
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 && c != exitGate {
			t.Fatalf("shard %d: exit %d\n%s", i, c, stderrs[i])
		}
	}
	return dirs, codes
}

// writeFleet writes fleetScenario, followed by extra YAML, to a file and returns its path.
func writeFleet(t *testing.T, extra string) string {
	t.Helper()
	sc := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(sc, []byte(fleetScenario+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestShardsOfOneServer runs the 3 shards of one scenario on loopback against one
// `tasksim serve`, merges them, and checks the merge three ways: against the server's own
// counters (tasks created and tasks/get answered add up exactly), against the shards (every
// count is their sum), and against a single process that ran the whole scenario against a
// server of its own (the polls-per-task and detection-lag distributions agree within
// tolerance: the fleet is the same, split or not).
func TestShardsOfOneServer(t *testing.T) {
	sc := writeFleet(t, "")

	single := t.TempDir()
	if stdout, stderr, code := tasksim(t, "run", sc, "--target", serveFleet(t), "--out", single, "--no-progress"); code != 0 {
		t.Fatalf("single run: exit %d\n%s%s", code, stdout, stderr)
	}

	url := serveFleet(t)
	dirs, codes := runFleetShards(t, sc, url, 3, time.Now().Add(3*time.Second))
	for i, c := range codes {
		if c != 0 {
			t.Errorf("shard %d: exit %d", i, c)
		}
	}
	out := filepath.Join(t.TempDir(), "merged")
	stdout, stderr, code := tasksim(t, append(append([]string{"merge"}, dirs...), "--out", out)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	m := readSum(t, out)

	// The server saw what the merge says the fleet did.
	prom := scrape(t, strings.TrimSuffix(url, "/mcp")+"/metrics")
	if got := prom[`tasksim_mock_tasks_created_total`]; m.Tasks.Created == 0 || float64(m.Tasks.Created) != got {
		t.Errorf("merged tasks.created %d, the server created %v", m.Tasks.Created, got)
	}
	gets := prom[`tasksim_mock_requests_total{era="modern",method="tasks_get",outcome="ok"}`]
	if got := m.Requests["tasks/get"].ByOutcome["ok"]; got == 0 || float64(got) != gets {
		t.Errorf("merged tasks/get ok %d, the server answered %v", got, gets)
	}
	// Every count is the shards' sum.
	var created, completed, polls int64
	for _, d := range dirs {
		s := readSum(t, d)
		created += s.Tasks.Created
		completed += s.Tasks.Completed
		polls += s.Metrics[metrics.PollsPerTask.Name()].Count
	}
	if m.Tasks.Created != created || m.Tasks.Completed != completed || m.Metrics[metrics.PollsPerTask.Name()].Count != polls {
		t.Errorf("merged created/completed/polls_per_task count %d/%d/%d, the shards' sums %d/%d/%d",
			m.Tasks.Created, m.Tasks.Completed, m.Metrics[metrics.PollsPerTask.Name()].Count, created, completed, polls)
	}

	// The distributions agree with one process's. Tolerances: tasks of 200 to 400 ms polled
	// every 100 ms take 2 to 4 polls, and their status is seen 0 to 100 ms after it changed
	// (the standard error of a mean of 300 such lags is under 2 ms); the two runs are a few
	// seconds apart on a shared machine, so their means may differ by a third of a poll and
	// by a quarter of the interval, not more.
	s := readSum(t, single)
	for _, c := range []struct {
		h         metrics.Hist
		mean, p50 float64 // the largest difference allowed
	}{
		{metrics.PollsPerTask, 0.35, 1},
		{metrics.DetectionLag, 25, 35},
	} {
		a, b := s.Metrics[c.h.Name()], m.Metrics[c.h.Name()]
		t.Logf("%s: single mean %.2f p50 %.2f p90 %.2f (n %d); merged mean %.2f p50 %.2f p90 %.2f (n %d)",
			c.h.Name(), a.Mean, a.P50, a.P90, a.Count, b.Mean, b.P50, b.P90, b.Count)
		if a.Count < 100 || b.Count < 100 {
			t.Errorf("%s: too few values to compare (%d single, %d merged)", c.h.Name(), a.Count, b.Count)
			continue
		}
		if d := math.Abs(a.Mean - b.Mean); d > c.mean {
			t.Errorf("%s: mean %.2f merged, %.2f single: differs by %.2f > %.2f", c.h.Name(), b.Mean, a.Mean, d, c.mean)
		}
		if d := math.Abs(a.P50 - b.P50); d > c.p50 {
			t.Errorf("%s: p50 %.2f merged, %.2f single: differs by %.2f > %.2f", c.h.Name(), b.P50, a.P50, d, c.p50)
		}
	}
}

// TestMergeFailsOnOneShardsWindow: a per-window threshold (abort_on_fail: one failing
// second fails it, docs/METRICS.md#thresholds) that fails in one shard's windows alone fails
// the merged run. The server withdraws tenant a's token near the end of the load, so shard 0
// (tenant a's clients) gets 401s from then on and fails the threshold in its last windows,
// while shards 1 and 2 pass; merged, those seconds still fail it (a third of the fleet's
// requests fail) although the whole run's error rate is under the limit: exit 99, as one
// process running the whole fleet would have stopped there.
func TestMergeFailsOnOneShardsWindow(t *testing.T) {
	sc := writeFleet(t, `error_budget: 50%
thresholds:
  - {expr: "requests.errors_rate < 10%", abort_on_fail: true}
`)
	// The revocation counts from the server's start, before startAt is taken: at most 1.5 s
	// into the 3 s load phase, however slowly the server started.
	url := serveFleet(t, "--set", "security.revoke=[{tenant: a, at: 4500ms, scope: all}]")
	dirs, codes := runFleetShards(t, sc, url, 3, time.Now().Add(3*time.Second))
	if codes[0] != exitGate || codes[1] != 0 || codes[2] != 0 {
		t.Fatalf("shard exits %v, want [99 0 0]: only tenant a's shard loses its token", codes)
	}
	for i, d := range dirs {
		s := readSum(t, d)
		b := s.Thresholds[0]
		t.Logf("shard %d: verdict %s, errors_rate %v, windows failed %d of %d", i, s.Verdict, b.Value, b.WindowsFailed, b.WindowsEvaluated)
		if (i == 0) != (b.WindowsFailed > 0) {
			t.Errorf("shard %d: the threshold failed in %d windows", i, b.WindowsFailed)
		}
	}
	out := filepath.Join(t.TempDir(), "merged")
	stdout, stderr, code := tasksim(t, append(append([]string{"merge"}, dirs...), "--out", out)...)
	if code != exitGate {
		t.Fatalf("merge: exit %d, want %d\n%s%s", code, exitGate, stdout, stderr)
	}
	m := readSum(t, out)
	b := m.Thresholds[0]
	t.Logf("merged: verdict %s, errors_rate %v, windows failed %d of %d", m.Verdict, b.Value, b.WindowsFailed, b.WindowsEvaluated)
	if m.Verdict != results.VerdictFail || b.Pass || b.WindowsFailed == 0 || !b.AbortOnFail {
		t.Errorf("merged verdict %s, threshold %+v: one shard's failing windows must fail the whole", m.Verdict, b)
	}
}

// scrape reads a Prometheus text page into series -> value (comments skipped).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
