package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/scenarios"
)

// TestWaitUntil: in virtual time, the wait ends exactly at the instant, reports no lateness;
// an instant already past returns at once with how late; a cancelled wait returns its error.
func TestWaitUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(90 * time.Second)
		late, err := waitUntil(context.Background(), at)
		if err != nil || late != 0 || !time.Now().Equal(at) {
			t.Errorf("future: late %v, err %v, returned at %v, want %v", late, err, time.Now(), at)
		}
		past := time.Now().Add(-2500 * time.Millisecond)
		before := time.Now()
		late, err = waitUntil(context.Background(), past)
		if err != nil || late != 2500*time.Millisecond || !time.Now().Equal(before) {
			t.Errorf("past: late %v, err %v, waited %v", late, err, time.Since(before))
		}
		if note := lateNote(late, past); !strings.Contains(note, "started late by 2.5s") {
			t.Errorf("lateNote = %q", note)
		}
		if note := lateNote(time.Second, past); note != "" {
			t.Errorf("a start late by 1s is on time, got %q", note)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		if _, err := waitUntil(ctx, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled wait: %v", err)
		}
	})
}

// TestUnshardedRunHasNoShardBlock: without --shard, --shards or --start-at nothing changes.
func TestUnshardedRunHasNoShardBlock(t *testing.T) {
	r := &runRequest{cfg: &loadgen.Config{}, sc: &scenarios.Scenario{}}
	if r.shardInfo(nil) != nil {
		t.Error("a run of the whole scenario has a shard block")
	}
}

// TestStartTogether: a run given Options.StartTogether waits for the instant it returns and
// counts from it, not late; a stop while it waits stops the run before its load.
func TestStartTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc, err := scenarios.Load("baseline")
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Set("duration", "2s"); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(7 * time.Second)
		together := func(context.Context) (time.Time, error) { return at, nil }
		sum, err := Run(context.Background(), sc, Options{Dir: t.TempDir(), InProcess: true, StartTogether: together})
		if sum == nil || sum.Shard == nil || sum.Shard.StartAt == nil {
			t.Fatalf("no summary with a shard block: %v", err)
		}
		if !sum.Shard.StartAt.Equal(at) || sum.Shard.LateByS != 0 || !sum.StartedAt.Equal(at) {
			t.Errorf("start_at %v, late_by_s %v, started_at %v: want %v, not late", sum.Shard.StartAt, sum.Shard.LateByS, sum.StartedAt, at)
		}

		stop := make(chan struct{})
		waiting := func(ctx context.Context) (time.Time, error) {
			close(stop) // the signal comes while the run waits for the others
			<-ctx.Done()
			return time.Time{}, ctx.Err()
		}
		sum, err = Run(context.Background(), sc, Options{Dir: t.TempDir(), InProcess: true, StartTogether: waiting, Stop: stop})
		var ie *InterruptedError
		if !errors.As(err, &ie) || sum != nil && sum.Tasks.Created > 0 {
			t.Errorf("stopped while waiting: err %v, summary %+v: want interrupted before any load", err, sum)
		}
	})
}
