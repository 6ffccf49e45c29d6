package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/scenarios"
)

// Tenant isolation probes (docs/RULES.md: R32, R46, R52-R54).
//
// Clients are spread round-robin over Security.Tenants: client i sends tenant i mod n's
// bearer token. Every client tells an in-process registry the ids of the tasks it creates,
// with its tenant and session: that is how probes learn other tenants' task ids, through the
// simulator and never from the wire. A share of the clients (Security.ProbeShare) are probes:
// they run tasks like every client, and after each task a probe round. With its own token and
// session, for a recent task F of another tenant, a round sends:
//
//	kind     request                                        denial expected (else a leak)
//	get      tasks/get F                                    -32602 (R46, R53)
//	result   tasks/result F (cut if an elicitation arrives)  -32602; F's elicitation is a leak
//	cancel   tasks/cancel F                                 -32602; a success also touched F
//	list     tasks/list, first page (where declared, R54)    none of the tasks is another tenant's
//	guess    tasks/get of a random id, F's id incremented    -32602, and the guessed id names no
//	         (sequential) and F's id with one char changed   live task of another tenant (R54:
//	         (near-miss)                                     ids must not be guessable)
//	meta     tasks/get and tasks/result of its own task     the reply is about its own task (R32)
//	         with related-task _meta naming F
//	session  tasks/get F on F's session (a leaked           -32602: sessions are not
//	         Mcp-Session-Id) with its own token              authentication (H2, R52)
//	revoked  after Security.Revoked[k].At: a session and    401 or 403 (scope all), tasks/result
//	         tasks/result of a task of that tenant, with     denied (scope results): HTTP 401/403
//	         the revoked token                              or a JSON-RPC error
//
// A JSON-RPC error other than -32602 is a leak too: it tells a foreign task apart from an
// unknown one (R53 wants them alike). No reply at all (transport error, 429, 5xx, a session
// 404) proves nothing: it is counted inconclusive. Probe requests take request slots like any
// other but are not in the request metrics: they are counted in the security evidence by
// kind. Evidence names the kind and a shortened task id, never a token.
//
// A tenant whose token is revoked (any scope) starts no new task after At; its tasks in
// flight end unknown, reason token_revoked.

// Security configures tenants, probes and canaries. The zero value is off: every client
// uses the Target's headers, no probe, no canary.
type Security struct {
	// Tenants spread the clients round-robin: client i sends Tenants[i mod n].Token as its
	// bearer token (Authorization: Bearer). nil = every client uses the Target's headers.
	Tenants []Tenant
	// ProbeShare is the share of clients that act as probes, in [0, 1]; probing needs two
	// tenants. Client i is a probe when floor((i+1)*ProbeShare) > floor(i*ProbeShare), which
	// spreads them evenly. 0 = none.
	ProbeShare float64
	// Canaries plants secret markers in the tool's note argument (when its inputSchema
	// declares one) and in elicitation answers, and watches for them (secrets.go).
	Canaries bool
	// WatchInjection reports injection canaries that reach clients, without canaries or
	// probes of its own (the detector runs whenever one of the three is on).
	WatchInjection bool
	// Revoked lists the tokens the target revokes during the run, At from the load phase's
	// start (the embedded server counts from its own start, a little earlier).
	Revoked []Revocation
}

// Tenant is one authorization context: a name for reports and a bearer token, never printed.
type Tenant struct {
	Name  string
	Token scenarios.Secret
}

// Revocation is a token the target withdraws at At: Scope "all" (every request denied) or
// "results" (tasks/result denied).
type Revocation struct {
	Tenant string
	At     time.Duration
	Scope  string // "all" or "results"; "" = "all"
}

// Probe kinds (SecurityReport.Leaks keys).
const (
	ProbeGet     = "get"
	ProbeResult  = "result"
	ProbeCancel  = "cancel"
	ProbeList    = "list"
	ProbeGuess   = "guess"
	ProbeMeta    = "meta"
	ProbeSession = "session"
	ProbeRevoked = "revoked"
)

