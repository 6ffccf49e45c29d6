package results

import "time"

// ShardInfo is summary.json's "shard": which slice of which scenario a run ran (`tasksim run
// --shard I/N`, scenarios.Shard) and when its load was to start, so that the shards of one
// run can be told apart from those of another and put side by side. Present when the run was
// sharded or given a common start (--start-at; then 0 of 1); absent otherwise.
type ShardInfo struct {
	Index int `json:"index"` // 0..Count-1
	Count int `json:"count"` // the number of shards of the whole scenario
	// ScenarioHash is scenarios.Scenario.Hash of the resolved scenario (flags and --set
	// applied): the same in every shard of one run.
	ScenarioHash string `json:"scenario_hash"`
	// Seed, Protocol and Target repeat the summary's: the fields the shards of one run share.
	Seed     uint64 `json:"seed"`
	Protocol string `json:"protocol"`
	Target   string `json:"target"`
	// StartAt is the common instant the load was to start at (--start-at, or the A/B run's
	// meeting), UTC; null without one, and in a side of an A/B run that ended before the
	// sides met (its contract suite or setup failed, or it was stopped while waiting).
	StartAt *time.Time `json:"start_at"`
	// LateByS is how many seconds after StartAt this shard's load started (3 decimals): 0
	// when it waited for StartAt, or had none. Over 1 s, the run said "started late by" on
	// stderr.
	LateByS float64 `json:"late_by_s"`
	// PollIntervalMS is the poll interval the trust check compared schedule_lag with
	// (RunInfo.PollInterval), in ms; 0 = unknown. TasksUnknownWithID is RunInfo.UnknownCreated,
	// the unknown outcomes of tasks whose id the client knew (-1 = not counted). Neither is
	// elsewhere in summary.json; `tasksim merge` reads them to judge the merged run as a run
	// is judged (MergeRuns).
	PollIntervalMS     float64 `json:"poll_interval_ms"`
	TasksUnknownWithID int64   `json:"tasks_unknown_with_id"`
	// ABSide is the side of an A/B run (`run --baseline-target`) the shard belongs to:
	// "canary" (the even shards of Count) or "baseline" (the odd ones); absent otherwise.
	// A merge of one side's shards expects that side's indexes only.
	ABSide string `json:"ab_side,omitempty"`
}

// The sides of an A/B run, as ShardInfo.ABSide names them.
const (
	ABCanary   = "canary"
	ABBaseline = "baseline"
)

// owns says whether the shards of the run sh belongs to include index i: every index, or,
// for one side of an A/B run, that side's (canary even, baseline odd).
func (sh *ShardInfo) owns(i int) bool {
	switch sh.ABSide {
	case ABCanary:
		return i%2 == 0
	case ABBaseline:
		return i%2 == 1
	}
	return true
}

// NewShardInfo is the shard block of summary s: index of count, the scenario's hash, the
// common start (zero = none) and how late the load started after it.
func NewShardInfo(s *Summary, index, count int, hash string, startAt time.Time, late time.Duration) *ShardInfo {
	sh := &ShardInfo{Index: index, Count: max(count, 1), ScenarioHash: hash, Seed: s.Seed,
		Protocol: s.Protocol, Target: s.Target, LateByS: round3(max(late, 0).Seconds()), TasksUnknownWithID: -1}
	if !startAt.IsZero() {
		at := startAt.UTC()
		sh.StartAt = &at
	}
	return sh
}
