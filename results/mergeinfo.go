package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// mergedRunInfo is what the shards' summaries say of the whole beyond its measurements:
// the run's identity (the first shard's), the thresholds it is judged by (the first
// shard's: one scenario hash, one list), and the gates' inputs rebuilt from each shard's
// gate evidence, counts summed and samples concatenated.
func mergedRunInfo(runs []shardRun) RunInfo {
	s0 := runs[0].sum
	ri := RunInfo{
		Version: s0.TasksimVersion, Scenario: s0.Scenario, Seed: s0.Seed, Protocol: s0.Protocol,
		Target: s0.Target, Manifest: s0.Manifest, Config: s0.Config.whole(s0.Shard.ABSide != ""),
		PollInterval:       time.Duration(s0.Shard.PollIntervalMS * float64(time.Millisecond)),
		DuplicateEffects:   0,
		SecondCreates:      0,
		EffectsAfterCancel: 0,
		UnknownCreated:     0,
	}
	ri.Thresholds, ri.ErrorBudget = judgedBy(s0.Thresholds)
	ri.SLOs = slosOf(s0.Thresholds)
	var (
		invalid, lostIDs, samples []any
		runtimes                  []*Runtime
		servers                   map[string]*ServerStats
		client                    *Client
		aborted, errs             []string
		kinds                     []ErrorKind
	)
	sec := &Security{}
	var cut int64 // the run_stopped tasks of the shards a signal stopped (RunInfo.cut)
	for _, r := range runs {
		s, idx := r.sum, r.sum.Shard.Index
		if s.Interrupted {
			cut += s.Gates.Recovery.Evidence.ReconciliationList[reasonStopped]
		}
		label := "shard " + strconv.Itoa(idx)
		runtimes = append(runtimes, s.Runtime.Run)
		if s.Server.Run != nil {
			if servers == nil {
				servers = map[string]*ServerStats{}
			}
			servers["shard_"+strconv.Itoa(idx)] = s.Server.Run
		}
		client = addClient(client, s.Client)
		ri.Interrupted = ri.Interrupted || s.Interrupted
		if s.Aborted != "" {
			aborted = append(aborted, label+": "+s.Aborted)
		}
		if s.Verdict == VerdictError {
			errs = append(errs, fmt.Sprintf("%s (%s): %s", label, r.dir, s.Error))
		}
		kinds = append(kinds, s.Errors...)

		inv, smp, lost := addShardGates(&ri, sec, s)
		invalid, samples, lostIDs = append(invalid, inv...), append(samples, smp...), append(lostIDs, lost...)
		if s.Contract != nil && (ri.Contract == nil || (ri.Contract.Verdict == "pass" && s.Contract.Verdict != "pass")) {
			ri.Contract = s.Contract // the first failing shard's suite, else the first shard's
		}
	}
	delete(ri.Unknown, reasonResultLost) // Build adds it back from the summed results_lost
	ri.cut = &cut
	ri.Runtime = Runtimes{Shards: runtimes}
	ri.Client, ri.Server = client, Server{Shards: servers}
	if len(samples) > 0 {
		ri.UnknownSample = samples
	}
	if sec.Probes || sec.Canaries || len(sec.Leaks)+len(sec.Secrets)+len(sec.Injections) > 0 {
		ri.Security = sec
	}
	if invalid == nil {
		invalid = []any{} // a sample of none is [], as a run writes it
	}
	ri.InvalidTransitionSample = invalid
	if lostIDs != nil {
		ri.LostAfterReconnectSample = lostIDs
	}
	ri.Aborted = strings.Join(aborted, "; ")
	if len(errs) > 0 {
		ri.Error = "a shard ended in an error: " + strings.Join(errs, "; ")
	}
	ri.Errors = mergeErrorKinds(kinds)
	return ri
}

// addShardGates adds one shard's gate evidence to the merged gates' inputs in ri (counts
// summed, an unknown count making the sum unknown; flags or-ed; drift once) and its security
// findings to sec, so that Build judges the whole as one run. It returns the shard's samples
// (invalid transitions, reconciliations, tasks lost after a reconnect) for the caller to
// concatenate in shard order.
func addShardGates(ri *RunInfo, sec *Security, s *Summary) (invalid, samples, lostIDs []any) {
	hard := &s.Gates.Hard.Evidence
	ri.DuplicateEffects = addKnown(ri.DuplicateEffects, hard.DuplicateEffects)
	addSecurity(sec, hard)

	ri.Rollback = addRollback(ri.Rollback, s.Gates.Rollback)

	rec := &s.Gates.Recovery.Evidence
	ri.FaultsOn = ri.FaultsOn || s.Gates.Recovery.Evaluated
	ri.Faults = addCounts(ri.Faults, rec.FaultsInjected)
	ri.SecondCreates = addKnown(ri.SecondCreates, rec.SecondCreates)
	ri.Unknown = addCounts(ri.Unknown, rec.ReconciliationList)
	ri.LostAfterReconnect += rec.TasksLostAfterReconnect
	if u := s.Shard.TasksUnknownWithID; u < 0 || ri.UnknownCreated < 0 {
		ri.UnknownCreated = -1
	} else {
		ri.UnknownCreated += u
	}

	ri.EffectsAfterCancel = addKnown(ri.EffectsAfterCancel, s.Gates.Cancellation.Evidence.EffectsAfterCancel)
	if ri.Compat == nil {
		ri.Compat = compatOf(&s.Gates.Compatibility.Evidence)
	} else if c := compatOf(&s.Gates.Compatibility.Evidence); c != nil {
		ri.Compat.TaskParamsIgnored = addKnown(ri.Compat.TaskParamsIgnored, &c.TaskParamsIgnored)
		for _, d := range c.Drift { // a drift any shard saw, once
			if !slices.Contains(ri.Compat.Drift, d) {
				ri.Compat.Drift = append(ri.Compat.Drift, d)
			}
		}
	}
	return list(hard.InvalidTransitionsDetail), list(rec.ReconciliationSample), list(rec.TasksLostAfterReconnectDetail)
}

