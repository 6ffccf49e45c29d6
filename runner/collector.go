package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// collector closes a metrics window every second: it samples the gauges, appends the window
// to timeseries.csv and histograms.hlog (flushed at once, so an interrupted run keeps every
// finished second) and tells the run's Observer.
type collector struct {
	rec      *metrics.Recorder
	eng      *loadgen.Engine
	srv      *mockserver.Server // nil for an external target
	start    time.Time
	ts       *results.Timeseries
	hlogFile *os.File
	hlog     *metrics.LogWriter
	observer Observer      // nil = none
	live     *liveMetrics  // the live /metrics endpoint; nil = none (livemetrics.go)
	duration time.Duration // the load phase planned, for the Observer
	peaks    serverPeaks   // the embedded server's highest levels sampled; serverStats reports them

	tally   *results.WindowTally // the thresholds, evaluated on each window as it closes
	windows int                  // windows closed
	aborts  []abortRule          // abort_on_fail thresholds, checked on every window
	aborted string               // which one stopped the load, and where; "" = none
	// rollBackOnAbort flips the rollback's switch instead of stopping the load
	// (rollback.on_abort); rolledBack says it did.
	rollBackOnAbort, rolledBack bool
	final                       bool // the last window, after the load
	quit                        chan struct{}
	wg                          sync.WaitGroup
}

const window = time.Second

func newCollector(dir string, start time.Time, rec *metrics.Recorder, eng *loadgen.Engine, srv *mockserver.Server,
	sc *scenarios.Scenario) (*collector, error) {
	ts, err := results.NewTimeseries(dir, start)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, results.HistogramLogFile))
	if err != nil {
		ts.Close()
		return nil, fmt.Errorf("%s: %w", results.HistogramLogFile, err)
	}
	tally := results.NewWindowTally(sc.Thresholds, errorBudget(sc)).Defer(results.SLOMetrics...)
	if srv == nil {
		tally.WithoutServerSide() // a real target: those metrics are not measured
		ts.OmitServerGauges()
	}
	return &collector{rec: rec, eng: eng, srv: srv, start: start, ts: ts, hlogFile: f,
		hlog: metrics.NewLogWriter(f, start), tally: tally, aborts: abortRules(sc, srv == nil),
		duration: time.Duration(sc.Duration), quit: make(chan struct{}), rollBackOnAbort: sc.Rollback.OnAbort}, nil
}

func (c *collector) begin() {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(window)
		defer tick.Stop()
		for {
			select {
			case now := <-tick.C:
				c.flush(now)
			case <-c.quit:
				return
			}
		}
	}()
}

// stop closes the last window and the files. The load is over: the last window flips no
// rollback switch.
func (c *collector) stop() {
	close(c.quit)
	c.wg.Wait() // the ticker, and a switch being flipped
	c.final = true
	c.flush(time.Now())
	c.close()
}

// close closes the files; a collector that never began is closed with it alone.
func (c *collector) close() {
	_ = c.ts.Close()
	_ = c.hlogFile.Close()
}

func (c *collector) flush(now time.Time) {
	c.rec.SetGauge(metrics.InFlight, c.eng.InFlight())
	if c.srv != nil {
		st := c.srv.Stats()
		c.rec.SetGauge(metrics.RetainedTasks, st.TasksLive)
		c.rec.SetGauge(metrics.Sessions, int64(st.Sessions))
		c.rec.SetGauge(metrics.DownstreamInFlight, st.DownstreamInFlight)
		c.rec.SetGauge(metrics.DownstreamQueueDepth, st.DownstreamQueueDepth)
		c.noteServer(&st)
	}
	w := c.rec.Flush(now) // kept no longer than this call: its histograms are large
	c.tally.Add(&w)
	c.checkAborts(&w, c.windows)
	c.windows++
	_ = c.ts.Add(w) // a failed write loses one row, never the run
	_ = c.hlog.Write(w)
	c.live.add(&w)
	if c.observer != nil {
		tot := c.rec.TotalCounts() // counts only: the histograms would be made for nothing
		var errs, reqs, windowReqs int64
		for m := range mcp.NumOps {
			errs += tot.ErrorCount(m)
			for o := range metrics.NumOutcomes {
				reqs += tot.Requests[m][o]
				windowReqs += w.Requests[m][o]
			}
		}
		secs := max(w.End.Sub(w.Start).Seconds(), 1e-9)
		c.observer.Window(Progress{Elapsed: now.Sub(c.start), Duration: c.duration,
			Created: tot.Counters[metrics.TasksCreated], Completed: tot.Counters[metrics.TasksCompleted],
			InFlight: c.eng.InFlight(), Polls: tot.Counters[metrics.Polls], Errors: errs,
			PollsPerSecond: float64(w.Counters[metrics.Polls]) / secs,
			Requests:       reqs, RequestRate: float64(windowReqs) / secs, Worst: c.tally.Worst()})
	}
}

// serverPeaks are the highest levels of the embedded server's gauges that are not run
// metrics, as sampled by the collector each window; serverStats reports them. The collector,
// one per run, holds them: runs in one process do not mix.
type serverPeaks struct {
	queueDepth  atomic.Int64 // tasks waiting for an executor worker
	tasksActive atomic.Int64 // non-terminal tasks admitted
}

// noteServer records one sample of the server's levels.
func (c *collector) noteServer(st *mockserver.Stats) {
	raiseTo(&c.peaks.queueDepth, st.QueueDepth)
	raiseTo(&c.peaks.tasksActive, st.TasksActive)
}

func raiseTo(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}

// abortRule is a threshold with abort_on_fail: the first window that fails it stops the
// load phase (in-flight tasks then drain as after Ctrl-C), and the summary says why.
type abortRule struct {
	expr string
	th   results.Threshold
}

// abortRules parses the scenario's abort_on_fail thresholds (already checked by validate).
func abortRules(sc *scenarios.Scenario, external bool) []abortRule {
	var out []abortRule
	for _, t := range sc.Thresholds {
		if !t.AbortOnFail {
			continue
		}
		// Against a real target a metric of the embedded server's reads 0 in every window:
		// it measures nothing, so it stops nothing.
		if th, err := results.ParseThreshold(t.Expr); err == nil && !(external && th.ServerSide()) {
			out = append(out, abortRule{expr: t.Expr, th: th})
		}
	}
	return out
}

// checkAborts stops the load at the first window that fails an abort_on_fail threshold,
// or, with rollback.on_abort, flips the rollback's switch instead: the load goes on through
// the fallback, as behind a canary controller that rolled back.
func (c *collector) checkAborts(w *metrics.Window, index int) {
	if c.aborted != "" || c.rolledBack {
		return
	}
	for _, r := range c.aborts {
		if v, failed := r.th.FailsIn(w); failed {
			why := fmt.Sprintf("threshold %q failed in window %d (%s into the run): value %v", r.expr, index,
				w.End.Sub(c.start).Round(time.Second), v)
			if c.rollBackOnAbort {
				if c.final {
					return // after the load: there is nothing left to roll back
				}
				c.rolledBack = true
				// Apart: the switch waits for the creates being sent, and the windows go on.
				c.wg.Go(func() { c.eng.RollBack("on_abort: " + why) })
				return
			}
			c.aborted = why
			c.eng.Stop()
			return
		}
	}
}
