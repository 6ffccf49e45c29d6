package results

import (
	"math"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// Verdicts.
const (
	VerdictPass = "pass" // every evaluated gate and every threshold passed
	VerdictFail = "fail" // a gate or a threshold failed: exit code 99
	// VerdictError: the run could not be made, or a runtime error ended it (exit code 1);
	// Summary.Error says why. It is never a pass, whatever was measured before the error.
	VerdictError = "error"
)

// ExitRuntimeError is the exit code of a run whose verdict is "error".
const ExitRuntimeError = 1

// ExitGateFailed is the exit code of a run whose verdict is "fail".
const ExitGateFailed = 99

// ExitInterrupted is the exit code of a run that a signal (Ctrl-C, SIGTERM) stopped before its
// end and whose verdict is "pass": what was measured passed, but the run is not whole, and a
// pipeline must not take it for a pass. 130 is 128 + SIGINT, the shells' convention.
const ExitInterrupted = 130

// Summary is the result of one run, as data. Its JSON form is summary.json (documented field
// by field in docs/OUTPUTS.md): the key names and their order (the order of the fields below)
// are a contract that canary gates and dashboards rely on; new keys may be added, none
// renamed.
//
// Figures reported in ms, ratio, per_s or % are rounded to 3 decimals. A figure the run
// had no data for is null in summary.json, never a stand-in 0 or -1.
type Summary struct {
	TasksimVersion string    `json:"tasksim_version"`
	Scenario       string    `json:"scenario"`
	Seed           uint64    `json:"seed"`
	Protocol       string    `json:"protocol"`    // wire dialect, e.g. "2025-11-25"
	Target         string    `json:"target"`      // "embedded" or the target URL
	StartedAt      time.Time `json:"started_at"`  // UTC
	DurationS      float64   `json:"duration_s"`  // RunInfo.Duration in seconds
	Interrupted    bool      `json:"interrupted"` // stopped early by a signal (Ctrl-C, SIGTERM)
	// TLSUnverified is true when the target's certificate was not verified
	// (--insecure-skip-verify); absent otherwise.
	TLSUnverified bool `json:"tls_unverified,omitempty"`
	// Shard says which slice of the scenario the run ran, and against which common start
	// (ShardInfo); absent for a run of the whole scenario without --start-at.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Config is what the run was asked to do, as far as comparing it with another run needs
	// (RunConfig); absent in the summary of an older tasksim.
	Config *RunConfig `json:"config,omitempty"`
	// Merge says which shard runs a `tasksim merge` added up, and whether some were missing
	// (MergeInfo); absent in a run's own summary.
	Merge *MergeInfo `json:"merge,omitempty"`
	// Aborted says which abort_on_fail threshold stopped the load phase early, and in which
	// window; "" when none did.
	Aborted string `json:"aborted,omitempty"`
	// Trustworthy is false when the load generator could not keep its own schedule:
	// schedule_lag p99 > 10% of the poll interval (docs/METRICS.md). TrustNote says why,
	// or why the check could not be made; "" when trustworthy and checked.
	Trustworthy bool   `json:"trustworthy"`
	TrustNote   string `json:"trust_note"`
	// Manifest is the target's capability manifest (client.Manifest documents each field);
	// null when the run did not get that far.
	Manifest *client.Manifest `json:"manifest"`
	// Runtime is the load generator's process: Go version, processors, garbage collector
	// settings (internal/gcpolicy); null when not given; one per shard in a merged summary.
	Runtime Runtimes `json:"runtime"`
	Tasks   Tasks    `json:"tasks"`
	// Input is what the clients saw of input_required: tasks asking for input, and the
	// elicitations answered; nil in a summary read back without an input block (an older
	// tasksim's: the report shows the input counters instead).
	Input *Input `json:"input"`
	// Requests counts requests by JSON-RPC method name ("tasks/get"); only methods that
	// were sent appear.
	Requests map[string]RequestStats `json:"requests"`
	// Errors are the most frequent kinds of failed request (at most MaxErrorKinds), the
	// most frequent first, each with the first message seen; never null.
	Errors []ErrorKind `json:"errors"`
	// Metrics holds, by histogram name, every histogram that received values.
	Metrics map[string]metrics.Stat `json:"metrics"`
	Fleet   Fleet                   `json:"fleet"`
	// Counters holds every metrics.Counter by name, zeros included, except, on an
	// external target, those the embedded server records (metrics.Counter.ServerSide):
	// they are listed in NotMeasured instead.
	Counters map[string]int64 `json:"counters"`
	// Gauges holds every metrics.Gauge by name: the level at the end and the highest level;
	// on an external target only the load generator's own (metrics.Gauge.ServerSide).
	Gauges map[string]Level `json:"gauges"`
	// NotMeasured names the counters and gauges left out because this target cannot
	// report them (the embedded server's figures, on an external target); absent when none.
	NotMeasured []string `json:"not_measured,omitempty"`
	// Clamped counts, by histogram name, values recorded outside the histogram's range
	// (their max is then understated); absent when none was.
	Clamped map[string]int64 `json:"clamped,omitempty"`
	// Server holds the embedded server's figures; null for an external target; one per
	// shard in a merged summary.
	Server Server `json:"server"`
	// Client holds what the clients saw beyond the counters (creates refused, by JSON-RPC
	// code or HTTP status; cleanup_lag probes that measured nothing); absent when nil.
	Client *Client `json:"client,omitempty"`
	Gates  Gates   `json:"gates"`
	// Contract is the result of the contract suite when the run ran it (RunInfo.Contract):
	// every case with its verdict and evidence, so that report.html and `tasksim report`
	// show the cases again; absent when the suite did not run. Its verdict is the contract
	// gate.
	Contract *Contract `json:"contract,omitempty"`
	// Thresholds are the scenario's thresholds, then the run's error budget
	// (Source "error_budget").
	Thresholds []ThresholdResult `json:"thresholds"`
	Verdict    string            `json:"verdict"` // VerdictPass, VerdictFail or VerdictError
	// Error is why the verdict is "error": the runtime error, its secrets redacted by the
	// caller; absent otherwise.
	Error string `json:"error,omitempty"`
}

// Tasks holds the task outcome counts: each task created ends in exactly one of completed,
// failed, cancelled, expired, lost, result_lost or unknown. Which outcomes it holds (all, in
// a Build's; in one read back, those summary.json had, and any a newer tasksim added) is
// what outcomes lists (summaryread.go).
type Tasks struct {
	Created   int64 `json:"created"`   // CreateTaskResult received
	Completed int64 `json:"completed"` // terminal completed observed, result in hand
	Failed    int64 `json:"failed"`    // terminal failed observed
	Cancelled int64 `json:"cancelled"` // terminal cancelled observed
	Expired   int64 `json:"expired"`   // gone after its ttl, before a terminal status was seen
	// Lost counts tasks gone (-32602) before their granted ttl ran out and before a terminal
	// status was seen: the server lost them, and whether their work happened is unknown
	// (counter tasks_lost).
	Lost int64 `json:"lost"`
	// ResultLost counts tasks seen terminal whose tasks/result payload could not be read:
	// for the caller the work's outcome is unknown (counter results_lost).
	ResultLost int64 `json:"result_lost"`
	Unknown    int64 `json:"unknown"` // outcome never established
	Dropped    int64 `json:"dropped"` // open-model arrivals that found no free slot

	// has marks the outcomes of outcomeCounters held, bit i for the i-th: every one for a
	// Build's, those that were a number in summary.json for one read back.
	has uint16
	// other are the outcomes a newer summary holds that this version does not know, in key
	// order; never set by Build, never written.
	other []taskOutcome
}

// Input is what the clients saw of input_required, from the counters of the same names.
type Input struct {
	InputRequiredSeen int64 `json:"input_required_seen"`   // times a task was seen enter input_required
	Received          int64 `json:"elicitations_received"` // elicitation/create requests received
	Accepted          int64 `json:"accepted"`              // answered accept
	Declined          int64 `json:"declined"`              // answered decline
	Cancelled         int64 `json:"cancelled"`             // answered cancel
}

// RequestStats counts the requests of one method. The maps hold only non-zero entries and
// are never null.
type RequestStats struct {
	Count int64 `json:"count"`
	// Errors counts the requests whose outcome is an error (metrics.Outcome.IsError): not
	// "ok", "stopped", "backpressure" or "expected".
	Errors int64 `json:"errors"`
	// ByOutcome counts by metrics.Outcome name: "ok", "rpc_error", "http_error",
	// "transport", "protocol", "stopped" (cut off by the run's own end), "backpressure"
	// (429, 503 with Retry-After, a create refused for capacity), "expected" (a refusal
	// the contract prescribes, such as -32602 for a cancel of a terminal task).
	ByOutcome map[string]int64 `json:"by_outcome"`
	// ByCode counts JSON-RPC errors by code ("-32602", or "other").
	ByCode map[string]int64 `json:"by_code"`
	// ByStatus counts HTTP error statuses ("429", or "other").
	ByStatus map[string]int64 `json:"by_status"`
}

// Fleet holds the fleet-wide polling figures. A figure the run had nothing to compute
// from is 0 here and null in summary.json (see Measured); the zero Fleet has none, as a
// summary read back without a fleet block.
type Fleet struct {
	// PollAmplification is sum(polls) / sum(advised polls) over the tasks that reached an
	// outcome with an advised interval; 1.0 = exactly as advised. No such task: no data.
	PollAmplification float64 `json:"poll_amplification"`
	// StatusReadsPerTask is (tasks/get + tasks/list requests) / tasks created. No task
	// created: no data.
	StatusReadsPerTask float64 `json:"status_reads_per_task"`
	// PollsPerSecond is tasks/get polls sent / the span the windows cover (the load phase
	// and the drain), or / RunInfo.Duration when no window was flushed. No time: no data.
	PollsPerSecond float64 `json:"polls_per_second"`

	measured fleetMeasured // the figures with data; the others are null in summary.json
}

// Level is a gauge over the run.
type Level struct {
	Last int64 `json:"last"` // level at the end of the last window
	Max  int64 `json:"max"`  // highest level held
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
	s := summaryHead(info, dur)
	external := s.Target != "embedded"
	s.Aborted = info.Aborted
	s.Tasks, s.Input = tasksOf(&total.Counters), inputOf(&total.Counters)
	s.Requests, s.Metrics, s.Fleet = requestsOf(total), statsOf(total), fleetOf(total, span)
	s.Counters, s.Gauges = countersOf(&total.Counters, external), gaugesOf(total, external)
	s.NotMeasured, s.Clamped = notMeasured(external), clampedOf(total)
	s.Server, s.Client = info.Server, info.Client
	s.Trustworthy, s.TrustNote = trust(s.Metrics[metrics.ScheduleLag.Name()], info.PollInterval)
	s.Contract = info.Contract.normalized()
	s.Gates = buildGates(info, s)
	s.Thresholds = judge(info, s, windows)
	s.Verdict = verdict(s)
	if info.Error != "" {
		s.Verdict, s.Error = VerdictError, info.Error
	}
	return s
}

// ExitCode returns ExitRuntimeError (1) when the verdict is "error", ExitGateFailed (99)
// when it is "fail" (or unknown), ExitInterrupted (130) when it is "pass" but a signal
// stopped the run early, and 0 otherwise.
func (s *Summary) ExitCode() int {
	switch {
	case s.Verdict == VerdictError:
		return ExitRuntimeError
	case s.Verdict != VerdictPass:
		return ExitGateFailed
	case s.Interrupted:
		return ExitInterrupted
	}
	return 0
}

// verdict is "fail" when an evaluated gate or any threshold failed. In a run a signal cut
// short the evidence threshold judges nothing: that no task ended may be the signal's doing,
// and the run exits 130, not a pass, anyway.
func verdict(s *Summary) string {
	for _, g := range s.Gates.list() {
		if g.evaluated && !g.pass {
			return VerdictFail
		}
	}
	for _, t := range s.Thresholds {
		if !t.Pass && !(s.Interrupted && t.Source == SourceEvidence) {
			return VerdictFail
		}
	}
	return VerdictPass
}

// outcomeCounters maps the outcome names of tasks.* to their counters and their Tasks
// fields, in summary order.
var outcomeCounters = [...]struct {
	name  string
	c     metrics.Counter
	field func(*Tasks) *int64
}{
	{"created", metrics.TasksCreated, func(t *Tasks) *int64 { return &t.Created }},
	{"completed", metrics.TasksCompleted, func(t *Tasks) *int64 { return &t.Completed }},
	{"failed", metrics.TasksFailed, func(t *Tasks) *int64 { return &t.Failed }},
	{"cancelled", metrics.TasksCancelled, func(t *Tasks) *int64 { return &t.Cancelled }},
	{"expired", metrics.TasksExpired, func(t *Tasks) *int64 { return &t.Expired }},
	{"lost", metrics.TasksLost, func(t *Tasks) *int64 { return &t.Lost }},
	{"result_lost", metrics.ResultsLost, func(t *Tasks) *int64 { return &t.ResultLost }},
	{"unknown", metrics.TasksUnknown, func(t *Tasks) *int64 { return &t.Unknown }},
	{"dropped", metrics.TasksDropped, func(t *Tasks) *int64 { return &t.Dropped }},
}

// summaryHead is the part of a summary that says which run it is, as Build and
// ErrorSummary both write it: dur is how long the run took.
func summaryHead(info RunInfo, dur time.Duration) *Summary {
	target := info.Target
	if target == "" {
		target = "embedded"
	}
	return &Summary{
		TasksimVersion: info.Version,
		Scenario:       info.Scenario,
		Seed:           info.Seed,
		Protocol:       info.Protocol,
		Target:         target,
		StartedAt:      info.StartedAt.UTC(),
		DurationS:      round3(dur.Seconds()),
		Interrupted:    info.Interrupted,
		TLSUnverified:  info.TLSUnverified,
		Manifest:       info.Manifest,
		Runtime:        info.Runtime,
		Errors:         errorKinds(info.Errors),
		Config:         info.Config,
	}
}

// tasksOf is the task outcomes of the counters c: every outcome.
func tasksOf(c *[metrics.NumCounters]int64) Tasks {
	var t Tasks
	for i, oc := range outcomeCounters {
		*oc.field(&t) = c[oc.c]
		t.has |= 1 << i
	}
	return t
}

// inputOf is the input block of the counters c.
func inputOf(c *[metrics.NumCounters]int64) *Input {
	return &Input{
		InputRequiredSeen: c[metrics.InputRequired],
		Received:          c[metrics.Elicitations],
		Accepted:          c[metrics.ElicitAccepted],
		Declined:          c[metrics.ElicitDeclined],
		Cancelled:         c[metrics.ElicitCancelled],
	}
}

func requestsOf(t *metrics.Snapshot) map[string]RequestStats {
	out := map[string]RequestStats{}
	for m := range mcp.NumOps {
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
	f.measured.amplification = t.Counters[metrics.AmplificationAdvised] != 0
	f.measured.statusReads = t.Counters[metrics.TasksCreated] != 0
	if span > 0 {
		f.PollsPerSecond = round3(float64(t.Counters[metrics.Polls]) / span.Seconds())
		f.measured.pollsPerSecond = true
	}
	return f
}

// countersOf maps every counter by name; external leaves out the embedded server's.
func countersOf(c *[metrics.NumCounters]int64, external bool) map[string]int64 {
	out := make(map[string]int64, metrics.NumCounters)
	for i, v := range c {
		if ct := metrics.Counter(i); !external || !ct.ServerSide() {
			out[ct.Name()] = v
		}
	}
	return out
}

// gaugesOf maps every gauge by name; external leaves out the embedded server's.
func gaugesOf(t *metrics.Snapshot, external bool) map[string]Level {
	out := make(map[string]Level, metrics.NumGauges)
	for g := range metrics.NumGauges {
		if !external || !g.ServerSide() {
			out[g.Name()] = Level{Last: t.Gauges[g], Max: t.GaugeMax[g]}
		}
	}
	return out
}

// notMeasured names the counters and gauges an external target cannot report.
func notMeasured(external bool) []string {
	if !external {
		return nil
	}
	var out []string
	for c := range metrics.NumCounters {
		if c.ServerSide() {
			out = append(out, c.Name())
		}
	}
	for g := range metrics.NumGauges {
		if g.ServerSide() {
			out = append(out, g.Name())
		}
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
