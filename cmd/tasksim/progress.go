package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tasksim/tasksim/runner"
)

// runObserver follows a run for the command line (runner.Observer): it keeps the run's
// phase, which decides what a signal does, and, when bars is true, shows the load as a
// progress bar on w.
type runObserver struct {
	w        io.Writer
	bars     bool          // show the progress bar (stderr is a terminal, no --no-progress)
	duration time.Duration // the load phase planned
	phase    atomic.Int32  // the runner.Phase the run is in; 0 before the first
	progress *progress     // the bar during the load; nil otherwise
}

var _ runner.Observer = (*runObserver)(nil)

func (o *runObserver) Phase(p runner.Phase) {
	o.phase.Store(int32(p))
	switch {
	case !o.bars:
	case p == runner.PhaseLoad:
		o.progress = newProgress(o.w, o.duration)
	case p == runner.PhaseLoadDone:
		o.progress.done()
	}
}

func (o *runObserver) Window(p runner.Progress) {
	o.progress.update(p.Elapsed, p.Created, p.Completed, p.InFlight, p.Polls, p.Errors, p.PollsPerSecond)
}

// progress shows the run on stderr with mpb: elapsed of total, tasks created, completed and
// in flight, polls per second and errors. It is off when stderr is not a terminal or with
// --no-progress; the run's collector feeds it once per window.
type progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	total int64 // seconds of load
	line  atomic.Pointer[string]
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, total time.Duration) *progress {
	pr := &progress{p: mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(250*time.Millisecond)),
		total: max(1, int64(total/time.Second))}
	empty := ""
	pr.line.Store(&empty)
	pr.bar = pr.p.AddBar(pr.total,
		mpb.PrependDecorators(decor.Name("load "), decor.CountersNoUnit("%d/%ds")),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return *pr.line.Load() })),
	)
	return pr
}

// update sets the bar from the run's figures.
func (pr *progress) update(elapsed time.Duration, created, completed, inFlight, polls, errors int64, pollsPerSec float64) {
	if pr == nil {
		return
	}
	s := fmt.Sprintf(" created %d  done %d  in flight %d  polls %d (%.0f/s)  errors %d", created, completed, inFlight, polls, pollsPerSec, errors)
	pr.line.Store(&s)
	pr.bar.SetCurrent(min(int64(elapsed/time.Second), pr.total))
}

// done completes the bar and waits for the last render.
func (pr *progress) done() {
	if pr == nil {
		return
	}
	pr.bar.SetTotal(-1, true)
	pr.p.Wait()
}
