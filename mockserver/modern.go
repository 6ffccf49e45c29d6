package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The modern era: protocol 2026-07-28 with the Tasks extension io.modelcontextprotocol/tasks
// (docs/RULES.md#e1 to #e68), served on the same endpoint as the legacy era. This file is
// its front end (statelessFront, front.go), and only that: it classifies each POST (docs/RULES.md#era-detection),
// checks the modern headers and _meta envelope, and translates between the modern wire and
// the one task core both eras share (store, executor, TTL, tenants, downstream, ledger,
// faults). What it translates:
//
//	core                                   modern wire
//	no session; tenant from the token      the same: every request is authenticated alone (E4, E67)
//	params.task (2025-11-25)               ignored (E37): the server decides (E40)
//	task written by appendLocked           flat DetailedTask, ttlMs/pollIntervalMs (E45, E50)
//	failed with an isError result (R51)    completed, the result inlined (E49)
//	failed with a JSON-RPC error           failed, the error inlined (E49)
//	pending elicitation/create             inputRequests keyed by the elicitation's id (E50, E57)
//	an answer posted as a JSON-RPC reply   tasks/update inputResponses (E55-E58)
//	tasks/cancel of a terminal task -32602 an empty acknowledgement (E60, ext-gap-8)
//
// Which calls become tasks (E40): work_task always when the request declares the extension,
// -32021 when it does not (E44); work always when the request declares it, else it runs
// synchronously; work_sync never. A server with Config.NoTasks (or a Config.Protocol without
// Tasks) does not advertise the extension and runs every call synchronously.
//
// The insecure modes, revocations and the faults that act on sessions and streams are
// translated in modernfaults.go. The known-bad modes of the legacy era are not translated
// (but wrong_error_codes, and the task-core modes that act on the shared store): the modern
// era has its own, in knownbad2026.go, which init chooses once (the reply filter, the status
// of an error code, the header reader, statelessModes).

// Protocols says which eras the endpoint answers (Config.Protocols). The zero value is
// ProtocolsLegacy, so that a Config written before the modern era keeps its server (and
// mcp-go, which probes with server/discover first, keeps settling on 2025-11-25 with it);
// the scenario's server.protocols defaults to both, so tasksim serve and tasksim run answer
// both eras.
type Protocols string

const (
	ProtocolsBoth   Protocols = "both"   // each request in its era
	ProtocolsModern Protocols = "modern" // 2026-07-28 only: initialize -32022 (E35), GET and DELETE 405 (E30)
	ProtocolsLegacy Protocols = "legacy" // 2025-11-25 and older only: the server as it was (also "")
)

func (p Protocols) valid() bool {
	return p == "" || p == ProtocolsBoth || p == ProtocolsModern || p == ProtocolsLegacy
}

// statelessFront is the front end of protocol 2026-07-28, made by init: no session, every
// request carries its version and capabilities in its own _meta envelope.
type statelessFront struct {
	srv      *Server
	on       bool            // modern requests are served (Protocols both or modern)
	only     bool            // Protocols modern: legacy traffic is refused
	versions []string        // the versions served statelessly (E9)
	listed   []string        // server/discover's supportedVersions: the modern ones, then the legacy ones
	info     json.RawMessage // the result _meta naming the server (E6)
	impl     json.RawMessage // the Implementation info names, compact
	// owners stand in for the session a legacy task belongs to: [1] for a creating request
	// that declared form elicitation, [0] for one that did not. They are in no session
	// table, never have a GET stream, so nothing is ever queued for them.
	owners [2]*session
	// fullOnly turns the fast scan off (mcp.ScanModernRequest): every request goes through
	// the full readers. Tests set it to compare the two; session_bound sets it, since it
	// reads clientInfo, which the fast scan does not.
	fullOnly bool
	// The known-bad modes of the era, chosen once by init (knownbad2026.go): filter rewrites
	// replies, status is the HTTP status of an error code (E27), headers reads Mcp-Method
	// and Mcp-Name as the server checks them.
	filter  replyFilter
	status  func(code int) int
	headers func(h mcp.RequestHeaders, method string, params []byte) mcp.RequestHeaders
	// cancel is the core's cancel (Server.modes.cancel), after cancel_terminal_flip.
	cancel         func(t *task, dst []byte) ([]byte, *mcp.Error)
	statelessModes         // the modes of its methods (knownbad2026.go)
	listens        listens // open subscriptions/listen streams (listen.go)
	// byClient are the owners of session_bound, by clientInfo (modernfaults.go).
	byClientMu sync.Mutex
	byClient   map[string]*session
}

