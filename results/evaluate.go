package results

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// ThresholdResult is one threshold's verdict. The threshold passes when its whole-run Value
// passes; windows that fail are reported, not fatal. With no data it fails, unless the
// scenario said on_no_data: pass (OnNoData).
type ThresholdResult struct {
	Expr  string  `json:"expr"`
	Value float64 `json:"value"` // whole-run value, in Unit, rounded to 3 decimals; null with NoData or Error
	Pass  bool    `json:"pass"`
	Unit  string  `json:"unit"` // "ms", "count", "ratio", "per_s" or "%"; "" with Error
	// Source is where the threshold comes from: SourceScenario, SourceErrorBudget,
	// SourceEvidence or SourceSLO.
	Source string `json:"source"`
	// Note says, for a default SLO, what its limit was computed from ("P = 250ms, advertised
	// by the target"); absent otherwise.
	Note string `json:"note,omitempty"`
	// NoData says the whole run had nothing to measure (an empty histogram, a rate with
	// nothing to divide by, a figure the target cannot report): Value is then 0 here and
	// null in summary.json, and no window was evaluated.
	NoData bool `json:"no_data"`
	// OnNoData is "pass" when the scenario lets this threshold pass without data
	// (on_no_data: pass); absent otherwise.
	OnNoData string `json:"on_no_data,omitempty"`
	// WindowsEvaluated counts the windows that had data for the metric. Counts (count
	// statistics, tasks.<outcome>, requests.count, counters) are totals: they are evaluated
	// over the whole run only.
	WindowsEvaluated int `json:"windows_evaluated"`
	// WindowsFailed counts the evaluated windows whose value fails.
	WindowsFailed int `json:"windows_failed"`
	// WorstWindow is the index (in the windows given to Build, the rows of timeseries.csv)
	// of the window whose value is furthest on the failing side (for < and <=: the
	// highest; > and >=: the lowest; ==: the furthest from the limit; !=: the closest),
	// passing or not; -1 when no window was evaluated. WorstValue is its value (null in
	// summary.json when there is none).
	WorstWindow int     `json:"worst_window"`
	WorstValue  float64 `json:"worst_value"`
	// Error is why the expression could not be evaluated; such a threshold fails.
	Error string `json:"error,omitempty"`
	// AbortOnFail marks a threshold that stops the load at its first failing window; it
	// then fails when any window failed, whatever the whole-run value.
	AbortOnFail bool `json:"abort_on_fail,omitempty"`
}

// Eval evaluates t over the whole run, as summarized by s, and over each window.
func (t Threshold) Eval(s *Summary, windows []metrics.Window) ThresholdResult {
	acc := newWindowAcc()
	for i := range windows {
		t.observe(&acc, i, &windows[i])
	}
	return t.result(s, &acc)
}

// windowAcc is a threshold's tally over the windows seen so far.
type windowAcc struct {
	evaluated, failed int
	worst             int     // index of the worst window; -1 = none yet
	worstValue, bad   float64 // its value and badness
}

func newWindowAcc() windowAcc { return windowAcc{worst: -1, bad: math.Inf(-1)} }

// observe adds window i, w, to acc.
func (t Threshold) observe(acc *windowAcc, i int, w *metrics.Window) {
	if t.isTotal() {
		return
	}
	wv, ok := t.windowValue(w)
	if !ok {
		return
	}
	t.observeValue(acc, i, round3(wv))
}

// observeValue adds window i's value wv (rounded) to acc.
func (t Threshold) observeValue(acc *windowAcc, i int, wv float64) {
	acc.evaluated++
	if !t.Op.holds(wv, t.Limit) {
		acc.failed++
	}
	if b := t.badness(wv); b > acc.bad {
		acc.bad, acc.worst, acc.worstValue = b, i, wv
	}
}

