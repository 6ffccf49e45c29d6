package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/results"
)

// Options say what to check and how.
type Options struct {
	// Target is the server and the first identity: its URL, client and headers.
	Target *client.Target
	// Other are the headers of a second identity (another tenant's token, say): they replace
	// the same-named headers of Target.Header. nil = no second identity: the isolation cases
	// are skipped.
	Other http.Header
	// Tool is the task tool of the lifecycle cases; "" = the first listed tool that supports
	// tasks (tasksim's mock: work_task).
	Tool string
	// Args are Tool's arguments; nil = the minimal arguments its inputSchema requires (on
	// tasksim's mock: arguments that set each task's duration and outcome).
	Args json.RawMessage
	// FailArgs are arguments that make Tool end in a tool error (a CallToolResult with
	// isError: true); ErrorArgs arguments that make it end in a protocol error (a JSON-RPC
	// error). They let the cases of R51 and E49 run on any server. nil = unknown: on
	// tasksim's mock the suite knows them (outcome: failed, outcome: error); elsewhere those
	// cases skip, naming the flag that would enable them.
	FailArgs, ErrorArgs json.RawMessage
	// ToolArgs are the arguments of named tools in the taskSupport cases; a tool not named
	// gets the minimal arguments its inputSchema requires.
	ToolArgs map[string]json.RawMessage
	// Only runs only the cases with these ids (or id prefixes ending in ".", such as
	// "cancel."); Skip leaves these out. Check them first with CheckSelection.
	Only, Skip []string
	// Budget bounds every wait of the suite: for a task to end, for an expired task to be
	// gone. A granted ttl longer than Budget skips the expiry case. Default 2m.
	Budget time.Duration
	// Version is tasksim's version, written into the result.
	Version string
	// Progress, when set, sees each case as soon as it has a verdict.
	Progress func(results.ContractCase)
	// Fallback says Tool and Args are a fallback (a scenario's, in a run): on tasksim's
	// mock, whose tools the suite knows, they are not used. Default false: they are the
	// operator's, and used wherever given.
	Fallback bool
	// OtherHint is what the isolation cases say would enable them when Other is nil;
	// "" = "give --other-header ...", the command line's way.
	OtherHint string
	// Protocol is the era whose suite runs: ProtocolLegacy (2025-11-25: initialize,
	// sessions, rules R and H), ProtocolModern (2026-07-28 with the Tasks extension, rules
	// E), ProtocolBoth (the one, then the other), or "" for every era the target serves
	// (found by docs/RULES.md#e32): both suites for a target of both eras.
	Protocol string
}

// The values of Options.Protocol.
const (
	ProtocolAuto   = ""
	ProtocolLegacy = client.ProtocolLegacy
	ProtocolModern = client.ProtocolModern
	ProtocolBoth   = "both"
)

// DefaultBudget is Options.Budget's default.
const DefaultBudget = 2 * time.Minute

// requestTimeout bounds one request that should answer at once (everything but tasks/result
// and a tool call without a task).
const requestTimeout = 10 * time.Second

// maxEvidence is the number of exchanges a case keeps: the first half and the last half of
// what it sent, so that a long poll keeps its beginning and its end.
const maxEvidence = 10

// suite is one run of the suite against one target.
type suite struct {
	m         modern // the modern suite's state (modern.go)
	o         Options
	t         *client.Target
	other     *client.Target  // nil: no second identity
	otherSess *client.Session // the second identity's session, once opened
	sess      *client.Session
	init      *mcp.InitializeResult
	raw       json.RawMessage // the initialize result as sent
	tools     []mcp.Tool
	mock      bool
	plan      plan
	secret    []string // header values, redacted from evidence

	mu      sync.Mutex
	tasks   map[string]*known // by task id
	order   []string          // task ids in creation order
	done    *known            // a task that ended on its own (fixture), once made
	inputOK string            // evidence that a task's input round trip worked; "" when none did
	inputEv []results.Exchange
	notes   []string
}

// known is a task the suite created, and what it saw of it.
type known struct {
	id       string
	sess     *client.Session
	statuses []mcp.Status // as observed, in order, repeats folded
	final    mcp.Status   // the terminal status seen; 0 while none
	gone     bool         // seen expired (-32602 after it existed)
	cancel   bool         // the suite asked to cancel it
	read     bool         // a tasks/get of the first identity answered it
	create   json.RawMessage
	work     work
	created  time.Time
}

