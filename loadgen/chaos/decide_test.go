package chaos

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// TestChaosDecidePure: decisions depend on (seed, connection, offset) only; each trigger
// fires at about its probability; another seed gives other decisions.
func TestChaosDecidePure(t *testing.T) {
	f := scenarios.NetworkFaults{
		Reset:     scenarios.Trigger{Probability: 0.3},
		BlackHole: scenarios.Trigger{Probability: 0.1},
		HalfOpen:  scenarios.Trigger{Probability: 0.5},
	}
	const n = 10000
	var resets, holes, halves, differ int
	for i := range uint64(n) {
		d := Decide(f, 42, i, time.Duration(i)*time.Second)
		if d != Decide(f, 42, i, 0) {
			t.Fatalf("connection %d: the decision changed with the offset (no windows)", i)
		}
		if d != Decide(f, 43, i, 0) {
			differ++
		}
		if d.BlackHole && (d.Reset || d.HalfOpen) {
			t.Fatalf("connection %d: %+v: a black hole excludes the other faults", i, d)
		}
		resets += b2i(d.Reset)
		holes += b2i(d.BlackHole)
		halves += b2i(d.HalfOpen)
	}
	// Expected counts: reset 0.3 * 0.9 (black holes take precedence), black hole 0.1,
	// half-open 0.5 * 0.9; each within 5 standard deviations (the draws are fixed by the
	// seed, so this can only fail if the derivation of the draws is broken).
	for _, c := range []struct {
		name string
		got  int
		p    float64
	}{{"reset", resets, 0.27}, {"black_hole", holes, 0.1}, {"half_open", halves, 0.45}} {
		mean, sd := n*c.p, math.Sqrt(n*c.p*(1-c.p))
		if float64(c.got) < mean-5*sd || float64(c.got) > mean+5*sd {
			t.Errorf("%s fired %d times in %d, want about %.0f", c.name, c.got, n, mean)
		}
	}
	if differ < n/2 {
		t.Errorf("seeds 42 and 43 decided alike for %d of %d connections", n-differ, n)
	}
}

// TestChaosDecideIndependent: turning one fault on or off does not move another's draws.
func TestChaosDecideIndependent(t *testing.T) {
	reset := scenarios.NetworkFaults{Reset: scenarios.Trigger{Probability: 0.5}}
	both := reset
	both.HalfOpen = scenarios.Trigger{Probability: 0.5}
	for i := range uint64(1000) {
		if a, b := Decide(reset, 7, i, 0), Decide(both, 7, i, 0); a.Reset != b.Reset {
			t.Fatalf("connection %d: reset %v alone, %v with half_open on", i, a.Reset, b.Reset)
		}
	}
}

// TestChaosDecideWindows: a trigger with windows fires in the first Window of every Every
// counted from the epoch, whatever its probability, and never before the epoch.
func TestChaosDecideWindows(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	f := scenarios.NetworkFaults{BlackHole: scenarios.Trigger{
		Every: scenarios.Duration(10 * time.Second), Window: scenarios.Duration(time.Second)}}
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{-s(0.5), false}, {0, true}, {s(0.999), true}, {s(1), false}, {s(9.9), false}, {s(10), true}, {s(20.5), true}, {s(21), false}} {
		for conn := range uint64(20) {
			if got := Decide(f, 1, conn, c.at).BlackHole; got != c.want {
				t.Errorf("connection %d at %v: black hole %v, want %v", conn, c.at, got, c.want)
			}
		}
	}
}

// TestChaosSameSeedSameConnections: through the proxy, connection i gets Decide(seed, i)
// (here seen as: dialed, or black-holed without a dial), run after run.
func TestChaosSameSeedSameConnections(t *testing.T) {
	f := scenarios.NetworkFaults{BlackHole: scenarios.Trigger{Probability: 0.5}}
	const seed, n = 7, 32
	var runs [2][n]bool
	for r := range runs {
		synctest.Test(t, func(t *testing.T) {
			h := startPipes(t, f, seed)
			for i := range n {
				client := h.ln.dial()
				synctest.Wait()
				select {
				case up := <-h.ups:
					up.Close()
				default:
					runs[r][i] = true // black-holed: never dialed
				}
				client.Close()
			}
			if st := h.p.Stats(); st.Connections != n {
				t.Errorf("stats %+v, want %d connections", st, n)
			}
		})
	}
	holes := 0
	for i := range n {
		want := Decide(f, seed, uint64(i), 0).BlackHole
		if runs[0][i] != want || runs[1][i] != want {
			t.Errorf("connection %d: black-holed %v then %v, want %v", i, runs[0][i], runs[1][i], want)
		}
		holes += b2i(want)
	}
	if holes == 0 || holes == n {
		t.Errorf("%d of %d connections black-holed: pick a seed that mixes both", holes, n)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