// modernReq is what a modern request carries besides its message: what its _meta envelope
// says (mcp.ReadRequestMeta, or mcp.ScanModernRequest for the common request).
type modernReq struct {
	tasks bool // it declares the Tasks extension (E39)
	form  bool // it declares form elicitation
	// client is its clientInfo as session_bound reads it (modernfaults.go); "" otherwise.
	client string
	// taskID is params.taskId of a tasks/* request the fast scan read, a span of the
	// params; nil otherwise. dispatchModernReq hands it to the call (call.taskID).
	taskID []byte
}

// requireTasks is mcp.RequestMeta.RequireTasks for this request.
func (m *modernReq) requireTasks(method string) *mcp.Error {
	if m.tasks {
		return nil
	}
	var undeclared mcp.RequestMeta
	return undeclared.RequireTasks(method)
}

// init builds the modern front end of s from s.cfg.
func (m *statelessFront) init(s *Server) {
	m.srv = s
	m.on = s.cfg.Protocols == ProtocolsBoth || s.cfg.Protocols == ProtocolsModern
	m.only = s.cfg.Protocols == ProtocolsModern
	m.versions = []string{mcp.Version20260728}
	m.listed = m.versions
	if !m.only {
		m.listed = []string{mcp.Version20260728}
		for _, v := range []string{mcp.Version20251125, mcp.Version20250618, mcp.Version20250326, mcp.Version20241105} {
			if v <= s.newestVersion() {
				m.listed = append(m.listed, v)
			}
		}
	}
	impl := mcp.Implementation{Name: s.cfg.ServerName, Version: s.cfg.ServerVersion}
	m.info = mcp.ServerInfoMeta(impl)
	m.impl, _ = json.Marshal(impl) // two strings: never fails
	m.fullOnly = s.cfg.Insecure.SessionBound
	kb := &s.cfg.KnownBad
	m.filter, m.status, m.headers = kb.statelessReplies(), kb.statusOf(), kb.headerReader()
	m.cancel = kb.flipping(s.modes.cancel)
	m.statelessModes = kb.statelessModes()
	m.clientOf, m.ownerOf = s.cfg.Insecure.clientBinding()
	for i := range m.owners {
		m.owners[i] = &session{id: "modern", version: mcp.Version20260728, tasks: true, elicitForm: i == 1}
	}
}

// metaVersionKey is the _meta key whose presence may make a request modern.
var metaVersionKey = []byte(mcp.MetaProtocolVersion)

// mayNameVersion reports whether params may carry a _meta protocolVersion: they hold the key
// as it is, or an escape, which could spell it otherwise. A legacy request has neither, and
// is told legacy by these two scans alone.
func mayNameVersion(params []byte) bool {
	return bytes.Contains(params, metaVersionKey) || bytes.IndexByte(params, '\\') >= 0
}

// routeModern serves msg when the modern front end must answer it and reports whether it
// did; false hands msg to the legacy front end, unchanged. Classification follows
// docs/RULES.md#era-detection (mcp.ClassifyRequest).
func (m *statelessFront) routeModern(w http.ResponseWriter, r *http.Request, tenant string, msg *mcp.Message) bool {
	s := m.srv
	hdr := m.versionOf(r) // any_version: none on a session (knownbad2026.go)
	if msg.Kind != mcp.KindRequest {
		if !m.only && !mcp.IsModern(hdr) {
			return false
		}
		m.modernMessage(w, r, msg)
		return true
	}
	if !m.only && !mcp.IsModern(hdr) && !mayNameVersion(msg.Params) {
		return false // the legacy hot path
	}
	if mcp.IsModern(hdr) && !m.fullOnly { // the modern hot path: a modern request names its version in the header too
		if sum, ok := mcp.ScanModernRequest(msg, m.modernHeaders(r, hdr, msg), m.versions); ok {
			mr := modernReq{tasks: sum.DeclaresTasks, form: sum.SupportsForm}
			if mcp.NameParam(msg.Method) == "taskId" {
				mr.taskID = sum.Name
			}
			m.dispatchModernReq(w, r, tenant, msg, &mr)
			return true
		}
	}
	era, e := mcp.ClassifyRequest(msg.Method, msg.Params, hdr)
	switch {
	case e != nil:
		m.refuseEnvelope(w, r, tenant, msg, e)
	case era == mcp.EraModern:
		m.serveModern(w, r, tenant, msg, hdr)
	case !m.only:
		return false
	case s.dialect.Op(msg.Method) == mcp.OpInitialize: // E35: say which versions are served
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		m.modernRefuse(w, r, msg, mcp.UnsupportedProtocolVersion(p.ProtocolVersion, m.versions))
	default: // a legacy request on a modern-only server: its headers or envelope refuse it (E26, E3)
		m.serveModern(w, r, tenant, msg, hdr)
	}
	return true
}

