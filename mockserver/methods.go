package mockserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// call is one JSON-RPC request in flight.
type call struct {
	srv    *Server
	w      http.ResponseWriter
	r      *http.Request
	sess   *session
	tenant string
	msg    mcp.Message // by value: a pointer to servePost's message would move it to the heap
	op     mcp.Op      // the method's op, set by dispatch: requests are counted by it (requests.go)
	fe     frontEnd    // the front end that answers it: its era's envelope and encoding (front.go)
	// taskID is params.taskId when the front end has read it already (the modern fast scan,
	// a span of the params); nil otherwise, and taskParam reads the params.
	taskID []byte
	modern modernReq // what a modern request's envelope says (modern.go); by value, as msg
}

// reply writes result (or e) as the reply to c, in the envelope of c's front end. The
// type switch calls the front end's reply statically: through the interface, c would
// escape to the heap on every request (TestModernTasksGetAllocs). A new front end adds its
// case here.
func (c *call) reply(result []byte, e *mcp.Error) {
	switch fe := c.fe.(type) {
	case *statelessFront:
		fe.reply(c, result, e)
	case *sessionFront:
		fe.reply(c, result, e)
	}
}

// reply is frontEnd.reply for the session era: a JSON-RPC result or error, 200
// application/json, after the reply latency (latency.go).
func (f *sessionFront) reply(c *call, result []byte, e *mcp.Error) {
	if !c.replyLatency() {
		return // the client gave up while the reply was delayed (latency.go)
	}
	result, e = f.filter(c.op, result, e) // the known-bad modes (knownbad.go)
	c.srv.requests.answered(eraLegacy, c.op, e != nil)
	bp := getBuf()
	b := *bp
	if e != nil {
		b = mcp.AppendError(b, c.msg.ID, e)
	} else {
		b = mcp.AppendResult(b, c.msg.ID, result)
	}
	writeJSON(c.w, b)
	putBuf(bp, b)
}

// dispatch routes a request by its op (c.op, the legacy dialect's reading of its method).
// Tasks methods exist only on sessions that negotiated Tasks; elsewhere they are unknown
// methods (-32601).
func (f *sessionFront) dispatch(c *call) {
	op := c.op
	switch op {
	case mcp.OpPing:
		c.reply([]byte(`{}`), nil)
	case mcp.OpToolsList:
		c.reply(f.toolsList())
	case mcp.OpToolsCall:
		f.toolsCall(c)
	case mcp.OpTasksGet, mcp.OpTasksResult, mcp.OpTasksCancel, mcp.OpTasksList:
		if !c.sess.tasks {
			why := "the session negotiated protocol " + c.sess.version + ", which has no Tasks"
			if mcp.HasTasks(c.sess.version) {
				why = "the server does not declare capabilities.tasks"
			}
			c.reply(nil, mcp.Errorf(mcp.CodeMethodNotFound, "method %q is not available: %s", c.msg.Method, why))
			return
		}
		switch op {
		case mcp.OpTasksGet:
			f.tasksGet(c)
		case mcp.OpTasksResult:
			f.tasksResult(c)
		case mcp.OpTasksCancel:
			f.tasksCancel(c)
		case mcp.OpTasksList:
			f.tasksList(c)
		}
	case mcp.OpInitialize:
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidRequest, "initialize must be sent without a session; this session is already initialized"))
	default:
		c.reply(nil, mcp.Errorf(mcp.CodeMethodNotFound, "method not found: %q", c.msg.Method))
	}
}

