package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tasksim/tasksim/results"
)

// Cases follows the contract suite (`tasksim conform`): each case on w as it ends
// ("conform: pass ID", Ended) and, in a Mode with lines, a status line every Every while the
// suite runs (Start), so that a case waiting on a slow task still shows in a CI log that the
// suite is alive: elapsed, the cases ended by verdict, the last one. Ended and the status
// line may run at once.
type Cases struct {
	w     io.Writer
	every time.Duration

	mu     sync.Mutex
	start  time.Time
	counts results.ContractCount
	last   string // the id of the last case that ended
}

// NewCases follows the suite on w; m.Every > 0 adds the status lines.
func NewCases(w io.Writer, m Mode) *Cases { return &Cases{w: w, every: m.Every} }

// Ended says that case c ended, with its verdict, and counts it.
func (o *Cases) Ended(c results.ContractCase) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch c.Verdict {
	case results.CasePass:
		o.counts.Pass++
	case results.CaseFail:
		o.counts.Fail++
	default:
		o.counts.Skip++
	}
	o.last = c.ID
	fmt.Fprintf(o.w, "conform: %-4s %s\n", c.Verdict, c.ID)
}

// Start starts the status lines (none without them) and returns what stops them, which
// waits until the last line is written.
func (o *Cases) Start() (stop func()) {
	o.start = time.Now()
	if o.every <= 0 {
		return func() {}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(o.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				o.status()
			}
		}
	}()
	return func() { close(done); <-ended }
}

// status writes the status line.
func (o *Cases) status() {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := int64(time.Since(o.start) / time.Second)
	line := fmt.Sprintf("tasksim conform: %d:%02d  %d cases ended: %d pass, %d fail, %d skip", s/60, s%60,
		o.counts.Pass+o.counts.Fail+o.counts.Skip, o.counts.Pass, o.counts.Fail, o.counts.Skip)
	if o.last != "" {
		line += "  last: " + o.last
	}
	fmt.Fprintln(o.w, line)
}
