package results

import (
	"fmt"
	"maps"
	"time"

	"github.com/tasksim/tasksim/metrics"
)

// Gates are the verdicts of the task contract (docs/RULES.md).
type Gates struct {
	Hard          Gate[HardEvidence]          `json:"hard"`
	Recovery      Gate[RecoveryEvidence]      `json:"recovery"`
	Cancellation  Gate[CancellationEvidence]  `json:"cancellation"`
	Compatibility Gate[CompatibilityEvidence] `json:"compatibility"`
	Contract      Gate[ContractEvidence]      `json:"contract"`
	Rollback      Gate[RollbackEvidence]      `json:"rollback"`
}

// Gate is one gate's verdict, E its evidence (evidence.go). A gate that was not evaluated
// has Pass true and Evaluated false, and its evidence says why ("reason") and what is known
// anyway; it never fails a run. (The summary of a run that could not be made, verdict
// "error", has every gate Pass false: nothing was shown to pass.) Evidence is never null.
type Gate[E any] struct {
	Pass      bool `json:"pass"`
	Evaluated bool `json:"evaluated"`
	Evidence  E    `json:"evidence"`
}

// The gate names, as summary.json keys them.
const (
	GateHard          = "hard"
	GateRecovery      = "recovery"
	GateCancellation  = "cancellation"
	GateCompatibility = "compatibility"
	GateContract      = "contract"
)

// namedGate is a gate with its name, its evidence as plain JSON values (Gate.EvidenceMap),
// for walking the gates in order whatever their evidence.
type namedGate struct {
	name            string
	pass, evaluated bool
	evidence        map[string]any
}

// viewOf is the gate g named name, for walking.
func viewOf[E any](name string, g *Gate[E]) namedGate {
	return namedGate{name: name, pass: g.Pass, evaluated: g.Evaluated, evidence: g.EvidenceMap()}
}

// list returns the gates in summary order.
func (g *Gates) list() []namedGate {
	return []namedGate{
		viewOf(GateHard, &g.Hard),
		viewOf(GateRecovery, &g.Recovery),
		viewOf(GateCancellation, &g.Cancellation),
		viewOf(GateCompatibility, &g.Compatibility),
		viewOf(GateContract, &g.Contract),
		viewOf(GateRollback, &g.Rollback),
	}
}

// reasonOnlyGates are gates not evaluated, each with the evidence reason and nothing else.
func reasonOnlyGates(reason string) Gates {
	return Gates{
		Hard:          Gate[HardEvidence]{Evidence: HardEvidence{Reason: reason}},
		Recovery:      Gate[RecoveryEvidence]{Evidence: RecoveryEvidence{Reason: reason}},
		Cancellation:  Gate[CancellationEvidence]{Evidence: CancellationEvidence{Reason: reason}},
		Compatibility: Gate[CompatibilityEvidence]{Evidence: CompatibilityEvidence{Reason: reason}},
		Contract:      Gate[ContractEvidence]{Evidence: ContractEvidence{Reason: reason}},
		Rollback:      Gate[RollbackEvidence]{Evidence: RollbackEvidence{Reason: reason}},
	}
}

// buildGates evaluates the gates that can be evaluated from what s and info hold.
//
//	hard          see hardGate
//	recovery      evaluated when faults were injected, a session was lost, or a task was
//	              lost: pass = tasks_lost == 0 (tasks gone before their ttl: the server
//	              lost them) and second_creates == 0 (a tools/call repeating a key the
//	              server already had; null on an external target, listed in "not_checked")
//	              and every task created ended exactly once: completed + failed + cancelled
//	              + expired + lost + results_lost + unknown-with-an-id == created
//	              (tasks_accounted). The unknown ones, the lost ones (reason "lost") and
//	              those whose result was lost (reason "result_lost") are the
//	              reconciliation list, in the evidence by reason with sample keys.
//	cancellation  evaluated when a cancel was sent: pass = cancels_broken == 0 (an accepted
//	              cancel whose task did not stay terminal cancelled when read again: R14, R28)
//	              and cancels_refused == 0 (a cancel refused -32602 as late while the task
//	              was still working: R26, R27) and cancels_undone == 0 (a late cancel that
//	              turned a completed or failed task cancelled: R26, R14) and
//	              cancels_ignored_pct <= cancels_ignored_limit_pct, where
//	              cancels_ignored_pct = 100 * cancels_ignored / cancels_sent (cancels
//	              accepted while the task had work left, which then ended completed or
//	              failed) and the limit is 0% in 2025-11-25 (R27: a valid cancel is carried
//	              out) and IgnoredCancelLimit2026 in 2026-07-28 (E60 allows a server to go on
//	              working; ignored_rule says so).
//	              Effects applied anyway (effects_after_cancel) are reported,
//	              not failed: a cancel is a request, not a rollback. Tasks cancelled by
//	              someone other than their own client (cancelled_unrequested) are a finding.
//	compatibility see compatibilityGate
//	contract      see contractGate
//	rollback      see rollbackGate
//
// A figure a gate could not measure is null in its evidence, named in "not_checked", and
// "notes" says why.
func buildGates(info RunInfo, s *Summary) Gates {
	hard := hardGate(info, s)

	recovery := recoveryGate(info, s)
	cancellation := cancellationGate(info, s)

	compat := compatibilityGate(info, s)
	contract := contractGate(info.Contract)

	return Gates{Hard: hard, Recovery: recovery, Cancellation: cancellation, Compatibility: compat, Contract: contract,
		Rollback: rollbackGate(info)}
}