// modernMessage answers a POST of a notification or a response in the modern era. A
// notification with well-formed headers is accepted (E22); a response answers nothing, since
// the era has no server-to-client requests (E28).
func (m *statelessFront) modernMessage(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
	s := m.srv
	if msg.Kind != mcp.KindNotification {
		s.rejectedIn(eraModern, r, mcp.OpUnknown, http.StatusBadRequest)
		writeJSONError(w, http.StatusBadRequest, msg.ID, mcp.Errorf(mcp.CodeInvalidRequest,
			"protocol %s has no server-to-client requests to answer (E28)", mcp.Version20260728))
		return
	}
	h := m.modernHeaders(r, r.Header.Get(headerProtocolVersion), msg)
	if e := mcp.CheckHeaders(h, msg); e != nil {
		m.modernRefuse(w, r, msg, e)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (m *statelessFront) modernHeaders(r *http.Request, version string, msg *mcp.Message) mcp.RequestHeaders {
	h := mcp.RequestHeaders{ProtocolVersion: version, Method: r.Header.Get(mcp.HeaderMethod), Name: r.Header.Get(mcp.HeaderName)}
	return m.headers(h, msg.Method, msg.Params) // no_header_check (knownbad2026.go)
}

// modernRefuse answers a modern request that never reached a method with e, over HTTP with
// e's status (E27).
func (m *statelessFront) modernRefuse(w http.ResponseWriter, r *http.Request, msg *mcp.Message, e *mcp.Error) {
	s := m.srv
	status := m.status(e.Code)
	if status != http.StatusOK {
		s.rejectedIn(eraModern, r, mcp.V20260728{}.Op(msg.Method), status)
	}
	writeJSONError(w, status, msg.ID, e)
}

// serveModern checks a modern request's headers (E24-E26), then its envelope (E3, E9), in
// that order, so that -32020 wins over -32022 (docs/RULES.md#era-detection), and dispatches
// it.
func (m *statelessFront) serveModern(w http.ResponseWriter, r *http.Request, tenant string, msg *mcp.Message, hdr string) {
	if e := mcp.CheckHeaders(m.modernHeaders(r, hdr, msg), msg); e != nil {
		m.modernRefuse(w, r, msg, e)
		return
	}
	meta, e := mcp.ReadRequestMeta(msg.Params, m.versions)
	if e != nil {
		m.refuseEnvelope(w, r, tenant, msg, e)
		return
	}
	mr := modernReq{tasks: meta.ClientCapabilities.DeclaresTasks(), form: meta.ClientCapabilities.Elicitation.SupportsForm()}
	mr.client = m.clientOf(meta.ClientInfo) // session_bound binds tasks to it (modernfaults.go)
	m.dispatchModernReq(w, r, tenant, msg, &mr)
}

// dispatchModernReq serves msg, a modern request whose headers and envelope passed, as mr
// says.
func (m *statelessFront) dispatchModernReq(w http.ResponseWriter, r *http.Request, tenant string, msg *mcp.Message, mr *modernReq) {
	s := m.srv
	form := 0
	if mr.form {
		form = 1
	}
	owner := m.ownerOf(m, mr.client, form) // session_bound: by client (modernfaults.go)
	c := call{srv: s, fe: m, w: w, r: r, sess: owner, tenant: tenant, msg: *msg, taskID: mr.taskID, modern: *mr}
	m.dispatchModern(&c)
}

// refuseStream answers a GET or a DELETE on a server that speaks only 2026-07-28: 405, there
// is no GET stream and no session to end (E30).
func (m *statelessFront) refuseStream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "POST")
	m.srv.rejected(r, mcp.OpUnknown, http.StatusMethodNotAllowed)
	httpError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed: the server speaks only protocol "+mcp.Version20260728+", which has no sessions and no GET stream (E30)")
}

