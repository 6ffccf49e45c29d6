package runner

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// The shard and common start of a run as a command line gives them (--shard I/N, --shards N
// with a Kubernetes Indexed Job's index, --start-at), read here so that every program that
// starts shards (the CLI, a test of a deployment, an operator) reads them alike; the errors
// name the flags.

// JobIndexEnv is the variable a Kubernetes Indexed Job sets to each pod's completion index:
// with --shards N it is the shard's index.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// MaxStartAhead bounds --start-at: an instant further ahead is a typo, not a plan.
const MaxStartAhead = 24 * time.Hour

// ParseShard is the slice of the scenario a run takes: --shard I/N, else --shards N with the
// index from JOB_COMPLETION_INDEX (getenv), else the whole scenario (the zero Shard). Every
// problem is a *UsageError, its message naming the flag.
func ParseShard(spec string, shards int, shardsSet bool, getenv func(string) string) (scenarios.Shard, error) {
	if spec != "" { // --shard wins over --shards, which must then agree on N
		sh, err := scenarios.ParseShard(spec)
		if err != nil {
			return scenarios.Shard{}, usageErrorf("--shard: %v", err)
		}
		if shardsSet && shards != sh.Count {
			return scenarios.Shard{}, usageErrorf("--shard %s and --shards %d: two counts of shards; give one", spec, shards)
		}
		return sh, nil
	}
	if !shardsSet {
		return scenarios.Shard{}, nil
	}
	v := getenv(JobIndexEnv)
	if v == "" {
		return scenarios.Shard{}, usageErrorf("--shards %d: the shard's index comes from %s (set by a Kubernetes Indexed Job), which is not set; or give --shard I/%d", shards, JobIndexEnv, shards)
	}
	idx, err := strconv.Atoi(v)
	if err != nil {
		return scenarios.Shard{}, usageErrorf("--shards %d: %s=%q is not a whole number", shards, JobIndexEnv, v)
	}
	if shards < 1 {
		return scenarios.Shard{}, usageErrorf("--shards %d: want 1..%d", shards, scenarios.MaxShards)
	}
	sh := scenarios.Shard{Index: idx, Count: shards}
	if err := sh.Validate(); err != nil {
		return scenarios.Shard{}, usageErrorf("--shards %d with %s=%s: %v", shards, JobIndexEnv, v, err)
	}
	return sh, nil
}

// ParseStartAt reads --start-at, an RFC 3339 instant at most MaxStartAhead after now; ""
// is none (the zero time). An instant already past is accepted: the run starts at once and
// says how late.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usageErrorf("--start-at %q: want an RFC 3339 instant, e.g. 2026-01-02T15:04:05Z", s)
	}
	if ahead := at.Sub(now); ahead > MaxStartAhead {
		return time.Time{}, usageErrorf("--start-at %s is %v away: at most %v ahead", s, ahead.Round(time.Second), MaxStartAhead)
	}
	return at, nil
}

// usageErrorf is a *UsageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}