// ReasonRevoked ends a task of a tenant whose token was revoked (UnknownEvidence.Reason).
const ReasonRevoked = "token_revoked"

// LeakEvidence is one cross-tenant leak.
type LeakEvidence struct {
	Kind   string `json:"kind"`
	Task   string `json:"task"` // shortened task id
	Detail string `json:"detail"`
}

// SecurityReport is what the probes and the detector found (Engine.Security).
type SecurityReport struct {
	Probes       bool             `json:"probes"`   // probes ran: leaks were checked
	Canaries     bool             `json:"canaries"` // secrets were planted: their leaks were checked
	CanaryArg    bool             `json:"canary_arg"`
	ProbesSent   map[string]int64 `json:"probes_sent"`
	Inconclusive map[string]int64 `json:"inconclusive"`
	Leaks        map[string]int64 `json:"leaks"`
	LeakSample   []LeakEvidence   `json:"leak_sample"`
	Touched      []string         `json:"touched_tasks"` // foreign tasks a probe cancelled (shortened ids)
	Secrets      map[string]int64 `json:"secrets_seen"`
	SecretSample []SecretEvidence `json:"secret_sample"`
	Injections   map[string]int64 `json:"injection_findings"`
}

// tenant is one tenant as the engine uses it.
type tenant struct {
	idx    int
	name   string
	target *client.Target // the run's target with this tenant's Authorization
	// The create params of the tenant's tasks (the canary in the note argument), and the
	// halves around the idempotency key (Engine.New).
	callParams, keyPrefix, keySuffix []byte
	plainParams                      []byte        // the call without the task parameter, for a rollback's fallback (rollback.go)
	answer                           string        // the elicitation answer canary; "" = none
	revokeAt                         time.Duration // < 0 = never revoked
	revokeScope                      string
}

// canaryArgName is the tool argument the secret canary goes in, when the tool declares it.
const canaryArgName = "note"

// setupTenants builds the engine's tenants with their targets, canaries and create params,
// the detector and the probes' registry (Security).
func (e *Engine) setupTenants(t *client.Target, m *client.Manifest) error {
	sec := e.cfg.Security
	n := max(1, len(sec.Tenants))
	names, tokens := make([]string, n), make([]string, n)
	for i, tn := range sec.Tenants {
		names[i], tokens[i] = tn.Name, tn.Token.Reveal()
	}
	if len(sec.Tenants) == 0 {
		if _, tok, ok := strings.Cut(t.Header.Get("Authorization"), " "); ok {
			tokens[0] = tok
		}
	}
	if sec.Canaries || sec.ProbeShare > 0 || sec.WatchInjection {
		e.det = newDetector(names, tokens)
	}
	if _, taken := e.cfg.Args[canaryArgName]; sec.Canaries && !taken && m.DeclaresArg(canaryArgName) {
		e.canaryArg = true
	}
	for i := range n {
		ten := &tenant{idx: i, name: names[i], target: t, revokeAt: -1}
		if len(sec.Tenants) > 0 {
			ten.target = tenantTarget(t, sec.Tenants[i].Token)
		}
		args := e.cfg.Args
		if e.canaryArg {
			args = maps.Clone(args)
			if args == nil {
				args = map[string]any{}
			}
			args[canaryArgName] = "tasksim canary " + e.det.plant(i, PlantedArg)
		}
		if sec.Canaries {
			ten.answer = e.det.plant(i, PlantedAnswer)
		}
		var err error
		if ten.callParams, ten.keyPrefix, ten.keySuffix, err = e.encodeCreate(args); err != nil {
			return fmt.Errorf("tool arguments: %w", err)
		}
		for _, r := range sec.Revoked {
			if r.Tenant == ten.name && ten.name != "" {
				ten.revokeAt, ten.revokeScope = r.At, r.Scope
			}
		}
		e.tenants = append(e.tenants, ten)
	}
	if sec.ProbeShare > 0 && n >= 2 {
		e.probes = &probeState{reg: newRegistry(n), sent: map[string]int64{},
			inconclusive: map[string]int64{}, leaks: map[string]int64{}}
	}
	return nil
}

