package results

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/metrics"
)

// The evidence tables of report.html that have a fixed shape: task outcomes, requests by
// method and outcome, input, configuration, histogram statistics and fault counts.

type statRow struct {
	Name, Unit                    string
	Recorded                      bool
	Count                         int64
	P50, P90, P99, P999, Max, Avg string
}

// outcomeCell is one task outcome: its count and its share of the tasks created.
type outcomeCell struct{ Name, Count, Share string }

// requestRow is one method's requests by how they ended: errors apart from the refusals
// that are not errors (backpressure, expected) and from those the run's end cut off.
type requestRow struct {
	Method                                             string
	Count, OK, Errors, Backpressure, Expected, Stopped int64
	ErrorKinds, ByCode, ByStatus                       string
	Total                                              bool
}

// outcomes lists the task outcomes the summary has (Tasks.outcomes: in summary order, then
// those a newer summary adds, in key order), each with its share of the tasks created
// (dropped arrivals were never created: they have no share).
func (p *reportPage) outcomes(t *Tasks) {
	for _, o := range t.outcomes() {
		c := outcomeCell{Name: o.name, Count: thousands(o.count)}
		if o.name != "created" && o.name != "dropped" && t.Created > 0 {
			c.Share = figureText(100*float64(o.count)/float64(t.Created), "%")
		}
		p.Outcomes = append(p.Outcomes, c)
	}
}

// errorOutcome reports whether the request outcome of this name is an error
// (metrics.Outcome.IsError); a name this version does not know is.
func errorOutcome(name string) bool {
	for o := range metrics.NumOutcomes {
		if o.Name() == name {
			return o.IsError()
		}
	}
	return true
}

// requests fills the requests table: one row per method, then the total.
func (p *reportPage) requests(s *Summary) {
	total := requestRow{Method: "all methods", Total: true}
	kinds, codes, statuses := map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, m := range slices.Sorted(maps.Keys(s.Requests)) {
		rs := s.Requests[m]
		row := requestRow{Method: m, Count: rs.Count, Errors: rs.Errors, OK: rs.ByOutcome["ok"],
			Backpressure: rs.ByOutcome["backpressure"], Expected: rs.ByOutcome["expected"],
			Stopped: rs.ByOutcome["stopped"] + rs.ByOutcome["injected"],
			ByCode:  countsText(rs.ByCode), ByStatus: countsText(rs.ByStatus)}
		errKinds := map[string]int64{}
		for o, n := range rs.ByOutcome {
			if errorOutcome(o) {
				errKinds[o] += n
				kinds[o] += n
			}
		}
		row.ErrorKinds = countsText(errKinds)
		for k, n := range rs.ByCode {
			codes[k] += n
		}
		for k, n := range rs.ByStatus {
			statuses[k] += n
		}
		total.Count, total.OK, total.Errors = total.Count+row.Count, total.OK+row.OK, total.Errors+row.Errors
		total.Backpressure, total.Expected, total.Stopped = total.Backpressure+row.Backpressure, total.Expected+row.Expected, total.Stopped+row.Stopped
		p.Requests = append(p.Requests, row)
	}
	if len(p.Requests) > 1 {
		total.ErrorKinds, total.ByCode, total.ByStatus = countsText(kinds), countsText(codes), countsText(statuses)
		p.Requests = append(p.Requests, total)
	}
}

// inputCounters are what the clients saw of input, for a summary without an input block.
var inputCounters = []metrics.Counter{metrics.InputRequired, metrics.Elicitations,
	metrics.ElicitAccepted, metrics.ElicitDeclined, metrics.ElicitCancelled}

// input shows the summary's input block when the run had input, or, for a summary without
// one, the input counters when one is not 0.
func (p *reportPage) input(s *Summary) {
	if in := s.Input; in != nil {
		if *in != (Input{}) {
			p.Input = viewObject(generic(in), nil)
		}
		return
	}
	seen := map[string]any{}
	var nonZero bool
	for _, c := range inputCounters {
		if n, ok := s.Counters[c.Name()]; ok {
			seen[c.Name()] = float64(n)
			nonZero = nonZero || n != 0
		}
	}
	if nonZero {
		p.Input = viewObject(seen, nil)
	}
}

