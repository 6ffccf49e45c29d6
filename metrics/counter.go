package metrics

import "strconv"

// Counter identifies a monotonically increasing count, summed over shards. Names (Name)
// are stable; requests per mcp.Op and outcome are counted apart, by Shard.Request.
type Counter uint16

// The counters. The task outcome counts are those of docs/METRICS.md#task-outcomes.
const (
	TasksCreated         Counter = iota // tasks whose CreateTaskResult arrived
	TasksCompleted                      // terminal completed observed
	TasksFailed                         // terminal failed observed
	TasksCancelled                      // terminal cancelled observed
	TasksExpired                        // gone (expired, deleted) before a terminal status was seen
	TasksUnknown                        // outcome never established: the reconciliation list
	TasksDropped                        // open-model arrivals that found no free slot
	Polls                               // tasks/get sent
	InvalidTransitions                  // status changes the R14 table forbids
	BackpressureSignals                 // 429s, Retry-After, raised pollInterval, rejections seen
	Reconnects                          // transport sessions re-established
	OrphanedTasks                       // terminal tasks purged before anyone fetched the result
	DownstreamRejections                // work the mock downstream refused
	AmplificationPolls                  // polls sent, summed over tasks recorded in PollAmplification
	AmplificationAdvised                // advised polls, summed over the same tasks
	FaultsInjected                      // client-side faults injected (cuts, crashes)
	Resumed                             // task observations resumed after a cut or a crash, by task id
	Reconciled                          // creates without a reply whose task reconciliation found
	RetriedCreates                      // tools/call sent again with the same idempotency key
	CancelsSent                         // tasks/cancel sent (one per task at most)
	CancelsAcked                        // cancels answered with the task cancelled
	CancelsLate                         // cancels refused because the task was already terminal (R26)
	CancelsBroken                       // tasks whose accepted cancel did not end them cancelled
	ResultsLost                         // terminal tasks whose payload never arrived: outcome result_lost
	CreatesNotFound                     // creates without a reply that a lookup by key proved never made
	InputRequired                       // times a client saw a task enter input_required
	Elicitations                        // elicitation/create requests received from the server
	ElicitAccepted                      // elicitations answered accept
	ElicitDeclined                      // elicitations answered decline
	ElicitCancelled                     // elicitations answered cancel
	CancelledUnrequested                // tasks seen cancelled whose own client sent no tasks/cancel
	CancelsRefused                      // cancels refused -32602 while the task was still working (R27)
	SyncCalls                           // synchronous calls that ended without a task (counted completed or failed too)
	TasksLost                           // gone (-32602) before their granted ttl ran out: the server lost them
	CancelsIgnored                      // cancels sent while the task had work left, whose task then ended completed or failed
	CancelsUndone                       // cancels that turned a task the client had seen completed or failed into cancelled (R14, R26)
	NumCounters                         // number of counters; not a counter
)

// Name returns the stable name of c ("tasks_created", "polls", ...).
func (c Counter) Name() string {
	switch c {
	case TasksCreated:
		return "tasks_created"
	case TasksCompleted:
		return "tasks_completed"
	case TasksFailed:
		return "tasks_failed"
	case TasksCancelled:
		return "tasks_cancelled"
	case TasksExpired:
		return "tasks_expired"
	case TasksUnknown:
		return "tasks_unknown"
	case TasksDropped:
		return "tasks_dropped"
	case Polls:
		return "polls"
	case InvalidTransitions:
		return "invalid_transitions"
	case BackpressureSignals:
		return "backpressure_signals"
	case Reconnects:
		return "reconnects"
	case OrphanedTasks:
		return "orphaned_tasks"
	case DownstreamRejections:
		return "downstream_rejections"
	case AmplificationPolls:
		return "amplification_polls"
	case AmplificationAdvised:
		return "amplification_advised"
	case FaultsInjected:
		return "faults_injected"
	case Resumed:
		return "resumed_observations"
	case Reconciled:
		return "reconciled"
	case RetriedCreates:
		return "retried_creates"
	case CancelsSent:
		return "cancels_sent"
	case CancelsAcked:
		return "cancels_acked"
	case CancelsLate:
		return "cancels_late"
	case CancelsBroken:
		return "cancels_broken"
	case ResultsLost:
		return "results_lost"
	case CreatesNotFound:
		return "creates_not_found"
	case InputRequired:
		return "input_required_seen"
	case Elicitations:
		return "elicitations_received"
	case ElicitAccepted:
		return "elicitations_accepted"
	case ElicitDeclined:
		return "elicitations_declined"
	case ElicitCancelled:
		return "elicitations_cancelled"
	case CancelledUnrequested:
		return "cancelled_unrequested"
	case CancelsRefused:
		return "cancels_refused"
	case SyncCalls:
		return "sync_calls"
	case TasksLost:
		return "tasks_lost"
	case CancelsIgnored:
		return "cancels_ignored"
	case CancelsUndone:
		return "cancels_undone"
	}
	return "counter(" + strconv.Itoa(int(c)) + ")"
}

// String returns Name.
func (c Counter) String() string { return c.Name() }

// ServerSide reports whether c is counted by the embedded mock server, not by the load
// generator's clients: a run against another target has no figure for it (0 is not a
// measurement there).
func (c Counter) ServerSide() bool {
	switch c {
	case OrphanedTasks, DownstreamRejections:
		return true
	}
	return false
}

// Gauge identifies a sampled level. It is set on the Recorder, not on a shard; a Window
// carries the level at its end and the highest level held during it.
type Gauge uint8

// The gauges.
const (
	InFlight             Gauge = iota // tasks (or requests) in flight in the load generator
	RetainedTasks                     // task records held by the server
	DownstreamInFlight                // work items inside the mock downstream system
	DownstreamQueueDepth              // work items waiting for a downstream slot
	Sessions                          // open MCP sessions
	NumGauges                         // number of gauges; not a gauge
)

// Name returns the stable name of g ("in_flight", "retained_tasks", ...).
func (g Gauge) Name() string {
	switch g {
	case InFlight:
		return "in_flight"
	case RetainedTasks:
		return "retained_tasks"
	case DownstreamInFlight:
		return "downstream_in_flight"
	case DownstreamQueueDepth:
		return "downstream_queue_depth"
	case Sessions:
		return "sessions"
	}
	return "gauge(" + strconv.Itoa(int(g)) + ")"
}

// String returns Name.
func (g Gauge) String() string { return g.Name() }

// ServerSide reports whether g is sampled from the embedded mock server: a run against
// another target has no level for it.
func (g Gauge) ServerSide() bool { return g != InFlight }
