package runner

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// The phrases of a Plan's text (dryrun.go): each part of the scenario as --dry-run says it.

// cancelText is the share of tasks the clients cancel, and when.
func cancelText(c scenarios.Cancel) string {
	if c.Probability <= 0 {
		return "none (client.cancel.probability 0)"
	}
	return fmt.Sprintf("%s of tasks, %v after their creation", percent(c.Probability), c.Delay)
}

// tenantsText is how clients are spread over tenants and what the isolation probes do; ""
// when the run has neither tenants nor a security section.
func tenantsText(sc *scenarios.Scenario) string {
	sec := sc.Security
	n, from := len(sc.Server.Tokens), "server.tokens"
	if sc.Target != "" {
		n, from = len(sec.Tenants), "security.tenants"
	}
	if n == 0 && !sec.On() {
		return ""
	}
	parts := []string{fmt.Sprintf("%d (%s), clients spread round-robin", n, from)}
	if sec.ProbeShare > 0 {
		parts = append(parts, percent(sec.ProbeShare)+" of clients are isolation probes")
	}
	if sec.Canaries {
		parts = append(parts, "secret canaries planted")
	}
	if sec.Inject {
		parts = append(parts, "the server plants injection canaries")
	}
	for _, r := range sec.Revoke {
		parts = append(parts, fmt.Sprintf("%s's token revoked at %v (%s)", r.Tenant, r.At, cmp.Or(r.Scope, scenarios.RevokeAll)))
	}
	for _, m := range sec.Insecure {
		parts = append(parts, "insecure server mode "+string(m))
	}
	return strings.Join(parts, "; ")
}

// printFaults prints every fault that is on, one per line: its scenario path under faults
// (for --set), when it fires and what it does.
func printFaults(w io.Writer, sc *scenarios.Scenario) {
	list := faultPlans(sc)
	if len(list) == 0 {
		fmt.Fprintln(w, "faults       none")
		return
	}
	width := 0
	for _, f := range list {
		width = max(width, len(f.path))
	}
	for i, f := range list {
		label := ""
		if i == 0 {
			label = "faults"
		}
		fmt.Fprintf(w, "%-12s %-*s  %s\n", label, width, f.path, f.what)
	}
}

// faultPlan is one fault that is on: its scenario path under faults, and what it does, when.
type faultPlan struct{ path, what string }