// Run runs the suite. Its error is only that the target could not be reached or refused
// the first initialize (said in an operator's terms); every other finding is a case
// verdict.
func Run(ctx context.Context, o Options) (*results.Contract, error) {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	s := &suite{o: o, t: o.Target, tasks: map[string]*known{}}
	s.addSecrets(o.Target.Header)
	if o.Other != nil {
		other := *o.Target
		h := o.Target.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		for k, v := range o.Other {
			h[http.CanonicalHeaderKey(k)] = v
		}
		s.addSecrets(o.Other)
		other.Header = h
		s.other = &other
	}
	res := &results.Contract{TasksimVersion: o.Version, Target: o.Target.URL, StartedAt: time.Now().UTC(),
		Cases: []results.ContractCase{}, Created: []string{}, LeftBehind: []string{}}
	tested, err := s.eras(ctx)
	if err != nil {
		return nil, err
	}
	sel := selection{only: o.Only, skip: o.Skip}
	if err := sel.inEras(tested); err != nil {
		return nil, &OptionError{Msg: err.Error()}
	}
	if err := s.runEras(ctx, res, tested, sel); err != nil {
		return nil, err
	}
	res.Interrupted = ctx.Err() != nil

	for _, id := range s.order {
		k := s.tasks[id]
		res.Created = append(res.Created, short(id))
		if k.final == 0 && !k.gone {
			res.LeftBehind = append(res.LeftBehind, short(id))
		}
	}
	res.Notes = append([]string{}, s.notes...)
	res.DurationS = time.Since(res.StartedAt).Seconds()
	res.Count()
	return res, nil
}

// eras says which eras' suites run (eraSuites): Options.Protocol, or every era the target
// serves (Target.Era, E32).
// Its error says, in an operator's terms, that the target cannot be reached or does not
// speak the era asked for.
func (s *suite) eras(ctx context.Context) ([]eraSuite, error) {
	dctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	switch s.o.Protocol {
	case ProtocolAuto, ProtocolLegacy, ProtocolModern, ProtocolBoth:
	default:
		return nil, fmt.Errorf("protocol %q: the suites are %s, %s and %s (both)", s.o.Protocol, ProtocolLegacy, ProtocolModern, ProtocolBoth)
	}
	era, err := s.t.Era(dctx)
	if err != nil {
		return nil, err
	}
	wantLegacy := s.o.Protocol == ProtocolLegacy || s.o.Protocol == ProtocolBoth
	wantModern := s.o.Protocol == ProtocolModern || s.o.Protocol == ProtocolBoth
	switch {
	case s.o.Protocol == ProtocolAuto:
		// Every era the target serves: both are in use at once. A modern target whose
		// server/discover did not list its versions is not assumed to serve 2025-11-25.
		modern := era.Modern()
		return erasServed(era.ServesLegacy() && (!modern || era.Supported != nil), modern), nil
	case wantLegacy && !era.ServesLegacy():
		return nil, fmt.Errorf("target %s speaks only %s (%s): its suite runs with --protocol %s, or with no --protocol",
			s.t.URL, ProtocolModern, era.How, ProtocolModern)
	case wantModern && !era.Modern():
		return nil, fmt.Errorf("target %s does not speak %s (%s): its suite runs with --protocol %s, or with no --protocol",
			s.t.URL, ProtocolModern, era.How, ProtocolLegacy)
	}
	return erasServed(wantLegacy, wantModern), nil
}

// erasServed are the suites of the eras that run: 2025-11-25 when legacy, 2026-07-28 when
// modern.
func erasServed(legacy, modern bool) []eraSuite {
	var names []string
	if legacy {
		names = append(names, ProtocolLegacy)
	}
	if modern {
		names = append(names, ProtocolModern)
	}
	return erasNamed(names...)
}

