package metrics

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Stat summarizes one histogram in its reported unit (Hist.Unit: ms, count or ratio), as
// summary.json and summary.csv show it. Percentiles are HDR's: the highest value
// equivalent to the one at the rank, within 1/1000 of the value recorded.
type Stat struct {
	Unit  string  `json:"unit"`
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// Summarize returns the Stat of hh, a histogram of h's values (from a Window, a Snapshot,
// NewHistogram or an interval log). A nil or empty histogram gives a zero Stat in h's unit.
func Summarize(h Hist, hh *hdrhistogram.Histogram) Stat {
	st := Stat{Unit: h.Unit()}
	if hh == nil || hh.TotalCount() == 0 {
		return st
	}
	k := h.Scale()
	st.Count = hh.TotalCount()
	st.Min = float64(histMin(hh)) * k
	st.P50 = float64(hh.ValueAtPercentile(50)) * k
	st.P90 = float64(hh.ValueAtPercentile(90)) * k
	st.P99 = float64(hh.ValueAtPercentile(99)) * k
	st.P999 = float64(hh.ValueAtPercentile(99.9)) * k
	st.Max = float64(histMax(hh)) * k
	st.Mean = hh.Mean() * k
	return st
}

// histMax is hh.Max(): the 100th percentile is the highest value equivalent to the last
// non-empty bucket's, as Max is, but found by the percentile scan, which sums counts in
// blocks, where Max walks every bucket and works out its value range (a second of a busy
// run's flush went mostly there).
func histMax(hh *hdrhistogram.Histogram) int64 { return hh.ValueAtPercentile(100) }

// histMin is hh.Min() by the percentile scan (histMax says why): the 0th percentile is the
// lowest value equivalent to the first non-empty bucket's.
func histMin(hh *hdrhistogram.Histogram) int64 { return hh.ValueAtPercentile(0) }

// Percentile returns the p-th percentile of h over the window in h's reported unit, as
// Summary reports it (P50 is Percentile(h, 50)) without the rest of the Summary; count is
// the number of values (no value: 0, 0).
func (w *Window) Percentile(h Hist, p float64) (v float64, count int64) {
	hh := w.Hists[h]
	if hh == nil || hh.TotalCount() == 0 {
		return 0, 0
	}
	return float64(hh.ValueAtPercentile(p)) * h.Scale(), hh.TotalCount()
}

// Summary returns the Stat of h over the run.
func (s *Snapshot) Summary(h Hist) Stat { return Summarize(h, s.Hists[h]) }

// Summary returns the Stat of h over the window.
func (w *Window) Summary(h Hist) Stat { return Summarize(h, w.Hists[h]) }

// RequestCount returns the number of requests of op, whatever their outcome.
func (s *Snapshot) RequestCount(op mcp.Op) int64 { return requestCount(&s.Requests, op) }

// ErrorCount returns the number of requests of op that ended in error
// (Outcome.IsError).
func (s *Snapshot) ErrorCount(op mcp.Op) int64 { return errorCount(&s.Requests, op) }

// RequestCount returns the number of requests of op in the window.
func (w *Window) RequestCount(op mcp.Op) int64 { return requestCount(&w.Requests, op) }

// ErrorCount returns the number of requests of op in the window that ended in error
// (Outcome.IsError).
func (w *Window) ErrorCount(op mcp.Op) int64 { return errorCount(&w.Requests, op) }

func errorCount(t *[mcp.NumOps][NumOutcomes]int64, op mcp.Op) int64 {
	var n int64
	for o, c := range t[op] {
		if Outcome(o).IsError() {
			n += c
		}
	}
	return n
}

func requestCount(t *[mcp.NumOps][NumOutcomes]int64, op mcp.Op) int64 {
	var n int64
	for _, c := range t[op] {
		n += c
	}
	return n
}

// FleetPollAmplification returns the fleet's poll amplification
// (docs/METRICS.md#fleet_poll_amplification): sum(polls) / sum(advised polls) over the tasks
// recorded with Shard.RecordPollAmplification; 1.0 is exactly as advised, 0 means no such task.
func (s *Snapshot) FleetPollAmplification() float64 {
	if s.Counters[AmplificationAdvised] == 0 {
		return 0
	}
	return float64(s.Counters[AmplificationPolls]) / float64(s.Counters[AmplificationAdvised])
}

// StatusReadsPerTask returns (tasks/get + tasks/list requests) / tasks created,
// docs/METRICS.md#status_reads_per_task; 0 when no task was created.
func (s *Snapshot) StatusReadsPerTask() float64 {
	if s.Counters[TasksCreated] == 0 {
		return 0
	}
	reads := s.RequestCount(mcp.OpTasksGet) + s.RequestCount(mcp.OpTasksList)
	return float64(reads) / float64(s.Counters[TasksCreated])
}
