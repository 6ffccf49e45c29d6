package loadgen

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func task(st mcp.Status, pollMs int) *mcp.Task {
	t := &mcp.Task{TaskID: "t1", Status: st}
	if pollMs > 0 {
		t.PollInterval = mcp.Millis(time.Duration(pollMs) * time.Millisecond)
	}
	return t
}

// ev is one event fed to a Lifecycle in a table test.
type ev struct {
	atMs   int
	kind   string // "start", "obs", "result", "resultFailed", "gone", "cancelSent", "poll"
	status mcp.Status
	pollMs int
	failed bool
	cancel time.Duration
}

// TestLifecycleTable feeds event sequences to the pure state machine and checks the step it
// asks for after each one.
func TestLifecycleTable(t *testing.T) {
	type want struct {
		kind StepKind
		atMs int // -1: At is zero
	}
	cases := []struct {
		name     string
		policy   PollPolicy
		strategy ResultStrategy
		ttl      time.Duration // granted at "start" when non-zero (Lifecycle.Granted)
		events   []ev
		wants    []want // one per event
		outcome  Outcome
	}{
		{
			name:    "poll to completion then fetch (R15, R17)",
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {1000, "poll", 0, 0, false, 0}, {1010, "obs", mcp.StatusWorking, 1000, false, 0}, {2010, "poll", 0, 0, false, 0}, {2020, "obs", mcp.StatusCompleted, 1000, false, 0}, {2030, "result", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepPoll, 1000}, {StepPoll, 2010}, {StepPoll, 2010}, {StepResult, -1}, {StepDone, 2030}},
			outcome: OutcomeCompleted,
		},
		{
			name:   "server re-advertises a longer interval",
			events: []ev{{0, "start", mcp.StatusWorking, 500, false, 0}, {500, "obs", mcp.StatusWorking, 2000, false, 0}},
			wants:  []want{{StepPoll, 500}, {StepPoll, 2500}},
		},
		{
			name:   "no advertised interval falls back to the policy interval",
			policy: PollPolicy{Interval: 300 * time.Millisecond},
			events: []ev{{0, "start", mcp.StatusWorking, 0, false, 0}},
			wants:  []want{{StepPoll, 300}},
		},
		{
			name:   "fixed ignores the server",
			policy: PollPolicy{Kind: PollFixed, Interval: 250 * time.Millisecond},
			events: []ev{{0, "start", mcp.StatusWorking, 5000, false, 0}},
			wants:  []want{{StepPoll, 250}},
		},
		{
			name:    "input_required calls tasks/result at once (R37)",
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {1000, "obs", mcp.StatusInputRequired, 1000, false, 0}, {1500, "result", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepResult, -1}, {StepDone, 1500}},
			outcome: OutcomeCompleted,
		},
		{
			name:     "block strategy waits on tasks/result, then polls after a cut (R16, R62)",
			strategy: ResultBlock,
			events:   []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {700, "resultFailed", 0, 0, false, 0}},
			wants:    []want{{StepResult, -1}, {StepPoll, 1700}},
		},
		{
			name:    "cancel before the next poll; cancelled needs no payload (R29)",
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 400 * time.Millisecond}, {400, "cancelSent", 0, 0, false, 0}, {410, "obs", mcp.StatusCancelled, 1000, false, 0}},
			wants:   []want{{StepCancel, 400}, {StepPoll, 1000}, {StepDone, 410}},
			outcome: OutcomeCancelled,
		},
		{
			name:    "a cancel due before the next poll still goes to a task seen completed (R26, R14)",
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 1500 * time.Millisecond}, {1000, "obs", mcp.StatusCompleted, 1000, false, 0}, {1010, "result", 0, 0, false, 0}, {1500, "cancelSent", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepResult, -1}, {StepCancel, 1500}, {StepDone, 1500}},
			outcome: OutcomeCompleted,
		},
		{
			name:    "a cancel due after the next poll is dropped once the task is seen completed",
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 2500 * time.Millisecond}, {1000, "obs", mcp.StatusCompleted, 1000, false, 0}, {1010, "result", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepResult, -1}, {StepDone, 1010}},
			outcome: OutcomeCompleted,
		},
		{
			name:    "vanished after its ttl: expired (R45, R46)",
			ttl:     3 * time.Second,
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {3000, "gone", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepDone, 3000}},
			outcome: OutcomeExpired,
		},
		{
			name:    "vanished within the grace before its ttl: expired",
			ttl:     3 * time.Second,
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {2000, "gone", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepDone, 2000}},
			outcome: OutcomeExpired,
		},
		{
			name:    "vanished before its ttl: lost",
			ttl:     300 * time.Second,
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {5000, "gone", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepDone, 5000}},
			outcome: OutcomeLost,
		},
		{
			name:    "vanished with no ttl granted (unlimited): lost",
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {1000, "gone", 0, 0, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepDone, 1000}},
			outcome: OutcomeLost,
		},
		{
			name:    "deadline is absolute: progress does not extend it",
			policy:  PollPolicy{Deadline: 1500 * time.Millisecond},
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {1000, "obs", mcp.StatusWorking, 1000, false, 0}, {1500, "obs", mcp.StatusWorking, 1000, false, 0}},
			wants:   []want{{StepPoll, 1000}, {StepPoll, 1500}, {StepDone, 1500}},
			outcome: OutcomeUnknown,
		},
		{
			name:    "isError payload means failed (R51)",
			events:  []ev{{0, "start", mcp.StatusWorking, 1000, false, 0}, {1000, "obs", mcp.StatusInputRequired, 1000, false, 0}, {1200, "result", 0, 0, true, 0}},
			wants:   []want{{StepPoll, 1000}, {StepResult, -1}, {StepDone, 1200}},
			outcome: OutcomeFailed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := Lifecycle{Policy: &tc.policy, Strategy: tc.strategy}
			for i, e := range tc.events {
				now := at(e.atMs)
				switch e.kind {
				case "start":
					l.Start(now, task(e.status, e.pollMs), e.cancel)
					if tc.ttl > 0 {
						l.Granted(now, mcp.Millis(tc.ttl))
					}
				case "obs":
					l.Observed(now, task(e.status, e.pollMs))
				case "poll":
					l.PollSent()
				case "result":
					l.ResultReceived(now, e.failed)
				case "resultFailed":
					l.ResultFailed(now)
				case "gone":
					l.Gone(now)
				case "cancelSent":
					l.CancelSent(now)
				}
				got := l.Next(now)
				w := tc.wants[i]
				wantAt := time.Time{}
				if w.atMs >= 0 {
					wantAt = at(w.atMs)
				}
				if got.Kind != w.kind || !got.At.Equal(wantAt) {
					t.Fatalf("after event %d (%s at %dms): step %v at %v, want %v at %v", i, e.kind, e.atMs, got.Kind, got.At.Sub(t0), w.kind, wantAt.Sub(t0))
				}
			}
			if tc.outcome != OutcomePending && l.Outcome != tc.outcome {
				t.Fatalf("outcome %v, want %v", l.Outcome, tc.outcome)
			}
		})
	}
}