// openLegacy opens the suite's session in 2025-11-25 and plans its cases (eraSuite.open).
func (s *suite) openLegacy(ctx context.Context, res *results.Contract) error {
	o := s.o
	if err := s.open(ctx); err != nil {
		return err
	}
	res.Protocol = joinProtocol(res.Protocol, s.init.ProtocolVersion)
	res.Server = strings.TrimSpace(s.init.ServerInfo.Name + " " + s.init.ServerInfo.Version)
	lctx, cancel := context.WithTimeout(ctx, requestTimeout)
	tools, err := s.sess.ListTools(lctx)
	cancel()
	if err != nil {
		s.close(ctx, s.sess)
		return fmt.Errorf("target %s: tools/list: %w", o.Target.URL, err)
	}
	s.tools = tools
	s.mock = s.init.ServerInfo.Name == "tasksim-mock"
	if s.mock && o.Fallback {
		s.o.Tool, s.o.Args = "", nil
	}
	s.plan = s.makePlan()
	if s.plan.optionErr != "" && o.Fallback {
		s.note("the scenario's tool is not the suite's: %s; the suite used the first tool that supports tasks", s.plan.optionErr)
		s.o.Tool, s.o.Args = "", nil
		s.plan = s.makePlan()
	}
	if s.plan.optionErr != "" {
		s.close(ctx, s.sess)
		return &OptionError{Msg: s.plan.optionErr}
	}
	for name := range o.ToolArgs {
		if s.tool(name) == nil {
			s.note("--tool-args names %q, which the server does not list", name)
		}
	}

	return nil
}

// closeLegacy ends the sessions of 2025-11-25 the suite opened (eraSuite.close).
func (s *suite) closeLegacy(ctx context.Context) {
	s.close(ctx, s.sess)
	if s.otherSess != nil {
		s.close(ctx, s.otherSess)
	}
}

// joinProtocol adds the protocol version of one suite to what res.Protocol says already.
func joinProtocol(have, v string) string {
	if have == "" {
		return v
	}
	return have + " and " + v
}

