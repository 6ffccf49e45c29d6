package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// timeseriesColumns is the header of timeseries.csv, a contract for dashboards: one row
// per window (a second), in the order the windows were added. Counts are the window's
// increments; levels are the gauge at the window's end; latencies are in ms, and empty
// when the window recorded none.
//
//	t_s                          window end, seconds since the run's start, 3 decimals
//	created completed failed     task outcome counts (docs/METRICS.md#task-outcomes)
//	cancelled expired unknown
//	dropped                      (lost, the outcome added later, is the last column)
//	in_flight                    level: tasks in flight in the load generator
//	polls                        tasks/get sent
//	requests errors              requests sent, of every method; those whose outcome is an
//	                             error (not ok, stopped, backpressure or expected)
//	requests_per_s               requests / window length, 3 decimals
//	backpressure_signals         429s, Retry-After, raised pollInterval, rejections seen
//	reconnects                   transport sessions re-established
//	invalid_transitions          status changes the R14 table forbids
//	latency_tasks_get_p50_ms     send -> reply of tasks/get, p50
//	latency_tasks_get_p99_ms     ... and p99
//	latency_tools_call_p99_ms    send -> reply of tools/call, p99
//	latency_tasks_result_p99_ms  send -> reply of tasks/result, p99
//	task_e2e_p50_ms              intended start -> outcome known, p50
//	task_e2e_p99_ms              ... and p99
//	detection_lag_p99_ms         server's terminal instant -> first observation, p99
//	schedule_lag_p99_ms          poll sent - poll intended, p99
//	retained_tasks               level: task records held by the server
//	orphaned_tasks               terminal tasks purged before their result was fetched
//	downstream_in_flight         level: work inside the mock downstream system
//	downstream_queue_depth       level: work waiting for a downstream slot
//	results_lost                 tasks seen terminal whose result never arrived
//	status_reads                 tasks/get and tasks/list requests sent
//	amplification_polls          polls and advised polls of the tasks whose poll
//	amplification_advised        amplification was recorded (the fleet figure's terms)
//	sessions                     level: open MCP sessions at the embedded server
//	in_flight_max                the highest level of in_flight, retained_tasks,
//	retained_tasks_max           downstream_in_flight, downstream_queue_depth and
//	downstream_in_flight_max     sessions held during the window
//	downstream_queue_depth_max
//	sessions_max
//
// The columns from results_lost on carry what the per-window thresholds read beyond the
// columns before them, so that `tasksim merge` judges merged windows as a run judges its
// own (MergeRuns).
var timeseriesColumns = []string{
	"t_s", "created", "completed", "failed", "cancelled", "expired", "unknown", "dropped",
	"in_flight", "polls", "requests", "errors", "requests_per_s", "backpressure_signals",
	"reconnects", "invalid_transitions", "latency_tasks_get_p50_ms", "latency_tasks_get_p99_ms",
	"latency_tools_call_p99_ms", "latency_tasks_result_p99_ms", "task_e2e_p50_ms",
	"task_e2e_p99_ms", "detection_lag_p99_ms", "schedule_lag_p99_ms", "retained_tasks",
	"orphaned_tasks", "downstream_in_flight", "downstream_queue_depth",
	"results_lost", "status_reads", "amplification_polls", "amplification_advised", "sessions",
	"in_flight_max", "retained_tasks_max", "downstream_in_flight_max", "downstream_queue_depth_max",
	"sessions_max", "lost",
}

// timeseriesOutcomes are the outcome counts of timeseries.csv, in column order.
var timeseriesOutcomes = [...]metrics.Counter{metrics.TasksCreated, metrics.TasksCompleted, metrics.TasksFailed,
	metrics.TasksCancelled, metrics.TasksExpired, metrics.TasksUnknown, metrics.TasksDropped}

// maxGauges are the gauges whose highest level in the window has a column, in column order.
var maxGauges = [...]metrics.Gauge{metrics.InFlight, metrics.RetainedTasks, metrics.DownstreamInFlight,
	metrics.DownstreamQueueDepth, metrics.Sessions}

// Timeseries streams timeseries.csv, one row per window. Each row is written to the file
// as it is added, so a run killed mid-way keeps every finished window. It is meant for
// the one collector goroutine that flushes the windows; it is not safe for concurrent
// use.
type Timeseries struct {
	f        *os.File
	start    time.Time
	row      []byte // reused row buffer
	noServer bool   // OmitServerGauges: the server-side cells are left empty
}

// serverColumns are the columns measured only inside the embedded mock server: the task
// store, orphans, the sessions it holds and the downstream system. Against an external target they are not
// measured, and their cells are empty (OmitServerGauges), never 0.
var serverColumns = []string{"retained_tasks", "orphaned_tasks", "downstream_in_flight", "downstream_queue_depth",
	"sessions", "retained_tasks_max", "downstream_in_flight_max", "downstream_queue_depth_max", "sessions_max"}