// initialize negotiates the protocol version (H1) and opens a session (H2). A client asking
// for a version the server does not speak gets the server's newest: 2025-11-25, or
// Config.Protocol. Only a 2025-11-25 session is offered the tasks capability, and none is
// when Config.NoTasks is set (compat.go).
func (f *sessionFront) initialize(w http.ResponseWriter, r *http.Request, msg *mcp.Message) {
	s := f.srv
	c := call{srv: s, fe: f, w: w, r: r, msg: *msg, op: mcp.OpInitialize}
	var p mcp.InitializeParams
	if err := json.Unmarshal(msg.Params, &p); err != nil || len(msg.Params) == 0 {
		why := "params are missing"
		if err != nil {
			why = err.Error()
		}
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid initialize params: %s", why))
		return
	}
	if p.ProtocolVersion == "" {
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid initialize params: protocolVersion is required"))
		return
	}
	version := f.negotiate(p.ProtocolVersion) // compat.go: Config.Protocol caps it
	sess := newSession(version, p.Capabilities)
	sess.tasks = sess.tasks && s.tasksOn() // Config.NoTasks: no capabilities.tasks (R1)
	res := mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{}},
		ServerInfo:      mcp.Implementation{Name: s.cfg.ServerName, Version: s.cfg.ServerVersion},
	}
	if sess.tasks {
		tc := &mcp.TasksCapability{
			Cancel:   mcp.On(),
			Requests: &mcp.TaskRequestsLeafs{Tools: &mcp.ToolsTaskLeafs{Call: mcp.On()}},
		}
		if s.listOffered() {
			tc.List = mcp.On() // R54: only with an authorization context (knownbad.go: list_without_auth)
		}
		res.Capabilities.Tasks = tc
		res.Instructions = f.instructions()
	}
	sess.version = f.grant(p.ProtocolVersion, sess.version) // any_version echoes the client's (knownbad.go)
	res.ProtocolVersion = sess.version
	b, _ := json.Marshal(res)
	s.sessions.add(sess)
	w.Header().Set(headerSessionID, sess.id)
	c.reply(b, nil)
}

// bound reports whether tasks are bound to an authorization context (tokens configured).
func (s *core) bound() bool { return len(s.cfg.Tokens) > 0 }

func (f *sessionFront) instructions() string {
	s := f.srv
	if s.bound() {
		return "tasksim mock server: tasks are bound to the tenant of the bearer token."
	}
	// R54: without binding, say so.
	const unbound = "tasksim mock server: no authorization context; tasks are not bound to a requestor, " +
		"task ids are 128-bit random"
	if s.listOffered() {
		return unbound + "." // list_without_auth (knownbad.go)
	}
	return unbound + ", and tasks/list is not offered."
}

func (f *sessionFront) toolsList() ([]byte, *mcp.Error) {
	s := f.srv
	tools := s.toolList()
	if !s.tasksOn() {
		tools = toolsWithoutTasks(tools) // compat.go
	}
	b, err := json.Marshal(mcp.ListToolsResult{Tools: tools})
	if err != nil {
		return nil, mcp.Errorf(mcp.CodeInternalError, "encoding tools: %v", err)
	}
	return b, nil
}

// readToolCall reads the params of a tools/call and the tool's taskSupport, in either era;
// on a problem it has answered -32602 and reports false.
func readToolCall(c *call) (callParams, mcp.TaskSupport, bool) {
	p, err := readCallParams(c.msg.Params) // params.go
	if err != nil || p.name == "" {
		why := "name is required"
		if err != nil && len(c.msg.Params) > 0 { // R49: absent params are "name is required", not a decoder error
			why = err.Error()
		}
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid tools/call params: %s", why))
		return p, "", false
	}
	ts, ok := c.srv.toolSupport(p.name)
	if !ok {
		names := ToolWork + ", " + ToolWorkTask + ", " + ToolWorkSync
		if c.srv.cfg.Fixtures {
			names += ", " + fixtureNames()
		}
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "unknown tool %q (tools: %s)", p.name, names))
		return p, "", false
	}
	return p, ts, true
}

// decideTask says whether a tools/call of tool, whose taskSupport is ts, is served as a
// task: task says the call carries params.task, tasks that its session negotiated Tasks.
// e refuses the call.
type decideTask func(tool string, ts mcp.TaskSupport, task, tasks bool) (asTask bool, e *mcp.Error)

