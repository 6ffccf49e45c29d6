package results

import (
	"fmt"
	"strconv"
)

// Rollback is what a rollback drill showed (scenario `rollback:`, docs/ARCHITECTURE.md#rollback):
// the kill switch, what the clients did after it, what became of the tasks created before
// it, and, on the embedded server, the server's own count and its ledger's reconciliation.
// The caller fills it from the engine (loadgen.RollbackStats) and the server.
type Rollback struct {
	// Planned says when the scenario meant the switch to flip ("at 10s", "on an
	// abort_on_fail threshold's failure"), for a gate whose switch never flipped.
	Planned string
	// Trigger says what flipped the switch ("at 5s", or the abort_on_fail threshold that
	// failed); "" = it never flipped (the run ended first, or no threshold failed).
	Trigger string
	// AtS is when the switch flipped, in seconds from the run's start.
	AtS float64
	// CreatesAfter counts the task-augmented creates the clients sent after the switch, as
	// they went on the wire: a fleet that rolled back sends none. TasksAfter counts the
	// tasks a server returned for a plain call after the switch: a server that made a task
	// no client asked for.
	CreatesAfter, TasksAfter int64
	// ServerCreatesAfter counts the tasks the embedded server created after the switch; -1
	// = unknown (an external target).
	ServerCreatesAfter int64
	// PreSwitch counts the tasks created before the switch that were still running at it:
	// the watcher's. Of those, Settled ended with an outcome the client knows (completed,
	// failed, cancelled), Listed ended unknown with a place on the reconciliation list (its
	// idempotency key or task id, and why), and Unlisted ended without either: the server
	// stopped knowing them (tasks/get -32602 before a terminal status, as after a restart
	// that lost them), so nobody can say whether their work happened. UnlistedSample holds
	// some of their task ids.
	PreSwitch, Settled, Listed, Unlisted int64
	UnlistedSample                       []string
	// Cancelled counts the pre-switch tasks the watcher cancelled (rollback.cancel).
	Cancelled int64
	// DrainS is how long the watcher took, from the switch to the last pre-switch task's
	// end; -1 = not every one ended before the run did.
	DrainS float64
	// FallbackCalls counts the plain tools/call new work took after the switch, and
	// FallbackErrors those that failed as requests (an isError result is the tool's
	// outcome, not an error); Refused the new work refused by the client itself (a tool that
	// allows no plain call, or fallback refuse).
	FallbackCalls, FallbackErrors, Refused int64
	// Reconciliation is the embedded server's ledger on the operations in flight at the
	// switch; nil on an external target.
	Reconciliation *Reconciliation
}

// Reconciliation is the embedded server's reconciliation of the domain operations in flight
// at the switch: applied, not applied, unknown, each with its keys (a sample), and the tasks
// it lost after the switch.
type Reconciliation struct {
	InFlight   int
	Applied    []ReconciledOp
	NotApplied []ReconciledOp
	Unknown    []ReconciledOp
	// AppliedN, NotAppliedN and UnknownN are the counts when the lists above are samples of
	// them (a merge keeps the shards' samples); 0 = the lists are whole.
	AppliedN, NotAppliedN, UnknownN int
	TasksLost                       int64
}

// counts returns how many operations are applied, not applied and unknown.
func (r *Reconciliation) counts() (applied, notApplied, unknown int) {
	return max(len(r.Applied), r.AppliedN), max(len(r.NotApplied), r.NotAppliedN), max(len(r.Unknown), r.UnknownN)
}