// OptionError is an option that cannot be used against this target: --tool names a tool
// the server does not list, or one that does not support tasks. The suite does not run.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// tasksCaps returns capabilities.tasks of the initialize result, as sent; nil when absent.
func (s *suite) tasksCaps() json.RawMessage {
	var raw struct {
		Capabilities struct {
			Tasks json.RawMessage `json:"tasks"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(s.raw, &raw)
	if string(raw.Capabilities.Tasks) == "null" {
		return nil
	}
	return raw.Capabilities.Tasks
}

// parseInit reads an initialize result leniently about the capability leaves of
// capabilities.tasks: a leaf is there when its member is (whatever its value: init.capabilities
// judges the value).
func parseInit(raw json.RawMessage, init *mcp.InitializeResult) error {
	var r struct {
		ProtocolVersion string             `json:"protocolVersion"`
		ServerInfo      mcp.Implementation `json:"serverInfo"`
		Capabilities    struct {
			Tasks json.RawMessage `json:"tasks"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	*init = mcp.InitializeResult{ProtocolVersion: r.ProtocolVersion, ServerInfo: r.ServerInfo}
	if !declared(r.Capabilities.Tasks) {
		return nil
	}
	tc := &mcp.TasksCapability{}
	init.Capabilities.Tasks = tc
	var t map[string]json.RawMessage
	if json.Unmarshal(r.Capabilities.Tasks, &t) != nil {
		return nil // declared, in a form init.capabilities fails (R1); nothing more is known
	}
	if declared(t["list"]) {
		tc.List = mcp.On()
	}
	if declared(t["cancel"]) {
		tc.Cancel = mcp.On()
	}
	var req struct {
		Tools map[string]json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(t["requests"], &req) == nil && req.Tools != nil {
		tc.Requests = &mcp.TaskRequestsLeafs{Tools: &mcp.ToolsTaskLeafs{}}
		if declared(req.Tools["call"]) {
			tc.Requests.Tools.Call = mcp.On()
		}
	}
	return nil
}

// declared reports whether a capability member is there: present, and not null or false
// (the spec's prose says "boolean" where the schema has an object: true counts, and
// init.capabilities judges the form).
func declared(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case "", "null", "false":
		return false
	}
	return true
}

// open opens the suite's session by hand (initialize, notifications/initialized), keeping
// the initialize result as sent for the capability checks. Whether the target serves
// 2025-11-25 at all was told before (eras, docs/RULES.md#e32).
func (s *suite) open(ctx context.Context) error {
	sess, init, raw, err := openSession(ctx, s.t)
	if err != nil {
		return err
	}
	s.sess, s.init, s.raw = sess, init, raw
	return nil
}

// openSession opens a session on t by hand (initialize, notifications/initialized), reading
// the initialize result leniently (parseInit); it returns the result as sent too. Its
// error says why in an operator's terms.
func openSession(ctx context.Context, t *client.Target) (*client.Session, *mcp.InitializeResult, json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	params, _ := json.Marshal(mcp.InitializeParams{ProtocolVersion: mcp.Version20251125,
		Capabilities: client.ClientCapabilities(), ClientInfo: t.ClientInfo})
	rep, hdr, err := t.Attach("", "").CallHeader(ctx, mcp.V20251125{}.Method(mcp.OpInitialize), params, nil)
	if err == nil && rep.Err != nil {
		err = fmt.Errorf("initialize: %w", rep.Err)
	}
	init := new(mcp.InitializeResult)
	if err == nil {
		if uerr := parseInit(rep.Result, init); uerr != nil {
			err = &client.ProtocolError{Msg: "initialize result: " + uerr.Error()}
		} else if !mcp.SessionVersion(init.ProtocolVersion) {
			err = &client.VersionError{Version: init.ProtocolVersion}
		}
	}
	if err != nil {
		return nil, nil, nil, t.ExplainConnect(err)
	}
	sess := t.Attach(hdr.Get("Mcp-Session-Id"), mcp.InternVersion(init.ProtocolVersion))
	if err := sess.Notify(ctx, mcp.V20251125{}.Method(mcp.OpInitialized), nil); err != nil {
		return nil, nil, nil, fmt.Errorf("target %s: notifications/initialized: %w", t.URL, err)
	}
	return sess, init, rep.Result, nil
}

// close ends sess with DELETE, bounded by requestTimeout even when ctx has ended.
func (s *suite) close(ctx context.Context, sess *client.Session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	_ = sess.Close(ctx)
}

// caseSlack is what a case may take beyond the budget: the requests around its waits.
const caseSlack = 3 * requestTimeout

// runCase runs c unless the selection leaves it out, and records its verdict. A case runs
// under a deadline of the budget and some slack; one that reaches it is skipped, saying so.
func (s *suite) runCase(ctx context.Context, res *results.Contract, c caseDef, sel selection) {
	if !sel.wants(c.id) {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, s.o.Budget+caseSlack)
	defer cancel()
	r := &run{s: s, ctx: cctx, c: results.ContractCase{ID: c.id, Title: c.title, Rules: c.rules, Evidence: []results.Exchange{}, Broken: []string{}}}
	start := time.Now()
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(stop); !ok {
					panic(p)
				}
			}
		}()
		if ctx.Err() != nil {
			r.skip("the suite was interrupted before this case", "run the suite again")
		}
		c.run(r)
	}()
	r.addSchemaFails()
	r.c.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	// Failures found before an interruption or the case's deadline stand (fail ignores
	// those after); a case that found none and could not finish is skipped, saying why.
	switch {
	case len(r.failed) > 0 || r.skipped:
	case ctx.Err() != nil:
		r.skipped = true
		r.c.Message, r.c.Enable = "the suite was interrupted during this case", "run the suite again"
	case cctx.Err() != nil:
		r.skipped = true
		r.c.Message = fmt.Sprintf("the case ran out of its time (the budget of %v and %v for its requests)", s.o.Budget, caseSlack)
		r.c.Enable = "give --budget more time"
	}
	switch {
	case len(r.failed) > 0:
		r.c.Verdict = results.CaseFail
		r.c.Message = strings.Join(r.failed, "; ")
		r.c.Broken = r.broken
	case r.skipped:
		r.c.Verdict = results.CaseSkip
	case len(r.passed) == 0: // nothing failed, and nothing was seen to pass: no evidence
		r.c.Verdict = results.CaseSkip
		r.c.Message = "the case ended without evidence of what it checks: nothing failed, and nothing was seen to hold"
	default:
		r.c.Verdict = results.CasePass
		r.c.Message = strings.Join(r.passed, "; ")
	}
	r.c.Evidence = r.evidence()
	res.Cases = append(res.Cases, r.c)
	if s.o.Progress != nil {
		s.o.Progress(r.c)
	}
}

// stop ends a case early (skip, or a failure after which nothing more can be checked).
type stop struct{}

// run is one case being run.
type run struct {
	s       *suite
	ctx     context.Context
	c       results.ContractCase
	failed  []string
	broken  []string // the rules of failed, each once
	passed  []string
	skipped bool
	ex      []results.Exchange
	dropped int
	// schemaSeen are the methods whose reply failed the schema in this case, schemaFails
	// those failures (schema.go).
	schemaSeen  map[string]bool
	schemaFails []schemaFail
}

// fail records a failure of rule: what was expected and what came back.
func (r *run) fail(rule, format string, args ...any) {
	if r.ctx.Err() != nil {
		return // the case's time ran out, or the suite was interrupted: not the server's doing
	}
	r.failed = append(r.failed, rule+": "+r.s.redact(fmt.Sprintf(format, args...)))
	if !slices.Contains(r.broken, rule) {
		r.broken = append(r.broken, rule)
	}
}

