package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// TestFor: off shows nothing; a writer that is no terminal gets lines every every, or none
// for a period of 0 or less; bars only on a terminal.
func TestFor(t *testing.T) {
	var b bytes.Buffer
	for _, c := range []struct {
		off   bool
		every time.Duration
		want  Mode
	}{
		{false, 5 * time.Second, Mode{Every: 5 * time.Second}},
		{false, 0, Mode{}},
		{false, -time.Second, Mode{}},
		{true, 5 * time.Second, Mode{}},
	} {
		if got := For(&b, c.off, c.every); got != c.want {
			t.Errorf("For(buffer, off %v, every %v) = %+v, want %+v", c.off, c.every, got, c.want)
		}
	}
	if IsTerminal(&b) {
		t.Error("a buffer is a terminal")
	}
}

// TestRunLines: a run's status line comes at the first window of each period, with the
// prefix and runner.Progress.Line's figures; none in a Mode without lines.
func TestRunLines(t *testing.T) {
	var b bytes.Buffer
	o := NewRun(&b, Mode{Every: 5 * time.Second}, "tasksim run: ", time.Minute)
	o.Phase(runner.PhaseLoad)
	for s := 1; s <= 12; s++ {
		o.Window(runner.Progress{Elapsed: time.Duration(s) * time.Second, Duration: time.Minute, Created: int64(s)})
	}
	o.Phase(runner.PhaseLoadDone)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"tasksim run: load 0:01/1:00  created 1 ", "tasksim run: load 0:05/1:00  created 5 ", "tasksim run: load 0:10/1:00  created 10 "}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	if o.Current() != runner.PhaseLoadDone {
		t.Errorf("Current() = %v, want PhaseLoadDone", o.Current())
	}
	b.Reset()
	quiet := NewRun(&b, Mode{}, "tasksim run: ", time.Minute)
	quiet.Window(runner.Progress{Elapsed: 10 * time.Second})
	if b.Len() != 0 {
		t.Errorf("a Mode without lines wrote %q", b.String())
	}
}

// TestSweepLines: without bars a sweep says as each cell starts and ends, and each cell's
// status line starts again from its own first window.
func TestSweepLines(t *testing.T) {
	var b bytes.Buffer
	o := NewSweep(&b, Mode{Every: 5 * time.Second}, 2)
	for _, label := range []string{"clients=1", "clients=2"} {
		o.CellStarted(label)
		for s := 1; s <= 6; s++ {
			o.Window(runner.Progress{Elapsed: time.Duration(s) * time.Second, Duration: 6 * time.Second})
		}
		o.CellEnded(label)
	}
	o.CellFailed("clients=2", "boom")
	o.Wait()
	got := b.String()
	for _, w := range []string{
		"tasksim sweep: cell 1/2 clients=1 started\n", "tasksim sweep: cell 1/2 clients=1: load 0:01/0:06",
		"tasksim sweep: cell 1/2 clients=1: load 0:05/0:06", "tasksim sweep: cell 1/2 clients=1 done\n",
		"tasksim sweep: cell 2/2 clients=2: load 0:01/0:06", "tasksim sweep: cell 2/2 clients=2 done\n",
		"tasksim sweep: cell clients=2 failed: boom\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("the sweep's lines lack %q:\n%s", w, got)
		}
	}
	if n := strings.Count(got, ": load "); n != 4 {
		t.Errorf("%d status lines, want 4 (two per cell):\n%s", n, got)
	}
}

// syncBuffer is a bytes.Buffer that the suite's case lines and the status lines' goroutine
// can write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCasesLines: the suite's cases each get a line as they end, and, in virtual time, the
// status line comes every period with the counts so far and the last case; stopping ends
// the lines.
func TestCasesLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b syncBuffer
		o := NewCases(&b, Mode{Every: 5 * time.Second})
		stop := o.Start()
		time.Sleep(3 * time.Second)
		o.Ended(results.ContractCase{ID: "create.basic", Verdict: results.CasePass})
		o.Ended(results.ContractCase{ID: "cancel.ack", Verdict: results.CaseFail})
		time.Sleep(4 * time.Second) // 0:05: the first status line
		o.Ended(results.ContractCase{ID: "input.elicit", Verdict: results.CaseSkip})
		time.Sleep(4 * time.Second) // 0:10: the second
		synctest.Wait()
		stop()
		time.Sleep(time.Minute)
		want := "conform: pass create.basic\nconform: fail cancel.ack\n" +
			"tasksim conform: 0:05  2 cases ended: 1 pass, 1 fail, 0 skip  last: cancel.ack\n" +
			"conform: skip input.elicit\n" +
			"tasksim conform: 0:10  3 cases ended: 1 pass, 1 fail, 1 skip  last: input.elicit\n"
		if got := b.String(); got != want {
			t.Errorf("lines:\n%s\nwant:\n%s", got, want)
		}
	})
	var b bytes.Buffer
	o := NewCases(&b, Mode{Bars: true}) // a terminal: the cases, no status lines
	o.Start()()
	o.Ended(results.ContractCase{ID: "create.basic", Verdict: results.CasePass})
	if got := b.String(); got != "conform: pass create.basic\n" {
		t.Errorf("on a terminal: %q", got)
	}
}