// ReconciledOp is one operation the server reconciled: its task, idempotency key ("" when
// the call carried none), tenant and the task's status ("lost" when the server forgot it).
type ReconciledOp struct {
	TaskID string `json:"task_id"`
	Key    string `json:"idempotency_key,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	Status string `json:"status"`
}

// GateRollback is the rollback gate's name.
const GateRollback = "rollback"

// rollbackSample bounds the operations listed per reconciliation class.
const rollbackSample = 20

// rollbackGate is the rollback gate:
//
//	not evaluated  without a rollback drill, or when its switch never flipped (planned
//	               says when it was to)
//	evaluated      pass = creates_after == 0 && server_creates_after <= 0
//	                      && tasks_after_plain_call == 0
//	                      && pre_switch_unlisted == 0 && pre_switch > 0
//	                      && (fallback_calls == 0 || fallback_errors_rate <= error budget)
//
// A drill whose switch found no task in flight rehearsed nothing of the watcher: it fails,
// as nothing passes on missing evidence. The evidence holds the watcher's time to drain,
// the tasks the server lost, and on the embedded server its ledger's reconciliation.
func rollbackGate(info RunInfo) Gate[RollbackEvidence] {
	r := info.Rollback
	if r == nil {
		return Gate[RollbackEvidence]{Pass: true, Evidence: RollbackEvidence{
			Reason: "the scenario rehearses no rollback (rollback: {at: D} or {on_abort: true})"}}
	}
	if r.Trigger == "" {
		return Gate[RollbackEvidence]{Pass: true, Evidence: RollbackEvidence{Planned: r.Planned,
			Reason: "the switch never flipped (planned " + r.Planned + "): the run ended first, or no abort_on_fail threshold failed"}}
	}
	ev := RollbackEvidence{
		Trigger:             r.Trigger,
		SwitchedAtS:         round3(r.AtS),
		CreatesAfter:        r.CreatesAfter,
		TasksAfterPlainCall: r.TasksAfter,
		ServerCreatesAfter:  knownCount(r.ServerCreatesAfter),
		PreSwitch:           r.PreSwitch,
		PreSwitchSettled:    r.Settled,
		PreSwitchListed:     r.Listed,
		PreSwitchUnlisted:   r.Unlisted,
		UnlistedSample:      nonNilSlice(r.UnlistedSample),
		WatcherCancelled:    r.Cancelled,
		FallbackCalls:       r.FallbackCalls,
		FallbackErrors:      r.FallbackErrors,
		Refused:             r.Refused,
	}
	if r.DrainS >= 0 {
		ev.DrainS = measuredFigure(round3(r.DrainS), false)
	} else {
		note(&ev.Notes, "drain_s", "not every pre-switch task ended before the run did")
	}
	if r.ServerCreatesAfter < 0 {
		note(&ev.Notes, "server_creates_after", "not observable on an external target: only the embedded server counts what it created")
	}
	if rc := r.Reconciliation; rc != nil {
		applied, notApplied, unknown := rc.counts()
		lost := rc.TasksLost
		ev.TasksLost = &lost
		ev.Reconciliation = &RollbackReconciliation{
			InFlight:         rc.InFlight,
			Applied:          applied,
			NotApplied:       notApplied,
			Unknown:          unknown,
			AppliedSample:    sample(rc.Applied),
			NotAppliedSample: sample(rc.NotApplied),
			UnknownSample:    sample(rc.Unknown),
		}
	} else {
		note(&ev.Notes, "tasks_lost", "not observable on an external target: the reconciliation is the embedded server's ledger")
	}
	var failures []string
	if r.CreatesAfter > 0 {
		failures = append(failures, "the clients sent task-augmented creates after the switch")
	}
	if r.ServerCreatesAfter > 0 {
		failures = append(failures, "the embedded server created tasks after the switch")
	}
	if r.TasksAfter > 0 {
		failures = append(failures, "the server made tasks of plain calls after the switch (tasks_after_plain_call)")
	}
	if r.PreSwitch == 0 {
		failures = append(failures, "no task was in flight at the switch: the drill rehearsed no watcher")
	}
	if r.Unlisted > 0 {
		failures = append(failures, "tasks running at the switch vanished before their ttl (tasks/get -32602; the clients count them lost, and the recovery gate lists them for reconciliation): the server lost them, and whether their work happened is unknown")
	}
	if r.FallbackCalls == 0 {
		note(&ev.Notes, "fallback_errors_rate", fmt.Sprintf("no plain call after the switch: the fallback path was not exercised (refused: %d)", r.Refused))
	} else {
		rate := 100 * float64(r.FallbackErrors) / float64(r.FallbackCalls)
		ev.FallbackErrorsRate = measuredFigure(round3(rate), false)
		if b := info.ErrorBudget; b != nil && rate > *b {
			failures = append(failures, "the fallback path's error rate exceeds the error budget")
		}
	}
	ev.Failures = failures
	return Gate[RollbackEvidence]{Pass: len(failures) == 0, Evaluated: true, Evidence: ev}
}

// sample is at most rollbackSample of ops, never nil.
func sample(ops []ReconciledOp) []ReconciledOp {
	if ops == nil {
		return []ReconciledOp{}
	}
	return ops[:min(len(ops), rollbackSample)]
}

// rollbackView is the report's section of a rollback drill: when the switch flipped and
// what its gate counted, as facts (a failing one marked).
type rollbackView struct {
	Switch string
	Facts  []fact
}

// rollbackViewOf is the section of the rollback gate g; nil when it was not evaluated.
func rollbackViewOf(g Gate[RollbackEvidence]) *rollbackView {
	if !g.Evaluated {
		return nil
	}
	e := &g.Evidence
	count := func(n int64) string { return strconv.FormatInt(n, 10) }
	known := func(p *int64) string {
		if p == nil {
			return "not measured"
		}
		return count(*p)
	}
	decimal := func(p *float64) string {
		if p == nil {
			return "not measured"
		}
		return num(*p)
	}
	failIf := func(bad bool) string {
		if bad {
			return "fail"
		}
		return ""
	}
	v := &rollbackView{Switch: fmt.Sprintf("flipped %s s into the run (%s)", num(e.SwitchedAtS), e.Trigger)}
	add := func(label, value, class string) { v.Facts = append(v.Facts, fact{K: label, V: value, Class: class}) }
	add("tasks running at the switch", count(e.PreSwitch), "")
	add("of them, ended with a known outcome", count(e.PreSwitchSettled), "")
	add("of them, unknown and on the reconciliation list", count(e.PreSwitchListed), "")
	add("of them, lost: unknown and on no list", count(e.PreSwitchUnlisted), failIf(e.PreSwitchUnlisted > 0))
	add("cancelled by the watcher", count(e.WatcherCancelled), "")
	add("watcher's time to drain, s", decimal(e.DrainS), "")
	add("task-augmented creates sent after the switch", count(e.CreatesAfter), failIf(e.CreatesAfter > 0))
	add("tasks a server made of plain calls after it", count(e.TasksAfterPlainCall), failIf(e.TasksAfterPlainCall > 0))
	add("tasks the embedded server created after it", known(e.ServerCreatesAfter), failIf(e.ServerCreatesAfter != nil && *e.ServerCreatesAfter > 0))
	add("plain calls after the switch (the fallback)", count(e.FallbackCalls), "")
	add("their error rate, %", decimal(e.FallbackErrorsRate), "")
	add("new work refused (no plain call to fall back to)", count(e.Refused), "")
	add("task records the server lost after the switch", known(e.TasksLost), "")
	if rc := e.Reconciliation; rc != nil {
		add("ledger: in flight at the switch, applied / not applied / unknown",
			fmt.Sprintf("%d: %d / %d / %d", rc.InFlight, rc.Applied, rc.NotApplied, rc.Unknown), "")
	}
	return v
}