// fatal is fail, and ends the case.
func (r *run) fatal(rule, format string, args ...any) {
	r.fail(rule, format, args...)
	panic(stop{})
}

// skip ends the case as skipped, saying why and what would let it run.
func (r *run) skip(why, enable string) {
	r.skipped = true
	r.c.Message = r.s.redact(why)
	r.c.Enable = r.s.redact(enable)
	panic(stop{})
}

// pass notes what a passing case saw.
func (r *run) pass(format string, args ...any) {
	r.passed = append(r.passed, r.s.redact(fmt.Sprintf(format, args...)))
}

// evidence returns the exchanges kept, with a marker for those dropped in the middle.
func (r *run) evidence() []results.Exchange {
	if r.dropped == 0 {
		return r.ex
	}
	half := maxEvidence / 2
	out := append([]results.Exchange{}, r.ex[:half]...)
	out = append(out, results.Exchange{Method: fmt.Sprintf("(%d more exchanges not kept)", r.dropped)})
	return append(out, r.ex[half:]...)
}

// record keeps an exchange: the first maxEvidence/2 and, from then on, the latest
// maxEvidence/2.
func (r *run) record(e results.Exchange) {
	e.Request = r.s.redact(e.Request)
	e.Reply = r.s.redact(e.Reply)
	half := maxEvidence / 2
	if len(r.ex) < maxEvidence {
		r.ex = append(r.ex, e)
		return
	}
	copy(r.ex[half:], r.ex[half+1:])
	r.ex[len(r.ex)-1] = e
	r.dropped++
}

// reply is what one request got: a result, a JSON-RPC error, or a failure to get either.
type reply struct {
	result json.RawMessage
	rpc    *mcp.Error
	err    error
	status int // HTTP status when err is an HTTP error, else 200 (or 0 without a reply)
}

// code is the JSON-RPC error code of the reply; 0 when it is not a JSON-RPC error.
func (p reply) code() int {
	if p.rpc != nil {
		return p.rpc.Code
	}
	return 0
}

// String describes the reply in a line.
func (p reply) String() string {
	switch {
	case p.err != nil:
		return p.err.Error()
	case p.rpc != nil:
		return fmt.Sprintf("JSON-RPC error %d: %s", p.rpc.Code, oneLine(p.rpc.Message, 200))
	}
	return "result " + excerpt(p.result, 300)
}

// call sends method with params on sess and records the exchange. identity names the
// identity in the evidence ("" = the first). timeout 0 = requestTimeout.
func (r *run) call(sess *client.Session, identity string, op mcp.Op, params any, h client.ServerHandler, timeout time.Duration) reply {
	method := mcp.V20251125{}.Method(op)
	if timeout == 0 {
		timeout = requestTimeout
	}
	var body []byte
	switch p := params.(type) {
	case nil:
	case []byte:
		body = p
	case json.RawMessage:
		body = p
	default:
		var err error
		if body, err = json.Marshal(p); err != nil {
			panic(err) // the suite's own params always marshal
		}
	}
	ctx, cancel := context.WithTimeout(r.ctx, timeout)
	defer cancel()
	rep, err := sess.Call(ctx, method, body, h)
	p := reply{result: rep.Result, rpc: rep.Err, err: err, status: 200}
	var he *client.HTTPError
	switch {
	case errors.As(err, &he):
		p.status = he.Status
	case errors.Is(err, client.ErrSessionGone):
		p.status = http.StatusNotFound
	case err != nil:
		p.status = 0
		if ctx.Err() != nil && r.ctx.Err() == nil {
			p.err = fmt.Errorf("no reply within %v", timeout)
		}
	}
	r.record(results.Exchange{Method: method, Identity: identity, Request: excerpt(body, 300), HTTPStatus: p.status, Reply: p.String()})
	r.checkSchema(false, method, p)
	r.s.observeReply(op, p)
	return p
}

// addSecrets keeps the values of h, and each word of them (a token after "Bearer "), for
// redact, longest first.
func (s *suite) addSecrets(h http.Header) {
	creds := authHeaders(h)
	for k, vs := range h {
		for _, v := range vs {
			s.secret = append(s.secret, v)
			if !slices.Contains(creds, k) {
				continue
			}
			for _, w := range strings.Fields(v) { // the token after its scheme, alone
				switch strings.ToLower(w) {
				case "bearer", "basic", "token", "digest", "negotiate":
					continue
				}
				if len(w) >= 4 && w != v {
					s.secret = append(s.secret, w)
				}
			}
		}
	}
	slices.SortFunc(s.secret, func(a, b string) int { return len(b) - len(a) })
}

