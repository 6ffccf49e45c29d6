package mockserver

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/internal/clock"
)

// requestPath is the state of the request-path knobs: the seeded random source, reply
// latency and stalls (latency.go), tool profiles (profile.go) and the pollInterval policy
// (pollpolicy.go). Server embeds it. Every knob that is off leaves its field nil or false,
// so the request path pays one pointer or bool test for it and nothing else.
type requestPath struct {
	clock     clock.Clock    // Config.Clock, or the machine's (clock.go)
	epoch     time.Time      // server start: stall windows are measured from it
	rand      *serverRand    // the one seeded random source (Config.Seed)
	latency   *latencyPolicy // nil: no reply latency
	stalls    *stallPolicy   // nil: no stalls
	admitting bool           // stalls or request counting act before a request is served
	poll      pollPolicy
	rate      *rateRing    // requests per second; nil unless the adaptive signal is request_rate
	inFlight  atomic.Int64 // non-terminal tasks (in_flight signal)

	// queueDepth reports the executor's queue depth (adaptive signal queue_depth). The
	// executor sets it in newServer; nil counts as 0.
	queueDepth func() int
}

// initRequestPath builds the request-path state from s.cfg (defaults already applied).
func (s *core) initRequestPath() {
	s.clock = clock.Or(s.cfg.Clock)
	s.epoch = s.clock.Now()
	s.rand = newServerRand(s.cfg.Seed)
	s.latency = newLatencyPolicy(s.cfg.Latency)
	s.stalls = newStallPolicy(s.cfg.Stalls)
	s.poll = newPollPolicy(s.cfg)
	if s.poll.kind == pollAdaptive && s.poll.signal == signalRequestRate {
		s.rate = &rateRing{}
	}
	s.admitting = s.stalls != nil || s.rate != nil
}

// requestPathProblems reports every problem with the request-path knobs of c.
func (c Config) requestPathProblems() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	share := func(name string, p float64) {
		if !(p >= 0 && p <= 1) { // also rejects NaN
			add("%s must be in [0, 1], got %v", name, p)
		}
	}
	for m, d := range c.Latency {
		if m == "" {
			add("latency: a method name must not be empty (use \"*\" for the default)")
		}
		distProblems(&errs, "latency["+m+"]", d)
	}
	st := c.Stalls
	share("stalls.probability", st.Probability)
	if st.Duration < 0 || st.Every < 0 || st.Window < 0 {
		add("stalls: duration, every and window must not be negative")
	}
	if (st.Probability > 0 || st.Every > 0) && st.Duration <= 0 {
		add("stalls.duration must be > 0 when stalls are on, got %v", st.Duration)
	}
	if st.Every > 0 && (st.Window <= 0 || st.Window > st.Every) {
		add("stalls.window must be in (0, every=%v], got %v", st.Every, st.Window)
	}
	for name, tp := range c.Tools {
		if _, ok := taskSupport(name); !ok {
			add("tools: unknown tool %q (tools: %s, %s, %s)", name, ToolWork, ToolWorkTask, ToolWorkSync)
		}
		p := "tools[" + name + "]"
		if tp.Duration.Kind != "" {
			distProblems(&errs, p+".duration", tp.Duration)
		}
		for _, f := range []struct {
			n string
			v float64
		}{{"completed", tp.Completed}, {"failed", tp.Failed}, {"error", tp.Error}} {
			if !(f.v >= 0) || f.v > 1e9 {
				add("%s.%s must be a weight >= 0, got %v", p, f.n, f.v)
			}
		}
		share(p+".input_probability", tp.InputProbability)
		if tp.InputRounds < 0 || tp.InputRounds > maxInputRounds {
			add("%s.input_rounds must be in [0, %d], got %d", p, maxInputRounds, tp.InputRounds)
		}
	}
	errs = append(errs, c.Poll.problems()...)
	return errs
}
