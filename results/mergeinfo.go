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
		Target: s0.Target, Manifest: s0.Manifest,
		PollInterval:       time.Duration(s0.Shard.PollIntervalMS * float64(time.Millisecond)),
		DuplicateEffects:   0,
		SecondCreates:      0,
		EffectsAfterCancel: 0,
		UnknownCreated:     0,
	}
	ri.Thresholds, ri.ErrorBudget = judgedBy(s0.Thresholds)
	var (
		invalid, lostIDs, samples []any
		runtimes                  []*Runtime
		servers                   map[string]*ServerStats
		client                    *Client
		aborted, errs             []string
		kinds                     []ErrorKind
	)
	sec := &Security{}
	for _, r := range runs {
		s, idx := r.sum, r.sum.Shard.Index
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

		hard := s.Gates.Hard.Evidence
		ri.DuplicateEffects = addKnown(ri.DuplicateEffects, hard["duplicate_effects"])
		invalid = append(invalid, list(hard["invalid_transitions_detail"])...)
		addSecurity(sec, hard)

		ri.Rollback = addRollback(ri.Rollback, s.Gates.Rollback)

		rec := s.Gates.Recovery
		ri.FaultsOn = ri.FaultsOn || rec.Evaluated
		ri.Faults = addCounts(ri.Faults, rec.Evidence["faults_injected"])
		ri.SecondCreates = addKnown(ri.SecondCreates, rec.Evidence["second_creates"])
		ri.Unknown = addCounts(ri.Unknown, rec.Evidence["reconciliation_list"])
		samples = append(samples, list(rec.Evidence["reconciliation_sample"])...)
		ri.LostAfterReconnect += int64(number(rec.Evidence["tasks_lost_after_reconnect"]))
		lostIDs = append(lostIDs, list(rec.Evidence["tasks_lost_after_reconnect_detail"])...)
		if u := s.Shard.TasksUnknownWithID; u < 0 || ri.UnknownCreated < 0 {
			ri.UnknownCreated = -1
		} else {
			ri.UnknownCreated += u
		}

		ri.EffectsAfterCancel = addKnown(ri.EffectsAfterCancel, s.Gates.Cancellation.Evidence["effects_after_cancel"])
		if ri.Compat == nil {
			ri.Compat = compatOf(s.Gates.Compatibility.Evidence)
		} else if c := compatOf(s.Gates.Compatibility.Evidence); c != nil {
			ri.Compat.TaskParamsIgnored = addKnown(ri.Compat.TaskParamsIgnored, c.TaskParamsIgnored)
			for _, d := range c.Drift { // a drift any shard saw, once
				if !slices.Contains(ri.Compat.Drift, d) {
					ri.Compat.Drift = append(ri.Compat.Drift, d)
				}
			}
		}
		if s.Contract != nil && (ri.Contract == nil || (ri.Contract.Verdict == "pass" && s.Contract.Verdict != "pass")) {
			ri.Contract = s.Contract // the first failing shard's suite, else the first shard's
		}
	}
	delete(ri.Unknown, reasonResultLost) // Build adds it back from the summed results_lost
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
	ri.Evidence = map[string]any{GateHard: map[string]any{"invalid_transitions": invalid}}
	if lostIDs != nil {
		ri.Evidence[GateRecovery] = map[string]any{"tasks_lost_after_reconnect": lostIDs}
	}
	ri.Aborted = strings.Join(aborted, "; ")
	if len(errs) > 0 {
		ri.Error = "a shard ended in an error: " + strings.Join(errs, "; ")
	}
	ri.Errors = mergeErrorKinds(kinds)
	return ri
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
func addSecurity(sec *Security, hard map[string]any) {
	notChecked := list(hard["not_checked"])
	if _, ok := hard["cross_tenant_leaks"]; ok {
		sec.Probes = sec.Probes || !slices.Contains(notChecked, any("cross_tenant_leaks"))
		sec.Leaks = addCounts(sec.Leaks, hard["leaks_by_kind"])
		sec.ProbesSent = addCounts(sec.ProbesSent, hard["probes_sent"])
		sec.Inconclusive = addCounts(sec.Inconclusive, hard["probes_inconclusive"])
		sec.LeakSample = appendAny(sec.LeakSample, hard["leak_sample"])
		for _, t := range list(hard["touched_tasks"]) {
			if s, ok := t.(string); ok {
				sec.Touched = append(sec.Touched, s)
			}
		}
	}
	if _, ok := hard["planted_secrets"]; ok {
		sec.Canaries = sec.Canaries || !slices.Contains(notChecked, any("planted_secrets"))
		sec.Secrets = addCounts(sec.Secrets, hard["secrets_by_where"])
		sec.SecretSample = appendAny(sec.SecretSample, hard["secret_sample"])
	}
	sec.Injections = addCounts(sec.Injections, hard["injection_findings"])
}