// redact replaces every header value the suite sent (tokens) in text.
func (s *suite) redact(text string) string {
	for _, v := range s.secret {
		if len(v) >= 4 {
			text = strings.ReplaceAll(text, v, "[redacted]")
		}
	}
	return text
}

// note adds a suite-wide note.
func (s *suite) note(format string, args ...any) {
	s.mu.Lock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// excerpt shortens raw JSON to n bytes.
func excerpt(raw []byte, n int) string {
	if len(raw) == 0 {
		return ""
	}
	return oneLine(string(raw), n)
}

// oneLine shortens s to n bytes on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// short shortens a task id for listing.
func short(id string) string {
	if len(id) <= 40 {
		return id
	}
	return id[:37] + "…"
}

// selection is --only and --skip.
type selection struct{ only, skip []string }

func (sel selection) wants(id string) bool {
	match := func(list []string) bool {
		return slices.ContainsFunc(list, func(p string) bool {
			return p == id || (strings.HasSuffix(p, ".") && strings.HasPrefix(id, p))
		})
	}
	if len(sel.only) > 0 && !match(sel.only) {
		return false
	}
	return !match(sel.skip)
}

// CheckSelection reports ids of --only and --skip that name no case (a prefix such as
// "cancel." names the cases it starts), and a selection that leaves no case to run.
func CheckSelection(only, skip []string) error {
	var bad []string
	all := cases
	for _, p := range append(slices.Clone(only), skip...) {
		if !slices.ContainsFunc(all, func(c caseDef) bool { return (selection{only: []string{p}}).wants(c.id) }) {
			q := fmt.Sprintf("%q", p)
			if !strings.HasSuffix(p, ".") && slices.ContainsFunc(all, func(c caseDef) bool { return strings.HasPrefix(c.id, p+".") }) {
				q += fmt.Sprintf(" (the cases it starts are %q)", p+".")
			}
			bad = append(bad, q)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("no contract case %s; the cases are: %s", strings.Join(bad, ", "), strings.Join(allCaseIDs(), ", "))
	}
	sel := selection{only: only, skip: skip}
	if !slices.ContainsFunc(all, func(c caseDef) bool { return sel.wants(c.id) }) {
		return fmt.Errorf("--only and --skip leave no case to run")
	}
	return nil
}

// Case describes one case of the suite.
type Case struct {
	ID    string
	Title string
	Rules []string
}

// Cases lists the cases of the 2025-11-25 suite in the order they run.
func Cases() []Case { return casesOf(casesIn(ProtocolLegacy)) }

// ModernCases lists the cases of the 2026-07-28 suite in the order they run.
func ModernCases() []Case { return casesOf(casesIn(ProtocolModern)) }

func casesOf(cases []caseDef) []Case {
	out := make([]Case, 0, len(cases))
	for _, final := range []bool{false, true} {
		for _, c := range cases {
			if c.final == final {
				out = append(out, Case{c.id, c.title, c.rules})
			}
		}
	}
	return out
}

// CaseIDs lists the case ids of the 2025-11-25 suite in the order they run.
func CaseIDs() []string { return idsOf(Cases()) }

// ModernCaseIDs lists the case ids of the 2026-07-28 suite in the order they run.
func ModernCaseIDs() []string { return idsOf(ModernCases()) }

// allCaseIDs lists the case ids of every era's suite, era by era, each in the order it runs.
func allCaseIDs() []string {
	var ids []string
	for _, e := range eraSuites {
		ids = append(ids, idsOf(casesOf(casesIn(e.name)))...)
	}
	return ids
}

func idsOf(cases []Case) []string {
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.ID
	}
	return ids
}

// authHeaders names the request headers that carry credentials, by the conventions in
// use: Authorization, cookies, and any header named after a key or token.
func authHeaders(h http.Header) []string {
	var names []string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		l := strings.ToLower(k)
		if l == "authorization" || l == "proxy-authorization" || l == "cookie" ||
			strings.Contains(l, "token") || strings.Contains(l, "key") || strings.Contains(l, "auth") {
			names = append(names, k)
		}
	}
	return names
}