// judgedBy returns the scenario's thresholds and the error budget that a summary's
// thresholds were judged by (judged, read backwards).
func judgedBy(results []ThresholdResult) ([]scenarios.Threshold, *float64) {
	var ths []scenarios.Threshold
	var budget *float64
	for _, r := range results {
		switch r.Source {
		case SourceScenario:
			th := scenarios.Threshold{Expr: r.Expr, AbortOnFail: r.AbortOnFail}
			if r.OnNoData == string(scenarios.NoDataPass) {
				th.OnNoData = scenarios.NoDataPass
			}
			ths = append(ths, th)
		case SourceErrorBudget:
			b := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(r.Expr, "requests.errors_rate <=")), "%")
			if v, err := strconv.ParseFloat(strings.TrimSpace(b), 64); err == nil {
				budget = &v
			}
		}
	}
	return ths, budget
}

// mergeErrorKinds adds up the kinds of failed request of every shard by (method, outcome,
// code, status), keeping the first message seen, the most frequent first.
func mergeErrorKinds(ks []ErrorKind) []ErrorKind {
	type key struct {
		method, outcome string
		code, status    int
	}
	at := map[key]int{}
	var out []ErrorKind
	for _, k := range ks {
		kk := key{k.Method, k.Outcome, k.Code, k.Status}
		if i, ok := at[kk]; ok {
			out[i].Count += k.Count
			continue
		}
		at[kk] = len(out)
		out = append(out, k)
	}
	slices.SortStableFunc(out, func(a, b ErrorKind) int {
		switch {
		case a.Count > b.Count:
			return -1
		case a.Count < b.Count:
			return 1
		}
		return 0
	})
	return out
}

// addSecurity adds a shard's hard-gate evidence of isolation probes and planted secrets.
func addSecurity(sec *Security, hard *HardEvidence) {
	if hard.CrossTenantLeaks != nil {
		sec.Probes = sec.Probes || !slices.Contains(hard.NotChecked, "cross_tenant_leaks")
		sec.Leaks = addCounts(sec.Leaks, hard.LeaksByKind)
		sec.ProbesSent = addCounts(sec.ProbesSent, hard.ProbesSent)
		sec.Inconclusive = addCounts(sec.Inconclusive, hard.ProbesInconclusive)
		sec.LeakSample = appendAny(sec.LeakSample, hard.LeakSample)
		sec.Touched = append(sec.Touched, hard.TouchedTasks...)
	}
	if hard.PlantedSecrets != nil {
		sec.Canaries = sec.Canaries || !slices.Contains(hard.NotChecked, "planted_secrets")
		sec.Secrets = addCounts(sec.Secrets, hard.SecretsByWhere)
		sec.SecretSample = appendAny(sec.SecretSample, hard.SecretSample)
	}
	sec.Injections = addCounts(sec.Injections, hard.InjectionFindings)
}