// taskSupportRules is decideTask by the rules: a task parameter without the capability is
// ignored (R4), a forbidden tool called as a task and a required one called without are
// refused with -32601 (R8, R10).
func taskSupportRules(tool string, ts mcp.TaskSupport, task, tasks bool) (bool, *mcp.Error) {
	asTask := task && tasks
	switch {
	case asTask && ts == mcp.TaskForbidden:
		return false, mcp.Errorf(mcp.CodeMethodNotFound, "tool %q does not support task-augmented calls (taskSupport forbidden, R8)", tool)
	case !asTask && ts == mcp.TaskRequired && tasks:
		return false, mcp.Errorf(mcp.CodeMethodNotFound, "tool %q requires a task-augmented call (taskSupport required, R10)", tool)
	}
	return asTask, nil
}

// toolsCall runs a call synchronously or creates a task, by docs/RULES.md#capabilities (R4, R8,
// R10, R11).
func (f *sessionFront) toolsCall(c *call) {
	s := f.srv
	p, ts, ok := readToolCall(c)
	if !ok {
		return
	}
	asTask, e := f.decide(p.name, ts, p.task, c.sess.tasks) // taskSupportRules, unless a known-bad mode (knownbad.go)
	if e == nil && p.task && !c.sess.tasks {
		s.compat.ignoredTasks.Add(1) // the client broke R6 (compat.go)
	}
	if e != nil {
		c.reply(nil, e)
		return
	}
	plan, perr := s.planWork(p.name, p.args)
	if perr != nil {
		c.reply(nil, perr)
		return
	}
	if !asTask {
		s.callSync(c, p.name, &plan)
		return
	}
	s.createTask(c, p.name, p.args, p.ttl, &plan)
}

// createTask creates the task of a call that is served as one, in either era: rate limits,
// the granted ttl, idempotency, admission to the executor, then the create reply, which
// c's front end writes (frontEnd.appendCreateLocked).
func (s *Server) createTask(c *call, tool string, args json.RawMessage, reqTTL optMs, plan *workPlan) {
	if s.limits != nil && !s.allow(c, limitCreate) {
		return // 429 (ratelimit.go)
	}
	ttl, expires, perr := s.grantTTL(reqTTL)
	if perr != nil {
		c.reply(nil, perr)
		return
	}
	key := plan.idempotencyKey
	if key != "" && !s.faults.nonIdem {
		if prev, prevID, used := s.ledger.keyTask(c.tenant, key); used {
			s.replay(c, key, prev, prevID) // idempotency.go
			return
		}
	}
	now := s.clock.Now()
	t := &task{
		srv: s, id: s.modes.newID(), tool: tool, tenant: c.tenant, owner: c.sess,
		created: stampOf(now), updated: stampOf(now), ttl: ttl, work: *plan,
		status: mcp.InitialStatus, // R13
	}
	// R44, R56: a granted ttl of 0 expires at once, it must not mean "kept forever"; unless
	// never_expire (knownbad.go) keeps every task.
	if ttl.ok {
		t.expires = s.modes.expiry(now, expires)
	}
	s.modes.echo(t, "arguments: ", args) // echo_secrets (insecure.go)

	run, why := s.exec.admit(t) // caps, workers and queue (executor.go)
	if why != refusedNone {
		s.refuseCreate(c, why, t)
		return
	}
	if key != "" && !s.bindKey(c, t, now) {
		return // a concurrent create with the key won: c got its task (idempotency.go)
	}
	if s.faults.perTask {
		s.taskFaults(t, now) // faults.go
	}
	s.countInFlight(t) // before the task is visible, so that a racing cancel uncounts it
	s.store.add(t)
	s.created.Add(1)
	if s.rolledBack.Load() != nil {
		s.createdAfterRollback.Add(1) // a rollback drill's evidence (rollback.go)
	}
	// The reply is built before the work starts, so a zero-duration task is still reported
	// working here; the next tasks/get sees the outcome.
	bp := getBuf()
	t.mu.Lock()
	b := c.fe.appendCreateLocked(t, *bp)
	t.mu.Unlock()
	if run { // else it waits for a worker (executor.go)
		t.start()
	}
	c.reply(b, nil)
	putBuf(bp, b)
}