// problems reports what is wrong with s.
func (s *Security) problems() []error {
	var errs []error
	if !(s.ProbeShare >= 0 && s.ProbeShare <= 1) {
		errs = append(errs, fmt.Errorf("probe share must be in [0, 1], got %v", s.ProbeShare))
	}
	if s.ProbeShare > 0 && len(s.Tenants) < 2 {
		errs = append(errs, errors.New("probes need at least two tenants"))
	}
	for _, r := range s.Revoked {
		if !slices.ContainsFunc(s.Tenants, func(t Tenant) bool { return t.Name == r.Tenant }) {
			errs = append(errs, fmt.Errorf("revoked tenant %q is not a tenant", r.Tenant))
		}
	}
	return errs
}

// revoked reports whether the tenant's token was revoked by now.
func (t *tenant) revoked(e *Engine) bool {
	return t.revokeAt >= 0 && time.Since(e.start) >= t.revokeAt
}

// tenantTarget returns t with bearer token tok.
func tenantTarget(t *client.Target, tok scenarios.Secret) *client.Target {
	c := *t
	c.Header = t.Header.Clone()
	if c.Header == nil {
		c.Header = http.Header{}
	}
	c.Header.Set("Authorization", "Bearer "+tok.Reveal())
	return &c
}

// isProbe reports whether client idx is a probe (Security.ProbeShare).
func isProbe(idx int, share float64) bool {
	return share > 0 && int(float64(idx+1)*share) > int(float64(idx)*share)
}

// liveTask is a task the registry knows.
type liveTask struct {
	id, session string
}

// registry holds recent task ids by tenant, fed by every client: the probes' knowledge of
// other tenants. Each tenant keeps its last recentPerTenant tasks; owner maps the first
// maxOwners ids to their tenant, so that listed and guessed ids can be attributed (tasks/list
// pages start with the oldest tasks).
type registry struct {
	mu     sync.Mutex
	recent [][]liveTask
	next   []int
	owner  map[string]int
}

const (
	recentPerTenant = 64
	maxOwners       = 1 << 16
)

func newRegistry(tenants int) *registry {
	return &registry{recent: make([][]liveTask, tenants), next: make([]int, tenants), owner: map[string]int{}}
}

func (r *registry) add(tenant int, id, session string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lt := liveTask{id: id, session: session}
	if len(r.recent[tenant]) < recentPerTenant {
		r.recent[tenant] = append(r.recent[tenant], lt)
	} else {
		r.recent[tenant][r.next[tenant]] = lt
		r.next[tenant] = (r.next[tenant] + 1) % recentPerTenant
	}
	if len(r.owner) < maxOwners {
		r.owner[id] = tenant
	}
}

// pickOther returns a recent task of a tenant other than own, drawn with rng.
func (r *registry) pickOther(rng *rand.Rand, own int) (liveTask, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.recent)
	if n < 2 {
		return liveTask{}, false
	}
	start := rng.IntN(n)
	for k := range n {
		t := (start + k) % n
		if t != own && len(r.recent[t]) > 0 {
			return r.recent[t][rng.IntN(len(r.recent[t]))], true
		}
	}
	return liveTask{}, false
}

// pickOf returns a recent task of tenant t.
func (r *registry) pickOf(rng *rand.Rand, t int) (liveTask, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recent[t]) == 0 {
		return liveTask{}, false
	}
	return r.recent[t][rng.IntN(len(r.recent[t]))], true
}

func (r *registry) tenantOf(id string) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.owner[id]
	return t, ok
}

// probeState is what the probes found.
type probeState struct {
	reg *registry

	mu           sync.Mutex
	sent         map[string]int64
	inconclusive map[string]int64
	leaks        map[string]int64
	sample       []LeakEvidence
	touched      []string
}

func (p *probeState) count(m map[string]int64, kind string) {
	p.mu.Lock()
	m[kind]++
	p.mu.Unlock()
}

