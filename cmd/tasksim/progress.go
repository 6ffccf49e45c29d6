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
	"github.com/tasksim/tasksim/sweep"
)

// The progress bars (mpb) of run and sweep, on stderr. They show only when stderr is a
// terminal (isTerminal) and --no-progress is not given; a nil bar shows nothing.

// runObserver follows a run for the command line (runner.Observer): it keeps the run's
// phase, which decides what a signal does (withSignals), and, when bars is true, shows the
// load on w as a bar: elapsed of total, tasks created, completed and in flight, polls per
// second and errors, fed by the run's collector once per window.
type runObserver struct {
	w        io.Writer
	bars     bool          // show the progress bar (stderr is a terminal, no --no-progress)
	duration time.Duration // the load phase planned
	phase    atomic.Int32  // the runner.Phase the run is in; 0 before the first

	p    *mpb.Progress // the bar's container during the load; nil otherwise
	bar  *mpb.Bar
	line atomic.Pointer[string] // the figures after the bar
}

var _ runner.Observer = (*runObserver)(nil)

func (o *runObserver) Phase(p runner.Phase) {
	o.phase.Store(int32(p))
	switch {
	case !o.bars:
	case p == runner.PhaseLoad:
		empty := ""
		o.line.Store(&empty)
		o.p = newBars(o.w)
		o.bar = o.p.AddBar(o.seconds(),
			mpb.PrependDecorators(decor.Name("load "), decor.CountersNoUnit("%d/%ds")),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return *o.line.Load() })))
	case p == runner.PhaseLoadDone && o.p != nil: // complete the bar, wait for its last render
		o.bar.SetTotal(-1, true)
		o.p.Wait()
		o.p = nil
	}
}

func (o *runObserver) Window(p runner.Progress) {
	if o.p == nil {
		return
	}
	s := fmt.Sprintf(" created %d  done %d  in flight %d  polls %d (%.0f/s)  errors %d", p.Created, p.Completed, p.InFlight, p.Polls, p.PollsPerSecond, p.Errors)
	o.line.Store(&s)
	o.bar.SetCurrent(min(int64(p.Elapsed/time.Second), o.seconds()))
}

// seconds is the bar's total: the load phase in whole seconds, at least 1.
func (o *runObserver) seconds() int64 { return max(1, int64(o.duration/time.Second)) }

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newBars is the container of a command's bars on w.
func newBars(w io.Writer) *mpb.Progress {
	return mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(250*time.Millisecond))
}

// sweepObserver follows a sweep (sweep.Observer): it says on stderr which cells failed and,
// with bars, shows one overall bar (cells done of all) and one per cell, which shows the
// cell's values and its elapsed time and stays when it ends.
type sweepObserver struct {
	stderr  io.Writer
	p       *mpb.Progress // nil: no bars
	overall *mpb.Bar
	cell    *mpb.Bar
}

var _ sweep.Observer = (*sweepObserver)(nil)

func newSweepObserver(stderr io.Writer, bars bool, cells int) *sweepObserver {
	o := &sweepObserver{stderr: stderr}
	if bars {
		o.p = newBars(stderr)
		o.overall = o.p.AddBar(int64(cells), mpb.BarPriority(1<<30), // always the last line
			mpb.PrependDecorators(decor.Name("sweep "), decor.CountersNoUnit("%d/%d cells")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	}
	return o
}

func (o *sweepObserver) CellStarted(label string) {
	if o.p != nil {
		o.cell = o.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerClearOnComplete(),
			mpb.PrependDecorators(decor.Name(label+" ")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	}
}

func (o *sweepObserver) CellEnded(string) {
	if o.p != nil {
		o.cell.SetTotal(-1, true)
		o.overall.Increment()
	}
}

func (o *sweepObserver) CellFailed(label, err string) {
	fmt.Fprintf(o.stderr, "tasksim sweep: cell %s failed: %s\n", label, err)
}

// wait completes the bars and waits for their last render.
func (o *sweepObserver) wait() {
	if o.p != nil {
		o.overall.SetTotal(-1, true)
		o.p.Wait()
	}
}
