package scenarios

import "slices"

// Faults are the chaos of a run: transport cuts at each point of the task lifecycle as
// the client sees them, faults of the embedded server, and network faults between the
// clients and any target (a chaos proxy). Every zero value is "off"; every decision is drawn
// from the run's seeded random sources, so a seed gives the same fault schedule.
type Faults struct {
	// Client cuts the client's transport at the five fault points of the task lifecycle.
	Client ClientFaults `yaml:"client"`
	// Server injects faults into the embedded mock server; ignored with a real Target.
	Server ServerFaults `yaml:"server"`
	// Network puts a chaos proxy between the clients and the target (embedded or real).
	Network NetworkFaults `yaml:"network"`
}

// Trigger decides whether a fault fires at one opportunity (a request, a task, a
// connection): always inside the periodic windows (the first Window of every Every, counted
// from the start of the load phase for client faults, from the start of the embedded server
// or the chaos proxy for theirs, a few milliseconds earlier), else with Probability. The
// zero Trigger never fires.
type Trigger struct {
	// Probability is the chance per opportunity, in [0, 1]. Default 0.
	Probability float64 `yaml:"probability"`
	// Every is the period of the windows; 0 = no windows. Default 0s.
	Every Duration `yaml:"every"`
	// Window is the length of each window; with Every > 0 it must be in (0, Every].
	// Default 0s.
	Window Duration `yaml:"window"`
}

// On reports whether the trigger can ever fire.
func (t Trigger) On() bool { return t.Probability > 0 || t.Every > 0 }

// InWindow reports whether offset (from the start of the load phase) falls in a window.
func (t Trigger) InWindow(offset Duration) bool {
	return t.Every > 0 && offset >= 0 && offset%t.Every < t.Window
}

// Schedule is a set of instants, counted from the start of the embedded server (just before
// the load phase), at which a one-off fault (a restart) happens: each of At, and every Every.
type Schedule struct {
	// At lists instants; each >= 0. Default none.
	At []Duration `yaml:"at,omitempty"`
	// Every repeats the fault with this period (first at Every); 0 = never. Default 0s.
	Every Duration `yaml:"every"`
}

// On reports whether the schedule has any instant.
func (s Schedule) On() bool { return len(s.At) > 0 || s.Every > 0 }

// ClientFaults are the five fault points, as cuts of the client's transport.
// A cut drops the connection (and with it the session's state on the client side: the
// client must reconnect) at the named point; the server keeps whatever it had done.
//
// Opportunities: create_reply per tools/call sent; after_create and cancel_reply per task
// (one create reply, one cancel); before_result and crash at most once per task; the three
// stream cuts (result_stream, input_before_answer, input_after_answer) are drawn per
// tasks/result call until one of them has cut a stream of the task, so at most one per task
// (every task can still end). A stream cut happens only when its point comes: an SSE reply
// for result_stream, a server request on the stream for the input cuts.
type ClientFaults struct {
	// CreateReply (fault point 1): the tools/call reaches the server, its reply is lost.
	// The server created the task; the client has no id: the outcome is unknown until
	// reconciliation finds it.
	CreateReply Trigger `yaml:"create_reply"`
	// AfterCreate (fault point 2): the connection drops right after CreateTaskResult; the
	// client reconnects and resumes polling the known id.
	AfterCreate Trigger `yaml:"after_create"`
	// BeforeResult (fault point 3): the connection drops between the terminal status and
	// the tasks/result call.
	BeforeResult Trigger `yaml:"before_result"`
	// ResultStream (fault point 3): an SSE tasks/result stream is cut after its first
	// event, before the response; the client waits the stream's retry field (if any) and
	// asks again.
	ResultStream Trigger `yaml:"result_stream"`
	// InputBeforeAnswer (fault point 4): the stream carrying elicitation/create is cut
	// before the answer is sent.
	InputBeforeAnswer Trigger `yaml:"input_before_answer"`
	// InputAfterAnswer (fault point 4): the stream is cut right after the answer is sent.
	InputAfterAnswer Trigger `yaml:"input_after_answer"`
	// CancelReply (fault point 5): a tasks/cancel reaches the server, its reply is lost.
	CancelReply Trigger `yaml:"cancel_reply"`
	// Crash makes a client crash mid-task (once per task at most, at a poll): it loses all
	// in-memory state and its session, restarts, and resumes from its persisted task record
	// instead of calling the tool again.
	Crash Trigger `yaml:"crash"`
}