// faultPlans lists the faults that are on: the client's, the embedded server's, then the
// network's, each in the order of its struct (scenarios/faults.go).
func faultPlans(sc *scenarios.Scenario) []faultPlan {
	var out []faultPlan
	trigger := func(path string, t scenarios.Trigger, of, effect string) {
		if t.On() {
			out = append(out, faultPlan{path, triggerText(t, of) + ": " + effect})
		}
	}
	c := sc.Faults.Client
	trigger("client.create_reply", c.CreateReply, "creates (tools/call)", "the reply is lost; the task exists, the client has no id")
	trigger("client.after_create", c.AfterCreate, "tasks", "connection and session dropped right after CreateTaskResult")
	trigger("client.before_result", c.BeforeResult, "tasks", "connection dropped between the terminal status and tasks/result")
	trigger("client.result_stream", c.ResultStream, "tasks/result calls (once per task)", "the SSE stream is cut after its priming event")
	trigger("client.input_before_answer", c.InputBeforeAnswer, "tasks/result calls (once per task)", "the stream carrying elicitation/create is cut before the answer")
	trigger("client.input_after_answer", c.InputAfterAnswer, "tasks/result calls (once per task)", "the stream is cut right after the answer")
	trigger("client.cancel_reply", c.CancelReply, "cancels", "tasks/cancel reaches the server, its reply is lost")
	trigger("client.crash", c.Crash, "tasks (once, at a poll)", "the client crashes and resumes from its persisted record")

	s := sc.Faults.Server
	first := len(out)
	trigger("server.http_5xx", s.HTTP5xx, "POSTs", fmt.Sprintf("answered HTTP %d, not processed", s.Status))
	trigger("server.reset", s.Reset, "POSTs", "connection closed without a reply, not processed")
	trigger("server.session_expiry", s.SessionExpiry, "requests with a session", "the session is forgotten (404)")
	if s.Restart.On() {
		what := "every session forgotten"
		if s.RestartLosesTasks {
			what += ", and every task (restart_loses_tasks)"
		}
		out = append(out, faultPlan{"server.restart", scheduleText(s.Restart) + ": " + what})
	}
	trigger("server.duplicate", s.Duplicate, "SSE replies", "the reply is sent twice")
	trigger("server.early_expiry", s.EarlyExpiry, "tasks", "purged the instant it turns terminal")
	trigger("server.stuck", s.Stuck, "tasks", "its work never ends")
	trigger("server.effect_first", s.EffectFirst, "tasks", "the domain effect is applied when the work starts")
	if s.NonIdempotent {
		out = append(out, faultPlan{"server.non_idempotent", "on: a repeated idempotency key starts the work again (a known-bad server)"})
	}
	if sc.Target != "" {
		for i := first; i < len(out); i++ {
			out[i].what += " [not applied: the target is not the embedded server]"
		}
	}

	n := sc.Faults.Network
	if n.Latency != (scenarios.Dist{}) {
		out = append(out, faultPlan{"network.latency", fmt.Sprintf("%v added to every chunk, both ways", n.Latency)})
	}
	if n.Bandwidth > 0 {
		out = append(out, faultPlan{"network.bandwidth", fmt.Sprintf("each direction of each connection capped at %d bytes/s", n.Bandwidth)})
	}
	reset := "reset (TCP RST) at once"
	if n.ResetAfter > 0 {
		reset = fmt.Sprintf("reset (TCP RST) after %d bytes to the client", n.ResetAfter)
	}
	trigger("network.reset", n.Reset, "connections", reset)
	trigger("network.black_hole", n.BlackHole, "connections", "accepted, then nothing is forwarded either way")
	trigger("network.half_open", n.HalfOpen, "connections",
		fmt.Sprintf("upstream closed after %v, the client's side kept open and silent", n.HalfOpenAfter))
	return out
}

// triggerText says when a trigger fires: "5% of tasks", "all POSTs in the first 2s of every
// 10s", or both.
func triggerText(t scenarios.Trigger, of string) string {
	var parts []string
	if t.Probability > 0 {
		parts = append(parts, percent(t.Probability)+" of "+of)
	}
	if t.Every > 0 {
		parts = append(parts, fmt.Sprintf("all %s in the first %v of every %v", of, t.Window, t.Every))
	}
	return strings.Join(parts, ", and ")
}

// scheduleText says when a scheduled fault happens, from the embedded server's start.
func scheduleText(s scenarios.Schedule) string {
	var parts []string
	if len(s.At) > 0 {
		at := make([]string, len(s.At))
		for i, d := range s.At {
			at[i] = d.String()
		}
		parts = append(parts, "at "+strings.Join(at, ", "))
	}
	if s.Every > 0 {
		parts = append(parts, fmt.Sprintf("every %v", s.Every))
	}
	return strings.Join(parts, " and ") + " from the server's start"
}

// recoveryText is how clients recover: from a lost create, and from lost sessions and
// connections.
func recoveryText(r scenarios.Recovery) (creates, sessions string) {
	key := "no idempotency key sent (nothing to reconcile)"
	if r.IdempotencyArg != "" {
		key = "idempotency key in argument " + r.IdempotencyArg + " (when the tool declares it)"
		if r.Reconcile {
			key += ", lost creates reconciled by it"
		}
	}
	retry := "never re-sent"
	if r.RetryCreate {
		retry = "re-sent with the same key when not found (retry_create)"
	}
	b := r.Budgets
	return key + "; a lost create is " + retry,
		fmt.Sprintf("reconnect backoff %v..%v (jitter %v); budgets per task: create %d, status %d, result %d, reconcile %d",
			r.Backoff.Initial, r.Backoff.Max, r.Backoff.Jitter, b.Create, b.Status, b.Result, b.Reconcile)
}