func (p *probeState) leak(kind, id, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leaks[kind]++
	if len(p.sample) < maxEvidence {
		p.sample = append(p.sample, LeakEvidence{Kind: kind, Task: shortID(id), Detail: detail})
	}
}

// Security returns what the probes and the detector found.
func (e *Engine) Security() SecurityReport {
	r := SecurityReport{Probes: e.probes != nil && e.probesRan.Load(), Canaries: e.cfg.Security.Canaries,
		CanaryArg: e.canaryArg, ProbesSent: map[string]int64{}, Inconclusive: map[string]int64{},
		Leaks: map[string]int64{}, Secrets: map[string]int64{}, Injections: map[string]int64{}}
	if p := e.probes; p != nil {
		p.mu.Lock()
		for k, v := range p.sent {
			r.ProbesSent[k] = v
		}
		for k, v := range p.inconclusive {
			r.Inconclusive[k] = v
		}
		for k, v := range p.leaks {
			r.Leaks[k] = v
		}
		r.LeakSample = append(r.LeakSample, p.sample...)
		r.Touched = append(r.Touched, p.touched...)
		p.mu.Unlock()
	}
	if e.det != nil {
		r.Secrets, r.SecretSample, r.Injections = e.det.report()
	}
	return r
}

// probeCall sends one probe request on sess with a request slot and the request timeout,
// and lets the detector see the reply (a foreign secret in it is a leak of its own).
func (v *vu) probeCall(ctx context.Context, sess *client.Session, kind string, op mcp.Op, params []byte, cut client.Cut) (client.Reply, error) {
	e := v.e
	e.probes.count(e.probes.sent, kind)
	if op != mcp.OpTasksResult {
		if !e.acquire(ctx) {
			return client.Reply{}, &client.TransportError{Op: op.Name(), Err: ctx.Err()}
		}
		defer e.release()
	}
	rctx, cancel := context.WithTimeout(ctx, e.cfg.timeout())
	defer cancel()
	rep, err := sess.CallOpCut(rctx, op, params, nil, cut)
	if e.det != nil {
		e.det.inspect(v.ten.idx, op, rep, err)
	}
	return rep, err
}

// judge applies the denial rule to the reply of a probe of kind about foreign task id.
func (v *vu) judge(kind, id string, rep client.Reply, err error) {
	p := v.e.probes
	switch {
	case err != nil:
		p.count(p.inconclusive, kind)
	case rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams:
		// denied as the spec says (R46, R53)
	case rep.Err != nil:
		p.leak(kind, id, "answered JSON-RPC "+strconv.Itoa(rep.Err.Code)+" instead of -32602: a foreign task is told apart from an unknown one (R53)")
	default:
		p.leak(kind, id, "answered "+kind+" for another tenant's task (R53)")
	}
}

// probeRound runs one round of probes (see the table above) on the client's own session.
func (v *vu) probeRound(ctx context.Context) {
	e := v.e
	p := e.probes
	if ctx.Err() != nil || v.ten.revoked(e) {
		return
	}
	v.probeRevoked(ctx)
	f, ok := p.reg.pickOther(v.prng, v.ten.idx)
	if !ok {
		return
	}
	if v.conn == nil {
		if err := v.reconnect(ctx); err != nil {
			return
		}
	}
	sess := v.session()
	if sess == nil {
		return // an era without the raw request path the probes are written in
	}
	e.probesRan.Store(true)
	params := client.TaskIDParams(f.id)
	rep, err := v.probeCall(ctx, sess, ProbeGet, mcp.OpTasksGet, params, client.CutNone)
	v.judge(ProbeGet, f.id, rep, err)

	if !e.traits.Sessions {
		v.probeStateless(ctx, sess, f.id) // no tasks/result, tasks/list, related-task _meta or sessions
		return
	}
	rep, err = v.probeCall(ctx, sess, ProbeCancel, mcp.OpTasksCancel, params, client.CutNone)
	v.judge(ProbeCancel, f.id, rep, err)
	if err == nil && rep.Err == nil {
		p.mu.Lock()
		if len(p.touched) < maxEvidence {
			p.touched = append(p.touched, shortID(f.id))
		}
		p.mu.Unlock()
	}

	rep, err = v.probeCall(ctx, sess, ProbeResult, mcp.OpTasksResult, params, client.CutBeforeAnswer)
	if errors.Is(err, client.ErrCut) {
		p.leak(ProbeResult, f.id, "another tenant's elicitation/create reached the probe on its tasks/result stream (R53)")
	} else {
		v.judge(ProbeResult, f.id, rep, err)
	}

	if e.manifest.Tasks.List {
		v.probeList(ctx, sess)
	}
	v.probeGuesses(ctx, sess, f.id)
	if v.lastID != "" {
		v.probeMeta(ctx, sess, f.id)
	}
	if f.session != "" && f.session != sess.ID() {
		hijacked := v.ten.target.Attach(f.session, sess.Version())
		rep, err := v.probeCall(ctx, hijacked, ProbeSession, mcp.OpTasksGet, params, client.CutNone)
		v.judge(ProbeSession, f.id, rep, err)
	}
}

