package metrics

import hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

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
	st.Min = float64(hh.Min()) * k
	st.P50 = float64(hh.ValueAtPercentile(50)) * k
	st.P90 = float64(hh.ValueAtPercentile(90)) * k
	st.P99 = float64(hh.ValueAtPercentile(99)) * k
	st.P999 = float64(hh.ValueAtPercentile(99.9)) * k
	st.Max = float64(hh.Max()) * k
	st.Mean = hh.Mean() * k
	return st
}

// Summary returns the Stat of h over the run.
func (s *Snapshot) Summary(h Hist) Stat { return Summarize(h, s.Hists[h]) }

// Summary returns the Stat of h over the window.
func (w *Window) Summary(h Hist) Stat { return Summarize(h, w.Hists[h]) }

// RequestCount returns the number of requests of method m, whatever their outcome.
func (s *Snapshot) RequestCount(m Method) int64 { return requestCount(&s.Requests, m) }

// ErrorCount returns the number of requests of method m that ended in error
// (Outcome.IsError).
func (s *Snapshot) ErrorCount(m Method) int64 { return errorCount(&s.Requests, m) }

// RequestCount returns the number of requests of method m in the window.
func (w *Window) RequestCount(m Method) int64 { return requestCount(&w.Requests, m) }

// ErrorCount returns the number of requests of method m in the window that ended in error
// (Outcome.IsError).
func (w *Window) ErrorCount(m Method) int64 { return errorCount(&w.Requests, m) }

func errorCount(t *[NumMethods][NumOutcomes]int64, m Method) int64 {
	var n int64
	for o, c := range t[m] {
		if Outcome(o).IsError() {
			n += c
		}
	}
	return n
}

func requestCount(t *[NumMethods][NumOutcomes]int64, m Method) int64 {
	var n int64
	for _, c := range t[m] {
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
	reads := s.RequestCount(MethodTasksGet) + s.RequestCount(MethodTasksList)
	return float64(reads) / float64(s.Counters[TasksCreated])
}