// result is t's verdict: its whole-run value from s, its windows from acc. Without data
// it fails: nothing passes on missing evidence (a scenario's on_no_data: pass is applied by
// Build).
func (t Threshold) result(s *Summary, acc *windowAcc) ThresholdResult {
	v, ok := t.runValue(s)
	v = round3(v)
	r := ThresholdResult{
		Expr: t.Expr, Value: v, Pass: ok && t.Op.holds(v, t.Limit), Unit: t.Unit, NoData: !ok,
		WorstWindow: -1,
	}
	if !ok {
		r.Value = 0
		return r // no window can have what the whole run lacks
	}
	if t.isTotal() {
		return r
	}
	r.WindowsEvaluated, r.WindowsFailed = acc.evaluated, acc.failed
	r.WorstWindow, r.WorstValue = acc.worst, acc.worstValue
	return r
}

// WindowTally evaluates a run's thresholds on its windows as they come, so that the run
// need not keep them until the summary: a window holds its histograms (up to 184 KiB each),
// which over an hour-long soak would be gigabytes. Build reads it through RunInfo.Windows.
// Call Add from one goroutine.
type WindowTally struct {
	ths   []tallied  // in the order of the scenario's thresholds
	later []deferred // metrics whose limit is known only at the end (Defer)
	n     int        // windows added
}

// deferred is a metric of a WindowTally whose threshold is not known yet: its value in each
// window (NaN: no data) is kept, 8 bytes a window, and replayed once the limit is known.
type deferred struct {
	th   Threshold // the metric; its limit is a placeholder
	vals []float64
}

// Defer has wt keep the window values of each metric (a threshold's left side, e.g.
// detection_lag.p99) for a threshold whose limit is known only after the run: the default
// SLOs (SLOMetrics). A metric that does not parse is ignored. It returns wt.
func (wt *WindowTally) Defer(metricNames ...string) *WindowTally {
	for _, m := range metricNames {
		if t, err := ParseThreshold(m + " < 0"); err == nil && !t.isTotal() {
			wt.later = append(wt.later, deferred{th: t})
		}
	}
	return wt
}

// deferred returns the values kept for t's metric; nil when none are.
func (wt *WindowTally) deferred(t Threshold) *deferred {
	for i := range wt.later {
		if wt.later[i].th.Metric == t.Metric {
			return &wt.later[i]
		}
	}
	return nil
}

// replay tallies the kept window values against t.
func (d *deferred) replay(t Threshold) *windowAcc {
	acc := newWindowAcc()
	for i, v := range d.vals {
		if !math.IsNaN(v) {
			t.observeValue(&acc, i, v)
		}
	}
	return &acc
}

// tallied is one threshold of a WindowTally; an expression that does not parse has no
// tally (ok false).
type tallied struct {
	th  Threshold
	ok  bool
	acc windowAcc
}

// NewWindowTally returns a tally for the thresholds a run is judged by: ths (the
// scenario's, in order), then the error budget when errorBudget is not nil (as
// RunInfo.Thresholds and RunInfo.ErrorBudget).
func NewWindowTally(ths []scenarios.Threshold, errorBudget *float64) *WindowTally {
	ths, _ = judged(ths, errorBudget)
	wt := &WindowTally{ths: make([]tallied, len(ths))}
	for i, th := range ths {
		t, err := ParseThreshold(th.Expr)
		wt.ths[i] = tallied{th: t, ok: err == nil, acc: newWindowAcc()}
	}
	return wt
}

// WithoutServerSide stops the tally from judging, window by window, the thresholds over a
// metric only the embedded server records (ServerSide): against an external target their
// windows hold a 0 nobody measured, as their whole run holds no data. It returns wt.
func (wt *WindowTally) WithoutServerSide() *WindowTally {
	for i := range wt.ths {
		if e := &wt.ths[i]; e.ok && e.th.ServerSide() {
			e.ok = false
		}
	}
	return wt
}

// ServerSide reports whether t reads a counter or gauge that only the embedded server
// records (metrics.Counter.ServerSide, metrics.Gauge.ServerSide).
func (t Threshold) ServerSide() bool {
	switch t.src.kind {
	case kindCounter, kindRate:
		return t.src.counter.ServerSide()
	case kindGauge:
		return t.src.gauge.ServerSide()
	}
	return false
}

// Add evaluates every threshold on the next window.
func (wt *WindowTally) Add(w *metrics.Window) {
	for i := range wt.ths {
		if e := &wt.ths[i]; e.ok {
			e.th.observe(&e.acc, wt.n, w)
		}
	}
	for i := range wt.later {
		d := &wt.later[i]
		v, ok := d.th.windowValue(w)
		v = round3(v)
		if !ok {
			v = math.NaN()
		}
		d.vals = append(d.vals, v)
	}
	wt.n++
}