// grantTTL applies the ttl policy: default when none is requested (or null with
// UnlimitedTTL), clamped to MaxTTL (R45, R56). It returns the wire ttl (absent: null) and
// the retention.
func (s *core) grantTTL(req optMs) (optMs, time.Duration, *mcp.Error) {
	if !req.ok {
		if s.cfg.UnlimitedTTL {
			return optMs{}, 0, nil
		}
		return millis(s.cfg.DefaultTTL), s.cfg.DefaultTTL, nil
	}
	if req.ms < 0 {
		return optMs{}, 0, mcp.Errorf(mcp.CodeInvalidParams, "task.ttl must not be negative, got %d", req.ms)
	}
	// Clamp in milliseconds before converting (R45, R56): a ttl above ~292 years overflows
	// time.Duration and used to wrap to a negative grant (testdata/fuzz/FuzzHandler/ttl-overflow).
	d := s.cfg.MaxTTL
	if req.ms < mcp.Ms(d.Milliseconds()) {
		d = req.ms.Duration()
	}
	s.ledger.grant(d) // the default ledger window follows the largest ttl (ledger.go)
	return millis(d), d, nil
}

// millis returns d in whole milliseconds, present.
func millis(d time.Duration) optMs { return optMs{ms: mcp.Ms(d.Milliseconds()), ok: true} }

// callSync runs work inline and replies with its CallToolResult (or JSON-RPC error). A
// dropped connection abandons the call.
func (s *Server) callSync(c *call, tool string, p *workPlan) {
	if p.rounds > 0 && !p.inputDrawn { // a tool profile's input need does not apply here (profile.go)
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "input_required needs a task-augmented call; tool %q was called synchronously", tool))
		return
	}
	if p.duration > 0 {
		t := time.NewTimer(p.duration)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.r.Context().Done():
			return
		case <-s.closing:
			c.reply(nil, mcp.Errorf(mcp.CodeInternalError, "server is shutting down"))
			return
		}
	}
	if p.ending == endRPCError {
		c.reply(nil, simulatedError())
		return
	}
	if p.ending == endCompleted && !s.syncEffect(c, tool, p) {
		return // the downstream failed it, or the client left (downstream.go)
	}
	bp := getBuf()
	b := s.injectResult(appendToolResult(*bp, p, p.ending, "", ""))
	c.reply(b, nil)
	putBuf(bp, b)
}

// taskParam decodes {"taskId": ...}; related-task _meta on the request is ignored (R32).
// The id is a span of the request when the params are plain (params.go).
func taskParam(c *call) ([]byte, *mcp.Error) {
	if c.taskID != nil {
		return c.taskID, nil // read by the front end (the modern fast scan), as readTaskID reads it
	}
	id, ok := readTaskID(c.msg.Params)
	if !ok {
		var p mcp.TaskIDParams
		// R49: absent params fall through to "taskId is required" rather than a decoder error.
		if err := json.Unmarshal(c.msg.Params, &p); err != nil && len(c.msg.Params) > 0 {
			return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid %s params: %v", c.msg.Method, err)
		}
		id = []byte(p.TaskID)
	}
	if len(id) == 0 {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid %s params: taskId is required", c.msg.Method)
	}
	return id, nil
}

// notFound is the error for an unknown, expired or foreign task id (R46, R53).
func notFound(id string) *mcp.Error {
	return mcp.Errorf(mcp.CodeInvalidParams, "task not found: %q is unknown, expired, or not yours", id)
}

func (s *Server) lookupTask(c *call) (*task, *mcp.Error) {
	id, e := taskParam(c)
	if e != nil {
		return nil, e
	}
	t := s.modes.scope.find(s.store.lookup(id), c.tenant, c.sess) // the tenant's, unless an insecure mode says otherwise (insecure.go)
	if t == nil {
		return nil, notFound(string(id))
	}
	return t, nil
}

