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