// OmitServerGauges leaves the cells of serverColumns empty in every row from now on: the
// run's target is not the embedded server, so nothing measured them.
func (ts *Timeseries) OmitServerGauges() { ts.noServer = true }

// NewTimeseries creates (or truncates) dir/timeseries.csv, creating dir if needed, and
// writes its header. Row times are counted from start.
func NewTimeseries(dir string, start time.Time) (*Timeseries, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, TimeseriesFile))
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if _, err := f.WriteString(strings.Join(timeseriesColumns, ",") + "\n"); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("results: writing %s: %w", TimeseriesFile, err)
	}
	return &Timeseries{f: f, start: start}, nil
}

// Add writes the row of window w.
func (ts *Timeseries) Add(w metrics.Window) error {
	if ts.f == nil {
		return errors.New("results: Add to a closed Timeseries")
	}
	ts.row = appendRow(ts.row[:0], ts.start, &w, !ts.noServer)
	if _, err := ts.f.Write(ts.row); err != nil {
		return fmt.Errorf("results: writing %s: %w", TimeseriesFile, err)
	}
	return nil
}

// Close syncs and closes the file. Closing twice is a no-op.
func (ts *Timeseries) Close() error {
	if ts.f == nil {
		return nil
	}
	f := ts.f
	ts.f = nil
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("results: closing %s: %w", TimeseriesFile, err)
	}
	return nil
}

// appendRow appends w's row of timeseries.csv, columns as timeseriesColumns; the cells of
// serverColumns are empty unless server.
func appendRow(b []byte, start time.Time, w *metrics.Window, server bool) []byte {
	level := func(b []byte, v int64) []byte {
		if !server {
			return append(b, ',')
		}
		return appendInt(b, v)
	}
	var requests, errs int64
	for m := range mcp.NumOps {
		requests += w.RequestCount(m)
		errs += w.ErrorCount(m)
	}
	perS := 0.0
	if d := w.End.Sub(w.Start).Seconds(); d > 0 {
		perS = float64(requests) / d
	}
	b = strconv.AppendFloat(b, w.End.Sub(start).Seconds(), 'f', 3, 64)
	for _, c := range timeseriesOutcomes {
		b = appendInt(b, w.Counters[c])
	}
	b = appendInt(b, w.Gauges[metrics.InFlight])
	b = appendInt(b, w.Counters[metrics.Polls])
	b = appendInt(b, requests)
	b = appendInt(b, errs)
	b = append(b, ',')
	b = strconv.AppendFloat(b, perS, 'f', 3, 64)
	b = appendInt(b, w.Counters[metrics.BackpressureSignals])
	b = appendInt(b, w.Counters[metrics.Reconnects])
	b = appendInt(b, w.Counters[metrics.InvalidTransitions])
	b = appendMS(b, w, metrics.LatencyTasksGet, statP50)
	b = appendMS(b, w, metrics.LatencyTasksGet, statP99)
	b = appendMS(b, w, metrics.LatencyToolsCall, statP99)
	b = appendMS(b, w, metrics.LatencyTasksResult, statP99)
	b = appendMS(b, w, metrics.TaskE2E, statP50)
	b = appendMS(b, w, metrics.TaskE2E, statP99)
	b = appendMS(b, w, metrics.DetectionLag, statP99)
	b = appendMS(b, w, metrics.ScheduleLag, statP99)
	b = level(b, w.Gauges[metrics.RetainedTasks])
	b = level(b, w.Counters[metrics.OrphanedTasks])
	b = level(b, w.Gauges[metrics.DownstreamInFlight])
	b = level(b, w.Gauges[metrics.DownstreamQueueDepth])
	b = appendInt(b, w.Counters[metrics.ResultsLost])
	b = appendInt(b, w.RequestCount(mcp.OpTasksGet)+w.RequestCount(mcp.OpTasksList))
	b = appendInt(b, w.Counters[metrics.AmplificationPolls])
	b = appendInt(b, w.Counters[metrics.AmplificationAdvised])
	b = level(b, w.Gauges[metrics.Sessions])
	for _, g := range maxGauges {
		if g == metrics.InFlight {
			b = appendInt(b, w.GaugeMax[g]) // the load generator's own
		} else {
			b = level(b, w.GaugeMax[g])
		}
	}
	b = appendInt(b, w.Counters[metrics.TasksLost])
	return append(b, '\n')
}

func appendInt(b []byte, v int64) []byte {
	return strconv.AppendInt(append(b, ','), v, 10)
}

// appendMS appends a statistic of h in ms (3 decimals), or nothing when the window
// recorded no value of h.
func appendMS(b []byte, w *metrics.Window, h metrics.Hist, k stat) []byte {
	b = append(b, ',')
	v, n := windowStat(w, h, k)
	if n == 0 {
		return b
	}
	return strconv.AppendFloat(b, round3(v), 'f', 3, 64)
}