// TestLifecycleR14 checks that every forbidden status change is caught as a violation, and
// that a terminal status is kept (R14, R28).
func TestLifecycleR14(t *testing.T) {
	all := []mcp.Status{mcp.StatusWorking, mcp.StatusInputRequired, mcp.StatusCompleted, mcp.StatusFailed, mcp.StatusCancelled}
	for _, from := range all {
		for _, to := range all {
			l := Lifecycle{Policy: &PollPolicy{}}
			l.Start(t0, task(mcp.StatusWorking, 1000), 0)
			if from != mcp.StatusWorking {
				l.Observed(t0, task(from, 1000))
			}
			bad := l.Observed(t0, task(to, 1000))
			if bad != !mcp.CanTransition(from, to) {
				t.Errorf("%v -> %v: violation %v, want %v", from, to, bad, !mcp.CanTransition(from, to))
			}
			if from.Terminal() && l.Status != from {
				t.Errorf("%v -> %v: status became %v; a terminal status never changes", from, to, l.Status)
			}
		}
	}
	l := Lifecycle{Policy: &PollPolicy{}}
	l.Start(t0, task(mcp.StatusCompleted, 0), 0)
	if len(l.Violations) != 1 {
		t.Errorf("a task created as completed: %d violations, want 1 (R13)", len(l.Violations))
	}
}