// printThresholds prints every threshold, marking those that abort the run.
func printThresholds(w io.Writer, ths []scenarios.Threshold, budget scenarios.Percent) {
	fmt.Fprintf(w, "error budget %s of requests may fail (requests.errors_rate <= %s; a run with no\n", budget, budget)
	fmt.Fprintln(w, "             request has no data and fails); backpressure and R26 refusals are not errors")
	fmt.Fprintln(w, "evidence     tasks.done > 0: a task (or synchronous call) must end without failing")
	if len(ths) == 0 {
		fmt.Fprintln(w, "thresholds   none of the scenario's: the gates, the budget and the evidence decide the verdict")
		return
	}
	fmt.Fprintln(w, "thresholds   judged over the whole run (a failure exits 99; no data fails unless on_no_data:")
	fmt.Fprintln(w, "             pass); abort_on_fail ones fail at their first failing one-second window, which")
	fmt.Fprintln(w, "             stops the load (in-flight tasks drain)")
	width := 0
	for _, t := range ths {
		width = max(width, len(t.Expr))
	}
	for _, t := range ths {
		var marks []string
		if t.AbortOnFail {
			marks = append(marks, "abort_on_fail")
		}
		if t.PassesOnNoData() {
			marks = append(marks, "on_no_data: pass")
		}
		line := t.Expr
		if len(marks) > 0 {
			line = fmt.Sprintf("%-*s  %s", width, t.Expr, strings.Join(marks, ", "))
		}
		fmt.Fprintf(w, "             %s\n", line)
	}
}

// percent formats a ratio in [0, 1] as a percentage: 0.05 -> "5%", 0.005 -> "0.5%".
func percent(r float64) string {
	return strconv.FormatFloat(math.Round(r*1e6)/1e4, 'f', -1, 64) + "%"
}

// expectedArrivals integrates the open-model rate over the load phase in 10 ms steps.
func expectedArrivals(sc *scenarios.Scenario) float64 {
	const step = 10 * time.Millisecond
	n := 0.0
	for t := time.Duration(0); t < time.Duration(sc.Duration); t += step {
		n += sc.Workload.RateAt(t) * step.Seconds()
	}
	return n
}

// sourcesText lists source addresses, at most four of them and how many more.
func sourcesText(addrs []string) string {
	if len(addrs) <= 4 {
		return strings.Join(addrs, ", ")
	}
	return fmt.Sprintf("%s, ... %s (%d addresses)", strings.Join(addrs[:3], ", "), addrs[len(addrs)-1], len(addrs))
}

// rollbackText says what a rollback drill will do: when the switch flips, what new work
// takes after it, and what becomes of the tasks running then.
func rollbackText(sc *scenarios.Scenario) string {
	rb := sc.Rollback
	var when []string
	if rb.At > 0 {
		when = append(when, "at "+time.Duration(rb.At).String())
	}
	if rb.OnAbort {
		when = append(when, "when an abort_on_fail threshold fails (instead of stopping the load)")
	}
	after := "new work refused and counted (fallback refuse)"
	if sc.Fallback == scenarios.FallbackSync {
		after = "new work as plain tools/call (fallback sync; refused where the tool requires tasks)"
	}
	watch := "running tasks polled to their end, none cancelled"
	if rb.Cancel {
		watch = "running tasks cancelled and polled to their end"
	}
	s := fmt.Sprintf("the kill switch %s: no task-augmented call after it, %s, %s", strings.Join(when, ", or "), after, watch)
	if rb.Restart {
		s += "; the embedded server restarts at the switch"
		if sc.Faults.Server.RestartLosesTasks {
			s += " and forgets its tasks"
		}
	}
	return s + ": the rollback gate"
}

