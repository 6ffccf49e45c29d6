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
//	recovery      not evaluated
//	cancellation  not evaluated; evidence holds the cancelled count and cancel_latency
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

	recovery := notEvaluated("recovery checks (resume by known taskId, no re-sent tools/call) are not implemented yet")
	recovery.Evidence["reconnects"] = s.Counters[metrics.Reconnects.Name()]
	recovery.Evidence["tasks_unknown"] = s.Tasks.Unknown

	cancellation := notEvaluated("cancellation checks (cancelled tasks end terminal cancelled) are not implemented yet")
	cl := s.Metrics[metrics.CancelLatency.Name()]
	cancellation.Evidence["tasks_cancelled"] = s.Tasks.Cancelled
	cancellation.Evidence["cancel_latency_count"] = cl.Count
	cancellation.Evidence["cancel_latency_p50_ms"] = cl.P50
	cancellation.Evidence["cancel_latency_p99_ms"] = cl.P99

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