// compatOf rebuilds the compatibility gate's inputs from its evidence; nil when the gate
// had no manifest to compare.
func compatOf(ev map[string]any) *Compat {
	if _, ok := ev["protocol_version"]; !ok {
		return nil
	}
	str := func(k string) string { s, _ := ev[k].(string); return s }
	flag := func(k string) bool { b, _ := ev[k].(bool); return b }
	_, missing := ev["missing"]
	c := &Compat{
		Protocol: str("protocol_version"), Era: str("era"), EraFallback: str("era_fallback"),
		TasksDeclared: flag("tasks_declared"), List: flag("tasks_list"), Cancel: flag("tasks_cancel"),
		ToolsCall: flag("tasks_tools_call"), Tool: str("tool"), TaskSupport: str("tool_task_support"),
		Supported: !missing, Why: str("missing"), AsTask: flag("as_task"), Fallback: str("declared_fallback"),
		Taken: str("fallback_taken"), TaskParamsIgnored: addKnown(0, ev["task_params_ignored"]),
		Pin: str("expected_manifest"),
	}
	// A pin's drift, as the shard saw it: each shard probed the target itself.
	for _, d := range list(ev["manifest_drift"]) {
		m, _ := d.(map[string]any)
		f, _ := m["field"].(string)
		p, _ := m["pinned"].(string)
		n, _ := m["now"].(string)
		c.Drift = append(c.Drift, ManifestDrift{Field: f, Pinned: p, Now: n})
	}
	return c
}

// addKnown adds a figure a shard may not have measured (null, or a negative count: -1) to
// acc; -1 stays -1: one unknown part leaves the whole unknown.
func addKnown(acc int64, v any) int64 {
	var n int64 = -1
	switch x := v.(type) {
	case float64:
		n = int64(x)
	case int64:
		n = x
	}
	if acc < 0 || n < 0 {
		return -1
	}
	return acc + n
}

// addCounts adds a JSON object of counts into m, creating it when needed.
func addCounts(m map[string]int64, v any) map[string]int64 {
	obj, ok := v.(map[string]any)
	if !ok {
		return m
	}
	if m == nil {
		m = map[string]int64{}
	}
	for k, x := range obj {
		m[k] += int64(number(x))
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

func number(v any) float64 {
	f, _ := v.(float64)
	return f
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
func addRollback(acc *Rollback, g Gate) *Rollback {
	ev := g.Evidence
	if !g.Evaluated {
		planned, ok := ev["planned"].(string)
		if !ok { // no drill in this shard
			return acc
		}
		if acc == nil {
			acc = &Rollback{Planned: planned, DrainS: -1, ServerCreatesAfter: -1}
		}
		return acc
	}
	n := func(k string) int64 { return int64(number(ev[k])) }
	trigger, _ := ev["trigger"].(string)
	at := number(ev["switched_at_s"])
	drain := -1.0
	if d, ok := ev["drain_s"].(float64); ok {
		drain = d
	}
	if acc == nil || acc.Trigger == "" {
		acc = &Rollback{Planned: acc.planned(), Trigger: trigger, AtS: at, DrainS: drain,
			ServerCreatesAfter: addKnown(0, ev["server_creates_after"])}
	} else {
		acc.AtS = min(acc.AtS, at)
		if acc.DrainS < 0 || drain < 0 {
			acc.DrainS = -1
		} else {
			acc.DrainS = max(acc.DrainS, drain)
		}
		acc.ServerCreatesAfter = addKnown(acc.ServerCreatesAfter, ev["server_creates_after"])
	}
	acc.CreatesAfter += n("creates_after")
	acc.TasksAfter += n("tasks_after_plain_call")
	acc.PreSwitch += n("pre_switch")
	acc.Settled += n("pre_switch_settled")
	acc.Listed += n("pre_switch_listed")
	acc.Unlisted += n("pre_switch_unlisted")
	acc.Cancelled += n("watcher_cancelled")
	acc.FallbackCalls += n("fallback_calls")
	acc.FallbackErrors += n("fallback_errors")
	acc.Refused += n("refused")
	for _, id := range list(ev["unlisted_sample"]) {
		if s, ok := id.(string); ok && len(acc.UnlistedSample) < rollbackSample {
			acc.UnlistedSample = append(acc.UnlistedSample, s)
		}
	}
	if rc, ok := ev["reconciliation"].(map[string]any); ok {
		if acc.Reconciliation == nil {
			acc.Reconciliation = &Reconciliation{}
		}
		r := acc.Reconciliation
		r.InFlight += int(number(rc["in_flight"]))
		r.TasksLost += int64(number(ev["tasks_lost"]))
		r.Applied = append(r.Applied, reconciledOps(rc["applied_sample"])...)
		r.NotApplied = append(r.NotApplied, reconciledOps(rc["not_applied_sample"])...)
		r.Unknown = append(r.Unknown, reconciledOps(rc["unknown_sample"])...)
		r.AppliedN += int(number(rc["applied"]))
		r.NotAppliedN += int(number(rc["not_applied"]))
		r.UnknownN += int(number(rc["unknown"]))
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

// reconciledOps reads a shard's reconciliation sample back.
func reconciledOps(v any) []ReconciledOp {
	var out []ReconciledOp
	for _, x := range list(v) {
		m, _ := x.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, ReconciledOp{TaskID: str("task_id"), Key: str("idempotency_key"), Tenant: str("tenant"), Status: str("status")})
	}
	return out
}