// probeList looks for other tenants' tasks on the first page of tasks/list (R53, R54).
func (v *vu) probeList(ctx context.Context, sess *client.Session) {
	p := v.e.probes
	rep, err := v.probeCall(ctx, sess, ProbeList, mcp.OpTasksList, []byte(`{}`), client.CutNone)
	if err != nil || rep.Err != nil {
		p.count(p.inconclusive, ProbeList)
		return
	}
	var res struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
	}
	if json.Unmarshal(rep.Result, &res) != nil {
		p.count(p.inconclusive, ProbeList)
		return
	}
	foreign, first := 0, ""
	for _, t := range res.Tasks {
		if owner, ok := p.reg.tenantOf(t.TaskID); ok && owner != v.ten.idx {
			if foreign == 0 {
				first = t.TaskID
			}
			foreign++
		}
	}
	if foreign > 0 {
		p.leak(ProbeList, first, "tasks/list showed "+strconv.Itoa(foreign)+" task(s) of other tenants (R53)")
	}
}

// probeGuesses tries a random id, the foreign id incremented and the foreign id with one
// character changed.
func (v *vu) probeGuesses(ctx context.Context, sess *client.Session, foreign string) {
	p := v.e.probes
	for _, g := range [...]string{randomHex(v.prng, len(foreign)), nextID(foreign), nearMiss(v.prng, foreign)} {
		if g == "" || g == foreign {
			continue
		}
		rep, err := v.probeCall(ctx, sess, ProbeGuess, mcp.OpTasksGet, client.TaskIDParams(g), client.CutNone)
		owner, known := p.reg.tenantOf(g)
		switch {
		case known && owner != v.ten.idx:
			p.leak(ProbeGuess, g, "a guessed id names a live task of another tenant: ids are guessable (R54)")
		case err == nil && rep.Err == nil && !known:
			p.leak(ProbeGuess, g, "a guessed id was answered with a task (R53, R54)")
		case err != nil:
			p.count(p.inconclusive, ProbeGuess)
		}
	}
}

