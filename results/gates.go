package results

import (
	"fmt"
	"time"

	"github.com/tasksim/tasksim/metrics"
)

// Gates are the verdicts of the task contract (DESIGN.md section 5).
type Gates struct {
	Hard          Gate `json:"hard"`
	Recovery      Gate `json:"recovery"`
	Cancellation  Gate `json:"cancellation"`
	Compatibility Gate `json:"compatibility"`
}

// Gate is one gate's verdict. A gate that was not evaluated has Pass true and Evaluated
// false, and its evidence says why ("reason") and what is known anyway; it never fails a
// run. Evidence is never null.
type Gate struct {
	Pass      bool           `json:"pass"`
	Evaluated bool           `json:"evaluated"`
	Evidence  map[string]any `json:"evidence"`
}

// The gate names, as summary.json and RunInfo.Evidence key them.
const (
	GateHard          = "hard"
	GateRecovery      = "recovery"
	GateCancellation  = "cancellation"
	GateCompatibility = "compatibility"
)

// namedGate is a gate with its name, for walking the gates in order.
type namedGate struct {
	name string
	gate *Gate
}

// list returns the gates in summary order.
func (g *Gates) list() []namedGate {
	return []namedGate{
		{GateHard, &g.Hard},
		{GateRecovery, &g.Recovery},
		{GateCancellation, &g.Cancellation},
		{GateCompatibility, &g.Compatibility},
	}
}

// buildGates evaluates the gates that can be evaluated from what s and info hold.
//
//	hard          pass = invalid_transitions == 0 && duplicate_effects == 0
//	              (duplicate_effects -1 = unknown: not checked, listed in "not_checked";
//	              cross-tenant leaks and planted secrets are not checked yet)
//	recovery      evaluated when faults were injected or a session was lost:
//	              pass = second_creates == 0 (a tools/call repeating a key the server already
//	              had; -1 = unknown on an external target, listed in "not_checked"). Every task
//	              ends with a known outcome or on the reconciliation list (by construction:
//	              the list is in the evidence, by reason, with sample keys).
//	cancellation  evaluated when a cancel was sent: pass = cancels_broken == 0 (an accepted
//	              cancel whose task did not stay terminal cancelled) and tasks_cancelled >=
//	              cancels_acked. Effects applied anyway (effects_after_cancel) are reported,
//	              not failed: a cancel is a request, not a rollback.
//	compatibility not evaluated
func buildGates(info RunInfo, s *Summary) Gates {
	invalid := s.Counters[metrics.InvalidTransitions.Name()]
	notChecked := []string{"cross_tenant_leaks", "planted_secrets"}
	hard := Gate{Pass: invalid == 0, Evaluated: true, Evidence: map[string]any{
		"invalid_transitions": invalid,
		"duplicate_effects":   info.DuplicateEffects,
	}}
	if info.DuplicateEffects < 0 {
		notChecked = append(notChecked, "duplicate_effects")
	} else if info.DuplicateEffects > 0 {
		hard.Pass = false
	}
	hard.Evidence["not_checked"] = notChecked

	recovery := recoveryGate(info, s)
	cancellation := cancellationGate(info, s)

	compat := notEvaluated("compatibility checks (no task augmentation toward a peer without the tasks capability) are not implemented yet")

	g := Gates{Hard: hard, Recovery: recovery, Cancellation: cancellation, Compatibility: compat}
	for _, ng := range g.list() {
		mergeEvidence(ng.gate.Evidence, info.Evidence[ng.name])
	}
	return g
}

// notEvaluated is a gate that passes only in the sense that it was not evaluated.
func notEvaluated(reason string) Gate {
	return Gate{Pass: true, Evidence: map[string]any{"reason": reason}}
}

// mergeEvidence adds the caller's evidence extra to ev (see RunInfo.Evidence).
func mergeEvidence(ev map[string]any, extra any) {
	switch x := extra.(type) {
	case nil:
	case map[string]any:
		for k, v := range x {
			if _, taken := ev[k]; taken {
				k += "_detail"
			}
			ev[k] = v
		}
	default:
		ev["detail"] = x
	}
}

// trust applies DESIGN.md section 4's health check of the load generator: the run is not
// trustworthy when schedule_lag p99 > 10% of the poll interval.
func trust(lag metrics.Stat, poll time.Duration) (ok bool, note string) {
	if poll <= 0 {
		return true, "not checked: poll interval unknown"
	}
	if lag.Count == 0 {
		return true, "not checked: no poll was scheduled"
	}
	limit := float64(poll) / float64(time.Millisecond) / 10
	if lag.P99 > limit {
		return false, fmt.Sprintf("schedule_lag p99 %sms exceeds 10%% of the %v poll interval (%sms): the load generator fell behind its own schedule",
			num(lag.P99), poll, num(round3(limit)))
	}
	return true, ""
}

// recoveryGate is the recovery gate (see buildGates).
func recoveryGate(info RunInfo, s *Summary) Gate {
	c := s.Counters
	ev := map[string]any{
		"reconnects":                 c[metrics.Reconnects.Name()],
		"resumed_observations":       c[metrics.Resumed.Name()],
		"reconciled":                 c[metrics.Reconciled.Name()],
		"retried_creates":            c[metrics.RetriedCreates.Name()],
		"results_lost":               c[metrics.ResultsLost.Name()],
		"tasks_unknown":              s.Tasks.Unknown,
		"reconciliation_list":        nonNil(info.Unknown),
		"faults_injected":            nonNil(info.Faults),
		"second_creates":             info.SecondCreates,
		"tasks_lost_after_reconnect": info.LostAfterReconnect,
	}
	if info.UnknownSample != nil {
		ev["reconciliation_sample"] = info.UnknownSample
	}
	if !info.FaultsOn && c[metrics.Reconnects.Name()] == 0 {
		ev["reason"] = "no fault was injected and no session was lost"
		return Gate{Pass: true, Evidence: ev}
	}
	g := Gate{Pass: true, Evaluated: true, Evidence: ev}
	if info.SecondCreates > 0 {
		g.Pass = false
	}
	if info.SecondCreates < 0 {
		ev["not_checked"] = []string{"second_creates"}
	}
	if info.LostAfterReconnect > 0 {
		ev["finding"] = "tasks known to the client were gone (-32602) right after it reconnected: the server binds tasks to the session or lost them (the spec binds them to the authorization context, R52)"
	}
	return g
}

// cancellationGate is the cancellation gate (see buildGates).
func cancellationGate(info RunInfo, s *Summary) Gate {
	c := s.Counters
	cl := s.Metrics[metrics.CancelLatency.Name()]
	sent, acked, broken := c[metrics.CancelsSent.Name()], c[metrics.CancelsAcked.Name()], c[metrics.CancelsBroken.Name()]
	ev := map[string]any{
		"cancels_sent":          sent,
		"cancels_acked":         acked,
		"cancels_late":          c[metrics.CancelsLate.Name()],
		"cancels_broken":        broken,
		"tasks_cancelled":       s.Tasks.Cancelled,
		"effects_after_cancel":  info.EffectsAfterCancel,
		"cancel_latency_count":  cl.Count,
		"cancel_latency_p50_ms": cl.P50,
		"cancel_latency_p99_ms": cl.P99,
	}
	if sent == 0 {
		ev["reason"] = "no task was cancelled"
		return Gate{Pass: true, Evidence: ev}
	}
	return Gate{Pass: broken == 0 && s.Tasks.Cancelled >= acked, Evaluated: true, Evidence: ev}
}

// nonNil keeps a nil map out of the evidence as {} rather than null.
func nonNil[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}
