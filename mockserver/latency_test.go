package mockserver_test

// Reply latency and stalls (latency.go). Every test runs in a testing/synctest bubble, so
// the time a reply takes is virtual and exact: a request that is neither delayed nor stalled
// takes 0, and the tests compare elapsed times with ==, never with a tolerance.

import (
	"context"
	"math"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

func fixedDist(d time.Duration) scenarios.Dist {
	return scenarios.Dist{Kind: scenarios.DistFixed, Value: scenarios.Duration(d)}
}

// timed runs f and returns the virtual time it took.
func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

// binom99 returns the central 99% interval [lo, hi] of Binomial(n, p): P(X < lo) <= 0.005
// and P(X > hi) <= 0.005, from the exact distribution. A correct server lands outside it
// in 1% of seeds; the seeds below are fixed, so each test is deterministic.
func binom99(n int, p float64) (lo, hi int) {
	lgN, _ := math.Lgamma(float64(n + 1))
	cdf := 0.0
	lo, hi = -1, n
	for k := 0; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		cdf += math.Exp(lgN - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		if lo < 0 && cdf > 0.005 {
			lo = k
		}
		if cdf >= 0.995 {
			hi = k
			break
		}
	}
	return lo, hi
}

// TestLatencyFixed: a fixed latency delays every reply of its method by exactly that
// value; "*" applies to every other method, initialize included; notifications are not
// delayed.
func TestLatencyFixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Latency: map[string]scenarios.Dist{
			"tasks/get": fixedDist(250 * time.Millisecond),
			"*":         fixedDist(40 * time.Millisecond),
		}})
		var c *client
		if got := timed(func() { c = h.connect() }); got != 40*time.Millisecond {
			t.Errorf("initialize + notifications/initialized took %v, want 40ms (initialize under \"*\")", got)
		}
		var id string
		if got := timed(func() { id = c.createTask("work", map[string]any{"duration_ms": 60_000}).TaskID }); got != 40*time.Millisecond {
			t.Errorf("tools/call took %v, want 40ms", got)
		}
		for i := range 50 {
			if got := timed(func() { c.get(id) }); got != 250*time.Millisecond {
				t.Fatalf("tasks/get %d took %v, want exactly 250ms", i, got)
			}
		}
		if got := timed(func() { c.call("ping", nil) }); got != 40*time.Millisecond {
			t.Errorf("ping took %v, want 40ms", got)
		}
	})
}

// TestLatencyUniform: every tasks/get reply of a uniform(100ms..300ms) latency takes a time
// within the bounds, the samples spread over the range, and their mean lies within the
// 99% interval of the mean of N uniforms: 200ms +- 2.576 * (200ms/sqrt(12)) / sqrt(N).
func TestLatencyUniform(t *testing.T) {
	const n = 400
	lo, hi := 100*time.Millisecond, 300*time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Seed: 7, Latency: map[string]scenarios.Dist{
			"tasks/get": {Kind: scenarios.DistUniform, Min: scenarios.Duration(lo), Max: scenarios.Duration(hi)},
		}})
		c := h.connect()
		id := c.createTask("work", map[string]any{"duration_ms": 60_000}).TaskID
		var sum, least, most time.Duration = 0, hi, lo
		for i := range n {
			got := timed(func() { c.get(id) })
			if got < lo || got > hi {
				t.Fatalf("tasks/get %d took %v, want within [%v, %v]", i, got, lo, hi)
			}
			sum += got
			least, most = min(least, got), max(most, got)
		}
		mean := float64(sum) / n
		half := 2.576 * float64(hi-lo) / math.Sqrt(12) / math.Sqrt(n)
		if math.Abs(mean-float64(lo+hi)/2) > half {
			t.Errorf("mean latency %v, want 200ms +- %v", time.Duration(mean), time.Duration(half))
		}
		// P(no sample in the lowest or highest 5% of the range) = 0.95^400 < 1e-8.
		if least > lo+10*time.Millisecond || most < hi-10*time.Millisecond {
			t.Errorf("samples span [%v, %v], want them to reach both ends of [%v, %v]", least, most, lo, hi)
		}
	})
}

