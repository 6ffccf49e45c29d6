package mockserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// Reply latency and stalls (Config.Latency, Config.Stalls): the two ways the mock plays a
// slow server. Both only delay; neither changes what the reply says.
//
//	stall:   before a request is served, a stalled request waits Stalls.Duration. A request
//	         is stalled with Stalls.Probability, or when it arrives inside a window: with
//	         e = time since server start, (e mod Stalls.Every) < Stalls.Window.
//	latency: once the reply is built, and before it is written, the request waits a sample
//	         of Latency[method], else Latency["*"], else nothing.
//
// A wait ends early when the client gives up (the request context is done: nothing is
// written, a task already created stays) or when the server closes (the request is then
// served at once, so Close does not wait out stalls).

// latencyPolicy holds the reply latency of each method. nil means none.
type latencyPolicy struct {
	byMethod map[string]scenarios.Dist
	def      scenarios.Dist // "*"
	hasDef   bool
}

func newLatencyPolicy(m map[string]scenarios.Dist) *latencyPolicy {
	if len(m) == 0 {
		return nil
	}
	lp := &latencyPolicy{byMethod: make(map[string]scenarios.Dist, len(m))}
	for k, d := range m {
		if k == "*" {
			lp.def, lp.hasDef = d, true
			continue
		}
		lp.byMethod[k] = d
	}
	return lp
}

// of returns the latency distribution of method; ok is false when it has none.
func (lp *latencyPolicy) of(method string) (d scenarios.Dist, ok bool) {
	if d, ok = lp.byMethod[method]; ok {
		return d, true
	}
	return lp.def, lp.hasDef
}

// stallPolicy decides which requests stall. nil means none.
type stallPolicy struct {
	Stalls
}

func newStallPolicy(st Stalls) *stallPolicy {
	if st.Duration <= 0 || (st.Probability <= 0 && (st.Every <= 0 || st.Window <= 0)) {
		return nil
	}
	return &stallPolicy{st}
}

// inWindow reports whether elapsed (time since server start) falls inside a stall window.
func (sp *stallPolicy) inWindow(elapsed time.Duration) bool {
	return sp.Every > 0 && elapsed >= 0 && elapsed%sp.Every < sp.Window
}

// admit runs the knobs that act before a JSON-RPC request is served: it counts the request
// for the request_rate signal and holds it if it stalls. It reports false when the client
// gave up while held; the caller then writes nothing. Called only when s.admitting.
func (s *core) admit(r *http.Request) bool {
	now := s.clock.Now()
	if s.rate != nil {
		s.rate.add(now.Sub(s.epoch))
	}
	sp := s.stalls
	if sp == nil {
		return true
	}
	// The window test comes first and, when it stalls, no random number is drawn.
	if sp.inWindow(now.Sub(s.epoch)) || s.rand.chance(streamStall, sp.Probability) {
		return s.hold(r.Context(), sp.Duration)
	}
	return true
}

// replyLatency waits out the reply latency of c's method. It reports false when the client
// gave up meanwhile; the reply is then not written.
func (c *call) replyLatency() bool {
	s := c.srv
	if s == nil || s.latency == nil {
		return true
	}
	d, ok := s.latency.of(c.msg.Method)
	if !ok {
		return true
	}
	ctx := context.Background()
	if c.r != nil {
		ctx = c.r.Context()
	}
	return s.hold(ctx, s.rand.sample(streamLatency, d))
}

// hold waits d. It reports false if ctx ended first; the server's close ends the wait and
// reports true.
func (s *core) hold(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return true
	}
}

// distProblems appends the problems of d, which sits at path, to errs. The scenario file's
// loader checks the same rules with line numbers; this catches programmatic configs.
func distProblems(errs *[]error, path string, d scenarios.Dist) {
	add := func(format string, a ...any) {
		*errs = append(*errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...)))
	}
	if d.Value < 0 || d.Min < 0 || d.Max < 0 || d.Mean < 0 || d.StdDev < 0 || d.P50 < 0 || d.P99 < 0 {
		add("durations must not be negative")
	}
	switch d.Kind {
	case scenarios.DistFixed:
	case scenarios.DistUniform:
		if d.Max <= 0 || d.Min > d.Max {
			add("uniform needs 0 <= min <= max and max > 0, got min %v max %v", d.Min, d.Max)
		}
	case scenarios.DistExponential, scenarios.DistNormal:
		if d.Mean <= 0 {
			add("%s needs mean > 0, got %v", d.Kind, d.Mean)
		}
	case scenarios.DistLognormal:
		if d.P50 <= 0 || d.P99 < d.P50 {
			add("lognormal needs 0 < p50 <= p99, got p50 %v p99 %v", d.P50, d.P99)
		}
	case scenarios.DistPareto:
		if d.P50 <= 0 || d.P99 <= d.P50 {
			add("pareto needs 0 < p50 < p99, got p50 %v p99 %v", d.P50, d.P99)
		}
	default:
		add("unknown distribution %q", d.Kind)
	}
}