// dispatchModern routes a modern request by method. What the era removed (initialize,
// ping, tasks/result, tasks/list, E37) is as unknown as any other method: -32601, HTTP 404
// (E27).
func (m *statelessFront) dispatchModern(c *call) {
	s := m.srv
	c.op = mcp.V20260728{}.Op(c.msg.Method)
	switch c.op {
	case mcp.OpServerDiscover:
		c.reply(m.discover())
	case mcp.OpToolsList:
		c.reply(m.toolsListModern())
	case mcp.OpToolsCall:
		m.toolsCallModern(c)
	case mcp.OpSubscriptionsListen:
		m.subscriptionsListen(c) // listen.go
	case mcp.OpTasksGet, mcp.OpTasksUpdate, mcp.OpTasksCancel:
		if !s.tasksOn() {
			c.reply(nil, mcp.Errorf(mcp.CodeMethodNotFound, "method %q is not available: the server does not offer the Tasks extension", c.msg.Method))
			return
		}
		if e := c.modern.requireTasks(c.msg.Method); e != nil { // E65
			c.reply(nil, e)
			return
		}
		switch c.op {
		case mcp.OpTasksGet:
			m.tasksGetModern(c)
		case mcp.OpTasksUpdate:
			m.tasksUpdateModern(c)
		default:
			m.tasksCancelModern(c)
		}
	default:
		if b, ok := m.removed(c.msg.Method); ok { // legacy_methods (knownbad2026.go)
			c.reply(b, nil)
			return
		}
		c.reply(nil, mcp.Errorf(mcp.CodeMethodNotFound, "method not found: %q is not a method of protocol %s", c.msg.Method, mcp.Version20260728))
	}
}

// reply is frontEnd.reply for the modern era: a result gets resultType (E11) and the
// server's _meta (E6) when its writer did not put them in; an error gets the HTTP status of
// its code (E27). Requests are counted as in the legacy era, a refusal with a status other
// than 200 as an http_error.
func (m *statelessFront) reply(c *call, result []byte, e *mcp.Error) {
	if !c.replyLatency() {
		return // the client gave up while the reply was delayed (latency.go)
	}
	if e == nil {
		result = m.modernResult(result)
	}
	result, e = m.filter(c.op, result, e) // the known-bad modes (knownbad2026.go)
	if e != nil {
		status := m.status(e.Code)
		if status == http.StatusOK {
			c.srv.requests.answered(eraModern, c.op, true)
		} else {
			c.srv.rejectedIn(eraModern, c.r, c.op, status)
		}
		writeJSONError(c.w, status, c.msg.ID, e)
		return
	}
	c.srv.requests.answered(eraModern, c.op, false)
	bp := getBuf()
	b := mcp.AppendResult(*bp, c.msg.ID, result)
	writeJSON(c.w, b)
	putBuf(bp, b)
}

var resultTypeFirst = []byte(`{"resultType":`)

// modernResult returns b, a result object, as the modern era writes it. The writers of
// internal/mcp put resultType first and take the _meta: their results come back as they
// are. Any other result (a CallToolResult of a synchronous call, a tools/list) gets
// resultType "complete" and, when it has no _meta, the server's.
func (m *statelessFront) modernResult(b []byte) []byte {
	if bytes.HasPrefix(b, resultTypeFirst) {
		return b
	}
	r, err := mcp.WithResultType(b, mcp.ResultComplete)
	if err != nil {
		return b
	}
	hasMeta := false
	mcp.EachMember(r, func(name, _ []byte) bool {
		hasMeta = hasMeta || string(name) == "_meta"
		return true
	})
	if hasMeta || len(r) < 2 || r[len(r)-1] != '}' {
		return r
	}
	out := append(r[:len(r)-1:len(r)-1], `,"_meta":`...) // r is a fresh copy: WithResultType added resultType
	out = append(out, m.info...)
	return append(out, '}')
}