func TestPollPolicyWait(t *testing.T) {
	s := time.Second
	cases := []struct {
		name string
		p    PollPolicy
		n    int
		adv  time.Duration
		want time.Duration
	}{
		{"server uses advertised", PollPolicy{}, 3, 2 * s, 2 * s},
		{"server fallback", PollPolicy{Interval: 700 * time.Millisecond}, 0, 0, 700 * time.Millisecond},
		{"fixed", PollPolicy{Kind: PollFixed, Interval: 250 * time.Millisecond}, 9, 5 * s, 250 * time.Millisecond},
		{"backoff first", PollPolicy{Kind: PollBackoff, Interval: 100 * time.Millisecond, Multiplier: 2}, 0, 0, 100 * time.Millisecond},
		{"backoff third", PollPolicy{Kind: PollBackoff, Interval: 100 * time.Millisecond, Multiplier: 2}, 2, 0, 400 * time.Millisecond},
		{"backoff cap", PollPolicy{Kind: PollBackoff, Interval: 100 * time.Millisecond, Multiplier: 2, MaxInterval: 300 * time.Millisecond}, 5, 0, 300 * time.Millisecond},
		{"clamp min", PollPolicy{Min: 2 * s}, 0, s, 2 * s},
		{"clamp max", PollPolicy{Max: 500 * time.Millisecond}, 0, 5 * s, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := tc.p.Wait(tc.n, tc.adv, nil); got != tc.want {
			t.Errorf("%s: Wait = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Jitter stays inside [1-j, 1+j] and actually varies.
	p := PollPolicy{Kind: PollFixed, Interval: s, Jitter: 0.2}
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Hour, time.Duration(0)
	for range 10000 {
		w := p.Wait(0, 0, r)
		lo, hi = min(lo, w), max(hi, w)
	}
	if lo < 800*time.Millisecond || hi > 1200*time.Millisecond || hi-lo < 300*time.Millisecond {
		t.Errorf("jitter 0.2 gave waits in [%v, %v], want spread within [800ms, 1.2s]", lo, hi)
	}
}

func TestAdvised(t *testing.T) {
	s := time.Second
	cases := []struct {
		ttt, iv time.Duration
		want    int
	}{{5 * s, s, 5}, {5*s + 1, s, 6}, {0, s, 1}, {300 * time.Millisecond, s, 1}, {s, 0, 0}}
	for _, c := range cases {
		if got := Advised(c.ttt, c.iv); got != c.want {
			t.Errorf("Advised(%v, %v) = %d, want %d", c.ttt, c.iv, got, c.want)
		}
	}
}

// TestSchedule checks the open-model arrival arithmetic: a constant rate, and a linear ramp
// whose arrival count at time t is the integral of the rate.
func TestSchedule(t *testing.T) {
	s := newSchedule(10, nil)
	if at, _ := s.arrival(25); at != 2500*time.Millisecond {
		t.Errorf("constant 10/s: arrival 25 at %v, want 2.5s", at)
	}
	r := newSchedule(0, []Stage{{Duration: 10 * time.Second, Target: 100}, {Duration: 10 * time.Second, Target: 100}})
	// 0 -> 100/s over 10s: N(t) = 5 t^2, so N = 125 at t = 5s; then 500 arrivals at 10s.
	if at, _ := r.arrival(125); (at - 5*time.Second).Abs() > time.Microsecond {
		t.Errorf("ramp: arrival 125 at %v, want 5s", at)
	}
	if at, _ := r.arrival(1000); (at - 15*time.Second).Abs() > time.Microsecond {
		t.Errorf("ramp: arrival 1000 at %v, want 15s", at)
	}
	if _, ok := newSchedule(0, nil).arrival(1); ok {
		t.Error("zero rate must never arrive")
	}
}
