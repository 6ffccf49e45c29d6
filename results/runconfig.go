package results

import (
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// RunConfig is what a run was asked to do, as far as two runs must agree on it to be
// compared (`tasksim compare`, docs/METRICS.md#comparable-runs): each field is checked on
// its own, so that a refusal names what differs.
type RunConfig struct {
	// ScenarioHash is scenarios.Scenario.ComparableHash: the whole scenario but the fields
	// below and those that never make runs incomparable (seed, target, headers).
	ScenarioHash string  `json:"scenario_hash"`
	DurationS    float64 `json:"duration_s"` // the load phase asked for (duration)
	Tool         string  `json:"tool"`
	Clients      int     `json:"clients"` // workload.clients: the closed model's clients, the open model's pool
	// Protocol is the era the clients were told to speak: "" = auto (what the server
	// offered is the summary's protocol).
	Protocol string `json:"protocol"`
	// Shards is the share of the scenario's load the run drove: "0/1" the whole, "I/N" one
	// shard's slice (a merged run is whole again).
	Shards string `json:"shards"`
	// Compare is the scenario's compare section: the budgets and allowances it sets.
	Compare scenarios.Compare `json:"compare"`
}

// NewRunConfig is the RunConfig of scenario sc run as shard sh.
func NewRunConfig(sc *scenarios.Scenario, sh scenarios.Shard) *RunConfig {
	return &RunConfig{
		ScenarioHash: sc.ComparableHash(),
		DurationS:    round3(time.Duration(sc.Duration).Seconds()),
		Tool:         sc.Tool,
		Clients:      sc.Workload.Clients,
		Protocol:     sc.Protocol,
		Shards:       sh.String(),
		Compare:      sc.Compare,
	}
}

// whole is the config of the merged run of shards with config c: the whole load, or for
// one side of an A/B run, half of it.
func (c *RunConfig) whole(abSide bool) *RunConfig {
	if c == nil {
		return nil
	}
	w := *c
	w.Shards = "0/1"
	if abSide {
		w.Shards = "0/2"
	}
	return &w
}