// Worst says, for a progress line, which threshold fares worst so far: the one that failed
// in the most windows, with its count and worst value ("latency_tasks_get.p99 <= 1000ms:
// failed 3 of 15 windows, worst 3530.75"); "" when none has failed in a window yet. The
// default SLOs, whose limits are known only at the end, are not judged here.
func (wt *WindowTally) Worst() string {
	var worst *tallied
	for i := range wt.ths {
		if e := &wt.ths[i]; e.ok && e.acc.failed > 0 && (worst == nil || e.acc.failed > worst.acc.failed) {
			worst = e
		}
	}
	if worst == nil {
		return ""
	}
	unit := worst.th.Unit
	if unit == "count" || unit == "ratio" {
		unit = ""
	}
	return fmt.Sprintf("%s: failed %d of %d windows, worst %s%s", worst.th.Expr, worst.acc.failed, worst.acc.evaluated,
		strconv.FormatFloat(round3(worst.acc.worstValue), 'f', -1, 64), unit)
}

// FailsIn evaluates t on one window, for abort_on_fail: value is t's metric in w, and
// failed is true when the window has data for it and the value fails. A threshold over a
// total (a count) never fails in a window: it is judged over the whole run.
func (t Threshold) FailsIn(w *metrics.Window) (value float64, failed bool) {
	if t.isTotal() {
		return 0, false
	}
	v, ok := t.windowValue(w)
	if !ok {
		return 0, false
	}
	v = round3(v)
	return v, !t.Op.holds(v, t.Limit)
}

// isTotal reports whether t reads a count that only makes sense over the whole run.
func (t Threshold) isTotal() bool {
	switch t.src.kind {
	case kindCounter, kindRequests, kindSettled, kindDone, kindSetup:
		return true
	case kindStat:
		return t.src.stat == statCount
	}
	return false
}

// badness orders values from best to worst for t's comparison: the higher, the further
// on the failing side.
func (t Threshold) badness(v float64) float64 {
	switch t.Op {
	case OpGT, OpGE:
		return -v
	case OpEQ:
		return math.Abs(v - t.Limit)
	case OpNE:
		return -math.Abs(v - t.Limit)
	}
	return v
}

// runValue is t's metric over the whole run; ok is false when there was nothing to
// measure. It reads the summary alone, so a saved summary.json evaluates the same.
func (t Threshold) runValue(s *Summary) (v float64, ok bool) {
	c := func(c metrics.Counter) int64 { return s.Counters[c.Name()] }
	switch src := t.src; src.kind {
	case kindStat:
		st, ok := s.Metrics[src.hist.Name()]
		return src.stat.of(st), (ok && st.Count > 0) || src.stat == statCount
	case kindCounter:
		n, ok := s.Counters[src.counter.Name()] // absent: not measured on this target
		return float64(n), ok
	case kindRate:
		return rate(c(src.counter), rateBase(src.counter, c))
	case kindRequests, kindErrorsRate:
		var n, errs int64
		for _, rs := range s.Requests {
			n += rs.Count
			errs += rs.Errors
		}
		if src.kind == kindErrorsRate {
			return rate(errs, n)
		}
		if src.errors {
			return float64(errs), true
		}
		return float64(n), true
	case kindSetup, kindSetupRate:
		var n, errs int64
		for _, op := range setupOps {
			rs := s.Requests[op.Name()]
			n, errs = n+rs.Count, errs+rs.Errors
		}
		if src.kind == kindSetupRate {
			return rate(errs, n)
		}
		return float64(errs), true
	case kindFleetAmp:
		return s.Fleet.PollAmplification, c(metrics.AmplificationAdvised) > 0
	case kindStatusReads:
		return s.Fleet.StatusReadsPerTask, c(metrics.TasksCreated) > 0
	case kindPollsPerSecond:
		return s.Fleet.PollsPerSecond, s.DurationS > 0
	case kindGauge:
		lv, ok := s.Gauges[src.gauge.Name()] // absent: not measured on this target
		if src.max {
			return float64(lv.Max), ok
		}
		return float64(lv.Last), ok
	case kindSettled, kindDone:
		outcomes := settledCounters[:]
		if src.kind == kindDone {
			outcomes = doneCounters[:]
		}
		var n int64
		for _, oc := range outcomes {
			n += c(oc)
		}
		return float64(n), true
	}
	return 0, false
}