// pollText is the interval the clients will actually wait between polls, and where it comes
// from: against a target whose advice they follow it is not known before the run, and
// --poll-interval (client.poll.interval) is only their fallback.
func pollText(sc *scenarios.Scenario) string {
	p := sc.Client.Poll
	switch p.Policy {
	case scenarios.PollFixed:
		return fmt.Sprintf("clients poll every %v (client.poll.policy fixed: the server's advice is ignored)", p.Interval)
	case scenarios.PollBackoff:
		return fmt.Sprintf("clients poll after %v, then x%g up to %v (client.poll.policy backoff: the server's advice is ignored)",
			p.Interval, p.Multiplier, p.MaxInterval)
	}
	if sc.Target == "" && !sc.Server.KnownBadOn(scenarios.KnownBadNoPollInterval) {
		if in := SLOInterval(sc, 0, false); in.Known {
			return fmt.Sprintf("clients follow the advertised pollInterval: %v (%s)", in.P, in.From)
		}
		return fmt.Sprintf("clients follow the embedded server's advertised pollInterval (server.poll_policy %s: it varies); %v if it advertises none",
			sc.Server.PollPolicy.Kind, p.Interval)
	}
	return fmt.Sprintf("clients follow the target's advertised pollInterval (not known before the run); --poll-interval %v is only the fallback when it advertises none",
		p.Interval)
}

// printSLOs prints the default SLOs the run will be judged by after its thresholds, each
// resolved where the interval is known, else with its formula "from the advertised
// interval", and those the scenario switched off or superseded.
func printSLOs(w io.Writer, sc *scenarios.Scenario) {
	in := SLOInterval(sc, 0, false)
	fmt.Fprintln(w, "default SLOs relative to the advertised pollInterval P (docs/METRICS.md#default-slos; the")
	fmt.Fprintln(w, "             scenario's slo section overrides or switches off each)")
	for _, s := range results.DefaultSLOs(sc.SLO, in, sc.Thresholds) {
		var line string
		switch {
		case s.Skip != "":
			line = fmt.Sprintf("%-14s not judged: %s", s.Key, s.Skip)
		case s.Th.Expr == "":
			line = fmt.Sprintf("%-14s %s, %s", s.Key, s.Formula, s.Note)
		case s.Note != "" && !strings.HasPrefix(s.Formula, "set by"): // a formula, resolved
			line = fmt.Sprintf("%-14s %s  (%s; %s)", s.Key, s.Th.Expr, s.Formula, s.Note)
		default:
			line = fmt.Sprintf("%-14s %s", s.Key, s.Th.Expr)
			if s.Note != "" {
				line += "  (" + s.Note + ")"
			}
		}
		fmt.Fprintf(w, "             %s\n", line)
	}
}

// shardPlan is the --dry-run line of a sharded run: which clients or which arrivals it takes.
func shardPlan(sh scenarios.Shard, sc *scenarios.Scenario) string {
	n := sc.Workload.PoolSize()
	who := fmt.Sprintf("clients %s of 0..%d (%d of %d, global indices i with i mod %d = %d)",
		firstOwned(sh, n), n-1, sh.Size(n), n, max(sh.Count, 1), sh.Index)
	if sc.Workload.Model == scenarios.ModelOpen {
		who = fmt.Sprintf("arrivals %d, %d, %d, ... of the whole schedule (1 in %d, %s of the rate), from a pool of %s",
			sh.Index+1, sh.Index+1+sh.Count, sh.Index+1+2*sh.Count, max(sh.Count, 1), percent(sh.Share()), who)
	}
	return fmt.Sprintf("%s: %s", sh, who)
}

// firstOwned lists the first global indices of 0..n-1 the shard owns: "0, 3, 6, ...".
func firstOwned(sh scenarios.Shard, n int) string {
	step := max(sh.Count, 1)
	var parts []string
	for i := sh.Index; i < n && len(parts) < 3; i += step {
		parts = append(parts, strconv.Itoa(i))
	}
	switch {
	case len(parts) == 0:
		return "none"
	case sh.Index+3*step < n:
		parts = append(parts, "...")
	}
	return strings.Join(parts, ", ")
}
