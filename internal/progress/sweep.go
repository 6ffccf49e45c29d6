package progress

import (
	"fmt"
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/sweep"
)

// Sweep follows a sweep (sweep.Observer) and each cell's run (runner.Observer, as every
// cell's runner.Options.Observer): it says on w which cells failed and, in its Mode, shows
// one overall bar (cells done of all) and one per cell, which shows the cell's values and
// its elapsed time and stays when it ends; or a line as each cell starts and ends, and the
// cell's run's status line while it runs. A cell runs after the last one ended, so its
// fields are never shared by two runs.
type Sweep struct {
	w       io.Writer
	p       *mpb.Progress // nil: no bars
	overall *mpb.Bar
	cell    *mpb.Bar

	cells, nth int
	label      string
	lines      statusLines // of the running cell; every 0: no lines
}

var (
	_ sweep.Observer  = (*Sweep)(nil)
	_ runner.Observer = (*Sweep)(nil)
)

// NewSweep follows a sweep of cells cells on w in mode m.
func NewSweep(w io.Writer, m Mode, cells int) *Sweep {
	o := &Sweep{w: w, lines: statusLines{every: m.Every}, cells: cells}
	if m.Bars {
		o.p = newBars(w)
		o.overall = o.p.AddBar(int64(cells), mpb.BarPriority(1<<30), // always the last line
			mpb.PrependDecorators(decor.Name("sweep "), decor.CountersNoUnit("%d/%d cells")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	}
	return o
}

// CellStarted says the cell started and gives it its bar (sweep.Observer).
func (o *Sweep) CellStarted(label string) {
	o.nth, o.label, o.lines.next = o.nth+1, label, 0
	o.cellLine("started")
	if o.p != nil {
		o.cell = o.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerClearOnComplete(),
			mpb.PrependDecorators(decor.Name(label+" ")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	}
}

// Phase is nothing to a sweep's progress: its cells' phases are the cells' own.
func (o *Sweep) Phase(runner.Phase) {}

// Window writes the running cell's status line when one is due.
func (o *Sweep) Window(p runner.Progress) {
	o.lines.write(o.w, fmt.Sprintf("tasksim sweep: cell %d/%d %s: ", o.nth, o.cells, o.label), p)
}

// cellLine says, in plain lines, that the current cell did what.
func (o *Sweep) cellLine(what string) {
	if o.lines.every > 0 {
		fmt.Fprintf(o.w, "tasksim sweep: cell %d/%d %s %s\n", o.nth, o.cells, o.label, what)
	}
}

// CellEnded says the cell ended and completes its bar (sweep.Observer).
func (o *Sweep) CellEnded(string) {
	o.cellLine("done")
	if o.p != nil {
		o.cell.SetTotal(-1, true)
		o.overall.Increment()
	}
}

// CellFailed says why a cell's run ended in an error of its own (sweep.Observer).
func (o *Sweep) CellFailed(label, err string) {
	fmt.Fprintf(o.w, "tasksim sweep: cell %s failed: %s\n", label, err)
}

// Wait completes the bars and waits for their last render.
func (o *Sweep) Wait() {
	if o.p != nil {
		o.overall.SetTotal(-1, true)
		o.p.Wait()
	}
}