// TestLatencyAbandoned: a client that gives up during the latency gets nothing, at the
// moment it gives up; the server's close ends a latency wait and sends the reply at once.
func TestLatencyAbandoned(t *testing.T) {
	cfg := mockserver.Config{Latency: map[string]scenarios.Dist{"ping": fixedDist(time.Hour)}}
	t.Run("client gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, cfg)
			c := h.connect()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(3*time.Second, cancel)
			var body []byte
			got := timed(func() { body = h.do(ruleReq(c, "ping", nil).WithContext(ctx)).all() })
			if got != 3*time.Second || len(body) != 0 {
				t.Errorf("abandoned ping returned after %v with %q, want nothing after 3s", got, body)
			}
		})
	})
	t.Run("server closes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, cfg)
			c := h.connect()
			time.AfterFunc(5*time.Second, h.srv.Close)
			var r reply
			got := timed(func() { r = c.call("ping", nil) })
			if got != 5*time.Second || r.Err != nil {
				t.Errorf("ping during close: after %v, error %v; want the reply at 5s", got, r.Err)
			}
		})
	})
}

// TestStallProbability: with probability 0.2, each request either stalls for exactly
// Duration or not at all, and the number stalled over N requests lies in the binomial 99%
// interval.
func TestStallProbability(t *testing.T) {
	const n, p, stall = 1000, 0.2, 10 * time.Second
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Seed: 3, Stalls: mockserver.Stalls{Probability: p, Duration: stall}})
		c := h.connect()
		stalled := 0
		for i := range n {
			switch got := timed(func() { c.call("ping", nil) }); got {
			case stall:
				stalled++
			case 0:
			default:
				t.Fatalf("ping %d took %v, want 0 or %v", i, got, stall)
			}
		}
		if lo, hi := binom99(n, p); stalled < lo || stalled > hi {
			t.Errorf("%d of %d requests stalled, want within the binomial 99%% interval [%d, %d]", stalled, n, lo, hi)
		}
	})
}

// TestStallWindows: with windows of 2s every 10s, exactly the requests that arrive inside a
// window ((time since server start) mod 10s < 2s) stall, each for exactly Duration.
func TestStallWindows(t *testing.T) {
	const stall = 3 * time.Second
	cases := []struct {
		at      time.Duration // arrival, since server start
		stalled bool
	}{
		{3 * time.Second, false},
		{9999 * time.Millisecond, false},
		{10 * time.Second, true}, // a window opens
		{10*time.Second + time.Nanosecond, true},
		{11999 * time.Millisecond, true},
		{12 * time.Second, false}, // ...and closes
		{15 * time.Second, false},
		{20 * time.Second, true},
		{21 * time.Second, true},
		{25 * time.Second, false},
		{40500 * time.Millisecond, true},
	}
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		h := newHarness(t, mockserver.Config{Stalls: mockserver.Stalls{Every: 10 * time.Second, Window: 2 * time.Second, Duration: stall}})
		if got := timed(func() { h.connect() }); got != stall {
			t.Fatalf("initialize at 0s took %v, want %v (inside the first window)", got, stall)
		}
		clients := make([]*client, len(cases))
		for i := range clients {
			clients[i] = h.connect() // at 3s: outside every window
		}
		var wg sync.WaitGroup
		for i, tc := range cases {
			wg.Go(func() {
				time.Sleep(time.Until(t0.Add(tc.at)))
				got := timed(func() { clients[i].call("ping", nil) })
				want := time.Duration(0)
				if tc.stalled {
					want = stall
				}
				if got != want {
					t.Errorf("ping arriving at %v took %v, want %v", tc.at, got, want)
				}
			})
		}
		wg.Wait()
	})
}

// TestStallAbandoned: a stalled request whose client gives up is not served at all.
func TestStallAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Stalls: mockserver.Stalls{Probability: 1, Duration: time.Minute}})
		c := h.connect() // stalls a minute
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		req := ruleReq(c, "tools/call", map[string]any{"name": "work", "arguments": map[string]any{}, "task": map[string]any{}})
		resp := h.do(req.WithContext(ctx))
		if body := resp.all(); len(body) != 0 || resp.Status != http.StatusOK {
			t.Errorf("abandoned stalled tools/call: HTTP %d %q, want nothing", resp.Status, body)
		}
		if n := h.srv.Stats().TasksCreated; n != 0 {
			t.Errorf("%d tasks created by an abandoned stalled call, want 0", n)
		}
	})
}
