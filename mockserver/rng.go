package mockserver

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// randStream names one kind of server decision. Each kind draws from its own PCG stream,
// derived from Config.Seed and the kind, so that turning one knob on (say latency) does not
// shift the decisions of another (say tool outcomes): with the same seed and the same
// sequence of calls, every kind makes the same sequence of decisions.
type randStream uint8

const (
	streamLatency    randStream = iota // reply latency per method (latency.go)
	streamStall                        // stall by probability (latency.go)
	streamWork                         // tool profile: duration, outcome, input (profile.go)
	streamDownstream                   // the downstream model (downstream.go)
	// streamFaults is the first of one stream per fault with a Trigger (faults.go): fault
	// k draws from streamFaults + k, so that turning one fault on shifts no other's draws.
	streamFaults
	numRandStreams = streamFaults + randStream(numTriggered)
)

// serverRand is the server's one seeded random source (Config.Seed): a PCG stream per
// decision kind, each behind its own mutex, so that it is safe for concurrent use. Under
// concurrency the order of draws follows the order in which requests take the lock; for a
// given order of calls the decisions are fixed by the seed.
type serverRand struct {
	streams [numRandStreams]lockedRand
}

type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

// streamSalt spreads stream numbers over PCG's second seed word (the golden-ratio constant).
const streamSalt = 0x9e3779b97f4a7c15

func newServerRand(seed uint64) *serverRand {
	g := &serverRand{}
	for i := range g.streams {
		g.streams[i].r = rand.New(rand.NewPCG(seed, streamSalt*uint64(i+1)))
	}
	return g
}

// float64 returns a uniform value in [0, 1) from stream k.
func (g *serverRand) float64(k randStream) float64 {
	s := &g.streams[k]
	s.mu.Lock()
	x := s.r.Float64()
	s.mu.Unlock()
	return x
}

// chance reports true with probability p, drawing from stream k. p <= 0 draws nothing and
// is false; p >= 1 draws nothing and is true.
func (g *serverRand) chance(k randStream, p float64) bool {
	switch {
	case p <= 0:
		return false
	case p >= 1:
		return true
	}
	return g.float64(k) < p
}

// sample draws one duration of d from stream k. A fixed or zero Dist draws nothing.
func (g *serverRand) sample(k randStream, d scenarios.Dist) time.Duration {
	if d.Kind == scenarios.DistFixed || d.Kind == "" {
		return d.Sample(nil)
	}
	s := &g.streams[k]
	s.mu.Lock()
	x := d.Sample(s.r)
	s.mu.Unlock()
	return x
}
