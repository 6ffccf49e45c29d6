package runner

import (
	"fmt"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/scenarios"
)

// TargetName names the run's target for a reader: its URL, or "the embedded mock server".
func TargetName(sc *scenarios.Scenario) string {
	if sc.Target == "" {
		return "the embedded mock server"
	}
	return sc.Target
}

// Protocol is the era a run of sc pins before it asks its target (client.Target.Protocol):
// the scenario's protocol; on the embedded server, when that is auto, the era it serves
// alone (server.protocols modern), else 2025-11-25. "" = found by asking the target (E32).
func Protocol(sc *scenarios.Scenario) string { return runProtocol(sc, sc.Target == "") }

// PlanLine is a one-line summary of what the run will do, as a run notes it and --dry-run
// prints it.
func PlanLine(sc *scenarios.Scenario, cfg *loadgen.Config) string {
	load := fmt.Sprintf("%d closed-model clients", cfg.Clients)
	if cfg.Model == loadgen.Open {
		load = fmt.Sprintf("open model at %s, at most %d in flight", rateText(sc), cfg.MaxInFlight)
	}
	if sh := cfg.Shard; sh != (scenarios.Shard{}) {
		load = fmt.Sprintf("shard %s: %d of %d closed-model clients", sh, sh.Size(cfg.Clients), cfg.Clients)
		if cfg.Model == loadgen.Open {
			load = fmt.Sprintf("shard %s: 1 in %d arrivals of the open model at %s, at most %d of %d in flight",
				sh, max(sh.Count, 1), rateText(sc), sh.Size(sc.Workload.PoolSize()), sc.Workload.PoolSize())
		}
	}
	return fmt.Sprintf("%s calling %s for %v (+%v drain), poll policy %s", load, sc.Tool, cfg.Duration, cfg.Grace, cfg.Poll.Kind)
}

func rateText(sc *scenarios.Scenario) string {
	if len(sc.Workload.Stages) == 0 {
		return sc.Workload.Rate.String()
	}
	return fmt.Sprintf("%s ramping over %d stages", sc.Workload.Rate, len(sc.Workload.Stages))
}
