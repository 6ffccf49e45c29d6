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

// The progress bars (mpb) of run and sweep, on stderr. They show only when stderr is a
// terminal (isTerminal) and --no-progress is not given; a nil bar shows nothing.

// runObserver follows a run for the command line (runner.Observer): it keeps the run's
// phase, which decides what a signal does (withSignals), and, when bars is true, shows the
// load as a progress bar on w.
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

func (o *runObserver) Window(p runner.Progress) { o.progress.update(p) }

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

// progress is a run's bar: elapsed of total, tasks created, completed and in flight, polls
// per second and errors, fed by the run's collector once per window.
type progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	total int64 // seconds of load
	line  atomic.Pointer[string]
}

func newProgress(w io.Writer, total time.Duration) *progress {
	pr := &progress{p: newBars(w), total: max(1, int64(total/time.Second))}
	empty := ""
	pr.line.Store(&empty)
	pr.bar = pr.p.AddBar(pr.total,
		mpb.PrependDecorators(decor.Name("load "), decor.CountersNoUnit("%d/%ds")),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return *pr.line.Load() })),
	)
	return pr
}

// update sets the bar from the run's figures.
func (pr *progress) update(p runner.Progress) {
	if pr == nil {
		return
	}
	s := fmt.Sprintf(" created %d  done %d  in flight %d  polls %d (%.0f/s)  errors %d", p.Created, p.Completed, p.InFlight, p.Polls, p.PollsPerSecond, p.Errors)
	pr.line.Store(&s)
	pr.bar.SetCurrent(min(int64(p.Elapsed/time.Second), pr.total))
}

// done completes the bar and waits for the last render.
func (pr *progress) done() {
	if pr == nil {
		return
	}
	pr.bar.SetTotal(-1, true)
	pr.p.Wait()
}

// sweepBars are the sweep's bars: one overall bar (cells done of all) and one per cell,
// which shows the cell's values and its elapsed time and stays when it ends.
type sweepBars struct {
	p       *mpb.Progress
	overall *mpb.Bar
	cell    *mpb.Bar
}

func newSweepBars(w io.Writer, cells int) *sweepBars {
	p := newBars(w)
	overall := p.AddBar(int64(cells), mpb.BarPriority(1<<30), // always the last line
		mpb.PrependDecorators(decor.Name("sweep "), decor.CountersNoUnit("%d/%d cells")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	return &sweepBars{p: p, overall: overall}
}

func (b *sweepBars) startCell(label string) {
	if b == nil {
		return
	}
	b.cell = b.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerClearOnComplete(),
		mpb.PrependDecorators(decor.Name(label+" ")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
}

func (b *sweepBars) endCell() {
	if b == nil {
		return
	}
	b.cell.SetTotal(-1, true)
	b.overall.Increment()
}

func (b *sweepBars) wait() {
	if b == nil {
		return
	}
	b.overall.SetTotal(-1, true)
	b.p.Wait()
}