// probeMeta asks about the probe's own last task with related-task _meta naming a foreign
// task: the server must use params.taskId and ignore the _meta (R32). A reply about another
// task is a leak; so is an error where the same request without the _meta (sent next, as a
// control) is answered: the server looked the _meta's task up instead.
func (v *vu) probeMeta(ctx context.Context, sess *client.Session, foreign string) {
	p := v.e.probes
	own := v.lastID
	plain := client.TaskIDParams(own)
	withMeta := append(append(plain[:len(plain)-1:len(plain)-1], `,"_meta":`...), mcp.RelatedTaskMeta(foreign)...)
	withMeta = append(withMeta, '}')
	for _, op := range [...]mcp.Op{mcp.OpTasksGet, mcp.OpTasksResult} {
		method := op.Name()
		rep, err := v.probeCall(ctx, sess, ProbeMeta, op, withMeta, client.CutBeforeAnswer)
		var res struct {
			TaskID string          `json:"taskId"`
			Meta   json.RawMessage `json:"_meta"`
		}
		switch {
		case err != nil || rep.Err == nil && json.Unmarshal(rep.Result, &res) != nil:
			p.count(p.inconclusive, ProbeMeta)
		case rep.Err != nil:
			ctl, cerr := v.probeCall(ctx, sess, ProbeMeta, op, plain, client.CutBeforeAnswer)
			switch {
			case cerr != nil:
				p.count(p.inconclusive, ProbeMeta)
			case ctl.Err == nil:
				p.leak(ProbeMeta, foreign, method+" with related-task _meta naming another task failed where the same request without it was answered: the server used the _meta (R32)")
			}
		case op == mcp.OpTasksGet && res.TaskID != own,
			op == mcp.OpTasksResult && mcp.RelatedTaskID(res.Meta) == foreign:
			p.leak(ProbeMeta, foreign, method+" answered about the task named in related-task _meta instead of params.taskId (R32)")
		}
	}
}

// probeRevoked checks, for one revocation whose time has come (taken in turn), that the
// revoked token is denied: a session (scope all) and tasks/result (both scopes).
func (v *vu) probeRevoked(ctx context.Context) {
	e := v.e
	p := e.probes
	var due []*tenant
	for _, t := range e.tenants {
		if t.revoked(e) {
			due = append(due, t)
		}
	}
	if len(due) == 0 {
		return
	}
	t := due[int(v.seq)%len(due)]
	f, ok := p.reg.pickOf(v.prng, t.idx)
	if !ok {
		return
	}
	e.probesRan.Store(true)
	if !e.traits.Sessions {
		v.probeRevokedStateless(ctx, t, f.id) // no session to open: a read must be refused
		return
	}
	p.count(p.sent, ProbeRevoked)
	cctx, cancel := context.WithTimeout(ctx, e.cfg.timeout())
	if !e.acquire(cctx) {
		cancel()
		return
	}
	sess, err := t.target.Connect(cctx, client.ClientCapabilities())
	e.release()
	cancel()
	var he *client.HTTPError
	switch {
	case err != nil && errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		return // denied
	case err != nil:
		p.count(p.inconclusive, ProbeRevoked)
		return
	case t.revokeScope != "results":
		// One leak per probe: the session opening is the leak; closing it is all that is left.
		p.leak(ProbeRevoked, f.id, "a revoked token opened a session")
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.timeout())
		defer cancel()
		_ = sess.Close(cctx)
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.timeout())
		defer cancel()
		_ = sess.Close(cctx)
	}()
	rep, err := v.probeCall(ctx, sess, ProbeRevoked, mcp.OpTasksResult, client.TaskIDParams(f.id), client.CutBeforeAnswer)
	switch {
	case err == nil && rep.Err == nil:
		p.leak(ProbeRevoked, f.id, "a token whose scope was revoked fetched a task result")
	case err == nil: // a JSON-RPC error: denied
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		// denied
	default: // no reply, 429, 5xx, 404: proves nothing either way
		p.count(p.inconclusive, ProbeRevoked)
	}
}

// randomHex returns n random hex digits (n = 0: 32).
func randomHex(r *rand.Rand, n int) string {
	if n <= 0 {
		n = 32
	}
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

// nextID is id "plus one": an all-hex id incremented as a hex number (same length), else
// its trailing decimal number incremented, else its last byte.
func nextID(id string) string {
	if id == "" {
		return ""
	}
	b := []byte(id)
	allHex := true
	for _, c := range b {
		if !isHex(c) {
			allHex = false
			break
		}
	}
	if allHex {
		for i := len(b) - 1; i >= 0; i-- {
			switch b[i] {
			case 'f':
				b[i] = '0'
				continue
			case '9':
				b[i] = 'a'
			default:
				b[i]++
			}
			return string(b)
		}
		return string(b)
	}
	i := len(b)
	for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' {
		i--
	}
	if i < len(b) {
		n, err := strconv.ParseUint(id[i:], 10, 64)
		if err == nil {
			s := strconv.FormatUint(n+1, 10)
			for len(s) < len(b)-i {
				s = "0" + s
			}
			return id[:i] + s
		}
	}
	b[len(b)-1]++
	return string(b)
}

