package mockserver

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// TestPollAdaptiveQueueDepth: the queue_depth signal reads the executor's hook
// (Server.queueDepth); without a hook the load is 0. The interval is monotonic in the load
// and capped by Max.
func TestPollAdaptiveQueueDepth(t *testing.T) {
	s, err := NewHandlerServer(Config{Poll: PollPolicy{Kind: "adaptive", Signal: "queue_depth", Base: 500 * time.Millisecond, PerUnit: 100 * time.Millisecond, Max: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.pollInterval(ToolWork); got != 500*time.Millisecond {
		t.Errorf("no queueDepth hook: %v, want Base 500ms", got)
	}
	depth := 0
	s.queueDepth = func() int { return depth }
	prev := time.Duration(0)
	for _, tc := range []struct {
		depth int
		want  time.Duration
	}{
		{0, 500 * time.Millisecond}, {1, 600 * time.Millisecond}, {5, time.Second},
		{15, 2 * time.Second}, {16, 2 * time.Second}, {1 << 30, 2 * time.Second},
	} {
		depth = tc.depth
		got := s.pollInterval(ToolWork)
		if got != tc.want || got < prev {
			t.Errorf("queue depth %d: %v, want %v (after %v)", tc.depth, got, tc.want, prev)
		}
		prev = got
	}
}

// TestPollAdaptiveFormula: min(Max, Base + PerUnit*load), with Max 0 meaning no cap and a
// huge load saturating instead of overflowing.
func TestPollAdaptiveFormula(t *testing.T) {
	for _, tc := range []struct {
		pp   pollPolicy
		load int64
		want time.Duration
	}{
		{pollPolicy{base: time.Second, per: time.Second}, 0, time.Second},
		{pollPolicy{base: time.Second, per: time.Second}, 9, 10 * time.Second},
		{pollPolicy{base: time.Second, per: time.Second}, -3, time.Second},
		{pollPolicy{base: time.Second, per: time.Second}, math.MaxInt64, math.MaxInt64},
		{pollPolicy{base: time.Second, per: time.Second, ceil: time.Minute}, math.MaxInt64, time.Minute},
		{pollPolicy{base: time.Second}, 1000, time.Second},
	} {
		if got := tc.pp.adaptive(tc.load); got != tc.want {
			t.Errorf("%+v at load %d: %v, want %v", tc.pp, tc.load, got, tc.want)
		}
	}
}

// TestRateRing: the ring reports the requests of the last whole second, and a reused slot
// starts from zero.
func TestRateRing(t *testing.T) {
	var rr rateRing
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for range 5 {
		rr.add(sec(0.2))
	}
	rr.add(sec(1.1))
	rr.add(sec(1.9))
	for _, tc := range []struct {
		at   float64
		want int64
	}{{0.5, 0}, {1, 5}, {1.99, 5}, {2, 2}, {3, 0}, {4.5, 0}} {
		if got := rr.lastSecond(sec(tc.at)); got != tc.want {
			t.Errorf("at %vs: %d, want %d", tc.at, got, tc.want)
		}
	}
	rr.add(sec(4.5)) // slot of second 0, reused
	if got := rr.lastSecond(sec(5)); got != 1 {
		t.Errorf("reused slot: %d, want 1", got)
	}
}

// TestRequestPathOff: with the knobs at their zero values nothing is armed, so the request
// path draws no random number, starts no timer and counts nothing.
func TestRequestPathOff(t *testing.T) {
	s, err := NewHandlerServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.latency != nil || s.stalls != nil || s.admitting || s.rate != nil || s.poll.kind != pollFixed {
		t.Errorf("zero config armed a knob: latency %v stalls %v admitting %v rate %v poll %v", s.latency, s.stalls, s.admitting, s.rate, s.poll.kind)
	}
}

// TestServerRandConcurrent: the random source is safe for concurrent use (run with -race),
// and a stream's sequence depends only on the seed.
func TestServerRandConcurrent(t *testing.T) {
	d := scenarios.Dist{Kind: scenarios.DistExponential, Mean: scenarios.Duration(time.Second)}
	g := newServerRand(1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				g.sample(streamLatency, d)
				g.chance(streamStall, 0.5)
			}
		})
	}
	wg.Wait()
	a, b := newServerRand(99), newServerRand(99)
	b.float64(streamStall) // another stream's draws do not shift this one
	for i := range 100 {
		if x, y := a.sample(streamWork, d), b.sample(streamWork, d); x != y {
			t.Fatalf("draw %d: %v vs %v from the same seed", i, x, y)
		}
	}
}
