package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

func TestParseShard(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == JobIndexEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name      string
		spec      string
		shards    int
		shardsSet bool
		env       string
		want      scenarios.Shard
		err       string
	}{
		{"none", "", 0, false, "3", scenarios.Shard{}, ""},
		{"--shard", "1/3", 0, false, "", scenarios.Shard{Index: 1, Count: 3}, ""},
		{"--shard wins over --shards' index", "1/5", 5, true, "4", scenarios.Shard{Index: 1, Count: 5}, ""},
		{"--shard and --shards disagree", "1/3", 5, true, "4", scenarios.Shard{}, "two counts of shards"},
		{"--shards from the Job's index", "", 5, true, "4", scenarios.Shard{Index: 4, Count: 5}, ""},
		{"--shards without the index", "", 5, true, "", scenarios.Shard{}, "JOB_COMPLETION_INDEX"},
		{"index out of range", "", 5, true, "5", scenarios.Shard{}, "index 5 of 5"},
		{"index not a number", "", 5, true, "x", scenarios.Shard{}, "not a whole number"},
		{"--shards 0", "", 0, true, "0", scenarios.Shard{}, "want 1.."},
		{"bad --shard", "3/3", 0, false, "", scenarios.Shard{}, "--shard"},
	} {
		got, err := ParseShard(tc.spec, tc.shards, tc.shardsSet, env(tc.env))
		var ue *UsageError
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ue)):
			t.Errorf("%s: error %v, want a usage error containing %q", tc.name, err, tc.err)
		case got != tc.want:
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{"", time.Time{}, ""},
		{"2026-03-01T12:00:05Z", now.Add(5 * time.Second), ""},
		{"2026-03-01T13:00:05.5+01:00", now.Add(5500 * time.Millisecond), ""},
		{"2026-03-01T11:00:00Z", now.Add(-time.Hour), ""}, // past: the run reports it late
		{"2026-03-02T12:00:00Z", now.Add(24 * time.Hour), ""},
		{"2026-03-02T12:00:01Z", time.Time{}, "at most 24h0m0s ahead"},
		{"tomorrow", time.Time{}, "RFC 3339"},
		{"2026-03-01 12:00:00", time.Time{}, "RFC 3339"},
	} {
		got, err := ParseStartAt(tc.in, now)
		var ue *UsageError
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ue)):
			t.Errorf("%q: error %v, want a usage error containing %q", tc.in, err, tc.err)
		case !got.Equal(tc.want):
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
	}
}
