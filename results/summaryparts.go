package results

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The parts of summary.json that describe the target and the process rather than the
// measurements: the runtime, the embedded server's figures and the clients' findings. results
// may import neither loadgen nor mockserver (docs/ARCHITECTURE.md#imports), so these are its
// own types: the runner fills them from internal/gcpolicy, mockserver.Stats and the engine,
// and a reader of summary.json (tasksim merge, tasksim report, a pipeline) decodes them back
// with the same fields. The capability manifest is client.Manifest itself (package client
// imports internal/mcp only), so it has no mirror here.

// Runtime is the load generator's process: Go version, processors and the garbage
// collector's settings (internal/gcpolicy.Policy, field for field).
type Runtime struct {
	Go          string `json:"go"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	GOGC        int    `json:"gogc"`               // percent; -1 = off
	MemoryLimit int64  `json:"memory_limit_bytes"` // soft memory limit; 0 = none
	SetBy       string `json:"gc_set_by"`          // who chose GOGC and the limit
	// MaxHeadroom caps the heap GOGC lets grow beyond the live heap, in bytes, when tasksim
	// set GOGC (internal/gcpolicy); 0 = none.
	MaxHeadroom int64 `json:"max_headroom_bytes,omitempty"`
	// MaxConns bounds the requests in flight at once (client.max_conns); 0 = no bound.
	// SourceAddresses are the local addresses the clients' connections are dialed from, in
	// turn (client.source_addresses); none = the system's choice. SourceAddressesAuto says
	// tasksim chose them: a loopback target that may need more connections than one
	// address has ephemeral ports.
	MaxConns            int      `json:"max_conns"`
	SourceAddresses     []string `json:"source_addresses,omitempty"`
	SourceAddressesAuto bool     `json:"source_addresses_auto,omitempty"`
}

// Runtimes is summary.json's "runtime". A run's summary holds its process, an object (null
// when not recorded); a merged summary holds each shard's, an array in the order the shards
// were given (Shards non-nil).
type Runtimes struct {
	Run    *Runtime
	Shards []*Runtime
}

// MarshalJSON writes Shards as an array when it is set, else Run (null when nil).
func (r Runtimes) MarshalJSON() ([]byte, error) {
	if r.Shards != nil {
		return json.Marshal(r.Shards)
	}
	return json.Marshal(r.Run)
}

// UnmarshalJSON reads an array as Shards, an object as Run.
func (r *Runtimes) UnmarshalJSON(b []byte) error {
	*r = Runtimes{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		r.Shards = []*Runtime{}
		return json.Unmarshal(b, &r.Shards)
	}
	return json.Unmarshal(b, &r.Run)
}

// ServerStats are the embedded server's figures at the end of a run (mockserver.Stats), with
// the highest levels the run sampled. Keys in alphabetical order, as summary.json has always
// written them.
type ServerStats struct {
	DomainEffects      uint64            `json:"domain_effects"`         // effects recorded in the ledger
	DownstreamFailures uint64            `json:"downstream_failures"`    // operations the downstream failed
	DownstreamInFlight int64             `json:"downstream_in_flight"`   // at the end
	DownstreamQueue    int64             `json:"downstream_queue_depth"` // at the end
	DownstreamRejected uint64            `json:"downstream_rejections"`  // the downstream queue was full
	DuplicateEffects   uint64            `json:"duplicate_effects"`      // second effects for one key
	EffectsAfterCancel uint64            `json:"effects_after_cancel"`   // effects of cancelled tasks
	ExpiredTasks       uint64            `json:"expired_tasks"`          // deleted because their ttl ran out
	Faults             map[string]uint64 `json:"faults"`                 // server faults that took effect, by kind; only kinds seen
	IdempotentExpired  uint64            `json:"idempotent_expired"`     // a key seen again after its entry expired
	IdempotentReplays  uint64            `json:"idempotent_replays"`     // a key seen again: the first task returned
	Ledger             ServerLedger      `json:"ledger"`
	MaxCleanupLagMS    float64           `json:"max_cleanup_lag_ms"` // largest expiry -> deletion delay
	OrphanedTasks      uint64            `json:"orphaned_tasks"`     // terminal, deleted before the result was fetched
	Overloaded         bool              `json:"overloaded"`         // full at the end
	QueueDepth         int64             `json:"queue_depth"`        // tasks waiting for a worker, at the end
	QueueDepthMax      int64             `json:"queue_depth_max"`    // highest sampled
	RateLimited        uint64            `json:"rate_limited"`       // 429s of a rate limit
	Refusals           uint64            `json:"refusals"`           // creates refused because the server was full
	RefusalsByCause    ServerRefusals    `json:"refusals_by_cause"`
	Rejections         map[string]uint64 `json:"rejections"` // by HTTP status ("429", "other"); only statuses seen
	// Requests counts the requests the server answered, by method metric name
	// ("tools_call") and outcome ("ok", "rpc_error", "http_error"): every method, zeros
	// included; "unknown" (bodies it could not decode) only when there were some.
	Requests       map[string]map[string]uint64 `json:"requests"`
	RetainedTasks  int64                        `json:"retained_tasks"` // held in the store at the end
	Sessions       int                          `json:"sessions"`       // live at the end
	TasksActive    int64                        `json:"tasks_active"`   // non-terminal admitted, at the end
	TasksActiveMax int64                        `json:"tasks_active_max"`
	TasksCreated   uint64                       `json:"tasks_created"`
}

// ServerRefusals are the creates refused because the server was full, by cause.
type ServerRefusals struct {
	Executor          uint64 `json:"executor"`
	MaxTasks          uint64 `json:"max_tasks"`
	MaxTasksPerTenant uint64 `json:"max_tasks_per_tenant"`
}

// ServerLedger is the domain ledger's operations by outcome.
type ServerLedger struct {
	AfterCancel uint64 `json:"after_cancel"`
	Applied     uint64 `json:"applied"`
	Duplicates  uint64 `json:"duplicates"`
	Failed      uint64 `json:"failed"`
	Operations  uint64 `json:"operations"`
	Rejected    uint64 `json:"rejected"`
}

// Server is summary.json's "server". A run's summary holds its embedded server's figures
// (null for an external target); a merged summary holds each shard's, an object keyed
// "shard_I" (Shards non-nil).
type Server struct {
	Run    *ServerStats
	Shards map[string]*ServerStats
}

// IsZero reports whether s holds nothing: null in summary.json.
func (s Server) IsZero() bool { return s.Run == nil && s.Shards == nil }

// MarshalJSON writes Shards when it is set, else Run (null when nil).
func (s Server) MarshalJSON() ([]byte, error) {
	if s.Shards != nil {
		return json.Marshal(s.Shards)
	}
	return json.Marshal(s.Run)
}

// UnmarshalJSON reads an object whose every key is "shard_I" as Shards, any other object as
// Run.
func (s *Server) UnmarshalJSON(b []byte) error {
	*s = Server{}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	if keys == nil { // null
		return nil
	}
	shards := len(keys) > 0
	for k := range keys {
		shards = shards && strings.HasPrefix(k, "shard_")
	}
	if shards {
		return json.Unmarshal(b, &s.Shards)
	}
	return json.Unmarshal(b, &s.Run)
}

// Client is summary.json's "client": what the clients saw beyond the counters; absent when
// there is nothing to say.
type Client struct {
	// CleanupProbesUnmeasured counts the cleanup_lag probes that measured nothing, by why;
	// absent when every probe measured (or none ran).
	CleanupProbesUnmeasured *CleanupProbes `json:"cleanup_probes_unmeasured,omitempty"`
	// CreatesRefused counts creates refused, by JSON-RPC code (negative keys) or HTTP
	// status; absent when none was.
	CreatesRefused map[string]int64 `json:"creates_refused,omitempty"`
}

// CleanupProbes counts cleanup_lag probes that measured nothing, by why
// (loadgen.CleanupProbeStats).
type CleanupProbes struct {
	Cut      int64 `json:"cut"`       // the run ended before the task's expiry
	Blind    int64 `json:"blind"`     // the probe's session could not see the task
	Failed   int64 `json:"failed"`    // a read failed
	TimedOut int64 `json:"timed_out"` // still there 2 minutes after its expiry
}