// On reports whether any client fault is on.
func (c ClientFaults) On() bool {
	for _, t := range c.triggers() {
		if t.On() {
			return true
		}
	}
	return false
}

func (c *ClientFaults) triggers() map[string]Trigger {
	return map[string]Trigger{
		"create_reply": c.CreateReply, "after_create": c.AfterCreate,
		"before_result": c.BeforeResult, "result_stream": c.ResultStream,
		"input_before_answer": c.InputBeforeAnswer, "input_after_answer": c.InputAfterAnswer,
		"cancel_reply": c.CancelReply, "crash": c.Crash,
	}
}

// ServerFaults make the embedded server misbehave. The opportunity of each Trigger is
// written beside it.
type ServerFaults struct {
	// HTTP5xx answers a request with Status instead of serving it (per request; the request
	// is not processed).
	HTTP5xx Trigger `yaml:"http_5xx"`
	// Status is the HTTP status of HTTP5xx: 500, 502, 503 or 504. Default 503.
	Status int `yaml:"status"`
	// Reset closes the connection without a reply (per request; not processed).
	Reset Trigger `yaml:"reset"`
	// SessionExpiry forgets the caller's session, answering 404 (per request, H8).
	SessionExpiry Trigger `yaml:"session_expiry"`
	// Restart forgets every session at the scheduled instants, as a restarted server would.
	Restart Schedule `yaml:"restart"`
	// RestartLosesTasks makes a Restart (and a rollback's, rollback.restart) also forget every task (a server without durable
	// task storage). Default false.
	RestartLosesTasks bool `yaml:"restart_loses_tasks"`
	// Duplicate sends an SSE reply or notification twice (per SSE reply).
	Duplicate Trigger `yaml:"duplicate"`
	// EarlyExpiry purges a task as soon as it is terminal, long before its ttl (per task).
	EarlyExpiry Trigger `yaml:"early_expiry"`
	// Stuck leaves a task working forever: its work never ends (per task).
	Stuck Trigger `yaml:"stuck"`
	// EffectFirst applies the task's domain effect when its work starts instead of when it
	// ends, so that a cancel arriving later comes after the effect (per task).
	EffectFirst Trigger `yaml:"effect_first"`
	// NonIdempotent is a known-bad mode: a tools/call repeating an idempotency key starts
	// the work again (a second domain effect) instead of answering with the existing task,
	// and the ledger cannot be searched by key. Default false.
	NonIdempotent bool `yaml:"non_idempotent"`
}

// On reports whether any server fault is on.
func (s ServerFaults) On() bool {
	return s.HTTP5xx.On() || s.Reset.On() || s.SessionExpiry.On() || s.Restart.On() ||
		s.Duplicate.On() || s.EarlyExpiry.On() || s.Stuck.On() || s.EffectFirst.On() ||
		s.NonIdempotent
}