// tasksGet answers with the task, never waiting and never over SSE (R40).
func (f *sessionFront) tasksGet(c *call) {
	s := f.srv
	if s.limits != nil && !s.allow(c, limitGet) {
		return // 429 (ratelimit.go)
	}
	t, e := s.lookupTask(c)
	if e != nil {
		c.reply(nil, e)
		return
	}
	if ok, e := f.getWait(c.r.Context(), c.sess, t); !ok { // blocking_get waits (knownbad.go)
		if e != nil {
			c.reply(nil, e)
		}
		return // answered or abandoned while it waited
	}
	bp := getBuf()
	t.mu.Lock()
	b := t.appendLocked(*bp)
	t.mu.Unlock()
	c.reply(b, nil)
	putBuf(bp, b)
}

func (f *sessionFront) tasksCancel(c *call) {
	s := f.srv
	t, e := s.lookupTask(c)
	if e != nil {
		c.reply(nil, e)
		return
	}
	bp := getBuf()
	b, e := s.modes.cancel(t, *bp) // knownbadcancel.go
	c.reply(b, e)
	putBuf(bp, b)
}

// tasksList pages through the caller's tasks in creation order (R22-R25, R53). The cursor
// is opaque to clients (R24): base64url of the last sequence number shown, tagged so that
// a made-up cursor is rejected with -32602 (R47).
func (f *sessionFront) tasksList(c *call) {
	s := f.srv
	if !s.listOffered() {
		c.reply(nil, mcp.Errorf(mcp.CodeMethodNotFound, "tasks/list is not offered: the server has no authorization context (R54)"))
		return
	}
	var p mcp.ListTasksParams
	if len(c.msg.Params) > 0 {
		if err := json.Unmarshal(c.msg.Params, &p); err != nil {
			c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid tasks/list params: %v", err))
			return
		}
	}
	var after uint64
	if p.Cursor != nil {
		var ok bool
		if after, ok = decodeCursor(*p.Cursor); !ok {
			c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid tasks/list cursor %q (R47)", *p.Cursor))
			return
		}
	}
	var mine []*task
	now := s.clock.Now()
	s.store.each(func(t *task) bool {
		if s.modes.scope.lists(t, c.tenant, c.sess) && t.seq > after && (t.expires.IsZero() || now.Before(t.expires)) {
			mine = append(mine, t)
		}
		return true
	})
	slices.SortFunc(mine, func(a, b *task) int { return cmpUint(a.seq, b.seq) })
	page := mine[:min(len(mine), s.cfg.ListPageSize)]
	b := []byte(`{"tasks":[`)
	for i, t := range page {
		if i > 0 {
			b = append(b, ',')
		}
		t.mu.Lock()
		b = t.appendLocked(b)
		t.mu.Unlock()
	}
	b = append(b, ']')
	if len(mine) > len(page) { // R23
		b = f.nextCursor(b, page[len(page)-1].seq) // none with list_truncated (knownbad.go)
	}
	b = append(b, '}')
	c.reply(b, nil)
}

// appendNextCursor appends the nextCursor member of a tasks/list page whose last task has
// sequence number last (R23).
func appendNextCursor(b []byte, last uint64) []byte {
	b = append(b, `,"nextCursor":`...)
	return mcp.AppendString(b, encodeCursor(last))
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cursorTag marks tasksim cursors; it is not a secret, only a format check.
const cursorTag = "tsl1"

func encodeCursor(seq uint64) string {
	var b [len(cursorTag) + 8]byte
	copy(b[:], cursorTag)
	binary.BigEndian.PutUint64(b[len(cursorTag):], seq)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func decodeCursor(s string) (uint64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(cursorTag)+8 || string(b[:len(cursorTag)]) != cursorTag {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[len(cursorTag):]), true
}
