package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tasksim/tasksim/internal/progress"
	"github.com/tasksim/tasksim/runner"
)

// onSignals watches SIGINT and SIGTERM for a command that stops in two steps, the one
// signal handling of every command (run, sweep, serve, conform): the first signal calls
// first, which returns what the second does; nil gives the second its default action back
// (the process ends). Calling the returned func ends the watch.
func onSignals(first func() (second func())) (stop func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		second := first()
		if second == nil {
			signal.Stop(sig)
			return
		}
		select {
		case <-sig:
			second()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}

// withSignals calls run (a run, both sides of an A/B run, or a sweep's cells) as a command
// line does: the first SIGINT or SIGTERM closes stop, a graceful stop (runner.Options.Stop:
// the contract suite stops and the load never starts, or the load drains, and the files are
// written), the second cancels ctx, a stop at once, except during the contract suite, where
// it ends the process (the default action, restored): the suite's cleanup may wait on a
// target that does not answer. obs tells the run's phase; nil (a sweep, which says nothing
// here) is a load.
func withSignals(obs *progress.Run, stderr io.Writer, run func(ctx context.Context, stop <-chan struct{})) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	defer onSignals(func() func() {
		second := cancel
		switch {
		case obs == nil:
		case obs.Current() == runner.PhaseContract:
			fmt.Fprintln(stderr, "\ntasksim run: stopping the contract suite (Ctrl-C again to stop at once); the load will not start")
			second = nil
		case obs.Current() == runner.PhaseWait: // the run stops before its load, and says so
		default:
			fmt.Fprintln(stderr, "\ntasksim run: stopping: draining in-flight tasks (Ctrl-C again to stop at once)")
		}
		close(stop)
		return second
	})()
	run(ctx, stop)
}