// discover answers server/discover (E8): the versions served, the Tasks extension with {}
// when the server offers tasks, and serverInfo.
func (m *statelessFront) discover() ([]byte, *mcp.Error) {
	s := m.srv
	caps := mcp.ModernServerCapabilities{Tools: &mcp.ToolsCapability{}}
	if s.tasksOn() {
		caps.DeclareTasks()
	}
	instructions := "tasksim mock server: no authorization context; tasks are not bound to a requestor, task ids are 128-bit random."
	if s.bound() {
		instructions = "tasksim mock server: tasks are bound to the tenant of the bearer token."
	}
	b, err := json.Marshal(mcp.DiscoverResult{
		SupportedVersions: m.listed,
		Capabilities:      caps,
		Instructions:      instructions,
		TTLMs:             60_000,
		CacheScope:        mcp.CachePublic,
		Meta:              m.info,
	})
	if err != nil {
		return nil, mcp.Errorf(mcp.CodeInternalError, "encoding server/discover: %v", err)
	}
	return b, nil
}

// toolsListModern lists the tools without execution.taskSupport, which the era dropped: the
// server decides per request whether a call becomes a task (E40). internal/mcp has no
// writer for the era's ListToolsResult yet.
func (m *statelessFront) toolsListModern() ([]byte, *mcp.Error) {
	s := m.srv
	// The era's ListToolsResult is cacheable, like DiscoverResult: ttlMs and cacheScope are
	// required. The list is the same for every caller.
	b, err := json.Marshal(struct {
		mcp.ListToolsResult
		TTLMs      mcp.Ms         `json:"ttlMs"`
		CacheScope mcp.CacheScope `json:"cacheScope"`
	}{mcp.ListToolsResult{Tools: toolsWithoutTasks(s.toolList())}, 60_000, mcp.CachePublic})
	if err != nil {
		return nil, mcp.Errorf(mcp.CodeInternalError, "encoding tools: %v", err)
	}
	return b, nil
}

// toolsCallModern runs a call synchronously or makes it a task (E39-E46; see the top of the
// file for which).
func (m *statelessFront) toolsCallModern(c *call) {
	s := m.srv
	p, ts, ok := readToolCall(c)
	if !ok {
		return
	}
	declared := m.declared(c.modern.tasks)                  // tasks_undeclared: always (knownbad2026.go)
	if ts == mcp.TaskRequired && s.tasksOn() && !declared { // E44
		c.reply(nil, c.modern.requireTasks("tools/call of tool "+strconv.Quote(p.name)))
		return
	}
	var plan workPlan
	var perr *mcp.Error
	if f := s.fixtureOf(p.name); f != nil && f.name == FixtureToolWithTask && s.tasksOn() {
		name, ok := m.toolWithTaskMRTR(c) // MRTR before the task (E47, fixtures.go)
		if !ok {
			return // asked for the name, or refused
		}
		plan, perr = s.planFixture(f, p.args, name)
	} else {
		plan, perr = s.planWork(p.name, p.args)
	}
	if perr != nil {
		c.reply(nil, perr)
		return
	}
	if !s.tasksOn() || !declared || ts == mcp.TaskForbidden { // E39: never a task undeclared
		s.callSync(c, p.name, &plan)
		return
	}
	s.createTask(c, p.name, p.args, optMs{}, &plan) // E37: params.task and its ttl are ignored
}

// format returns st as createdAt and lastUpdatedAt are written.
func (st stamp) format() string {
	return time.UnixMilli(int64(st)).UTC().Format(mcp.TimeLayout)
}

// detailedLocked returns t as a task of the extension, with the payload its status inlines
// when payload is set (a tasks/get), without when not (a CreateTaskResult, E45). The core's
// outcome decides the modern status (E49): a JSON-RPC error is failed, a CallToolResult,
// isError or not, completed.
func (t *task) detailedLocked(payload bool) mcp.DetailedTask {
	d := mcp.DetailedTask{
		TaskID: t.id, Status: t.status, StatusMessage: t.wireMessageLocked(),
		CreatedAt: t.created.format(), LastUpdatedAt: t.updated.format(),
	}
	if t.ttl.ok {
		ttl := t.ttl.ms
		d.TTLMs = &ttl
	}
	poll := mcp.Ms(t.srv.pollInterval(t.tool).Milliseconds())
	d.PollIntervalMs = &poll
	switch t.status {
	case mcp.StatusInputRequired:
		reqs := t.inputRequestsLocked()
		if len(reqs) == 0 {
			d.Status = mcp.StatusWorking // an answer is being applied: nothing is asked
		} else if payload {
			d.InputRequests = reqs
		}
	case mcp.StatusCompleted, mcp.StatusFailed:
		result, e := t.modernPayloadLocked()
		result, e = t.srv.modern.inlined(t, result, e) // is_error_failed (knownbad2026.go)
		d.Status = mcp.StatusCompleted
		if e != nil {
			d.Status = mcp.StatusFailed
		}
		if payload {
			d.Result, d.Error = result, e
		}
	}
	return d
}

