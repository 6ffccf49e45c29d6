package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/scenarios"
)

// planLine is a one-line summary of what the run will do.
func planLine(sc *scenarios.Scenario, cfg *loadgen.Config) string {
	load := fmt.Sprintf("%d closed-model clients", cfg.Clients)
	if cfg.Model == loadgen.Open {
		load = fmt.Sprintf("open model at %s, at most %d in flight", rateText(sc), cfg.MaxInFlight)
	}
	return fmt.Sprintf("%s calling %s for %v (+%v drain), poll policy %s", load, sc.Tool, cfg.Duration, cfg.Grace, cfg.Poll.Kind)
}

func rateText(sc *scenarios.Scenario) string {
	if len(sc.Workload.Stages) == 0 {
		return sc.Workload.Rate.String()
	}
	return fmt.Sprintf("%s ramping over %d stages", sc.Workload.Rate, len(sc.Workload.Stages))
}

// printPlan prints what --dry-run promises: the resolved scenario and the expected load.
func printPlan(w io.Writer, sc *scenarios.Scenario, cfg *loadgen.Config) {
	fmt.Fprintf(w, "scenario     %s (%s)\n", sc.Name, sc.Source)
	fmt.Fprintf(w, "target       %s\n", targetName(sc))
	fmt.Fprintf(w, "load         %s\n", planLine(sc, cfg))
	fmt.Fprintf(w, "seed         %d\n", sc.Seed)
	var args strings.Builder // the scenario's arguments as JSON (the run may add a key)
	enc := json.NewEncoder(&args)
	enc.SetEscapeHTML(false)
	if len(sc.Args) == 0 || enc.Encode(sc.Args) != nil { // Validate checked that they encode
		args.Reset()
		args.WriteString("{}")
	}
	fmt.Fprintf(w, "tool         %s %s\n", sc.Tool, strings.TrimSpace(args.String()))
	fmt.Fprintf(w, "result       %s, poll interval %v, deadline %v\n", sc.Client.Result, cfg.Poll.Interval, cfg.Poll.Deadline)
	if cfg.Model == loadgen.Closed && cfg.Ramp > 0 {
		fmt.Fprintf(w, "ramp         the clients start evenly over %v\n", cfg.Ramp)
	}
	if cfg.MaxConns > 0 {
		fmt.Fprintf(w, "requests     at most %d in flight at once (tasks/result streams aside)\n", cfg.MaxConns)
	}
	if cfg.Model == loadgen.Open {
		fmt.Fprintf(w, "arrivals     about %.0f over the load phase\n", expectedArrivals(sc))
	} else if d, ok := sc.Args["duration_ms"].(float64); ok && d > 0 {
		per := float64(cfg.Duration) / (float64(time.Duration(d)*time.Millisecond) + float64(cfg.ThinkTime))
		fmt.Fprintf(w, "tasks        about %.0f (clients x duration / (task duration + think time))\n", float64(cfg.Clients)*per)
	}
	if sc.Target == "" {
		fmt.Fprintf(w, "server       pollInterval %v, ttl %v (max %v)\n", sc.Server.PollInterval, sc.Server.TTL, sc.Server.MaxTTL)
	}
	for _, t := range sc.Thresholds {
		fmt.Fprintf(w, "threshold    %s\n", t.Expr)
	}
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
