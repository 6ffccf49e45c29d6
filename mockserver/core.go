package mockserver

import (
	"sync"
	"sync/atomic"
)

// core is the task core of the server, in no protocol era: the configuration, the domain
// ledger and idempotency (ledger.go, idempotency.go), the elicitations of input_required
// (elicit.go), the executor and backpressure (executor.go, backpressure.go), the rate
// limits, the downstream system of record, the injected faults, the request-path knobs
// (latency, tool profiles, the pollInterval policy), the task counters, and the seams the
// known-bad and insecure modes wrap (modes.go). The store (store.go) is its table of tasks;
// the task lifecycle is task.go. What a front end needs of the core it reaches through the
// *call it serves: the core answers with call.reply and writes a create reply with
// call.fe, whose era decides the bytes.
type core struct {
	cfg     Config
	closing chan struct{} // closed by Close: waits and long-lived streams end
	ledger  ledger

	elicitMu  sync.Mutex
	elicits   map[string]*elicitation
	elicitSeq atomic.Uint64

	created  atomic.Uint64
	expired  atomic.Uint64
	orphaned atomic.Uint64
	lost     atomic.Uint64 // tasks forgotten by a restart (faults.go)

	// rolledBack is set by RollBack (rollback.go); createdAfterRollback counts the tasks
	// created after it.
	rolledBack           atomic.Pointer[rollbackState]
	createdAfterRollback atomic.Uint64
	lagMaxNs             atomic.Int64

	replays       atomic.Uint64 // creates answered with their idempotency key's task (idempotency.go)
	replayExpired atomic.Uint64 // creates refused: their key's task no longer exists

	requestPath        // the clock, latency, stalls, tool profiles, pollInterval policy, the seeded RNG
	chains      chains // the recurring calls on the clock: the reaper, the restarts (clock.go)

	exec   executor   // caps, workers and queue (executor.go, backpressure.go)
	limits *limits    // rate limits; nil when none (ratelimit.go)
	down   downstream // the downstream system of record (downstream.go)
	faults faultState // injected faults (faults.go)

	modes  coreModes // the core's seams as the known-bad and insecure modes wrap them (modes.go)
	inject string    // the injection canary planted with Config.Inject; "" = none (insecure.go)
}