// NetworkFaults configure the chaos proxy (in the spirit of Toxiproxy's toxics). The proxy
// runs when any of them is on; each fault has its own trigger, drawn per connection.
type NetworkFaults struct {
	// Latency delays every chunk of data in both directions by a sample of this
	// distribution. Default none.
	Latency Dist `yaml:"latency,omitempty"`
	// Bandwidth caps each direction of each connection, in bytes per second; 0 = no cap.
	// Default 0.
	Bandwidth int64 `yaml:"bandwidth"`
	// Reset resets a connection (TCP RST) after ResetAfter bytes have gone downstream
	// (per connection).
	Reset Trigger `yaml:"reset"`
	// ResetAfter is the number of bytes to the client before a reset; 0 = at once.
	// Default 0.
	ResetAfter int64 `yaml:"reset_after"`
	// BlackHole accepts a connection and then forwards nothing either way (per connection).
	BlackHole Trigger `yaml:"black_hole"`
	// HalfOpen closes the upstream side of a connection after HalfOpenAfter but keeps the
	// client's side open and silent (per connection).
	HalfOpen Trigger `yaml:"half_open"`
	// HalfOpenAfter is when a half-open connection loses its upstream. Default 0s.
	HalfOpenAfter Duration `yaml:"half_open_after"`
}

// On reports whether the chaos proxy is needed.
func (n NetworkFaults) On() bool {
	return n.Latency != (Dist{}) || n.Bandwidth > 0 || n.Reset.On() || n.BlackHole.On() ||
		n.HalfOpen.On()
}

// On reports whether any fault is on.
func (f Faults) On() bool { return f.Client.On() || f.Server.On() || f.Network.On() }

// Recovery is how clients recover from faults.
type Recovery struct {
	// Backoff spaces reconnect attempts after a transport failure: Initial, doubled per
	// attempt up to Max, scaled by U(1-Jitter, 1+Jitter). A Retry-After overrides it.
	Backoff Backoff `yaml:"backoff"`
	// Reconcile looks for a task of unknown outcome (its create got no reply) by its
	// idempotency key before giving up on it: tasks/list where the target declares it, and
	// the embedded server's ledger. Default true.
	Reconcile bool `yaml:"reconcile"`
	// RetryCreate lets a client call the tool again, with the same idempotency key, for a
	// task that reconciliation did not find. Never on by default: a repeated tools/call can
	// start the work twice. Default false.
	RetryCreate bool `yaml:"retry_create"`
	// IdempotencyArg is the tool argument that carries the task's idempotency key; "" = send
	// none. Default "idempotency_key" (the embedded server's).
	IdempotencyArg string `yaml:"idempotency_arg"`
	// Budgets bound the attempts of each kind of request per task, failures included.
	Budgets Budgets `yaml:"budgets"`
}

// Backoff is an exponential backoff with jitter.
type Backoff struct {
	Initial Duration `yaml:"initial"` // > 0. Default 100ms.
	Max     Duration `yaml:"max"`     // >= Initial. Default 5s.
	Jitter  float64  `yaml:"jitter"`  // in [0, 1). Default 0.2.
}

// Budgets are the separate attempt budgets, per task: a task that spends one is
// abandoned with outcome unknown (and the budget named in the evidence).
type Budgets struct {
	Create    int `yaml:"create"`    // tools/call attempts (>= 1; > 1 only with retry_create). Default 2.
	Status    int `yaml:"status"`    // failed tasks/get and tasks/cancel attempts. Default 20.
	Result    int `yaml:"result"`    // tasks/result attempts. Default 5.
	Reconcile int `yaml:"reconcile"` // reconciliation lookups. Default 3.
}

// defaultRecovery is Recovery's defaults (see Default).
func defaultRecovery() Recovery {
	return Recovery{
		Backoff:        Backoff{Initial: Duration(100e6), Max: Duration(5e9), Jitter: 0.2},
		Reconcile:      true,
		IdempotencyArg: "idempotency_key",
		Budgets:        Budgets{Create: 2, Status: 20, Result: 5, Reconcile: 3},
	}
}

// defaultServerFaults is ServerFaults' defaults.
func defaultServerFaults() ServerFaults { return ServerFaults{Status: 503} }

