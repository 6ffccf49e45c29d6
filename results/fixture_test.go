package results

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// t0 is the start of every synthetic run: tests use fixed times, never a clock.
var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func sec(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// fixture is a small deterministic run of three one-second windows: 8 tasks created, 3
// completed, 1 whose result was lost, 1 failed, 1 cancelled, 2 still open and reported
// unknown, 2 arrivals dropped; one elicitation answered; a 429 (backpressure) and a late
// cancel refused (expected) beside 2 errors.
func fixture() (RunInfo, *metrics.Snapshot, []metrics.Window) {
	rec := metrics.NewRecorder(2, t0)
	a, b := rec.Shard(0), rec.Shard(1)
	var windows []metrics.Window

	// [0s, 1s): 4 tasks created, the first polls.
	for i := range int64(4) {
		a.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, ms(20+i))
		a.Add(metrics.TasksCreated, 1)
	}
	for i := range int64(6) {
		b.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, ms(10+i))
		b.RecordDuration(metrics.ScheduleLag, ms(1+i%2))
	}
	b.Add(metrics.Polls, 6)
	rec.SetGauge(metrics.InFlight, 4)
	rec.SetGauge(metrics.RetainedTasks, 4)
	rec.SetGauge(metrics.DownstreamInFlight, 3)
	rec.SetGauge(metrics.DownstreamQueueDepth, 1)
	windows = append(windows, rec.Flush(sec(1)))

	// [1s, 2s): 4 more created, 3 completed, 1 failed; errors and backpressure.
	for i := range int64(4) {
		a.Reply(mcp.OpToolsCall, metrics.OutcomeOK, 0, 200, ms(30+i))
		a.Add(metrics.TasksCreated, 1)
	}
	for i := range int64(10) {
		b.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, ms(40+2*i))
		b.RecordDuration(metrics.ScheduleLag, ms(2+i%3))
	}
	b.Reply(mcp.OpTasksGet, metrics.OutcomeRPCError, -32602, 200, ms(5))
	b.Reply(mcp.OpTasksGet, metrics.OutcomeBackpressure, 0, 429, ms(3))
	b.Add(metrics.Polls, 12)
	b.Add(metrics.BackpressureSignals, 1)
	for i := range int64(4) {
		a.Reply(mcp.OpTasksResult, metrics.OutcomeOK, 0, 200, ms(8+i))
		a.RecordDuration(metrics.TaskE2E, ms(1200+100*i))
		a.RecordDuration(metrics.DetectionLag, ms(5+i))
		a.RecordDuration(metrics.ResultLag, ms(9+i))
		a.Record(metrics.PollsPerTask, 3+i%2)
		a.RecordPollAmplification(3+i%2, 2)
	}
	a.Add(metrics.TasksCompleted, 2)
	a.Add(metrics.ResultsLost, 1)
	a.Add(metrics.TasksFailed, 1)
	a.Add(metrics.InputRequired, 1)
	a.Add(metrics.Elicitations, 1)
	a.Add(metrics.ElicitAccepted, 1)
	rec.SetGauge(metrics.InFlight, 6)
	rec.SetGauge(metrics.InFlight, 4)
	rec.SetGauge(metrics.RetainedTasks, 8)
	rec.SetGauge(metrics.DownstreamQueueDepth, 3)
	windows = append(windows, rec.Flush(sec(2)))

	// [2s, 3s): 1 completed, 1 cancelled, a transport failure, a reconnect, 2 dropped.
	a.Reply(mcp.OpTasksCancel, metrics.OutcomeOK, 0, 200, ms(4))
	a.RecordDuration(metrics.CancelLatency, ms(30))
	a.Reply(mcp.OpTasksCancel, metrics.OutcomeExpected, -32602, 200, ms(3))
	a.Add(metrics.CancelsSent, 2)
	a.Add(metrics.CancelsAcked, 1)
	a.Add(metrics.CancelsLate, 1)
	a.Reply(mcp.OpTasksResult, metrics.OutcomeTransport, 0, 0, ms(2500))
	a.Reply(mcp.OpTasksResult, metrics.OutcomeOK, 0, 200, ms(12))
	a.RecordDuration(metrics.TaskE2E, ms(2100))
	a.RecordDuration(metrics.TaskE2E, ms(1500))
	a.Add(metrics.TasksCompleted, 1)
	a.Add(metrics.TasksCancelled, 1)
	a.Add(metrics.TasksUnknown, 2)
	a.Add(metrics.TasksDropped, 2)
	a.Add(metrics.Reconnects, 1)
	a.Add(metrics.OrphanedTasks, 1)
	b.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, ms(11))
	b.RecordDuration(metrics.ScheduleLag, ms(1))
	b.Add(metrics.Polls, 1)
	rec.SetGauge(metrics.InFlight, 0)
	rec.SetGauge(metrics.RetainedTasks, 6)
	rec.SetGauge(metrics.DownstreamInFlight, 0)
	rec.SetGauge(metrics.DownstreamQueueDepth, 0)
	windows = append(windows, rec.Flush(sec(3)))

	budget := 20.0
	info := RunInfo{
		Version: "0.1.0", Scenario: "golden", Seed: 42, Protocol: "2025-11-25",
		StartedAt: t0, Duration: 3 * time.Second,
		Manifest: &client.Manifest{
			ProtocolVersion: "2025-11-25", Server: mcp.Implementation{Name: "tasksim-mock", Version: "0.1.0"},
			Tasks: client.TasksManifest{Declared: true, ToolsCall: true}, Tools: []client.ToolManifest{{Name: "work_task", TaskSupport: "required"}},
			Tool: "work_task", TaskSupport: "required", AsTask: true, Era: "2025-11-25", Eras: []string{"2025-11-25"},
		},
		Runtime: Runtimes{Run: &Runtime{Go: "go1.26.8", GOMAXPROCS: 2, GOGC: 400, MemoryLimit: 12 << 30, SetBy: "tasksim"}},
		Server: Server{Run: &ServerStats{TasksCreated: 8, Faults: map[string]uint64{}, Rejections: map[string]uint64{},
			Requests: map[string]map[string]uint64{"tools_call": {"ok": 8, "rpc_error": 0, "http_error": 0}}}},
		PollInterval:            time.Second,
		DuplicateEffects:        0,
		UnknownCreated:          2, // both unknown tasks had an id: the outcomes add up to the 8 created
		InvalidTransitionSample: []string{},
		Thresholds: []scenarios.Threshold{
			{Expr: "latency_tasks_get.p99 < 200ms"},
			{Expr: "task_e2e.p99 < 2s"},
			{Expr: "tasks.failed_rate < 10%"},
			{Expr: "poll_amplification.fleet <= 1.5"},
			{Expr: "retained_tasks.max < 10000"},
			{Expr: "cleanup_lag.p99 < 2s", OnNoData: scenarios.NoDataPass},
		},
		ErrorBudget: &budget,
		Errors: []ErrorKind{
			{Method: "tasks/get", Outcome: "rpc_error", Code: -32602, Count: 1, Message: "Invalid params: unknown task"},
			{Method: "tasks/result", Outcome: "transport", Count: 1, Message: "read: connection reset by peer"},
		},
	}
	return info, rec.Total(), windows
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./results -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d (go test ./results -update accepts the change):\n got: %s\nwant: %s",
				path, i+1, g, w)
		}
	}
}
