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

// The progress of run and sweep, on stderr, unless --no-progress: bars (mpb) on a terminal
// (isTerminal), a plain status line every --progress-interval elsewhere (CI logs, kubectl
// logs), where bars would print nothing but their last frame; a nil bar shows nothing.

// progressKind is how a command shows progress on w: bars, or plain lines every so often
// (0: none).
func progressKind(off bool, every time.Duration, w io.Writer) (bars bool, lines time.Duration) {
	switch {
	case off || every <= 0 && !isTerminal(w):
		return false, 0
	case isTerminal(w):
		return true, 0
	}
	return false, every
}

// runObserver follows a run for the command line (runner.Observer): it keeps the run's
// phase, which decides what a signal does (withSignals), and, when bars is true, shows the
// load on w as a bar: elapsed of total, tasks created, completed and in flight, polls per
// second and errors, fed by the run's collector once per window.
type runObserver struct {
	w        io.Writer
	bars     bool          // show the progress bar (stderr is a terminal, no --no-progress)
	every    time.Duration // else a plain status line this often; 0 = none
	next     time.Duration // the elapsed time of the next status line
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
	if o.every > 0 && p.Elapsed >= o.next {
		fmt.Fprintln(o.w, "tasksim run: "+p.Line())
		o.next = p.Elapsed.Truncate(o.every) + o.every
	}
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

	// Without bars, a status line every every (0: none) while a cell runs: which cell of
	// how many, since when. done ends the current cell's ticker.
	every       time.Duration
	cells, nth  int
	label       string
	started     time.Time
	done        chan struct{}
	tickerEnded chan struct{}
}

var _ sweep.Observer = (*sweepObserver)(nil)

func newSweepObserver(stderr io.Writer, bars bool, every time.Duration, cells int) *sweepObserver {
	o := &sweepObserver{stderr: stderr, every: every, cells: cells}
	if bars {
		o.p = newBars(stderr)
		o.overall = o.p.AddBar(int64(cells), mpb.BarPriority(1<<30), // always the last line
			mpb.PrependDecorators(decor.Name("sweep "), decor.CountersNoUnit("%d/%d cells")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	}
	return o
}

func (o *sweepObserver) CellStarted(label string) {
	o.nth++
	if o.every > 0 {
		o.label, o.started = label, time.Now()
		o.status("started")
		o.done, o.tickerEnded = make(chan struct{}), make(chan struct{})
		go o.tick(o.done, o.tickerEnded)
	}
	if o.p != nil {
		o.cell = o.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerClearOnComplete(),
			mpb.PrependDecorators(decor.Name(label+" ")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	}
}

// tick writes the cell's status line every o.every until done is closed.
func (o *sweepObserver) tick(done, ended chan struct{}) {
	defer close(ended)
	t := time.NewTicker(o.every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			o.status("running")
		}
	}
}

// status writes the current cell's plain status line.
func (o *sweepObserver) status(what string) {
	fmt.Fprintf(o.stderr, "tasksim sweep: cell %d/%d %s %s, %s in\n", o.nth, o.cells, o.label, what,
		time.Since(o.started).Round(time.Second))
}

func (o *sweepObserver) CellEnded(string) {
	if o.done != nil {
		close(o.done)
		<-o.tickerEnded
		o.done = nil
		o.status("done")
	}
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
