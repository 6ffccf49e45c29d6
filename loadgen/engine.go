package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Engine runs one load: the virtual clients of the configured model against one target.
type Engine struct {
	cfg     Config
	target  *client.Target
	dialect mcp.Dialect // the era's (traits.Dialect)
	// dialer opens the clients' connections in the run's era (client.DialerFor), chosen
	// once; traits are its.
	dialer   client.Dialer
	traits   client.Traits
	quirks   atomic.Uint32 // mcp.Quirks of the replies read leniently (2026-07-28), noted in the manifest
	rec      *metrics.Recorder
	shards   int
	manifest *client.Manifest

	tenants   []*tenant   // at least one; each has its create params, encoded once (probes.go)
	keyArg    string      // the tool argument carrying the idempotency key; "" = none
	probes    *probeState // nil without probes (probes.go)
	det       *detector   // nil without probes, canaries or injection watch (secrets.go)
	canaryArg bool        // the secret canary goes in the tool's note argument
	probesRan atomic.Bool
	ran       atomic.Bool // Run was called
	recovery  scenarios.Recovery
	faulty    bool            // a client fault is on (Config.Faults.On): the clients' connections are wrapped in them (faultConn)
	list      *listReconciler // nil unless reconciliation by tasks/list is possible
	start     time.Time       // start of the load phase
	slots     chan struct{}   // one token per request in flight; nil without MaxConns
	exec      *executor       // runs the clients (executor.go)
	clients   sync.WaitGroup  // clients not done yet
	idle      idleClients     // the open model's idle clients
	loadCtx   context.Context // of the run: ends with the load phase
	workCtx   context.Context // of the run: ends with the grace period
	vusMu     sync.Mutex
	vus       []*vu          // every client started, for cutWaits
	probe     *cleanupProber // nil without CleanupProbes
	inFlight  atomic.Int64
	stopLoad  chan struct{}
	stopOnce  sync.Once
	rb        *rollbackState // nil without a rollback drill (rollback.go)

	mu          sync.Mutex
	unknowns    map[string]int64 // tasks of unknown outcome, by reason
	unknownIDs  int64            // of them, tasks whose id the client knew (created)
	unknownEv   []UnknownEvidence
	lostResults []UnknownEvidence // a sample of the tasks ended result_lost (ResultsLost)
	lostTasks   []UnknownEvidence // a sample of the tasks ended lost (TasksLost)
	lostAfter   []string          // task ids a new session could not see (R52 finding)
	lostCount   int64
	violations  []ViolationEvidence
	refusals    map[int]int64 // creates refused, by JSON-RPC code or HTTP status (Refusals)

	errors errorBook // failed requests by kind, each with its first message (errsample.go)
}

