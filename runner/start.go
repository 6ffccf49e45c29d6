package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// lateAfter is how late a load may start after Options.StartAt before the run says so.
const lateAfter = time.Second

// waitStart waits for the common start (Options.StartAt), if any, and notes how late the
// load starts after it, saying so past lateAfter. A stop during the wait stops the run
// before its load.
func (r *runRequest) waitStart(ctx context.Context) error {
	at := r.opts.StartAt
	if at.IsZero() {
		return nil
	}
	r.phase(PhaseWait)
	if d := time.Until(at); d > 0 {
		r.note("waiting %v for the common start %s", d.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	}
	ctx, cancel := r.stopContext(ctx)
	defer cancel()
	late, err := waitUntil(ctx, at)
	if err != nil {
		return &InterruptedError{"waiting for the common start; no load was run"}
	}
	r.lateBy = late
	if note := lateNote(late, at); note != "" {
		r.note("%s", note)
	}
	return nil
}

// meet waits for the runs this one starts together with (Options.StartTogether) and takes
// the common start it returns as StartAt.
func (r *runRequest) meet(ctx context.Context) error {
	r.phase(PhaseWait)
	ctx, cancel := r.stopContext(ctx)
	defer cancel()
	at, err := r.opts.StartTogether(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return &InterruptedError{"waiting for the runs started with it; no load was run"}
		}
		return err
	}
	r.opts.StartAt = at
	return nil
}

// stopContext is ctx, cancelled as well once Options.Stop is closed.
func (r *runRequest) stopContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-r.opts.Stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// waitUntil waits until at and returns how late it returned after at: 0 when it waited,
// now - at when at had passed already. It reads the clock through time.Now and waits with a
// timer, so a synctest bubble runs it in virtual time. ctx ending stops the wait with its
// error.
func waitUntil(ctx context.Context, at time.Time) (late time.Duration, err error) {
	d := time.Until(at)
	if d <= 0 {
		return -d, nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// lateNote is what a run says of a load that started late after its common start at; ""
// when it started within a second of it.
func lateNote(late time.Duration, at time.Time) string {
	if late <= lateAfter {
		return ""
	}
	return fmt.Sprintf("started late by %v after the common start %s: this run's seconds do not line up with the others'",
		late.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
}

// shardInfo is the summary's shard block: nil for a run of the whole scenario without a
// common start.
func (r *runRequest) shardInfo(sum *results.Summary) *results.ShardInfo {
	sh := r.cfg.Shard
	if sh == (scenarios.Shard{}) && r.opts.StartAt.IsZero() { // no --shard, --shards or --start-at
		return nil
	}
	info := results.NewShardInfo(sum, sh.Index, sh.Count, r.sc.Hash(), r.opts.StartAt, r.lateBy)
	info.ABSide = r.opts.ABSide
	return info
}
