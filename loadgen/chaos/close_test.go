package chaos

import (
	"context"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// TestChaosCloseNoLeaks: Close ends every connection in every state (black-holed, silent,
// a chunk waiting out its latency, a dial in progress) and every goroutine of the proxy;
// synctest.Test fails if any goroutine of the bubble outlives the test.
func TestChaosCloseNoLeaks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Connections at 0s are black-holed, at 10s half-open (silent from 15s), at 20s
		// forwarded with 1s of latency.
		sec := func(n int) scenarios.Duration { return scenarios.Duration(time.Duration(n) * time.Second) }
		f := scenarios.NetworkFaults{
			Latency:       fixed(time.Second),
			BlackHole:     scenarios.Trigger{Every: sec(30), Window: sec(10)},
			HalfOpen:      scenarios.Trigger{Every: sec(30), Window: sec(20)},
			HalfOpenAfter: sec(5),
		}
		h := newPipes(t, f, 1)
		hole := h.ln.dial()
		write(t, hole, "into the void")
		time.Sleep(10 * time.Second)
		half, halfUp := h.connect()
		time.Sleep(10 * time.Second)
		slow, _ := h.connect()
		write(t, slow, "in flight")
		time.Sleep(500 * time.Millisecond)

		ln := newMemListener() // a second proxy, stuck dialing
		stuck := New("upstream:1", scenarios.NetworkFaults{}, 1, nil)
		stuck.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		stuck.Start(ln)
		dialing := ln.dial()
		synctest.Wait()

		st := h.p.Stats()
		if st.Open != 3 || st.BlackHoles != 1 || st.HalfOpens != 1 {
			t.Fatalf("stats before Close %+v, want 3 open: a black hole, a half-open, a slow one", st)
		}
		h.p.Close()
		stuck.Close()
		for _, c := range []net.Conn{hole, half, slow, dialing} {
			if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("after Close, read %d, %v; want 0, EOF", n, err)
			}
		}
		if _, err := halfUp.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("half-open upstream read: %v, want EOF", err)
		}
		if st := h.p.Stats(); st.Open != 0 {
			t.Errorf("stats after Close %+v, want none open", st)
		}
		if st := stuck.Stats(); st.Open != 0 || st.DialErrors != 0 {
			t.Errorf("stuck proxy stats after Close %+v, want none open, no dial error", st)
		}
		if err := h.p.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}