// modernPayloadLocked returns what the original tools/call would have returned: the
// CallToolResult, without the related-task _meta of 2025-11-25, or the JSON-RPC error.
func (t *task) modernPayloadLocked() (json.RawMessage, *mcp.Error) {
	switch t.end {
	case endRPCError:
		return nil, simulatedError()
	case endDownstream:
		return nil, downstreamError(t.statusMessage) // downstream.go
	}
	return t.srv.injectResult(appendToolResult(nil, &t.work, t.end, "", t.statusMessage)), nil
}

// inputKey is the key of e in inputRequests: its JSON-RPC id as text, unique across the
// server and so over the task's life (E57).
func inputKey(e *elicitation) string { return e.id[1 : len(e.id)-1] }

// inputRequestsLocked returns the task's outstanding elicitations as input requests (E50):
// the same form the legacy era sends as elicitation/create, without its related-task _meta.
func (t *task) inputRequestsLocked() mcp.InputRequests {
	var reqs mcp.InputRequests
	for _, e := range t.pending {
		if e.answered {
			continue
		}
		if reqs == nil {
			reqs = mcp.InputRequests{}
		}
		params := append(t.appendFormLocked([]byte(`{"mode":"form","message":`), e.round), '}')
		reqs[t.srv.modern.keyOf(e)] = mcp.InputRequest{Method: mcp.V20260728{}.Method(mcp.OpElicit), Params: params}
	}
	return reqs
}

// appendCreateModernLocked appends the CreateTaskResult of t (E45): flat, resultType "task",
// no payload.
func (t *task) appendCreateModernLocked(dst []byte) []byte {
	d := t.detailedLocked(false)
	b, err := mcp.AppendCreateTaskResult(dst, &d, t.srv.modern.info)
	if err != nil { // every member is set by construction: not reached
		return append(dst, `{"resultType":"complete"}`...)
	}
	return b
}

// tasksGetModern answers tasks/get with the task and what its status inlines (E50, E51),
// never waiting. A terminal payload read here counts as fetched (orphaned tasks).
func (m *statelessFront) tasksGetModern(c *call) {
	s := m.srv
	if s.limits != nil && !s.allow(c, limitGet) {
		return // 429 (ratelimit.go)
	}
	t, e := s.lookupTask(c) // the caller's tenant only (E67), -32602 otherwise (E65)
	if e != nil {
		c.reply(nil, e)
		return
	}
	bp := getBuf()
	t.mu.Lock()
	if m.notReady(t) { // get_not_ready (knownbad2026.go)
		t.mu.Unlock()
		putBuf(bp, *bp)
		c.reply(nil, notFound(t.id))
		return
	}
	if b, ok := t.appendGetModernLocked(*bp); ok {
		t.mu.Unlock()
		c.reply(b, nil)
		putBuf(bp, b)
		return
	}
	putBuf(bp, *bp)
	d := t.detailedLocked(true) // a payload to inline: the strict writer
	t.mu.Unlock()
	b, err := mcp.AppendGetTaskResult(nil, &d, m.info)
	if err != nil {
		c.reply(nil, mcp.Errorf(mcp.CodeInternalError, "encoding task %s: %v", t.id, err))
		return
	}
	if d.Result == nil && d.Error == nil {
		c.reply(b, nil) // input requests
		return
	}
	// The reply carries the task's outcome, as tasks/result does in the legacy era: the
	// revocation of the results scope, and the faults of the result stream, act on it
	// (modernfaults.go).
	if s.resultDenied(c) {
		return
	}
	s.cutReply(t)
	t.mu.Lock()
	t.fetched = true
	t.mu.Unlock()
	if s.duplicates() {
		c.replyTwice(b, t)
		return
	}
	c.reply(b, nil)
}

