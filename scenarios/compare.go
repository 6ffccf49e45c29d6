package scenarios

import (
	"crypto/sha256"
	"encoding/hex"

	"go.yaml.in/yaml/v3"
)

// Compare is how a run of this scenario is compared with a baseline (`tasksim compare`,
// `run --baseline`, an A/B run): budgets beyond the documented defaults, and the
// configuration fields that may differ between the two runs. Default: the default budgets,
// nothing allowed to differ. The results package reads the budgets (results.ParseBudget).
type Compare struct {
	// Budgets are budget expressions, "METRIC CHANGE [CHANGE]", e.g.
	// "latency_tasks_get.p99 +20%" or "task_e2e.p99 +15% +5ms" (docs/METRICS.md#budgets).
	Budgets []string `yaml:"budgets,omitempty" json:"budgets,omitempty"`
	// Allow names the configuration fields that may differ between baseline and candidate:
	// scenario, duration, tool, clients, protocol, shards, compare, config
	// (docs/METRICS.md#comparable-runs).
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
}

// ComparableHash is Hash with the fields that two comparable runs may set apart left out:
// the seed, the target and its headers, the era asked for, the length of the load phase,
// the tool, the client count and the compare section itself. They are compared one by one
// (results.RunConfig), so that a difference is named, not only seen.
func (s *Scenario) ComparableHash() string {
	c := *s
	c.Client.SourceAddresses = nil
	c.Seed, c.Target, c.Headers, c.Protocol = 0, "", nil, ""
	c.Duration, c.Tool, c.Compare = 0, "", Compare{}
	c.Workload.Clients = 0
	b, err := yaml.Marshal(&c)
	if err != nil { // every field of a Scenario encodes; Validate checked Args
		b = []byte("unencodable: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
