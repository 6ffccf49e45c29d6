package loadgen

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Recovery under faults (docs/ARCHITECTURE.md#recovery-gate):
//
//   - A client never repeats a tools/call on its own. A create without a reply (a cut, a
//     timeout, a reset) has an unknown outcome: the client reconciles it first, looking for
//     the task by the idempotency key it sent (Reconciler: the embedded server's ledger; or
//     tasks/list where the target declares it). Found: it resumes observing that task.
//     Not found: only Recovery.RetryCreate lets it call again, with the same key; otherwise
//     the task stays unknown and is listed for reconciliation with its key.
//   - A lost connection or session is re-established with exponential backoff and jitter
//     (Retry-After overrides it); on 404 the client re-initializes (H8) and resumes the known
//     task ids. A task the new session cannot see (-32602) is a finding: the server bound
//     tasks to the session, not to the authorization context (R52).
//   - A crashed client restarts from its persisted task record (taskRecord) and resumes
//     observation instead of calling the tool again.
//   - Budgets bound each kind of attempt per task; a spent budget ends the task unknown.

// Reconciler finds the task a target created for an idempotency key.
type Reconciler interface {
	// Find returns the id of the task created for key; found is false when the target
	// holds none. err is a failure to ask (retried within the reconcile budget).
	Find(ctx context.Context, key string) (taskID string, found bool, err error)
}

// ReconcilerFunc adapts a function to Reconciler.
type ReconcilerFunc func(ctx context.Context, key string) (string, bool, error)

// Find calls f.
func (f ReconcilerFunc) Find(ctx context.Context, key string) (string, bool, error) {
	return f(ctx, key)
}

// UnknownEvidence is one task on the reconciliation list: its outcome was never
// established. TaskID is "" when the create got no reply.
type UnknownEvidence struct {
	Key    string `json:"idempotency_key,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Reason string `json:"reason"`
}

// Reasons a task ends unknown (UnknownEvidence.Reason, Engine.Unknown keys), and
// ReasonResultLost, the reason of every entry of Engine.ResultsLost.
const (
	ReasonCreateLost      = "create_lost"                   // the create got no reply, and reconciliation did not find the task
	ReasonNoReconcile     = "create_lost_no_reconciliation" // ... and reconciliation was off or impossible
	ReasonStatusBudget    = "status_budget"                 // failed status reads spent the budget
	ReasonReconcileBudget = "reconcile_budget"              // lookups failed until the budget was spent
	ReasonDeadline        = "deadline"                      // the poll deadline passed before a terminal status
	ReasonStopped         = "run_stopped"                   // the run ended (grace over, Ctrl-C) first
	ReasonProtocol        = "protocol"                      // the create reply could not be understood
	ReasonResultLost      = "result_lost"                   // terminal, but its payload could not be read
	ReasonLost            = "lost"                          // gone before its ttl ran out (outcome lost)
	ReasonRolledBack      = "rolled_back"                   // a rollback's switch flipped before the create could be retried or answered (rollback.go)

	// reasonNotMade is reconcile's answer when a lookup by key proves the target never made
	// the task: not a reason to be unknown (metrics.CreatesNotFound).
	reasonNotMade = "not_made"
)

// recovery returns the Config's Recovery with defaults for its zero fields.
func (c *Config) recovery() scenarios.Recovery {
	r := c.Recovery
	d := scenarios.Default().Recovery
	if r.Backoff.Initial <= 0 {
		r.Backoff.Initial = d.Backoff.Initial
	}
	if r.Backoff.Max < r.Backoff.Initial {
		r.Backoff.Max = max(d.Backoff.Max, r.Backoff.Initial)
	}
	b := &r.Budgets
	b.Create = cmpOr(b.Create, d.Budgets.Create)
	b.Status = cmpOr(b.Status, d.Budgets.Status)
	b.Result = cmpOr(b.Result, d.Budgets.Result)
	b.Reconcile = cmpOr(b.Reconcile, d.Budgets.Reconcile)
	return r
}

func cmpOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// backoff is the wait before reconnection attempt n (n >= 1):
// min(Initial * 2^(n-1), Max) * U(1-Jitter, 1+Jitter).
func backoff(b scenarios.Backoff, n int, r *rand.Rand) time.Duration {
	d := time.Duration(b.Initial)
	for i := 1; i < n && d < time.Duration(b.Max); i++ {
		d *= 2
	}
	d = min(d, time.Duration(b.Max))
	if b.Jitter > 0 && r != nil {
		d = time.Duration(float64(d) * (1 - b.Jitter + 2*b.Jitter*r.Float64()))
	}
	return d
}

// fires decides a client fault at one opportunity (see draw) and records it as injected.
func (v *vu) fires(t scenarios.Trigger, kind string) bool {
	if !v.draw(t) {
		return false
	}
	v.shard.Add(metrics.FaultsInjected, 1)
	v.e.cfg.Events.Add(metrics.Event{At: time.Now(), Source: "client", Kind: kind, Task: v.cur})
	return true
}

// taskRecord is what a client persists about its current task, so that after a crash it
// resumes observation instead of calling the tool again. It is kept encoded, as it
// would be on disk: only what is written here survives a crash.
type taskRecord struct {
	TaskID        string        `json:"task_id"`
	Key           string        `json:"idempotency_key,omitempty"`
	Correlation   string        `json:"correlation_id"`
	Status        string        `json:"status"`
	LastUpdatedAt string        `json:"last_updated_at,omitempty"`
	NextPoll      time.Time     `json:"next_poll"`
	Created       time.Time     `json:"created"`
	Intended      time.Time     `json:"intended"`
	Deadline      time.Time     `json:"deadline,omitzero"`
	CancelAt      time.Time     `json:"cancel_at,omitzero"`
	CancelSent    bool          `json:"cancel_sent,omitempty"`
	CancelSentAt  time.Time     `json:"cancel_sent_at,omitzero"`
	Polls         int           `json:"polls"`
	Advertised    time.Duration `json:"advertised_ns,omitempty"`
	FirstAdvised  time.Duration `json:"first_advised_ns,omitempty"`
	ServerCreated string        `json:"server_created,omitempty"`
	CreateSent    time.Time     `json:"create_sent,omitzero"`
	TTL           *mcp.Ms       `json:"ttl_ms,omitempty"` // as granted; absent: unlimited
}

// persist writes the current task's record (only when crashes can happen: it costs an
// encoding per status change).
func (v *vu) persist(t *taskState, next time.Time) {
	if !v.e.cfg.Faults.Crash.On() {
		return
	}
	lc := &v.lc
	r := taskRecord{
		TaskID: t.id, Key: t.key, Correlation: t.correlation, Status: lc.Status.String(),
		LastUpdatedAt: t.lastUpdated, NextPoll: next, Created: lc.Created, Intended: t.intended,
		Deadline: lc.Deadline, CancelAt: lc.CancelAt, CancelSent: !lc.CancelSentAt.IsZero(), CancelSentAt: lc.CancelSentAt,
		Polls: lc.Polls, Advertised: lc.Advertised, FirstAdvised: lc.FirstAdvised,
		CreateSent: t.createSent, TTL: t.srv.ttl,
	}
	if !t.srv.created.IsZero() {
		r.ServerCreated = t.srv.created.Format(time.RFC3339Nano)
	}
	v.saved, _ = json.Marshal(&r)
}

// crash forgets everything the client held in memory about its task and its session (no
// DELETE: a crashed process says no goodbye), then restarts from the persisted record.
func (v *vu) crash(t *taskState) {
	v.conn = nil
	v.lc = Lifecycle{}
	*t = taskState{}
	var r taskRecord
	if err := json.Unmarshal(v.saved, &r); err != nil || r.TaskID == "" {
		return // nothing persisted: the caller ends the task unknown
	}
	st, _ := mcp.ParseStatus(r.Status)
	*t = taskState{id: r.TaskID, key: r.Key, correlation: r.Correlation, lastUpdated: r.LastUpdatedAt,
		intended: r.Intended, ref: client.NewTaskRef(r.TaskID), createSent: r.CreateSent}
	t.srv.created = parseTime(r.ServerCreated)
	v.lc = v.newLifecycle()
	v.lc.Resume(ResumePoint{Status: st, Created: r.Created, Deadline: r.Deadline, CancelAt: r.CancelAt,
		CancelSent: r.CancelSent, Polls: r.Polls, Advertised: r.Advertised, FirstAdvised: r.FirstAdvised,
		NextPoll: r.NextPoll, CancelSentAt: r.CancelSentAt})
	v.grant(t, r.TTL)
	// The next reply resumes the observation (observe counts it, once).
}

// idempotencyKey is the key of a client's seq-th task: unique within the run (client index,
// sequence) and across runs (the run's seed and start time).
func (v *vu) idempotencyKey(seq uint64) string {
	b := make([]byte, 0, 48)
	b = append(b, "tasksim-"...)
	b = strconv.AppendUint(b, v.e.cfg.Seed, 36)
	b = append(b, '-')
	b = strconv.AppendInt(b, v.e.start.UnixMilli(), 36)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(v.idx), 36)
	b = append(b, '-')
	b = strconv.AppendUint(b, seq, 36)
	return string(b)
}

// listReconciler reconciles by tasks/list where the target declares it (R54) but offers no
// lookup by key: it claims the first listed task (in the server's order) that no client of
// this run knows, created between the lost create's send and its failure (one second of
// clock skew either side).
// The claim is approximate when several creates were lost at once; it is counted apart.
//
// The ids it knows are kept in two generations, the older dropped whole at each turn, so
// that memory is bounded by the tasks of two generations rather than of the whole run. A
// turn drops the ids learned before the current generation began; it comes once a
// generation is horizon old, and only when every create not yet settled (sent, settled:
// from its send to the end of its reconciliation, however long its retries and pages take)
// was sent after that instant and its skew: a task learned earlier was created earlier,
// outside the window of any create that could still look for it.
type listReconciler struct {
	mu      sync.Mutex
	known   map[string]struct{} // task ids learned from replies or claimed, this generation
	older   map[string]struct{} // the previous generation's
	since   time.Time           // when this generation began
	horizon time.Duration       // a generation's least length
	open    map[int64]int       // the sends of the creates not settled, Unix ns, with their count
	recheck time.Time           // a turn held back by an unsettled create is looked at again then
}

// reconcileSkew is the clock skew between client and server a claim allows either side.
const reconcileSkew = time.Second

// sent notes a create sent at at; settled, that it has settled (replied, or reconciled).
// Both do nothing on a nil reconciler.
func (l *listReconciler) sent(at time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.open == nil {
		l.open = make(map[int64]int)
	}
	l.open[at.UnixNano()]++
	l.mu.Unlock()
}

func (l *listReconciler) settled(at time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if k := at.UnixNano(); l.open[k] > 1 {
		l.open[k]--
	} else {
		delete(l.open, k)
	}
	l.mu.Unlock()
}

// mayTurnLocked reports whether the ids learned before l.since can go: no unsettled create
// was sent before it (less the skew). Held back, it is asked again a second later at the
// earliest, not at every id learned meanwhile (the open creates may be thousands).
func (l *listReconciler) mayTurnLocked(now time.Time) bool {
	edge := l.since.Add(reconcileSkew).UnixNano()
	for at := range l.open {
		if at < edge {
			l.recheck = now.Add(time.Second)
			return false
		}
	}
	return true
}

// newListReconciler returns a reconciler whose creates take at most span from send to failure.
func newListReconciler(span time.Duration) *listReconciler {
	return &listReconciler{horizon: span + 2*time.Second}
}

func (l *listReconciler) learn(id string) {
	l.mu.Lock()
	l.knowLocked(id, time.Now())
	l.mu.Unlock()
}

// knowLocked adds id to the current generation, turning generations first if it is over.
func (l *listReconciler) knowLocked(id string, now time.Time) {
	if l.known == nil || now.Sub(l.since) >= l.horizon && !now.Before(l.recheck) && l.mayTurnLocked(now) {
		l.older, l.known, l.since = l.known, make(map[string]struct{}, len(l.known)), now
	}
	l.known[id] = struct{}{}
}

// knowsLocked reports whether id was learned (in either generation).
func (l *listReconciler) knowsLocked(id string) bool {
	_, ok := l.known[id]
	if !ok {
		_, ok = l.older[id]
	}
	return ok
}

// size is the number of ids held, for tests.
func (l *listReconciler) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.known) + len(l.older)
}

// find pages through tasks/list (sent by call) for an unclaimed task created in [from, to].
func (l *listReconciler) find(call func(params []byte) (client.Reply, error), from, to time.Time) (string, bool, error) {
	from, to = from.Add(-reconcileSkew), to.Add(reconcileSkew)
	var claimed string
	err := client.EachPage(mcp.OpTasksList, call, func(result json.RawMessage) (bool, error) {
		var res struct {
			Tasks []mcp.Task `json:"tasks"`
		}
		if err := json.Unmarshal(result, &res); err != nil {
			return false, &client.ProtocolError{Msg: "tasks/list result: " + err.Error()}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, t := range res.Tasks {
			c := parseTime(t.CreatedAt)
			if l.knowsLocked(t.TaskID) || c.Before(from) || c.After(to) {
				continue
			}
			l.knowLocked(t.TaskID, time.Now())
			claimed = t.TaskID
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return "", false, err
	}
	return claimed, claimed != "", nil
}