// ViolationEvidence is one R14 violation with the task it was seen on.
type ViolationEvidence struct {
	TaskID string `json:"task_id"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// maxEvidence bounds the sample of task ids kept per finding.
const maxEvidence = 20

// New builds an engine. m is the target's manifest after Decide; rec must have at least
// cfg.Shards shards.
func New(cfg Config, t *client.Target, m *client.Manifest, rec *metrics.Recorder) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t.CacheEndpoint()
	e := &Engine{cfg: cfg, target: t, dialect: t.DialectInUse(), rec: rec, manifest: m,
		shards: max(1, cfg.Shards), stopLoad: make(chan struct{}), refusals: map[int]int64{},
		unknowns: map[string]int64{}, recovery: cfg.recovery(), faulty: cfg.Faults.On(), start: time.Now()}
	if cfg.MaxConns > 0 {
		e.slots = make(chan struct{}, cfg.MaxConns)
	}
	if cfg.CleanupProbes > 0 {
		e.probe = newCleanupProber(e, cfg.CleanupProbes)
	}
	fallback := cfg.Poll // the wait without an advertised pollInterval: its first, without jitter
	fallback.Jitter = 0
	m.SetFallbackInterval(fallback.Wait(0, 0, nil))
	if err := e.dial(t, m, cfg.TaskTTL); err != nil {
		return nil, err
	}
	// The key goes only to a tool that declares the argument: a strict input schema would
	// refuse an argument it does not know.
	if key := e.recovery.IdempotencyArg; key != "" && m.AsTask && m.DeclaresArg(key) {
		if _, taken := cfg.Args[key]; !taken {
			e.keyArg = key
		}
	}
	if err := e.setupTenants(t, m); err != nil { // probes.go
		return nil, err
	}
	if err := e.setupRollback(t, m); err != nil { // rollback.go
		return nil, err
	}
	if e.recovery.Reconcile && m.Tasks.List {
		// A create's attempts, each within the request timeout, spaced by at most the
		// backoff's cap: the longest from a create's send to its failure.
		b := e.recovery.Budgets.Create
		e.list = newListReconciler(time.Duration(b)*cfg.timeout() + time.Duration(b)*time.Duration(e.recovery.Backoff.Max))
	}
	return e, nil
}

// dial chooses the era of the run's clients, once (client.DialerFor): its dialer, its
// traits and its dialect. An era without a task parameter does not send the run's task
// ttl, and the manifest says so.
func (e *Engine) dial(t *client.Target, m *client.Manifest, ttl time.Duration) error {
	d, err := client.DialerFor(t, m)
	if err != nil {
		return err
	}
	e.dialer, e.traits = d, d.Traits()
	e.dialect = e.traits.Dialect
	if ttl > 0 && !e.traits.TaskParam {
		m.Notes = append(m.Notes, fmt.Sprintf("task_ttl %s is not sent: in %s the server alone sets ttlMs (E40)", ttl, e.dialect.Version()))
	}
	return nil
}

// encodeCreate encodes the tools/call params of a task with args: whole, and, when a key is
// sent, cut around the key's value.
func (e *Engine) encodeCreate(args map[string]any) (call, prefix, suffix []byte, err error) {
	p := map[string]any{"name": e.cfg.Tool}
	if args != nil {
		p["arguments"] = args
	}
	if e.manifest.AsTask && e.traits.TaskParam { // 2026-07-28 has no task parameter: the server decides (E40)
		task := map[string]any{}
		if e.cfg.TaskTTL > 0 {
			task["ttl"] = e.cfg.TaskTTL.Milliseconds()
		}
		p["task"] = task
	}
	call, err = json.Marshal(p)
	if err != nil || e.keyArg == "" {
		return call, nil, nil, err
	}
	// Encode with a placeholder in the key's place, then cut around it.
	const mark = "\x00tasksim-key\x00"
	withKey := map[string]any{e.keyArg: mark}
	for k, v := range args {
		withKey[k] = v
	}
	p["arguments"] = withKey
	b, err := json.Marshal(p)
	if err != nil {
		return nil, nil, nil, err
	}
	quoted, _ := json.Marshal(mark)
	i := bytes.Index(b, quoted)
	return call, b[:i], b[i+len(quoted):], nil
}

// createParams returns the tools/call params of a task of tenant t with idempotency key
// key ("" = none).
func (e *Engine) createParams(t *tenant, key string) []byte {
	if key == "" || e.keyArg == "" {
		return t.callParams
	}
	b := make([]byte, 0, len(t.keyPrefix)+len(key)+len(t.keySuffix)+2)
	b = append(b, t.keyPrefix...)
	b = mcp.AppendString(b, key)
	return append(b, t.keySuffix...)
}

// learn tells tasks/list reconciliation that a task id belongs to a client of this run.
func (e *Engine) learn(id string) {
	if e.list != nil {
		e.list.learn(id)
	}
}

// Unknown returns the tasks of unknown outcome by reason, and a sample of them with their
// keys: the reconciliation list.
func (e *Engine) Unknown() (byReason map[string]int64, sample []UnknownEvidence) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.unknowns), slices.Clone(e.unknownEv)
}

// UnknownCreated is the number of tasks of unknown outcome whose id the client knew: with
// the counted outcomes it must add up to the tasks created (the recovery gate checks it).
func (e *Engine) UnknownCreated() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.unknownIDs
}

// LostAfterReconnect returns how many known, unfinished tasks a new session could not see
// (tasks/get -32602 right after a reconnect), and a sample of their ids. On a server that
// binds tasks to the authorization context (R52) and keeps them, it is 0; a server that
// binds them to the session, or lost them in a restart, shows them here.
func (e *Engine) LostAfterReconnect() (int64, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lostCount, append([]string(nil), e.lostAfter...)
}

func (e *Engine) noteUnknown(u UnknownEvidence) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unknowns[u.Reason]++
	if u.TaskID != "" {
		e.unknownIDs++
	}
	if len(e.unknownEv) < maxEvidence {
		e.unknownEv = append(e.unknownEv, u)
	}
}

// ResultsLost returns a sample of the tasks whose payload could not be read (outcome
// result_lost, counted in metrics.ResultsLost), with their keys: their domain outcome is
// unknown to the caller, so they belong on the reconciliation list beside the unknown ones.
func (e *Engine) ResultsLost() []UnknownEvidence {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.lostResults)
}

func (e *Engine) noteResultLost(u UnknownEvidence) { e.noteSample(&e.lostResults, u) }

// noteSample appends u to the sample *list, up to maxEvidence.
func (e *Engine) noteSample(list *[]UnknownEvidence, u UnknownEvidence) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(*list) < maxEvidence {
		*list = append(*list, u)
	}
}

// TasksLost returns a sample of the tasks that vanished before their ttl (outcome lost,
// counted in metrics.TasksLost), with their keys: the server lost them, so whether their
// work happened is unknown, and they belong on the reconciliation list.
func (e *Engine) TasksLost() []UnknownEvidence {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.lostTasks)
}

func (e *Engine) noteTaskLost(u UnknownEvidence) { e.noteSample(&e.lostTasks, u) }

func (e *Engine) noteLostAfterReconnect(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lostCount++
	if len(e.lostAfter) < maxEvidence {
		e.lostAfter = append(e.lostAfter, id)
	}
}

// acquire takes a request slot (Config.MaxConns), waiting in arrival order while all are
// taken; it reports false if ctx ends first. Without MaxConns it returns true at once.
func (e *Engine) acquire(ctx context.Context) bool {
	if e.slots == nil {
		return true
	}
	select {
	case e.slots <- struct{}{}:
		return true
	default:
	}
	select {
	case e.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release gives back a slot taken by acquire.
func (e *Engine) release() {
	if e.slots != nil {
		<-e.slots
	}
}

// InFlight is the number of tasks created and not yet finished.
func (e *Engine) InFlight() int64 { return e.inFlight.Load() }

// Stop ends the load phase early (first Ctrl-C): no new task starts; in-flight tasks drain
// for the grace period.
func (e *Engine) Stop() { e.stopOnce.Do(func() { close(e.stopLoad) }) }

// Violations returns the R14 violations seen, at most maxEvidence of them.
func (e *Engine) Violations() []ViolationEvidence {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]ViolationEvidence(nil), e.violations...)
}

// Refusals returns the creates the server refused (answered without creating a task), by
// cause: a JSON-RPC error under its code (negative, e.g. -32603), an HTTP rejection under
// its status (positive: 429, 503, 4xx). A create with no reply is not here: it is unknown.
func (e *Engine) Refusals() map[int]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[int]int64, len(e.refusals))
	for k, v := range e.refusals {
		out[k] = v
	}
	return out
}

func (e *Engine) noteViolation(taskID string, v Violation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.violations) < maxEvidence {
		from := "(create)"
		if v.From != 0 {
			from = v.From.String()
		}
		e.violations = append(e.violations, ViolationEvidence{TaskID: taskID, From: from, To: v.To.String()})
	}
}

func (e *Engine) noteCreateRefused(key int) {
	e.mu.Lock()
	e.refusals[key]++
	e.mu.Unlock()
}

// Run drives the load until the load phase ends (Duration, Stop, or ctx), then lets
// in-flight tasks finish for Grace; tasks still running after that end unknown. ctx ending
// stops everything at once. Run returns when every client has closed its session. An
// Engine runs once.
func (e *Engine) Run(ctx context.Context) error {
	if !e.ran.CompareAndSwap(false, true) {
		return errors.New("loadgen: an Engine runs once")
	}
	start := time.Now()
	e.start = start
	e.exec = newExecutor()
	loadCtx, cancelLoad := context.WithDeadline(ctx, start.Add(e.cfg.Duration))
	defer cancelLoad()
	go func() {
		select {
		case <-e.stopLoad:
			cancelLoad()
		case <-loadCtx.Done():
		}
	}()
	// Tasks run on workCtx: it outlives the load phase by the grace period.
	workCtx, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	graceEnd := make(chan time.Time, 1)
	go func() {
		<-loadCtx.Done()
		graceEnd <- time.Now().Add(e.cfg.Grace)
		t := time.NewTimer(e.cfg.Grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancelWork()
		case <-workCtx.Done():
		}
	}()
	e.loadCtx, e.workCtx = loadCtx, workCtx
	if e.cfg.Model == Open {
		e.runOpen(loadCtx, workCtx, start)
	} else {
		e.runClosed(loadCtx, workCtx, start)
	}
	// Every client is done, so no task is in flight: the drain ends now, but for cleanup
	// probes that will see their task's expiry before the grace period is over (which,
	// when the clients ended before the load phase did, starts now).
	var end time.Time
	select {
	case end = <-graceEnd:
	default:
		end = time.Now().Add(e.cfg.Grace)
	}
	e.probe.cut(end)
	e.probe.wait(context.WithoutCancel(workCtx)) // probes end with workCtx at the latest
	e.exec.close()
	if q := mcp.Quirks(e.quirks.Load()); q != 0 {
		e.manifest.Note("the target's replies were read leniently, as the rules allow: " + q.String() + " (docs/RULES.md#ext-gaps)")
	}
	return nil
}

// CleanupProbes counts the cleanup_lag probes that could not measure: cut off by the run's
// end, or blind to a task bound to another session.
func (e *Engine) CleanupProbes() CleanupProbeStats { return e.probe.counts() }

// runClosed runs Clients virtual clients, each running tasks back to back (drive). With a
// Ramp, client i starts at start + i*Ramp/Clients, and its first task counts from then. A
// sharded engine runs only the clients its Shard owns, each at its place on the whole ramp.
func (e *Engine) runClosed(loadCtx, workCtx context.Context, start time.Time) {
	stop := e.cutWaits(loadCtx, workCtx)
	n := e.cfg.Clients
	for i := range n {
		if !e.cfg.Shard.Owns(i) {
			continue
		}
		at := start
		if e.cfg.Ramp > 0 {
			at = start.Add(time.Duration(int64(e.cfg.Ramp) * int64(i) / int64(n)))
			if !sleepUntil(loadCtx, at) {
				break
			}
		} else {
			at = time.Now()
		}
		v := e.startClient(i)
		v.intended = at
		e.exec.dispatch(v)
	}
	e.clients.Wait()
	stop()
}

// runOpen schedules arrivals by the rate (or ramp) and hands each to an idle client of the
// pool; an arrival that finds none is counted dropped (docs/METRICS.md#dropped). Arrival times
// are computed, not ticked: arrival n is due when the integral of the rate reaches n. A
// sharded engine's pool is the pool clients its Shard owns, and it takes the arrivals it owns
// (arrival n is item n-1), each due when it is due in the whole run.
func (e *Engine) runOpen(loadCtx, workCtx context.Context, start time.Time) {
	stop := e.cutWaits(loadCtx, workCtx)
	n := e.cfg.pool()
	e.idle.init(e.cfg.Shard.Size(n))
	for i := range n {
		if e.cfg.Shard.Owns(i) {
			e.idle.put(e.startClient(i)) // the pool is open: it takes them
		}
	}
	drop := e.rec.Shard(0)
	sched := newSchedule(e.cfg.Rate, e.cfg.Stages)
	for n := 1; ; n++ {
		at, ok := sched.arrival(float64(n))
		if !ok || at >= e.cfg.Duration {
			break
		}
		if !e.cfg.Shard.Owns(n - 1) {
			continue
		}
		due := start.Add(at)
		if !sleepUntil(loadCtx, due) {
			break
		}
		switch v := e.idle.get(); {
		case v == nil:
			drop.Add(metrics.TasksDropped, 1)
		case v.ten.revoked(e): // a revoked tenant's client leaves the pool
			v.shard.Add(metrics.TasksDropped, 1)
			v.phase = phaseClose
			e.exec.dispatch(v)
		default:
			v.intended, v.phase = due, phaseStart
			e.exec.dispatch(v)
		}
	}
	for _, v := range e.idle.close() { // the busy ones close when their task ends
		v.phase = phaseClose
		e.exec.dispatch(v)
	}
	e.clients.Wait()
	stop()
}

// startClient makes client i, counted in e.clients until it is done (drive).
func (e *Engine) startClient(i int) *vu {
	v := e.newVU(i)
	e.vusMu.Lock()
	e.vus = append(e.vus, v)
	e.vusMu.Unlock()
	e.clients.Add(1)
	return v
}

// cutWaits has the end of each context cut short the clients' waits on it: think time at
// the end of the load phase, the waits between a task's steps at the end of the grace
// period. stop ends it once every client is done.
func (e *Engine) cutWaits(loadCtx, workCtx context.Context) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range []struct {
		ctx context.Context
		on  int32
	}{{loadCtx, sleepLoad}, {workCtx, sleepWork}} {
		wg.Go(func() {
			select {
			case <-c.ctx.Done():
			case <-done:
				return
			}
			e.vusMu.Lock()
			defer e.vusMu.Unlock()
			for _, v := range e.vus {
				v.interrupt(c.on)
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// schedule is a piecewise-linear arrival rate: Rate before and after the stages, which ramp
// linearly from the previous rate to their Target.
type schedule struct {
	segs []segment
	tail float64 // rate after the last stage
}

type segment struct {
	start, dur time.Duration
	r0, r1     float64 // rate at the start and end, per second
	n0         float64 // arrivals before the segment
}

func newSchedule(rate float64, stages []Stage) *schedule {
	s := &schedule{tail: rate}
	prev, at, n := rate, time.Duration(0), 0.0
	if len(stages) > 0 {
		prev = 0 // a ramp starts from rest
	}
	for _, st := range stages {
		seg := segment{start: at, dur: st.Duration, r0: prev, r1: st.Target, n0: n}
		s.segs = append(s.segs, seg)
		n += (prev + st.Target) / 2 * st.Duration.Seconds()
		at += st.Duration
		prev = st.Target
	}
	if len(stages) > 0 {
		s.tail = prev
	}
	return s
}

// arrival returns when the cumulative arrival count reaches n; ok is false if it never does
// (a zero rate forever).
func (s *schedule) arrival(n float64) (time.Duration, bool) {
	var end time.Duration
	base := 0.0
	for _, g := range s.segs {
		total := (g.r0 + g.r1) / 2 * g.dur.Seconds()
		if n <= g.n0+total {
			x := n - g.n0 // arrivals needed within the segment: r0*t + (r1-r0)/(2D) t^2 = x
			d := g.dur.Seconds()
			a := (g.r1 - g.r0) / (2 * d)
			var t float64
			if math.Abs(a) < 1e-12 {
				t = x / g.r0
			} else {
				t = (-g.r0 + math.Sqrt(g.r0*g.r0+4*a*x)) / (2 * a)
			}
			return g.start + time.Duration(t*float64(time.Second)), true
		}
		end = g.start + g.dur
		base = g.n0 + total
	}
	if s.tail <= 0 {
		return 0, false
	}
	return end + time.Duration((n-base)/s.tail*float64(time.Second)), true
}
