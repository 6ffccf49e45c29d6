package results

import (
	"math"
	"strings"
	"time"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Verdicts.
const (
	VerdictPass = "pass" // every evaluated gate and every threshold passed
	VerdictFail = "fail" // a gate or a threshold failed: exit code 99
)

// ExitGateFailed is the exit code of a run whose verdict is "fail" (DESIGN.md section 5).
const ExitGateFailed = 99

// ExitInterrupted is the exit code of a run that a signal (Ctrl-C, SIGTERM) stopped before its
// end and whose verdict is "pass": what was measured passed, but the run is not whole, and a
// pipeline must not take it for a pass. 130 is 128 + SIGINT, the shells' convention.
const ExitInterrupted = 130

// Summary is the result of one run, as data. Its JSON form is summary.json (DESIGN.md
// section 7): the key names and their order (the order of the fields below) are a contract
// that canary gates and dashboards rely on; new keys may be added, none renamed.
//
// Figures reported in ms, ratio, per_s or % are rounded to 3 decimals.
type Summary struct {
	TasksimVersion string    `json:"tasksim_version"`
	Scenario       string    `json:"scenario"`
	Seed           uint64    `json:"seed"`
	Protocol       string    `json:"protocol"`    // wire dialect, e.g. "2025-11-25"
	Target         string    `json:"target"`      // "embedded" or the target URL
	StartedAt      time.Time `json:"started_at"`  // UTC
	DurationS      float64   `json:"duration_s"`  // RunInfo.Duration in seconds
	Interrupted    bool      `json:"interrupted"` // stopped early by a signal (Ctrl-C, SIGTERM)
	// Aborted says which abort_on_fail threshold stopped the load phase early, and in which
	// window; "" when none did.
	Aborted string `json:"aborted,omitempty"`
	// Trustworthy is false when the load generator could not keep its own schedule:
	// schedule_lag p99 > 10% of the poll interval (DESIGN.md section 4). TrustNote says why,
	// or why the check could not be made; "" when trustworthy and checked.
	Trustworthy bool   `json:"trustworthy"`
	TrustNote   string `json:"trust_note"`
	// Manifest is the target's capability manifest, as the caller gave it.
	Manifest any `json:"manifest"`
	// Runtime is the load generator's process as the caller gave it: Go version,
	// processors, garbage collector settings (internal/gcpolicy); null when not given.
	Runtime any   `json:"runtime"`
	Tasks   Tasks `json:"tasks"`
	// Requests counts requests by JSON-RPC method name ("tasks/get"); only methods that
	// were sent appear.
	Requests map[string]RequestStats `json:"requests"`
	// Metrics holds, by histogram name, every histogram that received values.
	Metrics map[string]metrics.Stat `json:"metrics"`
	Fleet   Fleet                   `json:"fleet"`
	// Counters holds every metrics.Counter by name, zeros included.
	Counters map[string]int64 `json:"counters"`
	// Gauges holds every metrics.Gauge by name: the level at the end and the highest level.
	Gauges map[string]Level `json:"gauges"`
	// Clamped counts, by histogram name, values recorded outside the histogram's range
	// (their max is then understated); absent when none was.
	Clamped map[string]int64 `json:"clamped,omitempty"`
	// Server holds the embedded server's figures as the caller gave them; null for an
	// external target.
	Server any `json:"server"`
	// Client holds what the clients saw beyond the counters, as the caller gave it (creates
	// refused, by JSON-RPC code or HTTP status); absent when nil.
	Client     any               `json:"client,omitempty"`
	Gates      Gates             `json:"gates"`
	Thresholds []ThresholdResult `json:"thresholds"`
	Verdict    string            `json:"verdict"` // VerdictPass or VerdictFail
}

// Tasks holds the task outcome counts of DESIGN.md section 4.
type Tasks struct {
	Created   int64 `json:"created"`   // CreateTaskResult received
	Completed int64 `json:"completed"` // terminal completed observed
	Failed    int64 `json:"failed"`    // terminal failed observed
	Cancelled int64 `json:"cancelled"` // terminal cancelled observed
	Expired   int64 `json:"expired"`   // gone before a terminal status was seen
	Unknown   int64 `json:"unknown"`   // outcome never established
	Dropped   int64 `json:"dropped"`   // open-model arrivals that found no free slot
}

// RequestStats counts the requests of one method. The maps hold only non-zero entries and
// are never null.
type RequestStats struct {
	Count  int64 `json:"count"`
	Errors int64 `json:"errors"` // every outcome but "ok" and "stopped"
	// ByOutcome counts by metrics.Outcome name: "ok", "rpc_error", "http_error",
	// "transport", "protocol", "stopped" (cut off by the run's own end).
	ByOutcome map[string]int64 `json:"by_outcome"`
	// ByCode counts JSON-RPC errors by code ("-32602", or "other").
	ByCode map[string]int64 `json:"by_code"`
	// ByStatus counts HTTP error statuses ("429", or "other").
	ByStatus map[string]int64 `json:"by_status"`
}

// Fleet holds the fleet-wide polling figures.
type Fleet struct {
	// PollAmplification is sum(polls) / sum(advised polls) over the tasks that reached an
	// outcome (DESIGN.md section 4); 1.0 = exactly as advised, 0 = no such task.
	PollAmplification float64 `json:"poll_amplification"`
	// StatusReadsPerTask is (tasks/get + tasks/list requests) / tasks created; 0 = none.
	StatusReadsPerTask float64 `json:"status_reads_per_task"`
	// PollsPerSecond is tasks/get polls sent / the span the windows cover (the load phase
	// and the drain), or / RunInfo.Duration when no window was flushed.
	PollsPerSecond float64 `json:"polls_per_second"`
}

// Level is a gauge over the run.
type Level struct {
	Last int64 `json:"last"` // level at the end of the last window
	Max  int64 `json:"max"`  // highest level held
}

// RunInfo is what the caller knows about a run beyond its measurements. Zero values are
// noted per field.
type RunInfo struct {
	Version  string // tasksim version
	Scenario string // scenario name
	Seed     uint64 // the run's seed
	Protocol string // wire dialect
	Target   string // target URL; "" = the embedded server ("embedded" in the summary)

	StartedAt time.Time     // start of the run; reported in UTC
	Duration  time.Duration // length of the run; 0 = the span of the windows

	// Manifest is the capability manifest, marshalled as is; nil = null.
	Manifest any
	// Runtime describes the load generator's process, marshalled as is; nil = null.
	Runtime any
	// Server holds the embedded server's figures, marshalled as is; nil = null.
	Server any
	// Client holds client-side findings beyond the counters, marshalled as is; nil = absent.
	Client any
	// PollInterval is the interval clients were advised (or used): the trust check compares
	// schedule_lag p99 with 10% of it. 0 = unknown: the check is skipped, with a note.
	PollInterval time.Duration
	// Interrupted says a signal (Ctrl-C, SIGTERM) stopped the run early.
	Interrupted bool
	// Aborted says which abort_on_fail threshold stopped the load early; "" = none.
	Aborted string
	// Evidence holds, per gate name ("hard", "recovery", "cancellation",
	// "compatibility"), extra evidence such as sample task ids. A map[string]any is merged
	// into the gate's evidence; a key that names a figure Build computed is kept as
	// KEY_detail instead (so "invalid_transitions" samples sit beside the count as
	// "invalid_transitions_detail"). Any other value is kept under "detail".
	Evidence map[string]any
	// DuplicateEffects is the number of second domain effects for one idempotency key, from
	// the embedded server's ledger; -1 = unknown (external target), not checked.
	DuplicateEffects int64
	// Thresholds are the scenario's threshold expressions; a bad one fails the run with its
	// parse error in the result.
	Thresholds []scenarios.Threshold
	// Windows, when set, is NewWindowTally(Thresholds) fed every window of the run: the
	// thresholds' windows are read from it, and Build's windows argument may be nil.
	Windows *WindowTally

	// FaultsOn says the scenario injected faults: the recovery gate is evaluated.
	FaultsOn bool
	// Faults counts the faults injected, by "source.kind" (metrics.Events.Counts).
	Faults map[string]int64
	// SecondCreates is the number of tools/call that repeated an idempotency key the server
	// had already seen, from the embedded server; -1 = unknown (external target).
	SecondCreates int64
	// EffectsAfterCancel is the number of domain effects applied to tasks already cancelled
	// (from the embedded server's ledger); -1 = unknown.
	EffectsAfterCancel int64
	// Unknown is the reconciliation list: tasks of unknown outcome by reason, and a sample
	// with their idempotency keys (loadgen.Engine.Unknown).
	Unknown       map[string]int64
	UnknownSample any
	// LostAfterReconnect counts known, unfinished tasks that a new session could not see
	// (a finding: the server bound tasks to the session, or lost them).
	LostAfterReconnect int64
	// UnknownCreated counts the unknown outcomes of tasks whose id the client knew; -1 =
	// not counted (the accounting check of the recovery gate is then skipped).
	UnknownCreated int64

	// tenant isolation and secrets (issue 6)
	// Security holds what the isolation probes and the secret detector found; nil = neither
	// ran: cross_tenant_leaks and planted_secrets stay "not_checked".
	Security *Security

	// Compat holds the inputs of the compatibility gate (issue 6): the target's tasks
	// capability for the run's tool and what the client and the embedded server did about
	// it. nil = no manifest: the gate is not evaluated.
	Compat *Compat
}

// Build returns the summary of a run from its run totals and, for the per-window
// threshold checks, its windows (nil = none). A nil total is an empty run.
func Build(info RunInfo, total *metrics.Snapshot, windows []metrics.Window) *Summary {
	if total == nil {
		total = &metrics.Snapshot{}
	}
	span := total.End.Sub(total.Start)
	if span <= 0 {
		span = info.Duration
	}
	dur := info.Duration
	if dur <= 0 {
		dur = span
	}
	target := info.Target
	if target == "" {
		target = "embedded"
	}
	s := &Summary{
		TasksimVersion: info.Version,
		Scenario:       info.Scenario,
		Seed:           info.Seed,
		Protocol:       info.Protocol,
		Target:         target,
		StartedAt:      info.StartedAt.UTC(),
		DurationS:      round3(dur.Seconds()),
		Interrupted:    info.Interrupted,
		Aborted:        info.Aborted,
		Manifest:       info.Manifest,
		Runtime:        info.Runtime,
		Tasks:          tasksOf(&total.Counters),
		Requests:       requestsOf(total),
		Metrics:        statsOf(total),
		Fleet:          fleetOf(total, span),
		Counters:       countersOf(&total.Counters),
		Gauges:         gaugesOf(total),
		Clamped:        clampedOf(total),
		Server:         info.Server,
		Client:         info.Client,
	}
	s.Trustworthy, s.TrustNote = trust(s.Metrics[metrics.ScheduleLag.Name()], info.PollInterval)
	s.Gates = buildGates(info, s)
	s.Thresholds = make([]ThresholdResult, 0, len(info.Thresholds))
	for i, th := range info.Thresholds {
		t, err := ParseThreshold(th.Expr)
		if err != nil {
			s.Thresholds = append(s.Thresholds, ThresholdResult{
				Expr: strings.TrimSpace(th.Expr), WorstWindow: -1, Error: err.Error(),
			})
			continue
		}
		var r ThresholdResult
		if wt := info.Windows; wt != nil && i < len(wt.ths) && wt.ths[i].ok {
			r = t.result(s, &wt.ths[i].acc) // tallied as the windows came
		} else {
			r = t.Eval(s, windows)
		}
		if th.AbortOnFail {
			// abort_on_fail judges every window: one failing window fails the threshold
			// (it is the one that stopped the load).
			r.AbortOnFail = true
			r.Pass = r.Pass && r.WindowsFailed == 0
		}
		s.Thresholds = append(s.Thresholds, r)
	}
	s.Verdict = verdict(s)
	return s
}

// ExitCode returns ExitGateFailed (99) when the verdict is "fail", ExitInterrupted (130)
// when it is "pass" but a signal stopped the run early, and 0 otherwise.
func (s *Summary) ExitCode() int {
	switch {
	case s.Verdict != VerdictPass:
		return ExitGateFailed
	case s.Interrupted:
		return ExitInterrupted
	}
	return 0
}

// verdict is "fail" when an evaluated gate or any threshold failed.
func verdict(s *Summary) string {
	for _, g := range s.Gates.list() {
		if g.gate.Evaluated && !g.gate.Pass {
			return VerdictFail
		}
	}
	for _, t := range s.Thresholds {
		if !t.Pass {
			return VerdictFail
		}
	}
	return VerdictPass
}

// outcomeCounters maps the outcome names of tasks.* to their counters, in summary order.
var outcomeCounters = [...]struct {
	name string
	c    metrics.Counter
}{
	{"created", metrics.TasksCreated},
	{"completed", metrics.TasksCompleted},
	{"failed", metrics.TasksFailed},
	{"cancelled", metrics.TasksCancelled},
	{"expired", metrics.TasksExpired},
	{"unknown", metrics.TasksUnknown},
	{"dropped", metrics.TasksDropped},
}

func tasksOf(c *[metrics.NumCounters]int64) Tasks {
	return Tasks{
		Created:   c[metrics.TasksCreated],
		Completed: c[metrics.TasksCompleted],
		Failed:    c[metrics.TasksFailed],
		Cancelled: c[metrics.TasksCancelled],
		Expired:   c[metrics.TasksExpired],
		Unknown:   c[metrics.TasksUnknown],
		Dropped:   c[metrics.TasksDropped],
	}
}

func requestsOf(t *metrics.Snapshot) map[string]RequestStats {
	out := map[string]RequestStats{}
	for m := range metrics.NumMethods {
		n := t.RequestCount(m)
		if n == 0 {
			continue
		}
		rs := RequestStats{
			Count: n, Errors: t.ErrorCount(m),
			ByOutcome: map[string]int64{}, ByCode: map[string]int64{}, ByStatus: map[string]int64{},
		}
		for o, v := range t.Requests[m] {
			if v != 0 {
				rs.ByOutcome[metrics.Outcome(o).Name()] = v
			}
		}
		for i, v := range t.RPCCodes[m] {
			if v != 0 {
				rs.ByCode[metrics.RPCCodeLabel(i)] = v
			}
		}
		for i, v := range t.HTTPStatuses[m] {
			if v != 0 {
				rs.ByStatus[metrics.HTTPStatusLabel(i)] = v
			}
		}
		out[m.Name()] = rs
	}
	return out
}

func statsOf(t *metrics.Snapshot) map[string]metrics.Stat {
	out := map[string]metrics.Stat{}
	for h := range metrics.NumHists {
		if st := roundStat(t.Summary(h)); st.Count > 0 {
			out[h.Name()] = st
		}
	}
	return out
}

func fleetOf(t *metrics.Snapshot, span time.Duration) Fleet {
	f := Fleet{
		PollAmplification:  round3(t.FleetPollAmplification()),
		StatusReadsPerTask: round3(t.StatusReadsPerTask()),
	}
	if span > 0 {
		f.PollsPerSecond = round3(float64(t.Counters[metrics.Polls]) / span.Seconds())
	}
	return f
}

func countersOf(c *[metrics.NumCounters]int64) map[string]int64 {
	out := make(map[string]int64, metrics.NumCounters)
	for i, v := range c {
		out[metrics.Counter(i).Name()] = v
	}
	return out
}

func gaugesOf(t *metrics.Snapshot) map[string]Level {
	out := make(map[string]Level, metrics.NumGauges)
	for g := range metrics.NumGauges {
		out[g.Name()] = Level{Last: t.Gauges[g], Max: t.GaugeMax[g]}
	}
	return out
}

func clampedOf(t *metrics.Snapshot) map[string]int64 {
	var out map[string]int64
	for h, v := range t.Clamped {
		if v == 0 {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[metrics.Hist(h).Name()] = v
	}
	return out
}

// roundStat rounds every figure of st to 3 decimals.
func roundStat(st metrics.Stat) metrics.Stat {
	st.Min, st.P50, st.P90 = round3(st.Min), round3(st.P50), round3(st.P90)
	st.P99, st.P999, st.Max = round3(st.P99), round3(st.P999), round3(st.Max)
	st.Mean = round3(st.Mean)
	return st
}

// round3 rounds x to 3 decimals, so golden files and diffs of summaries are stable. NaN
// and infinities, which JSON cannot carry, become 0; no figure of a summary produces them.
func round3(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1000) / 1000
}