// config fills the run's configuration facts.
func (p *reportPage) config(s *Summary) {
	trust := "yes"
	if !s.Trustworthy {
		trust = "NO"
	}
	note := s.TrustNote
	if note == "" {
		note = "-"
	}
	p.Config = []fact{
		{K: "scenario", V: s.Scenario}, {K: "seed", V: strconv.FormatUint(s.Seed, 10)}, {K: "target", V: s.Target},
		{K: "protocol", V: s.Protocol}, {K: "tasksim version", V: s.TasksimVersion},
		{K: "started at", V: s.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z")},
		{K: "duration", V: num(s.DurationS) + " s"}, {K: "interrupted", V: strconv.FormatBool(s.Interrupted)},
		{K: "trustworthy", V: trust}, {K: "trust note", V: note},
	}
	if s.TLSUnverified {
		p.Config = append(p.Config, fact{K: "TLS", V: "UNVERIFIED (--insecure-skip-verify): the target's certificate was not checked"})
	}
	if s.Aborted != "" {
		p.Config = append(p.Config, fact{K: "aborted", V: s.Aborted, Class: "fail"})
	}
	if m := s.Merge; m != nil {
		v := fmt.Sprintf("%d of %d shards (tasksim merge)", len(m.Merged), m.Count)
		fc := fact{K: "merged", V: v}
		switch {
		case m.Partial: // the verdict's reason says it in full, with the note
			fc.V += "; missing: shard " + intList(m.Missing)
			fc.Class = "fail"
		case m.Note != "":
			fc.V += ": " + m.Note
		}
		p.Config = append(p.Config, fc)
	} else if sh := s.Shard; sh != nil && sh.Count > 1 {
		v := fmt.Sprintf("%d of %d: this slice's figures; tasksim merge judges the whole", sh.Index, sh.Count)
		if sh.LateByS > 1 {
			v += fmt.Sprintf("; started %s s late", num(sh.LateByS))
		}
		p.Config = append(p.Config, fact{K: "shard", V: v})
	}
}

// stats fills the latency, polling and lag tables, and the fleet figures.
func (p *reportPage) stats(s *Summary) {
	for _, name := range metricNames(s.Metrics) {
		h, _ := metrics.ParseHist(name)
		if strings.HasPrefix(name, "latency_") || h == metrics.TaskE2E {
			p.Latency = append(p.Latency, statRowOf(name, s.Metrics))
		}
	}
	p.Polling = []statRow{statRowOf(metrics.PollsPerTask.Name(), s.Metrics), statRowOf(metrics.PollAmplification.Name(), s.Metrics)}
	f := s.Fleet
	amp, reads, pps := f.Measured()
	p.Fleet = []fact{
		fleetFact("fleet poll amplification (sum polls / sum advised)", f.PollAmplification, amp, true),
		fleetFact("status reads per task", f.StatusReadsPerTask, reads, true),
		fleetFact("polls per second", f.PollsPerSecond, pps, false),
	}
	for _, h := range []metrics.Hist{metrics.DetectionLag, metrics.ResultLag, metrics.CleanupLag,
		metrics.CancelLatency, metrics.ScheduleLag, metrics.DownstreamWait} {
		if _, ok := s.Metrics[h.Name()]; ok || h <= metrics.CleanupLag {
			p.Lags = append(p.Lags, statRowOf(h.Name(), s.Metrics))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Clamped)) {
		p.Clamped = append(p.Clamped, fact{K: k, V: strconv.FormatInt(s.Clamped[k], 10)})
	}
}

// faults fills the fault counts: the recovery gate's faults_injected (every fault, exact)
// when present, else the events events.csv kept.
func (p *reportPage) faults(s *Summary, ev *faultLog) {
	if fi := s.Gates.Recovery.Evidence.FaultsInjected; len(fi) > 0 {
		for _, k := range slices.Sorted(maps.Keys(fi)) {
			p.Faults = append(p.Faults, fact{K: k, V: strconv.FormatInt(fi[k], 10)})
		}
	} else if ev != nil && len(ev.events) > 0 {
		n := map[string]int64{}
		for _, e := range ev.events {
			n[e.Key]++
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			p.Faults = append(p.Faults, fact{K: k, V: strconv.FormatInt(n[k], 10)})
		}
	}
	if ev != nil {
		p.FaultsMore = ev.moreNotKept
	}
}

// fleetFact is the fleet figure v under the label k: "no data" when it was not measured
// (absent or null in summary.json), or, for a ratio, 0 (nothing to divide by).
func fleetFact(k string, v float64, measured, ratio bool) fact {
	if !measured || ratio && v == 0 {
		return fact{K: k, V: "no data", Class: "na"}
	}
	return fact{K: k, V: num(v)}
}

// statRowOf is a histogram's row; one with no sample (absent, or a null placeholder) is
// "not recorded".
func statRowOf(name string, m map[string]metrics.Stat) statRow {
	st, ok := m[name]
	if !ok || st.Count == 0 {
		return statRow{Name: name}
	}
	return statRow{Name: name, Unit: st.Unit, Recorded: true, Count: st.Count, P50: num(st.P50),
		P90: num(st.P90), P99: num(st.P99), P999: num(st.P999), Max: num(st.Max), Avg: num(st.Mean)}
}

// countsText is "k=v, k=v" in key order, or "-".
func countsText(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+strconv.FormatInt(m[k], 10))
	}
	return strings.Join(parts, ", ")
}
