// Package progress shows a command's progress on its stderr, as an SRE watches it: bars
// (mpb) on a terminal; a plain status line every so often elsewhere (CI logs, kubectl logs
// of the Kubernetes Job), where bars would print nothing but their last frame; nothing at
// all when asked (--no-progress). It follows a run (Run, a runner.Observer), a sweep's
// cells (Sweep, a sweep.Observer and each cell's runner.Observer) and the contract suite's
// cases (Cases). The command line (cmd/tasksim) binds it to its flags and its stderr; it
// never reads a flag, touches a signal or exits.
package progress

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

// Mode is how progress shows on a writer: bars, or a plain line every Every (0: no lines).
// The zero Mode shows nothing.
type Mode struct {
	Bars  bool
	Every time.Duration
}

// For is the Mode of progress on w: nothing when off; bars when w is a terminal; else a
// plain line every every (0: none).
func For(w io.Writer, off bool, every time.Duration) Mode {
	switch {
	case off:
		return Mode{}
	case IsTerminal(w):
		return Mode{Bars: true}
	}
	return Mode{Every: max(every, 0)}
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// statusLines writes a run's plain status line (runner.Progress.Line) at most every every
// (0: never), at the first window of each period: a line a human or a log search can follow.
type statusLines struct {
	every time.Duration
	next  time.Duration // the elapsed time of the next line
}

// write writes p's line, after prefix, when one is due.
func (l *statusLines) write(w io.Writer, prefix string, p runner.Progress) {
	if l.every > 0 && p.Elapsed >= l.next {
		fmt.Fprintln(w, prefix+p.Line())
		l.next = p.Elapsed.Truncate(l.every) + l.every
	}
}

// newBars is the container of a command's bars on w.
func newBars(w io.Writer) *mpb.Progress {
	return mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(250*time.Millisecond))
}

// Run follows a run (runner.Observer): it keeps the run's phase (Phase), which decides what
// a signal does, and shows its load on w in its Mode: as a bar (elapsed of total, tasks
// created, completed and in flight, polls per second and errors), or as status lines each
// starting with prefix, fed by the run's collector once per window.
type Run struct {
	w        io.Writer
	mode     Mode
	prefix   string
	lines    statusLines
	duration time.Duration // the load phase planned
	phase    atomic.Int32  // the runner.Phase the run is in; 0 before the first

	p    *mpb.Progress // the bar's container during the load; nil otherwise
	bar  *mpb.Bar
	line atomic.Pointer[string] // the figures after the bar
}

var _ runner.Observer = (*Run)(nil)

// NewRun follows a run whose load lasts duration, on w in mode m; prefix starts each status
// line ("tasksim run: ").
func NewRun(w io.Writer, m Mode, prefix string, duration time.Duration) *Run {
	return &Run{w: w, mode: m, prefix: prefix, lines: statusLines{every: m.Every}, duration: duration}
}

// Current is the phase the run is in; 0 before the first.
func (o *Run) Current() runner.Phase { return runner.Phase(o.phase.Load()) }

// Phase keeps the run's phase and starts or completes the load's bar (runner.Observer).
func (o *Run) Phase(p runner.Phase) {
	o.phase.Store(int32(p))
	switch {
	case !o.mode.Bars:
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

// Window shows a second's figures: the bar's, and the status line when one is due
// (runner.Observer).
func (o *Run) Window(p runner.Progress) {
	o.lines.write(o.w, o.prefix, p)
	if o.p == nil {
		return
	}
	s := fmt.Sprintf(" created %d  done %d  in flight %d  polls %d (%.0f/s)  errors %d", p.Created, p.Completed, p.InFlight, p.Polls, p.PollsPerSecond, p.Errors)
	o.line.Store(&s)
	o.bar.SetCurrent(min(int64(p.Elapsed/time.Second), o.seconds()))
}

// seconds is the bar's total: the load phase in whole seconds, at least 1.
func (o *Run) seconds() int64 { return max(1, int64(o.duration/time.Second)) }
