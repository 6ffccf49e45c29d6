package loadgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Model is the workload model.
type Model uint8

const (
	// Closed runs Clients virtual clients, each running tasks back to back.
	Closed Model = iota
	// Open starts tasks at a rate, whatever the clients are doing; an arrival that finds
	// no free client is dropped, never delayed (coordinated omission).
	Open
)

// Stage is one piece of an open-model ramp: the arrival rate moves linearly from the
// previous stage's Target (or Rate) to Target over Duration.
type Stage struct {
	Duration time.Duration
	Target   float64 // arrivals per second at the end of the stage
}

// Config is everything the engine needs for one run. Zero values are documented per field.
//
// Ramp spreads the start of a closed-model run: client i opens its session and starts its
// first task at i*Ramp/Clients into the load phase (task_e2e counts from that instant), so
// that thousands of clients neither dial and initialize at once nor poll in lockstep ever
// after. The open model ignores it: its rate already spreads arrivals.
//
// MaxConns bounds the requests in flight at once, all clients together, and so the
// connections they hold: a client between two requests holds none, and clients share a
// keep-alive pool of about MaxConns connections instead of opening one each. A request that
// finds MaxConns others in flight waits for one to end; for a poll that wait is schedule
// lag (the poll is not sent yet). A blocking tasks/result, and the elicitation answers sent
// while it waits, take no slot: they hold a connection for as long as the task runs, and
// slots held by waiting streams could starve the requests that end them.
type Config struct {
	Tool     string         // the task tool; required
	Args     map[string]any // its arguments; nil = none
	TaskTTL  time.Duration  // requested ttl; 0 = none requested
	Fallback client.Fallback

	Model       Model
	Clients     int           // closed: virtual clients; open: pool size (0 = MaxInFlight)
	ThinkTime   time.Duration // closed: pause between a client's tasks
	Ramp        time.Duration // closed: clients start evenly over it (see above); 0 = all at once
	Rate        float64       // open: constant arrivals per second (without Stages)
	Stages      []Stage       // open: ramp; overrides Rate after the first stage starts
	MaxInFlight int           // open: cap on tasks in flight; 0 = Clients

	Duration time.Duration // load phase; required
	Grace    time.Duration // drain after the load phase; in-flight tasks then end unknown

	Poll     PollPolicy
	Result   ResultStrategy
	Cancel   CancelPolicy
	Input    InputPolicy
	Timeout  time.Duration // per request, tasks/result excepted; 0 = 30s
	MaxConns int           // requests in flight at once (see above); 0 = no bound
	// CleanupProbes measures cleanup_lag on a target whose store tasksim cannot see: one
	// finished task in every CleanupProbes is polled from its expiry (createdAt + ttl) until
	// tasks/get answers -32602 (cleanup.go). 0 = off.
	CleanupProbes int
	// Faults inject the client-side faults (recovery.go); zero = none.
	Faults scenarios.ClientFaults
	// Recovery is how clients recover from faults; zero values take the defaults of
	// scenarios.Default (backoff 100ms..5s, budgets 2/20/5/3) except Reconcile and
	// RetryCreate, which stay off, and IdempotencyArg, which stays "" (no key sent).
	Recovery scenarios.Recovery
	// Reconciler finds a task by its idempotency key (recovery.go); nil = reconciliation by
	// tasks/list only, where the target declares it.
	Reconciler Reconciler
	// Security spreads clients over tenants, and runs isolation probes and secret canaries
	// (probes.go); zero = off.
	Security Security
	// Events receives the faults injected by clients; nil = not recorded.
	Events *metrics.Events
	// Rollback is the drill of the kill switch (rollback.go); zero = none.
	Rollback RollbackPolicy
	// Shard is the slice of the scenario this engine runs (scenarios.Shard): the closed
	// model's clients and the open model's pool and arrivals whose index it owns, each client
	// with its global index (its seeds, tenant, probe share and ramp start are those of the
	// whole run). Clients, MaxInFlight, Rate and Stages stay the whole scenario's. Zero = the
	// whole scenario.
	Shard    scenarios.Shard
	Seed     uint64 // seeds every client's random source
	Shards   int    // metric shards; 0 = 8
	Protocol string // informational: the dialect version
}

// Defaults cmd/tasksim gives a run; a Config built in code has none of them.
const (
	// DefaultMaxConns is the MaxConns of a run against the embedded server, whose end of
	// every connection lives in the same process and shares its processors: enough
	// requests in flight to keep them busy (looplimit's 256), a few hundred connections.
	// More only queue inside the process at a cost in CPU and memory.
	DefaultMaxConns = 256
	// DefaultStartRate is how many closed-model clients a second DefaultRamp starts.
	DefaultStartRate = 1000
)

// DefaultRamp is the default Ramp of a closed-model run of clients with a load phase of
// length d: the clients start DefaultStartRate a second, and the ramp takes at most a
// quarter of the load phase: min(clients / DefaultStartRate s, d/4).
func DefaultRamp(clients int, d time.Duration) time.Duration {
	return min(time.Duration(clients)*time.Second/DefaultStartRate, d/4)
}

// CancelPolicy decides whether and when a client cancels a task.
type CancelPolicy struct {
	Probability float64                          // share of tasks cancelled
	Delay       func(r *rand.Rand) time.Duration // after creation; nil = at once
}

// InputPolicy decides how elicitation/create is answered; the ratios are normalised.
type InputPolicy struct {
	Accept, Decline, Cancel float64 // all zero = always accept
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Tool == "" {
		add("tool is required")
	}
	if c.Duration <= 0 {
		add("duration must be > 0, got %v", c.Duration)
	}
	switch c.Model {
	case Closed:
		if c.Clients <= 0 {
			add("closed model needs clients > 0, got %d", c.Clients)
		}
	case Open:
		if c.Rate <= 0 && len(c.Stages) == 0 {
			add("open model needs a rate or stages")
		}
		if c.MaxInFlight <= 0 && c.Clients <= 0 {
			add("open model needs max_in_flight > 0")
		}
	}
	if c.Cancel.Probability < 0 || c.Cancel.Probability > 1 {
		add("cancel probability must be in [0, 1], got %v", c.Cancel.Probability)
	}
	if c.Ramp < 0 {
		add("ramp must be >= 0, got %v", c.Ramp)
	}
	if c.MaxConns < 0 {
		add("max conns must be >= 0, got %d", c.MaxConns)
	}
	if c.Poll.Jitter < 0 || c.Poll.Jitter >= 1 {
		add("poll jitter must be in [0, 1), got %v", c.Poll.Jitter)
	}
	if err := c.Shard.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Security.problems()...)
	return errors.Join(errs...)
}

func (c *Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return 30 * time.Second
	}
	return c.Timeout
}

func (c *Config) pool() int {
	if c.Model == Closed {
		return c.Clients
	}
	if c.MaxInFlight > 0 {
		return c.MaxInFlight
	}
	return c.Clients
}
