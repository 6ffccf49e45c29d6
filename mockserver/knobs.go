package mockserver

import (
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// The tunables: each plays one kind of server an SRE wants to rehearse against
// (slower, failing, full, throttling, with a struggling downstream). Every zero value is
// "off", and off costs nothing on the request path.

// Stalls are replies that do not come: with Probability per request, or during periodic
// windows (Every > 0: the first Window of every Every), a request is held for Duration
// before it is served.
type Stalls struct {
	Probability float64       // share of requests stalled; 0 = none
	Duration    time.Duration // how long a stalled request waits
	Every       time.Duration // period of stall windows; 0 = no windows
	Window      time.Duration // length of each window, from the start of each period
}

// ToolProfile is the default behaviour of one tool; per-call arguments (duration_ms,
// outcome, input_required, input_rounds) override it.
type ToolProfile struct {
	Duration         scenarios.Dist // work duration; zero Dist = Config.DefaultDuration
	Completed        float64        // outcome mix; all zero = always completed
	Failed           float64        // isError result -> failed (R51)
	Error            float64        // JSON-RPC error -> failed, tasks/result returns it (R17)
	InputProbability float64        // share of calls that need input
	InputRounds      int            // rounds when input is needed; 0 = 1
}

// PollPolicy decides the pollInterval advertised on each task reply.
//
//	fixed:     Config.PollInterval
//	per_tool:  PerTool[tool], else Config.PollInterval
//	adaptive:  min(Max, Base + PerUnit * load), load = the Signal's current value
//	           (in_flight: non-terminal tasks; queue_depth: executor queue; request_rate:
//	           requests in the last second). It may change during a task's life.
type PollPolicy struct {
	Kind    string                   // "" or "fixed", "per_tool", "adaptive"
	PerTool map[string]time.Duration // per_tool
	Signal  string                   // adaptive: "in_flight", "queue_depth" or "request_rate"
	Base    time.Duration            // adaptive: interval at zero load; 0 = Config.PollInterval
	PerUnit time.Duration            // adaptive: added per unit of load
	Max     time.Duration            // adaptive: cap; 0 = no cap
}

// Backpressure bounds what the server accepts. Zero values are unbounded.
type Backpressure struct {
	MaxTasks          int // non-terminal tasks, all tenants
	MaxTasksPerTenant int // non-terminal tasks per tenant
	Workers           int // executor workers: tasks whose work runs at once; 0 = every task
	Queue             int // tasks waiting for a worker (they stay working, statusMessage "queued")

	// WhenFull is what a create meets when the caps or workers+queue are full:
	// "refuse_rpc" (JSON-RPC error -32603 with a message), "refuse_429" (HTTP 429 with
	// Retry-After), "queue" (accept; the task waits), or "raise_poll_interval" (accept and
	// advertise RaisedPollInterval while full). Default "refuse_rpc".
	WhenFull           string
	RetryAfter         time.Duration // Retry-After on 429s; 0 = 1s
	RaisedPollInterval time.Duration // raise_poll_interval; 0 = 4 x PollInterval

	// Rate limits with golang.org/x/time/rate, in requests per second; 0 = none. Over-eager
	// callers get 429 + Retry-After. "Client" means the MCP session.
	GetRatePerClient    float64
	GetRatePerTenant    float64
	CreateRatePerClient float64
	CreateRatePerTenant float64
	Burst               int // bucket size of every limiter; 0 = 1
}

// Downstream is the simulated system of record every unit of tool work goes through.
type Downstream struct {
	Capacity    int            // concurrent operations; 0 = no downstream model (work is just time)
	ServiceTime scenarios.Dist // time one operation holds a slot
	QueueLimit  int            // operations waiting for a slot; more are rejected; 0 = unbounded
	FailureRate float64        // share of operations that fail (the task fails with a JSON-RPC error)

	StallProbability float64       // share of operations that stall for StallDuration
	StallDuration    time.Duration // extra time of a stalled operation
	StallWindows     []Window      // periods during which every operation stalls
}

// Window is a period of a run, measured from the server's start.
type Window struct {
	Start, Duration time.Duration
}
