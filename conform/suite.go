package conform

import (
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

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/results"
)

// Options say what to check and how.
type Options struct {
	// Target is the server and the first identity: its URL, client and headers.
	Target *loadgen.Target
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
}

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
	o         Options
	t         *loadgen.Target
	other     *loadgen.Target  // nil: no second identity
	otherSess *loadgen.Session // the second identity's session, once opened
	sess      *loadgen.Session
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
	sess     *loadgen.Session
	statuses []mcp.Status // as observed, in order, repeats folded
	final    mcp.Status   // the terminal status seen; 0 while none
	gone     bool         // seen expired (-32602 after it existed)
	cancel   bool         // the suite asked to cancel it
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
	for _, v := range o.Target.Header {
		s.secret = append(s.secret, v...)
	}
	if o.Other != nil {
		other := *o.Target
		h := o.Target.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		for k, v := range o.Other {
			h[http.CanonicalHeaderKey(k)] = v
			s.secret = append(s.secret, v...)
		}
		other.Header = h
		s.other = &other
	}
	res := &results.Contract{TasksimVersion: o.Version, Target: o.Target.URL, StartedAt: time.Now().UTC(),
		Cases: []results.ContractCase{}, Created: []string{}, LeftBehind: []string{}}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	res.Protocol = s.init.ProtocolVersion
	res.Server = strings.TrimSpace(s.init.ServerInfo.Name + " " + s.init.ServerInfo.Version)
	tools, err := s.sess.ListTools(ctx)
	if err != nil {
		s.sess.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("target %s: tools/list: %w", o.Target.URL, err)
	}
	s.tools = tools
	s.mock = s.init.ServerInfo.Name == "tasksim-mock"
	s.plan = s.makePlan()

	sel := selection{only: o.Only, skip: o.Skip}
	for _, c := range suiteCases {
		if c.final {
			continue
		}
		s.runCase(ctx, res, c, sel)
	}
	s.cleanup(ctx)
	for _, c := range suiteCases {
		if c.final {
			s.runCase(ctx, res, c, sel)
		}
	}
	s.sess.Close(context.WithoutCancel(ctx))
	if s.otherSess != nil {
		s.otherSess.Close(context.WithoutCancel(ctx))
	}

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

// open opens the suite's session by hand (initialize, notifications/initialized), keeping
// the initialize result as sent for the capability checks.
func (s *suite) open(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	params, _ := json.Marshal(mcp.InitializeParams{ProtocolVersion: mcp.Version20251125,
		Capabilities: loadgen.ClientCapabilities(), ClientInfo: s.t.ClientInfo})
	rep, hdr, err := s.t.Attach("", "").CallHeader(ctx, mcp.MethodInitialize, params, nil)
	if err == nil && rep.Err != nil {
		err = fmt.Errorf("initialize: %w", rep.Err)
	}
	var init mcp.InitializeResult
	if err == nil {
		if uerr := json.Unmarshal(rep.Result, &init); uerr != nil {
			err = &loadgen.ProtocolError{Msg: "initialize result: " + uerr.Error()}
		} else if !mcp.KnownVersion(init.ProtocolVersion) {
			err = &loadgen.VersionError{Version: init.ProtocolVersion}
		}
	}
	if err != nil {
		return s.t.ExplainConnect(err)
	}
	s.init, s.raw = &init, rep.Result
	s.sess = s.t.Attach(hdr.Get("Mcp-Session-Id"), mcp.InternVersion(init.ProtocolVersion))
	if err := s.sess.Notify(ctx, mcp.MethodInitialized, nil); err != nil {
		return fmt.Errorf("target %s: notifications/initialized: %w", s.t.URL, err)
	}
	return nil
}

// runCase runs c unless the selection leaves it out, and records its verdict.
func (s *suite) runCase(ctx context.Context, res *results.Contract, c caseDef, sel selection) {
	if !sel.wants(c.id) {
		return
	}
	r := &run{s: s, ctx: ctx, c: results.ContractCase{ID: c.id, Title: c.title, Rules: c.rules, Evidence: []results.Exchange{}}}
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
	r.c.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	if ctx.Err() != nil && !r.skipped {
		// Interrupted mid-case: what failed then is the interruption, not the server.
		r.failed, r.skipped = nil, true
		r.c.Message, r.c.Enable = "the suite was interrupted during this case", "run the suite again"
	}
	switch {
	case len(r.failed) > 0:
		r.c.Verdict = results.CaseFail
		r.c.Message = strings.Join(r.failed, "; ")
	case r.skipped:
		r.c.Verdict = results.CaseSkip
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
	passed  []string
	skipped bool
	ex      []results.Exchange
	dropped int
}

// fail records a failure of rule: what was expected and what came back.
func (r *run) fail(rule, format string, args ...any) {
	r.failed = append(r.failed, rule+": "+r.s.redact(fmt.Sprintf(format, args...)))
}

// fatal is fail, and ends the case.
func (r *run) fatal(rule, format string, args ...any) {
	r.fail(rule, format, args...)
	panic(stop{})
}

// skip ends the case as skipped, saying why and what would let it run.
func (r *run) skip(why, enable string) {
	r.skipped = true
	r.c.Message = why
	r.c.Enable = enable
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
func (r *run) call(sess *loadgen.Session, identity, method string, params any, h loadgen.ServerHandler, timeout time.Duration) reply {
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
	var he *loadgen.HTTPError
	switch {
	case errors.As(err, &he):
		p.status = he.Status
	case errors.Is(err, loadgen.ErrSessionGone):
		p.status = http.StatusNotFound
	case err != nil:
		p.status = 0
		if ctx.Err() != nil && r.ctx.Err() == nil {
			p.err = fmt.Errorf("no reply within %v", timeout)
		}
	}
	r.record(results.Exchange{Method: method, Identity: identity, Request: excerpt(body, 300), HTTPStatus: p.status, Reply: p.String()})
	r.s.observeReply(method, p)
	return p
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
// "cancel." names the cases it starts).
func CheckSelection(only, skip []string) error {
	var bad []string
	for _, p := range append(slices.Clone(only), skip...) {
		ok := slices.ContainsFunc(suiteCases, func(c caseDef) bool {
			return c.id == p || (strings.HasSuffix(p, ".") && strings.HasPrefix(c.id, p))
		})
		if !ok {
			bad = append(bad, fmt.Sprintf("%q", p))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("no contract case %s; the cases are: %s", strings.Join(bad, ", "), strings.Join(CaseIDs(), ", "))
	}
	return nil
}

// Case describes one case of the suite.
type Case struct {
	ID    string
	Title string
	Rules []string
}

// Cases lists the suite's cases in the order they run.
func Cases() []Case {
	out := make([]Case, 0, len(suiteCases))
	for _, c := range suiteCases {
		if !c.final {
			out = append(out, Case{c.id, c.title, c.rules})
		}
	}
	for _, c := range suiteCases {
		if c.final {
			out = append(out, Case{c.id, c.title, c.rules})
		}
	}
	return out
}

// CaseIDs lists the case ids in the order they run.
func CaseIDs() []string {
	var ids []string
	for _, c := range Cases() {
		ids = append(ids, c.ID)
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
