package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// planProtocol says which era the run will speak, before it asks the target.
func planProtocol(sc *scenarios.Scenario) string {
	switch p := runner.Protocol(sc); {
	case sc.Protocol != "":
		return sc.Protocol + " (pinned)"
	case p != "":
		return p + " (the embedded server's; --protocol pins the other where it serves both)"
	}
	return "found by asking the target (server/discover first, E32): 2026-07-28 where it serves the Tasks extension, else 2025-11-25"
}

// printPlan prints what --dry-run promises: the resolved scenario, the expected load, the
// cancels, every fault that is on, how clients recover, and the thresholds.
func printPlan(w io.Writer, sc *scenarios.Scenario, cfg *loadgen.Config, conns runner.Connections) {
	fmt.Fprintf(w, "scenario     %s (%s)\n", sc.Name, sc.Source)
	fmt.Fprintf(w, "target       %s\n", runner.TargetName(sc))
	fmt.Fprintf(w, "protocol     %s\n", planProtocol(sc))
	if sc.Contract {
		where := "the target"
		if sc.Target == "" {
			where = "an embedded server of its own, with this configuration"
		}
		fmt.Fprintf(w, "contract     the contract suite runs first, against %s: the contract gate\n", where)
	}
	if sc.ExpectManifest != "" {
		fmt.Fprintf(w, "manifest     compared with the pin %s at the end: drift fails the compatibility gate\n", runner.PinPath(sc))
	}
	fmt.Fprintf(w, "load         %s\n", runner.PlanLine(sc, cfg))
	if cfg.Shard != (scenarios.Shard{}) {
		fmt.Fprintf(w, "shard        %s\n", shardPlan(cfg.Shard, sc))
	}
	if rb := sc.Rollback; rb.On() {
		fmt.Fprintf(w, "rollback     %s\n", rollbackText(sc))
	}
	fmt.Fprintf(w, "seed         %d\n", sc.Seed)
	var args strings.Builder // the scenario's arguments as JSON (the run may add a key)
	enc := json.NewEncoder(&args)
	enc.SetEscapeHTML(false)
	if len(sc.Args) == 0 || enc.Encode(sc.Args) != nil { // Validate checked that they encode
		args.Reset()
		args.WriteString("{}")
	}
	fmt.Fprintf(w, "tool         %s %s\n", sc.Tool, strings.TrimSpace(args.String()))
	result := string(sc.Client.Result)
	if runner.Protocol(sc) == client.ProtocolModern {
		result = "inline with the terminal status (2026-07-28: no tasks/result)"
	}
	fmt.Fprintf(w, "result       %s, deadline %v\n", result, cfg.Poll.Deadline)
	fmt.Fprintf(w, "polling      %s\n", pollText(sc))
	if cfg.Model == loadgen.Closed && cfg.Ramp > 0 {
		fmt.Fprintf(w, "ramp         the clients start evenly over %v\n", cfg.Ramp)
	}
	if cfg.MaxConns > 0 {
		fmt.Fprintf(w, "requests     at most %d in flight at once (tasks/result streams aside)\n", cfg.MaxConns)
	}
	if len(conns.SourceAddresses) > 0 {
		how := "client.source_addresses"
		if conns.SourceAddressesAuto {
			how = "chosen by tasksim: more connections than one address has ports"
		}
		fmt.Fprintf(w, "sources      connections dialed from %s, round robin (%s)\n", sourcesText(conns.SourceAddresses), how)
	}
	if cfg.Model == loadgen.Open {
		fmt.Fprintf(w, "arrivals     about %.0f over the load phase\n", expectedArrivals(sc)*cfg.Shard.Share())
	} else if d, ok := sc.Args["duration_ms"].(float64); ok && d > 0 {
		per := float64(cfg.Duration) / (float64(time.Duration(d)*time.Millisecond) + float64(cfg.ThinkTime))
		fmt.Fprintf(w, "tasks        about %.0f (clients x duration / (task duration + think time))\n", float64(cfg.Shard.Size(cfg.Clients))*per)
	}
	if sc.Target == "" {
		fmt.Fprintf(w, "server       pollInterval %v, ttl %v (max %v)\n", sc.Server.PollInterval, sc.Server.TTL, sc.Server.MaxTTL)
		for _, m := range sc.Server.KnownBad { // named as tenantsText names insecure modes
			fmt.Fprintf(w, "             known-bad server mode %s\n", m)
		}
	}
	fmt.Fprintf(w, "cancel       %s\n", cancelText(sc.Client.Cancel))
	if t := tenantsText(sc); t != "" {
		fmt.Fprintf(w, "tenants      %s\n", t)
	}
	printFaults(w, sc)
	creates, sessions := recoveryText(cfg.Recovery)
	fmt.Fprintf(w, "recovery     %s\n             %s\n", creates, sessions)
	printThresholds(w, sc.Thresholds, sc.ErrorBudget)
	printSLOs(w, sc)
}

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
