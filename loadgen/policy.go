package loadgen

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// PollKind selects how a client spaces its tasks/get polls.
type PollKind uint8

const (
	// PollServer waits the pollInterval the server advertised on its latest reply (R15),
	// re-read on every reply; Interval is the fallback when the server advertises none.
	PollServer PollKind = iota
	// PollFixed waits Interval whatever the server says.
	PollFixed
	// PollBackoff waits Interval, then Interval*Multiplier, ... capped at MaxInterval.
	PollBackoff
)

// ParsePollKind maps a scenario name to a PollKind.
func ParsePollKind(s string) (PollKind, error) {
	switch s {
	case "", "server":
		return PollServer, nil
	case "fixed":
		return PollFixed, nil
	case "backoff":
		return PollBackoff, nil
	}
	return 0, fmt.Errorf("unknown poll policy %q (want server, fixed or backoff)", s)
}

func (k PollKind) String() string {
	switch k {
	case PollFixed:
		return "fixed"
	case PollBackoff:
		return "backoff"
	}
	return "server"
}

// PollPolicy decides the wait before each poll. The zero value polls as the server advises
// with a 1 s fallback.
type PollPolicy struct {
	Kind        PollKind
	Interval    time.Duration // fixed interval, server fallback, or first backoff wait; 0 = 1s
	Multiplier  float64       // backoff growth per poll; <= 1 means 2
	MaxInterval time.Duration // backoff cap; 0 = no cap
	Jitter      float64       // each wait is scaled by a uniform factor in [1-Jitter, 1+Jitter]
	Min, Max    time.Duration // clamp applied after jitter; 0 = none
	Deadline    time.Duration // per task, from creation; progress never extends it; 0 = none
}

// Wait returns the wait before poll number n (0 for the first poll after creation), given
// the pollInterval the server advertised last (0 if none). rng may be nil when Jitter is 0.
//
//	server:  w = advertised, or Interval when none is advertised
//	fixed:   w = Interval
//	backoff: w = min(Interval * Multiplier^n, MaxInterval)
//	then     w = w * U(1-Jitter, 1+Jitter), clamped to [Min, Max]
func (p *PollPolicy) Wait(n int, advertised time.Duration, rng *rand.Rand) time.Duration {
	base := p.Interval
	if base <= 0 {
		base = time.Second
	}
	w := base
	switch p.Kind {
	case PollServer:
		if advertised > 0 {
			w = advertised
		}
	case PollBackoff:
		m := p.Multiplier
		if m <= 1 {
			m = 2
		}
		f := float64(base)
		for i := 0; i < n; i++ {
			f *= m
			if p.MaxInterval > 0 && f >= float64(p.MaxInterval) {
				f = float64(p.MaxInterval)
				break
			}
		}
		w = time.Duration(f)
	}
	if p.Jitter > 0 && rng != nil {
		w = time.Duration(float64(w) * (1 - p.Jitter + 2*p.Jitter*rng.Float64()))
	}
	if p.Min > 0 && w < p.Min {
		w = p.Min
	}
	if p.Max > 0 && w > p.Max {
		w = p.Max
	}
	return w
}
