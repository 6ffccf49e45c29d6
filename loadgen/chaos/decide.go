package chaos

import (
	"math/rand/v2"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// Decision is what the proxy does to one connection. At most one of BlackHole and the
// other two is true (a black hole forwards nothing, so nothing else can happen to it);
// Reset and HalfOpen may both be true, and then whichever comes first wins: a reset once
// ResetAfter bytes went downstream, or the upstream's loss at HalfOpenAfter.
type Decision struct {
	Reset     bool // reset the client after ResetAfter bytes downstream (TCP RST)
	BlackHole bool // read and drop the client's bytes, dial nothing, answer nothing
	HalfOpen  bool // close the upstream at HalfOpenAfter, keep the client open and silent
}

// random streams of one connection, each seeded by (seed, mix(4*conn + stream)).
const (
	streamDecide uint64 = iota
	streamLatencyUp
	streamLatencyDown
	numStreams = 4 // room for one more
)

// Decide returns the faults of the connection with index conn (0 for the first accepted)
// that arrived offset after the proxy's epoch. Each trigger t, in the order reset,
// black_hole, half_open, fires when
//
//	t.InWindow(offset) || u < t.Probability,  u ~ U[0, 1)
//
// with one u drawn per trigger, whether or not it is on, from a PCG stream seeded by
// (seed, conn): turning one fault on does not shift the draws of another.
func Decide(f scenarios.NetworkFaults, seed, conn uint64, offset time.Duration) Decision {
	pcg := rand.NewPCG(seed, mix(numStreams*conn+streamDecide))
	fires := func(t scenarios.Trigger) bool {
		u := float64(pcg.Uint64()>>11) / (1 << 53)
		return t.InWindow(scenarios.Duration(offset)) || u < t.Probability
	}
	d := Decision{Reset: fires(f.Reset), BlackHole: fires(f.BlackHole), HalfOpen: fires(f.HalfOpen)}
	if d.BlackHole {
		d.Reset, d.HalfOpen = false, false
	}
	return d
}

// latencyRand is the random source of one direction's latency samples: its own PCG stream
// per (seed, conn, direction), so that samples do not depend on the other direction.
func latencyRand(seed, conn uint64, down bool) *rand.Rand {
	s := streamLatencyUp
	if down {
		s = streamLatencyDown
	}
	return rand.New(rand.NewPCG(seed, mix(numStreams*conn+s)))
}

// mix is SplitMix64's finalizer: it spreads neighbouring stream numbers over PCG's second
// seed word.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