// setupOps are the requests that set a client up: requests.setup_errors counts their errors.
var setupOps = [...]mcp.Op{mcp.OpInitialize, mcp.OpServerDiscover}

// settledCounters are the outcomes tasks.settled adds up: tasks (and synchronous calls,
// counted completed or failed) whose outcome became known.
var settledCounters = [...]metrics.Counter{metrics.TasksCompleted, metrics.TasksFailed,
	metrics.TasksCancelled, metrics.TasksExpired, metrics.TasksLost, metrics.ResultsLost}

// doneCounters are the outcomes tasks.done adds up: tasks (and synchronous calls) that ended
// without failing: completed, or cancelled (as asked). A task that failed, expired (its
// ttl ran out before anyone saw it end), was lost, or whose result never arrived, is known
// but shows no server doing its work.
var doneCounters = [...]metrics.Counter{metrics.TasksCompleted, metrics.TasksCancelled}

// windowValue is t's metric over one window; ok is false when the window had nothing to
// measure.
func (t Threshold) windowValue(w *metrics.Window) (v float64, ok bool) {
	c := func(c metrics.Counter) int64 { return w.Counters[c] }
	switch src := t.src; src.kind {
	case kindStat:
		v, n := windowStat(w, src.hist, src.stat)
		return round3(v), n > 0
	case kindRate:
		return rate(c(src.counter), windowRateBase(src.counter, c))
	case kindErrorsRate:
		var n, errs int64
		for m := range mcp.NumOps {
			n += w.RequestCount(m)
			errs += w.ErrorCount(m)
		}
		return rate(errs, n)
	case kindSetupRate:
		var n, errs int64
		for _, op := range setupOps {
			n, errs = n+w.RequestCount(op), errs+w.ErrorCount(op)
		}
		return rate(errs, n)
	case kindFleetAmp:
		if adv := c(metrics.AmplificationAdvised); adv > 0 {
			return float64(c(metrics.AmplificationPolls)) / float64(adv), true
		}
	case kindStatusReads:
		if n := c(metrics.TasksCreated); n > 0 {
			reads := w.RequestCount(mcp.OpTasksGet) + w.RequestCount(mcp.OpTasksList)
			return float64(reads) / float64(n), true
		}
	case kindPollsPerSecond:
		if d := w.End.Sub(w.Start).Seconds(); d > 0 {
			return float64(c(metrics.Polls)) / d, true
		}
	case kindGauge:
		if src.max {
			return float64(w.GaugeMax[src.gauge]), true
		}
		return float64(w.Gauges[src.gauge]), true
	}
	return 0, false
}

// rateBase is the denominator of tasks.<outcome>_rate: tasks created, and for dropped the
// arrivals (created + dropped), so that the rate is a share.
func rateBase(oc metrics.Counter, c func(metrics.Counter) int64) int64 {
	if oc == metrics.TasksDropped {
		return c(metrics.TasksCreated) + c(metrics.TasksDropped)
	}
	return c(metrics.TasksCreated)
}

// windowRateBase is the denominator of tasks.<outcome>_rate in one window. Tasks live
// across windows, so a window's outcomes over its creates could pass 100%: an outcome's
// share is taken among the tasks that ended in the window (every outcome of the tasks
// object but created and dropped, unknown included); created and dropped keep their
// whole-run bases.
func windowRateBase(oc metrics.Counter, c func(metrics.Counter) int64) int64 {
	if oc == metrics.TasksCreated || oc == metrics.TasksDropped {
		return rateBase(oc, c)
	}
	n := c(metrics.TasksUnknown)
	for _, e := range settledCounters {
		n += c(e)
	}
	return n
}

// rate returns 100 * n / base, in %; ok is false when base is 0.
func rate(n, base int64) (float64, bool) {
	if base == 0 {
		return 0, false
	}
	return 100 * float64(n) / float64(base), true
}