// nearMiss returns id with one character changed to another of its class (a hex digit to
// another hex digit, else the next byte).
func nearMiss(r *rand.Rand, id string) string {
	if id == "" {
		return ""
	}
	b := []byte(id)
	i := len(b) - 1 - r.IntN(min(len(b), 4)) // near the end: where sequences differ
	if isHex(b[i]) {
		const digits = "0123456789abcdef"
		c := digits[r.IntN(16)]
		for c == b[i] {
			c = digits[r.IntN(16)]
		}
		b[i] = c
	} else {
		b[i]++
	}
	return string(b)
}

// probeStateless is the rest of a probe round in 2026-07-28, after the tasks/get of foreign
// task id (probes.go): tasks/cancel and tasks/update of it, then the guesses. The era has no
// tasks/result, tasks/list, related-task _meta or sessions, so those probes do not apply.
// An acknowledgement of a cancel or an update proves nothing by itself (E58 and E60 only
// say a server SHOULD refuse an unknown id, docs/RULES.md#ext-gap-7): it is a leak when the
// same request about an id nobody holds is refused, since the server then tells another
// tenant's task apart from an unknown one (E67); otherwise it is inconclusive. Whether the
// cancel took effect shows on the owner's side (cancelled_unrequested).
func (v *vu) probeStateless(ctx context.Context, sess *client.Session, foreign string) {
	update := func(id string) []byte {
		b, _ := json.Marshal(mcp.UpdateTaskParams{TaskID: id, InputResponses: mcp.InputResponses{"tasksim-probe": json.RawMessage(`{"action":"decline"}`)}})
		return b
	}
	for _, c := range [...]struct {
		kind   string
		op     mcp.Op
		params func(string) []byte
	}{{ProbeCancel, mcp.OpTasksCancel, client.TaskIDParams}, {ProbeResult, mcp.OpTasksUpdate, update}} {
		rep, err := v.probeCall(ctx, sess, c.kind, c.op, c.params(foreign), client.CutNone)
		if err != nil || rep.Err != nil {
			v.judge(c.kind, foreign, rep, err)
			continue
		}
		ctl, cerr := v.probeCall(ctx, sess, c.kind, c.op, c.params(randomHex(v.prng, len(foreign))), client.CutNone)
		p := v.e.probes
		switch {
		case cerr == nil && ctl.Err != nil:
			p.leak(c.kind, foreign, c.op.Name()+" acknowledged another tenant's task but refused an unknown id: the server tells them apart (E67)")
		default:
			p.count(p.inconclusive, c.kind) // acknowledged like any id (ext-gap-7)
		}
	}
	v.probeGuesses(ctx, sess, foreign)
}

// probeRevokedStateless checks in 2026-07-28 that a revoked token (any scope) no longer reads
// a task of its tenant: tasks/get, the era's read of a status and a result alike, must be
// refused with 401, 403 or a JSON-RPC error.
func (v *vu) probeRevokedStateless(ctx context.Context, t *tenant, id string) {
	p := v.e.probes
	c, err := v.e.dialer.Dial(ctx, t.target) // sends nothing
	sess := client.SessionOf(c)
	if err != nil || sess == nil {
		return
	}
	rep, err := v.probeCall(ctx, sess, ProbeRevoked, mcp.OpTasksGet, client.TaskIDParams(id), client.CutNone)
	var he *client.HTTPError
	switch {
	case err == nil && rep.Err == nil:
		p.leak(ProbeRevoked, id, "a revoked token read a task (tasks/get)")
	case err == nil: // a JSON-RPC error: denied
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		// denied
	default: // no reply, 429, 5xx: proves nothing either way
		p.count(p.inconclusive, ProbeRevoked)
	}
}
