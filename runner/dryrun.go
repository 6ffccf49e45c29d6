package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/scenarios"
)

// Plan is what a run of a scenario will do, computed before anything runs: the engine's
// configuration, the connections it will dial from and the common start it will wait for.
// It is `tasksim run --dry-run`'s output (WriteText), and lives here so that any program
// that runs a scenario can show its plan first, as k6 computes and checks its plan before
// its executors start.
type Plan struct {
	// Scenario is the scenario, validated (Validate).
	Scenario *scenarios.Scenario
	// Config is the load generator's configuration, with the shard (EngineConfig).
	Config loadgen.Config
	// Connections are the source addresses the clients dial from (RunConnections).
	Connections Connections
	// StartAt is the common start the load waits for (Options.StartAt); the zero time = none.
	StartAt time.Time
	// Now is when the plan was made: how late an already past StartAt is.
	Now time.Time
}

// NewPlan is the plan of a run of sc (validated) as the slice shard, its load starting at
// startAt (the zero time: at once), as of now. A problem with the source addresses is a
// *UsageError (Validate reports it first).
func NewPlan(sc *scenarios.Scenario, shard scenarios.Shard, startAt, now time.Time) (*Plan, error) {
	cfg := EngineConfig(sc)
	cfg.Shard = shard
	conns, err := RunConnections(sc, shard)
	if err != nil {
		return nil, err
	}
	return &Plan{Scenario: sc, Config: cfg, Connections: conns, StartAt: startAt, Now: now}, nil
}

// WriteText writes the plan as --dry-run prints it: the resolved scenario, the expected
// load, the cancels, every fault that is on, how clients recover, the thresholds and the
// default SLOs, then the common start.
func (p *Plan) WriteText(w io.Writer) {
	printPlan(w, p.Scenario, &p.Config, p.Connections)
	if p.StartAt.IsZero() {
		return
	}
	at := p.StartAt.UTC().Format(time.RFC3339Nano)
	if past := p.Now.Sub(p.StartAt); past > time.Second {
		fmt.Fprintf(w, "start at     %s: %v ago already: the load starts at once, reported late\n", at, past.Round(time.Second))
	} else {
		fmt.Fprintf(w, "start at     %s: the load waits for it (a start past by over 1s is reported late)\n", at)
	}
}

// planProtocol says which era the run will speak, before it asks the target.
func planProtocol(sc *scenarios.Scenario) string {
	switch p := Protocol(sc); {
	case sc.Protocol != "":
		return sc.Protocol + " (pinned)"
	case p != "":
		return p + " (the embedded server's; --protocol pins the other where it serves both)"
	}
	return "found by asking the target (server/discover first, E32): 2026-07-28 where it serves the Tasks extension, else 2025-11-25"
}

// printPlan prints what --dry-run promises: the resolved scenario, the expected load, the
// cancels, every fault that is on, how clients recover, and the thresholds.
func printPlan(w io.Writer, sc *scenarios.Scenario, cfg *loadgen.Config, conns Connections) {
	fmt.Fprintf(w, "scenario     %s (%s)\n", sc.Name, sc.Source)
	fmt.Fprintf(w, "target       %s\n", TargetName(sc))
	fmt.Fprintf(w, "protocol     %s\n", planProtocol(sc))
	if sc.Contract {
		where := "the target"
		if sc.Target == "" {
			where = "an embedded server of its own, with this configuration"
		}
		fmt.Fprintf(w, "contract     the contract suite runs first, against %s: the contract gate\n", where)
	}
	if sc.ExpectManifest != "" {
		fmt.Fprintf(w, "manifest     compared with the pin %s at the end: drift fails the compatibility gate\n", PinPath(sc))
	}
	fmt.Fprintf(w, "load         %s\n", PlanLine(sc, cfg))
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
	if Protocol(sc) == client.ProtocolModern {
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