// trigger checks one Trigger.
func (v *validator) trigger(path string, t Trigger) {
	v.ratio(path+".probability", t.Probability)
	v.nonNegative(path+".every", t.Every)
	v.nonNegative(path+".window", t.Window)
	switch {
	case t.Every > 0 && (t.Window <= 0 || t.Window > t.Every):
		v.add(path+".window", "must be > 0 and <= every (%v), got %v", t.Every, t.Window)
	case t.Every == 0 && t.Window > 0:
		v.add(path+".window", "has no effect without every > 0")
	}
}

// faults checks the faults and recovery sections.
func (v *validator) faults() {
	f := v.s.Faults
	c := f.Client.triggers()
	for _, name := range sortedKeys(c) {
		v.trigger("faults.client."+name, c[name])
	}
	v.serverFaults()

	n := f.Network
	if n.Latency != (Dist{}) {
		n.Latency.problems(v, "faults.network.latency")
	}
	if n.Bandwidth < 0 {
		v.add("faults.network.bandwidth", "must be >= 0 (0 = no cap), got %d", n.Bandwidth)
	}
	v.trigger("faults.network.reset", n.Reset)
	if n.ResetAfter < 0 {
		v.add("faults.network.reset_after", "must be >= 0, got %d", n.ResetAfter)
	}
	v.trigger("faults.network.black_hole", n.BlackHole)
	v.trigger("faults.network.half_open", n.HalfOpen)
	v.nonNegative("faults.network.half_open_after", n.HalfOpenAfter)

	r := v.s.Recovery
	v.positive("recovery.backoff.initial", r.Backoff.Initial)
	if r.Backoff.Max < r.Backoff.Initial {
		v.add("recovery.backoff.max", "must be >= initial (%v), got %v", r.Backoff.Initial, r.Backoff.Max)
	}
	if r.Backoff.Jitter < 0 || r.Backoff.Jitter >= 1 {
		v.add("recovery.backoff.jitter", "must be in [0, 1), got %v", r.Backoff.Jitter)
	}
	b := r.Budgets
	for _, bd := range []struct {
		name string
		n    int
	}{{"create", b.Create}, {"status", b.Status}, {"result", b.Result}, {"reconcile", b.Reconcile}} {
		if bd.n < 1 || bd.n > 1000 {
			v.add("recovery.budgets."+bd.name, "must be in [1, 1000], got %d", bd.n)
		}
	}
	if r.RetryCreate && r.IdempotencyArg == "" {
		v.add("recovery.retry_create", "needs an idempotency_arg: a retry without the same idempotency key can start the work twice")
	}
	if f.Client.CreateReply.On() && r.IdempotencyArg == "" && r.Reconcile {
		v.add("recovery.idempotency_arg", "must be set for reconciliation of lost creates (faults.client.create_reply)")
	}
}

// serverFaults checks faults.server: what `tasksim serve` needs too.
func (v *validator) serverFaults() {
	s := v.s.Faults.Server
	v.trigger("faults.server.http_5xx", s.HTTP5xx)
	if !slices.Contains([]int{500, 502, 503, 504}, s.Status) {
		v.add("faults.server.status", "must be 500, 502, 503 or 504, got %d", s.Status)
	}
	v.trigger("faults.server.reset", s.Reset)
	v.trigger("faults.server.session_expiry", s.SessionExpiry)
	for i, at := range s.Restart.At {
		v.nonNegative(indexPath("faults.server.restart.at", i), at)
	}
	v.nonNegative("faults.server.restart.every", s.Restart.Every)
	if s.RestartLosesTasks && !s.Restart.On() && !v.s.Rollback.Restart {
		v.add("faults.server.restart_loses_tasks", "has no effect without restart.at, restart.every or rollback.restart")
	}
	v.trigger("faults.server.duplicate", s.Duplicate)
	v.trigger("faults.server.early_expiry", s.EarlyExpiry)
	v.trigger("faults.server.stuck", s.Stuck)
	v.trigger("faults.server.effect_first", s.EffectFirst)

}
