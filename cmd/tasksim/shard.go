package main

import (
	"strconv"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// jobIndexEnv is the variable a Kubernetes Indexed Job sets to each pod's completion index:
// with --shards N it is the shard's index.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// maxStartAhead bounds --start-at: an instant further ahead is a typo, not a plan.
const maxStartAhead = 24 * time.Hour

// runShard is the slice of the scenario a run takes: --shard I/N, else --shards N with the
// index from JOB_COMPLETION_INDEX (getenv), else the whole scenario (the zero Shard). Every
// problem is a usage error.
func runShard(spec string, shards int, shardsSet bool, getenv func(string) string) (scenarios.Shard, error) {
	if spec != "" { // --shard wins over --shards, which must then agree on N
		sh, err := scenarios.ParseShard(spec)
		if err != nil {
			return scenarios.Shard{}, usagef("--shard: %v", err)
		}
		if shardsSet && shards != sh.Count {
			return scenarios.Shard{}, usagef("--shard %s and --shards %d: two counts of shards; give one", spec, shards)
		}
		return sh, nil
	}
	if !shardsSet {
		return scenarios.Shard{}, nil
	}
	v := getenv(jobIndexEnv)
	if v == "" {
		return scenarios.Shard{}, usagef("--shards %d: the shard's index comes from %s (set by a Kubernetes Indexed Job), which is not set; or give --shard I/%d", shards, jobIndexEnv, shards)
	}
	idx, err := strconv.Atoi(v)
	if err != nil {
		return scenarios.Shard{}, usagef("--shards %d: %s=%q is not a whole number", shards, jobIndexEnv, v)
	}
	if shards < 1 {
		return scenarios.Shard{}, usagef("--shards %d: want 1..%d", shards, scenarios.MaxShards)
	}
	sh := scenarios.Shard{Index: idx, Count: shards}
	if err := sh.Validate(); err != nil {
		return scenarios.Shard{}, usagef("--shards %d with %s=%s: %v", shards, jobIndexEnv, v, err)
	}
	return sh, nil
}

// parseStartAt reads --start-at, an RFC 3339 instant at most maxStartAhead after now; ""
// is none (the zero time). An instant already past is accepted: the run starts at once and
// says how late.
func parseStartAt(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("--start-at %q: want an RFC 3339 instant, e.g. 2026-01-02T15:04:05Z", s)
	}
	if ahead := at.Sub(now); ahead > maxStartAhead {
		return time.Time{}, usagef("--start-at %s is %v away: at most %v ahead", s, ahead.Round(time.Second), maxStartAhead)
	}
	return at, nil
}