// compatOf rebuilds the compatibility gate's inputs from its evidence; nil when the gate
// had no manifest to compare (its evidence is the reason only).
func compatOf(ev *CompatibilityEvidence) *Compat {
	if reasonOnly(*ev, CompatibilityEvidence{Reason: ev.Reason}) {
		return nil
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return &Compat{
		Protocol: ev.ProtocolVersion, Era: ev.Era, EraFallback: ev.EraFallback,
		TasksDeclared: ev.TasksDeclared, List: ev.TasksList, Cancel: ev.TasksCancel,
		ToolsCall: ev.TasksToolsCall, Tool: ev.Tool, TaskSupport: ev.ToolTaskSupport,
		Supported: ev.Missing == nil, Why: deref(ev.Missing), AsTask: ev.AsTask, Fallback: ev.DeclaredFallback,
		Taken: deref(ev.FallbackTaken), TaskParamsIgnored: addKnown(0, ev.TaskParamsIgnored),
		Pin: ev.ExpectedManifest,
		// A pin's drift, as the shard saw it: each shard probed the target itself.
		Drift: slices.Clone(ev.ManifestDrift),
	}
}

// addKnown adds a figure a shard may not have measured (nil: null or absent) to acc; -1
// stays -1: one unknown part leaves the whole unknown.
func addKnown(acc int64, n *int64) int64 {
	if acc < 0 || n == nil || *n < 0 {
		return -1
	}
	return acc + *n
}

// addCounts adds the counts of m2 into m, creating m when m2 is an object (nil adds
// nothing).
func addCounts(m, m2 map[string]int64) map[string]int64 {
	if m2 == nil {
		return m
	}
	if m == nil {
		m = map[string]int64{}
	}
	for k, n := range m2 {
		m[k] += n
	}
	return m
}

// addClient adds a shard's client findings c into acc, count by count; nil adds nothing.
func addClient(acc, c *Client) *Client {
	if c == nil {
		return acc
	}
	if acc == nil {
		acc = &Client{}
	}
	for k, n := range c.CreatesRefused {
		if acc.CreatesRefused == nil {
			acc.CreatesRefused = map[string]int64{}
		}
		acc.CreatesRefused[k] += n
	}
	if p := c.CleanupProbesUnmeasured; p != nil {
		if acc.CleanupProbesUnmeasured == nil {
			acc.CleanupProbesUnmeasured = &CleanupProbes{}
		}
		a := acc.CleanupProbesUnmeasured
		a.Cut, a.Blind, a.Failed, a.TimedOut = a.Cut+p.Cut, a.Blind+p.Blind, a.Failed+p.Failed, a.TimedOut+p.TimedOut
	}
	return acc
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func appendAny(acc, v any) any {
	l := list(v)
	if l == nil {
		return acc
	}
	return append(list(acc), l...)
}

// addRollback adds a shard's rollback gate to acc, the merged drill: nil while no shard
// rehearsed one. Counts add up; the switch is the earliest shard's (each shard flips its
// own at the same offset, or on its own abort); the drain is the longest, unknown (-1) when
// one shard's is; the server's figures are unknown when one shard's are; the samples are
// concatenated. A shard whose switch never flipped adds its plan.
func addRollback(acc *Rollback, g Gate[RollbackEvidence]) *Rollback {
	ev := &g.Evidence
	if !g.Evaluated {
		if ev.Planned == "" { // no drill in this shard
			return acc
		}
		if acc == nil {
			acc = &Rollback{Planned: ev.Planned, DrainS: -1, ServerCreatesAfter: -1}
		}
		return acc
	}
	drain := -1.0
	if ev.DrainS != nil {
		drain = *ev.DrainS
	}
	if acc == nil || acc.Trigger == "" {
		acc = &Rollback{Planned: acc.planned(), Trigger: ev.Trigger, AtS: ev.SwitchedAtS, DrainS: drain,
			ServerCreatesAfter: addKnown(0, ev.ServerCreatesAfter)}
	} else {
		acc.AtS = min(acc.AtS, ev.SwitchedAtS)
		if acc.DrainS < 0 || drain < 0 {
			acc.DrainS = -1
		} else {
			acc.DrainS = max(acc.DrainS, drain)
		}
		acc.ServerCreatesAfter = addKnown(acc.ServerCreatesAfter, ev.ServerCreatesAfter)
	}
	acc.CreatesAfter += ev.CreatesAfter
	acc.TasksAfter += ev.TasksAfterPlainCall
	acc.PreSwitch += ev.PreSwitch
	acc.Settled += ev.PreSwitchSettled
	acc.Listed += ev.PreSwitchListed
	acc.Unlisted += ev.PreSwitchUnlisted
	acc.Cancelled += ev.WatcherCancelled
	acc.FallbackCalls += ev.FallbackCalls
	acc.FallbackErrors += ev.FallbackErrors
	acc.Refused += ev.Refused
	for _, id := range ev.UnlistedSample {
		if len(acc.UnlistedSample) < rollbackSample {
			acc.UnlistedSample = append(acc.UnlistedSample, id)
		}
	}
	if rc := ev.Reconciliation; rc != nil {
		if acc.Reconciliation == nil {
			acc.Reconciliation = &Reconciliation{}
		}
		r := acc.Reconciliation
		r.InFlight += rc.InFlight
		if ev.TasksLost != nil {
			r.TasksLost += *ev.TasksLost
		}
		r.Applied = append(r.Applied, rc.AppliedSample...)
		r.NotApplied = append(r.NotApplied, rc.NotAppliedSample...)
		r.Unknown = append(r.Unknown, rc.UnknownSample...)
		r.AppliedN += rc.Applied
		r.NotAppliedN += rc.NotApplied
		r.UnknownN += rc.Unknown
	}
	return acc
}

// planned is the drill's plan, "" for nil.
func (r *Rollback) planned() string {
	if r == nil {
		return ""
	}
	return r.Planned
}