// appendGetModernLocked appends t's tasks/get result as mcp.AppendGetTaskResult writes
// detailedLocked(true) with the server's _meta (TestModernTaskWireMatchesStrictWriter), for a
// task whose status inlines nothing: working, cancelled, or input_required with nothing left
// to ask. It takes the times and the ttl from the stored numbers, as appendLocked does, and
// builds no mcp.DetailedTask. ok is false, and dst returned as it was, for a task with a
// payload (input requests, a result or an error), which the strict writer writes.
func (t *task) appendGetModernLocked(dst []byte) (b []byte, ok bool) {
	status := t.status
	switch status {
	case mcp.StatusCompleted, mcp.StatusFailed:
		return dst, false
	case mcp.StatusInputRequired:
		for _, e := range t.pending {
			if !e.answered {
				return dst, false
			}
		}
		status = mcp.StatusWorking // an answer is being applied: nothing is asked (detailedLocked)
	}
	poll := t.srv.pollInterval(t.tool).Milliseconds()
	if t.id == "" || !status.Valid() || poll < 0 || (t.ttl.ok && t.ttl.ms < 0) {
		return dst, false // what Check refuses: the strict writer says so
	}
	b = append(dst, `{"resultType":"complete","taskId":`...)
	b = mcp.AppendString(b, t.id)
	b = append(b, `,"status":"`...)
	b = append(b, status.String()...)
	b = append(b, '"')
	if msg := t.wireMessageLocked(); msg != "" {
		b = append(b, `,"statusMessage":`...)
		b = mcp.AppendString(b, msg)
	}
	b = append(b, `,"createdAt":`...)
	b = t.created.appendJSON(b)
	b = append(b, `,"lastUpdatedAt":`...)
	b = t.updated.appendJSON(b)
	b = append(b, `,"ttlMs":`...)
	b = t.ttl.appendJSON(b) // null when unlimited
	b = append(b, `,"pollIntervalMs":`...)
	b = strconv.AppendInt(b, poll, 10)
	b = append(b, `,"_meta":`...)
	b = append(b, t.srv.modern.info...) // compact: mcp.ServerInfoMeta wrote it
	return append(b, '}'), true
}

// tasksUpdateModern applies the answers of tasks/update (E55-E58): each key that names an
// outstanding input request of the task is answered as the legacy era answers an
// elicitation (answerElicitation); unknown and already answered keys are ignored, and a
// partial answer leaves the task input_required. The acknowledgement is empty.
func (m *statelessFront) tasksUpdateModern(c *call) {
	s := m.srv
	t, e := s.lookupTask(c)
	if e != nil {
		c.reply(nil, e)
		return
	}
	var p struct {
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	var answers mcp.InputResponses
	if err := json.Unmarshal(c.msg.Params, &p); err != nil || len(p.InputResponses) == 0 || p.InputResponses[0] != '{' ||
		json.Unmarshal(p.InputResponses, &answers) != nil {
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid tasks/update params: inputResponses must be an object of answers by key"))
		return
	}
	for key, answer := range answers {
		id := m.answered(t, key) // reuse_input_keys (knownbad2026.go)
		s.elicitMu.Lock()
		el := s.elicits[id]
		if el != nil && el.t == t {
			delete(s.elicits, id)
		} else {
			el = nil // unknown, answered, or another task's: ignored (E58)
		}
		s.elicitMu.Unlock()
		if el != nil {
			s.applyAnswer(el, false, answer)
		}
	}
	s.cutReply(t) // the answers are applied, the acknowledgement is lost (modernfaults.go)
	c.reply(m.ack(m, t), nil)
}

// tasksCancelModern cancels a task as the legacy era does and acknowledges with an empty
// result (E60), a terminal task too (ext-gap-8): the status says whether the cancel won.
func (m *statelessFront) tasksCancelModern(c *call) {
	s := m.srv
	t, e := s.lookupTask(c)
	if e != nil {
		c.reply(nil, e)
		return
	}
	bp := getBuf()
	b, _ := m.cancel(t, *bp) // a terminal task's -32602 (R26) is the legacy era's answer
	putBuf(bp, b)
	c.reply(m.ack(m, t), nil)
}
