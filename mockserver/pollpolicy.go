package mockserver

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// The pollInterval policy (Config.Poll) decides the pollInterval of every task reply
// (tools/call, tasks/get, tasks/cancel, tasks/list, notifications/tasks/status). It is asked
// each time a reply is built, so the interval of one task changes during its life when the
// load does (docs/RULES.md#r45).
//
//	fixed     interval = PollInterval
//	per_tool  interval = PerTool[tool], else PollInterval
//	adaptive  interval = min(Max, Base + PerUnit * load)     (Max 0: no cap; Base 0: PollInterval)
//	          load, by Signal:
//	            in_flight     tasks not yet terminal (created and neither completed, failed,
//	                          cancelled nor expired), the task being answered included
//	            queue_depth   tasks waiting for an executor worker
//	            request_rate  JSON-RPC requests received in the last whole second: with
//	                          e = time since server start, the requests with arrival time
//	                          in [floor(e) - 1s, floor(e)), the current partial second excluded
//
// Backpressure.WhenFull raise_poll_interval overrides the policy while the server is full:
// interval = RaisedPollInterval (backpressure.go). The wire carries whole milliseconds (the
// interval truncated).

type pollKind uint8

const (
	pollFixed pollKind = iota
	pollPerTool
	pollAdaptive
)

type pollSignal uint8

const (
	signalInFlight pollSignal = iota
	signalQueueDepth
	signalRequestRate
)

// pollPolicy is Config.Poll resolved once, so that the reply path switches on small enums.
type pollPolicy struct {
	kind            pollKind
	signal          pollSignal
	fixed           time.Duration // Config.PollInterval
	perTool         map[string]time.Duration
	base, per, ceil time.Duration // adaptive; ceil 0 = no cap
}

func newPollPolicy(c Config) pollPolicy {
	pp := pollPolicy{fixed: c.PollInterval}
	switch c.Poll.Kind {
	case "per_tool":
		pp.kind, pp.perTool = pollPerTool, c.Poll.PerTool
	case "adaptive":
		pp.kind = pollAdaptive
		pp.base, pp.per, pp.ceil = c.Poll.Base, c.Poll.PerUnit, c.Poll.Max
		if pp.base == 0 {
			pp.base = c.PollInterval
		}
		switch c.Poll.Signal {
		case "queue_depth":
			pp.signal = signalQueueDepth
		case "request_rate":
			pp.signal = signalRequestRate
		}
	}
	return pp
}

// pollInterval is the interval to advertise now on a task of tool.
func (s *core) pollInterval(tool string) time.Duration {
	if s.exec.mode == fullRaisePoll && s.overloaded() {
		return s.exec.raised // Backpressure.WhenFull raise_poll_interval (backpressure.go)
	}
	pp := &s.poll
	switch pp.kind {
	case pollPerTool:
		if d, ok := pp.perTool[tool]; ok {
			return d
		}
	case pollAdaptive:
		return pp.adaptive(s.load())
	}
	return pp.fixed
}

// adaptive is min(ceil, base + per*load), saturating instead of overflowing.
func (pp *pollPolicy) adaptive(load int64) time.Duration {
	load = max(load, 0)
	d := pp.base
	if pp.per > 0 && load > 0 {
		if load > (math.MaxInt64-int64(d))/int64(pp.per) {
			d = math.MaxInt64
		} else {
			d += pp.per * time.Duration(load)
		}
	}
	if pp.ceil > 0 {
		d = min(d, pp.ceil)
	}
	return d
}

// load is the current value of the adaptive signal.
func (s *core) load() int64 {
	switch s.poll.signal {
	case signalQueueDepth:
		if s.queueDepth == nil {
			return 0
		}
		return int64(s.queueDepth())
	case signalRequestRate:
		return s.rate.lastSecond(s.clock.Now().Sub(s.epoch))
	}
	return s.inFlight.Load()
}

// countInFlight counts t, not yet stored, as a non-terminal task.
func (s *core) countInFlight(t *task) {
	t.inFlight = true
	s.inFlight.Add(1)
}

// leaveInFlightLocked uncounts t when it becomes terminal or expires; only the first call
// counts.
func (t *task) leaveInFlightLocked() {
	if t.inFlight {
		t.inFlight = false
		t.srv.inFlight.Add(-1)
	}
}

// rateRing counts requests per second since server start in a ring of slots. Each slot packs
// its second (high 32 bits) and its count (low 32 bits) into one word, so that a request
// is counted with one compare-and-swap and a slot is reused without losing counts.
type rateRing struct {
	slots [4]atomic.Uint64
}

// add counts one request at elapsed time e since server start.
func (rr *rateRing) add(e time.Duration) {
	sec := uint64(e/time.Second) & math.MaxUint32
	sl := &rr.slots[sec%uint64(len(rr.slots))]
	for {
		old := sl.Load()
		next := sec<<32 | 1
		if old>>32 == sec {
			next = old + 1
		}
		if sl.CompareAndSwap(old, next) {
			return
		}
	}
}

// lastSecond returns the number of requests counted in the whole second before the one
// holding e.
func (rr *rateRing) lastSecond(e time.Duration) int64 {
	sec := uint64(e / time.Second)
	if sec == 0 {
		return 0
	}
	prev := (sec - 1) & math.MaxUint32
	v := rr.slots[prev%uint64(len(rr.slots))].Load()
	if v>>32 != prev {
		return 0
	}
	return int64(v & math.MaxUint32)
}

// problems reports every problem with the policy.
func (p PollPolicy) problems() []error {
	var errs []error
	switch p.Kind {
	case "", "fixed", "per_tool", "adaptive":
	default:
		errs = append(errs, fmt.Errorf(`poll.kind must be "fixed", "per_tool" or "adaptive", got %q`, p.Kind))
	}
	for tool, d := range p.PerTool {
		if _, ok := taskSupport(tool); !ok {
			errs = append(errs, fmt.Errorf("poll.per_tool: unknown tool %q", tool))
		}
		if d < 0 {
			errs = append(errs, fmt.Errorf("poll.per_tool[%s] must not be negative, got %v", tool, d))
		}
	}
	switch p.Signal {
	case "", "in_flight", "queue_depth", "request_rate":
	default:
		errs = append(errs, fmt.Errorf(`poll.signal must be "in_flight", "queue_depth" or "request_rate", got %q`, p.Signal))
	}
	if p.Base < 0 || p.PerUnit < 0 || p.Max < 0 {
		errs = append(errs, fmt.Errorf("poll: base, per_unit and max must not be negative, got %v, %v, %v", p.Base, p.PerUnit, p.Max))
	}
	return errs
}