// Security is what the tenant isolation probes and the secret detector found. Its
// maps and samples are marshalled as given; the caller keeps tokens and secrets out of them.
type Security struct {
	// Probes says isolation probes ran: cross_tenant_leaks was checked.
	Probes bool
	// ProbesSent and Inconclusive count probe requests, and those that got no reply that
	// proves anything (transport errors, 429, 5xx), by probe kind.
	ProbesSent, Inconclusive map[string]int64
	// Leaks counts cross-tenant leaks by probe kind (get, result, cancel, list, guess, meta,
	// session, revoked); LeakSample is their evidence (kind, shortened task id, detail).
	Leaks      map[string]int64
	LeakSample any
	// Touched lists, shortened, the other tenants' tasks a probe managed to cancel.
	Touched []string
	// Canaries says secrets were planted: planted_secrets was checked.
	Canaries bool
	// Secrets counts planted secrets seen where they must not be, by where ("statusMessage
	// of tasks/get", "summary.json"); SecretSample is their evidence (never the secret).
	Secrets      map[string]int64
	SecretSample any
	// Injections counts injection canaries that reached clients, by where: findings.
	Injections map[string]int64
}

// hardGate is the hard gate:
//
//	pass = invalid_transitions == 0 && duplicate_effects == 0
//	       && cross_tenant_leaks == 0 && planted_secrets == 0
//
// A figure that could not be measured is listed in "not_checked" and passes:
// duplicate_effects (null: an external target), cross_tenant_leaks without probes,
// planted_secrets without canaries (secrets found in output files or error messages count
// even then: a token is always a secret). Injection canaries that reached a client are
// findings ("injection_findings"), not failures.
func hardGate(info RunInfo, s *Summary) Gate[HardEvidence] {
	invalid := s.Counters[metrics.InvalidTransitions.Name()]
	var notChecked []string
	hard := Gate[HardEvidence]{Pass: invalid == 0, Evaluated: true, Evidence: HardEvidence{
		InvalidTransitions:       invalid,
		InvalidTransitionsDetail: info.InvalidTransitionSample,
		DuplicateEffects:         knownCount(info.DuplicateEffects),
	}}
	ev := &hard.Evidence
	if info.DuplicateEffects < 0 {
		notChecked = append(notChecked, "duplicate_effects")
		note(&ev.Notes, "duplicate_effects", ledgerNote)
	} else {
		if info.DuplicateEffects > 0 {
			hard.Pass = false
		}
		if w := info.DuplicateWindow; w > 0 {
			ws := w.Seconds()
			ev.DuplicateWindowS = &ws
		}
	}
	sec := info.Security
	if sec == nil {
		sec = &Security{}
	}
	leaks := sum(sec.Leaks)
	if sec.Probes || leaks > 0 {
		ev.CrossTenantLeaks = &leaks
		ev.LeaksByKind = nonNil(sec.Leaks)
		ev.ProbesSent = nonNil(sec.ProbesSent)
		ev.ProbesInconclusive = nonNil(sec.Inconclusive)
		ev.LeakSample = sec.LeakSample
		if len(sec.Touched) > 0 {
			ev.TouchedTasks = sec.Touched
		}
	}
	if !sec.Probes {
		notChecked = append(notChecked, "cross_tenant_leaks")
	}
	secrets := sum(sec.Secrets)
	if secrets > 0 || sec.Canaries {
		ev.PlantedSecrets = &secrets
		ev.SecretsByWhere = nonNil(sec.Secrets)
		ev.SecretSample = sec.SecretSample
	}
	if !sec.Canaries {
		notChecked = append(notChecked, "planted_secrets")
	}
	if leaks > 0 || secrets > 0 {
		hard.Pass = false
	}
	if len(sec.Injections) > 0 {
		ev.InjectionFindings = sec.Injections
	}
	ev.NotChecked = nonNilSlice(notChecked)
	return hard
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// note records in *notes (an evidence's "notes") why the figure name is null or not
// checked.
func note(notes *map[string]string, name, why string) {
	if *notes == nil {
		*notes = map[string]string{}
	}
	(*notes)[name] = why
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// trust applies the health check of the load generator (docs/METRICS.md): the run is not
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
func recoveryGate(info RunInfo, s *Summary) Gate[RecoveryEvidence] {
	c := s.Counters
	list := maps.Clone(nonNil(info.Unknown))
	if n := s.Tasks.ResultLost; n > 0 {
		list[reasonResultLost] = n
	}
	if n := s.Tasks.Lost; n > 0 {
		list[reasonLost] = n
	}
	ev := RecoveryEvidence{
		Reconnects:                    c[metrics.Reconnects.Name()],
		ResumedObservations:           c[metrics.Resumed.Name()],
		Reconciled:                    c[metrics.Reconciled.Name()],
		RetriedCreates:                c[metrics.RetriedCreates.Name()],
		ResultsLost:                   s.Tasks.ResultLost,
		TasksUnknown:                  s.Tasks.Unknown,
		TasksLost:                     s.Tasks.Lost,
		ReconciliationList:            list,
		ReconciliationSample:          info.UnknownSample,
		FaultsInjected:                nonNil(info.Faults),
		SecondCreates:                 knownCount(info.SecondCreates),
		TasksLostAfterReconnect:       info.LostAfterReconnect,
		TasksLostAfterReconnectDetail: info.LostAfterReconnectSample,
	}
	if info.SecondCreates < 0 {
		note(&ev.Notes, "second_creates", ledgerNote)
	}
	if !info.FaultsOn && c[metrics.Reconnects.Name()] == 0 && s.Tasks.Lost == 0 {
		reason := "no fault was injected and no session was lost"
		if n := sum(list); n > 0 {
			reason += fmt.Sprintf("; still, %d tasks are on the reconciliation list, their outcome unknown to the caller (reconciliation_list)", n)
		}
		ev.Reason = reason
		return Gate[RecoveryEvidence]{Pass: true, Evidence: ev}
	}
	pass := info.SecondCreates <= 0 && s.Tasks.Lost == 0
	if n := s.Tasks.Lost; n > 0 {
		ev.Failures = append(ev.Failures, fmt.Sprintf("%d tasks vanished (-32602) before their granted ttl ran out and before a terminal status was seen: "+
			"the server lost them (a restart without durable storage, a purge), and whether their work happened is unknown", n))
	}
	var notChecked []string
	if info.SecondCreates < 0 {
		notChecked = append(notChecked, "second_creates")
	}
	// Every task whose id the client knew ends with exactly one outcome: known, or unknown
	// and on the reconciliation list. Outcomes of synchronous calls (no task) are left out.
	t := s.Tasks
	if info.UnknownCreated >= 0 && t.Created > 0 {
		ended := t.Completed + t.Failed + t.Cancelled + t.Expired + t.Lost + t.ResultLost + info.UnknownCreated - c[metrics.SyncCalls.Name()]
		accounted := ended == t.Created
		ev.TasksAccounted = &accounted
		if !accounted {
			ev.Accounting = fmt.Sprintf("%d tasks created, %d ended (completed, failed, cancelled, expired, lost, result lost or unknown)", t.Created, ended)
			pass = false
		}
	} else {
		notChecked = append(notChecked, "tasks_accounted")
	}
	ev.NotChecked = notChecked
	if info.LostAfterReconnect > 0 {
		ev.Finding = "tasks known to the client were gone (-32602) right after it reconnected: the server binds tasks to the session or lost them (the spec binds them to the authorization context, R52)"
	}
	return Gate[RecoveryEvidence]{Pass: pass, Evaluated: true, Evidence: ev}
}

// reasonResultLost is the reconciliation list's reason for a task whose result was lost
// (loadgen.ReasonResultLost), reasonLost for a task lost before its ttl (loadgen.ReasonLost).
const (
	reasonResultLost = "result_lost"
	reasonLost       = "lost"
)

// cancellationGate is the cancellation gate (see buildGates). Its evidence splits the
// tasks cancelled by who cancelled them:
//
//	tasks_cancelled = cancelled_by_own_cancel + cancelled_unrequested
//
// the second being tasks whose own client sent no tasks/cancel: a task is cancelled only
// through tasks/cancel, so someone else sent one (another client of the tenant, or another
// tenant: the hard gate's touched_tasks).
func cancellationGate(info RunInfo, s *Summary) Gate[CancellationEvidence] {
	c := s.Counters
	cl := s.Metrics[metrics.CancelLatency.Name()]
	sent, broken := c[metrics.CancelsSent.Name()], c[metrics.CancelsBroken.Name()]
	refused := c[metrics.CancelsRefused.Name()]
	unrequested := c[metrics.CancelledUnrequested.Name()]
	ignored, undone := c[metrics.CancelsIgnored.Name()], c[metrics.CancelsUndone.Name()]
	limit, rule := ignoredCancelLimit(s.Protocol)
	ev := CancellationEvidence{
		CancelsSent:          sent,
		CancelsAcked:         c[metrics.CancelsAcked.Name()],
		CancelsLate:          c[metrics.CancelsLate.Name()],
		CancelsBroken:        broken,
		CancelsRefused:       refused,
		CancelsIgnored:       ignored,
		CancelsIgnoredLimit:  limit,
		CancelsUndone:        undone,
		TasksCancelled:       s.Tasks.Cancelled,
		CancelledByOwnCancel: s.Tasks.Cancelled - unrequested,
		CancelledUnrequested: unrequested,
		EffectsAfterCancel:   knownCount(info.EffectsAfterCancel),
		CancelLatencyCount:   cl.Count,
		CancelLatencyP50Ms:   measuredFigure(cl.P50, cl.Count == 0),
		CancelLatencyP99Ms:   measuredFigure(cl.P99, cl.Count == 0),
	}
	if info.EffectsAfterCancel < 0 {
		note(&ev.Notes, "effects_after_cancel", ledgerNote)
	}
	if cl.Count == 0 {
		note(&ev.Notes, "cancel_latency", "no cancel was acknowledged with the task cancelled: nothing to measure")
	}
	if unrequested > 0 {
		ev.Finding = fmt.Sprintf("%d tasks were cancelled although their own client sent no tasks/cancel: "+
			"someone else cancelled them (another client of the tenant, or another tenant: see the hard gate's touched_tasks)", unrequested)
	}
	if sent == 0 {
		reason := "this run's clients sent no tasks/cancel"
		if unrequested > 0 {
			reason += fmt.Sprintf("; the %d tasks cancelled were cancelled by someone else (cancelled_unrequested)", unrequested)
		}
		ev.Reason = reason
		return Gate[CancellationEvidence]{Pass: true, Evidence: ev}
	}
	if ignored > 0 {
		ev.IgnoredRule = rule
	}
	ev.CancelsIgnoredShare = round3(100 * float64(ignored) / float64(sent))
	var failures []string
	if broken > 0 {
		failures = append(failures, fmt.Sprintf("%d accepted cancels did not leave their task cancelled (cancels_broken: R14, R28)", broken))
	}
	if refused > 0 {
		failures = append(failures, fmt.Sprintf("%d cancels were refused -32602 while their task was working (cancels_refused: R26, R27)", refused))
	}
	if undone > 0 {
		failures = append(failures, fmt.Sprintf("%d late cancels turned a task seen completed or failed into cancelled (cancels_undone: R26, R14)", undone))
	}
	if ev.CancelsIgnoredShare > limit {
		failures = append(failures, fmt.Sprintf("%d of %d cancels (%s%%) were accepted while the task had work left and the task went on to end completed or failed (cancels_ignored), above the %s%% allowed",
			ignored, sent, num(ev.CancelsIgnoredShare), num(limit)))
	}
	ev.Failures = failures
	return Gate[CancellationEvidence]{Pass: len(failures) == 0, Evaluated: true, Evidence: ev}
}

// IgnoredCancelLimit2026 is the share of cancels (in % of cancels sent) a 2026-07-28 server
// may ignore before the cancellation gate fails (docs/METRICS.md#cancels_ignored): E60 lets
// a server go on working after it acknowledged a cancel, so some are allowed; a server that
// ignores more leaves its callers paying for work they called off.
const IgnoredCancelLimit2026 = 10.0

// ignoredCancelLimit is the share of ignored cancels the gate allows in protocol, and what
// the era's spec says of them.
func ignoredCancelLimit(protocol string) (limit float64, rule string) {
	if protocol == protocolModern {
		return IgnoredCancelLimit2026, fmt.Sprintf("E60 allows it: a 2026-07-28 server only signals intent, and MAY go on working and end the task completed or failed; the gate allows up to %s%% of the cancels sent", num(IgnoredCancelLimit2026))
	}
	return 0, "R27 forbids it: a 2025-11-25 server MUST make the task cancelled before it replies to a valid cancel"
}

// protocolModern is the protocol version of 2026-07-28 (client.ProtocolModern).
const protocolModern = "2026-07-28"

// nonNil keeps a nil map out of the evidence as {} rather than null.
func nonNil[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}
