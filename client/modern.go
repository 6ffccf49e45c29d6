package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/telemetry"
)

// Requests of the modern era (protocol 2026-07-28, docs/RULES.md#e1): no initialize and no
// session. Each request carries its version, the client's capabilities for it and the
// client's name in params._meta (E1, E2), and mirrors the version, the method and, where the
// method has one, the name into headers (E24, E25: mcp.HeadersFor). The reply is read as a
// session's is (Session.readReply): JSON or an SSE stream (E23); a status other than 200 is
// an *HTTPError whose Body holds the JSON-RPC error (E27).
//
// Two requesters share this wire: modernSession, one request at a time for era detection,
// the probe and the contract suite, and a Session with an envelope (Target.Stateless), under
// statelessConn, the virtual clients' Conn in a run of 2026-07-28 (statelessconn.go): a
// Session, so that the era's requests, cuts and reply reading are those of 2025-11-25's.

// modernRequest is one request of the modern era as sent: the body and the MCP headers.
type modernRequest struct {
	id      mcp.ID
	method  string
	body    []byte
	headers mcp.RequestHeaders
}

// newModernRequest builds the request for method with params (a JSON object, nil for none),
// the envelope of version and caps added as params._meta.
func (t *Target) newModernRequest(id mcp.ID, version, method string, params []byte, caps mcp.ModernClientCapabilities, members []byte) (modernRequest, error) {
	meta, err := t.requestMeta(version, caps)
	if err != nil {
		return modernRequest{}, err
	}
	if len(members) > 0 { // the trace context, inside the envelope (telemetry.AppendMeta)
		meta = append(append(append(meta[:len(meta)-1:len(meta)-1], ','), members...), '}')
	}
	p, err := withMeta(params, meta)
	if err != nil {
		return modernRequest{}, fmt.Errorf("%s params: %w", method, err)
	}
	h, err := mcp.HeadersFor(method, p)
	if err != nil {
		return modernRequest{}, err
	}
	return modernRequest{id: id, method: method, body: mcp.AppendRequest(nil, id, method, p), headers: h}, nil
}

// requestMeta is the _meta envelope of a request of version with caps: the version, the
// capabilities and the client's name (E1, E2).
func (t *Target) requestMeta(version string, caps mcp.ModernClientCapabilities) ([]byte, error) {
	info := t.ClientInfo
	if info.Name == "" {
		info = mcp.Implementation{Name: "tasksim", Version: "dev"}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return json.Marshal(mcp.RequestMeta{ProtocolVersion: version, ClientCapabilities: caps, ClientInfo: &info})
}

// Envelope is the envelope every request of a run's virtual clients carries in 2026-07-28:
// the same version and capabilities on tools/call and on every tasks/* request
// (docs/RULES.md#ext-gap-6), encoded once for the run. loadgen builds one per run
// (NewEnvelope) and hands it to Stateless for each virtual client's requester.
type Envelope struct {
	version string
	meta    []byte // the params._meta object
	tasks   bool   // it declares the Tasks extension: a task is a valid answer (E13, E39)

	mu   sync.Mutex
	hdrs map[*Target]http.Header // the POST header of the requesters on each target (Stateless)
}

// NewEnvelope encodes the envelope of t's requests of version with caps.
func (t *Target) NewEnvelope(version string, caps mcp.ModernClientCapabilities) (*Envelope, error) {
	meta, err := t.requestMeta(version, caps)
	if err != nil {
		return nil, err
	}
	return &Envelope{version: version, meta: meta, tasks: caps.DeclaresTasks()}, nil
}

// Version is the protocol version e's requests declare: loadgen's rollback drill builds
// a second envelope of the same version without the Tasks extension.
func (e *Envelope) Version() string { return e.version }

// DeclaresTasks says e declares the Tasks extension, so that a reply may be a task (E13,
// E39): loadgen reads tools/call replies, and counts task-augmented calls, by it.
func (e *Envelope) DeclaresTasks() bool { return e.tasks }

// Stateless returns the requester of 2026-07-28 on t with env: a Session that is none (no
// id, nothing opened, nothing to close), so that a virtual client's request path is the
// same in both eras.
//
// The requesters of one envelope on one target share one POST header (nothing in it is the
// requester's own): a header map is about 450 bytes, which a run of 100,000 clients held once
// per client.
func (t *Target) Stateless(env *Envelope) *Session {
	s := &Session{t: t, env: env, version: env.version, fields: t.headBase(env.version)}
	env.mu.Lock()
	defer env.mu.Unlock()
	if h, ok := env.hdrs[t]; ok {
		s.postHdr = h
		return s
	}
	s.postHdr = s.postHeader()
	if env.hdrs == nil {
		env.hdrs = map[*Target]http.Header{}
	}
	env.hdrs[t] = s.postHdr
	return s
}

// Envelope is the envelope of a requester of 2026-07-28 (Stateless); nil for a session of
// 2025-11-25, which declares its capabilities once, in initialize, and has a session to end.
func (s *Session) Envelope() *Envelope { return s.env }

// modernBody appends to dst the body of request id of 2026-07-28 on s: params (a JSON
// object, or nil) with the envelope as params._meta, and in it the trace context members
// when traced (telemetry.AppendMeta; nil = none).
func (s *Session) modernBody(dst []byte, id mcp.ID, method string, params, members []byte) ([]byte, error) {
	body := mcp.AppendRequest(dst, id, method, nil)
	body = append(body[:len(body)-1], `,"params":`...) // without the closing brace
	body, err := appendWithMeta(body, params, s.env.meta, members)
	if err != nil {
		return dst, fmt.Errorf("%s params: %w", method, err)
	}
	return append(body, '}'), nil
}

// modernHeaders is the header of a session's latest request of 2026-07-28, with the method
// and params it was made for: a client polling one task sends the same header every time,
// and reuses it (a header handed to a request is never modified).
type modernHeaders struct {
	method string
	params []byte
	h      http.Header
}

// modernHeader returns the header of a request for method with params on s: the session's
// with Mcp-Method and Mcp-Name (name, the encoded value, when the caller has it; else read
// from params). The header of the latest request stays with s until idle.
func (s *Session) modernHeader(method string, params []byte, name string) (http.Header, error) {
	if c := s.lastHdr.Load(); c != nil && c.method == method && bytes.Equal(c.params, params) {
		return c.h, nil
	}
	if name == "" {
		var err error
		if name, err = mcp.NameHeader(method, params); err != nil {
			return nil, err
		}
	}
	h := make(http.Header, len(s.postHdr)+2)
	for k, v := range s.postHdr {
		h[k] = v // shared: never modified
	}
	h[mcp.HeaderMethod] = []string{method}
	if name != "" {
		h[mcp.HeaderName] = []string{name}
	}
	s.lastHdr.Store(&modernHeaders{method: method, params: bytes.Clone(params), h: h})
	return h, nil
}

// Idle drops what s keeps only to speed up its next request: the latest request's header
// (modernHeader). A virtual client calls it when it leaves for a wait (its next poll is a
// pollInterval away): a header and its map are about 560 bytes, which a run of 100,000
// clients between polls held once per client for nothing a poll 20 s later could not rebuild
// in a microsecond.
func (s *Session) Idle() { s.lastHdr.Store(nil) }

// modernRefusal reads a reply refused with 400 or 404 in 2026-07-28 (E27) whose body holds a
// JSON-RPC error: a reply with an error, as a 200 carries one in 2025-11-25, its status
// kept. Other statuses (401, 403, 429, 5xx) stay HTTP errors, Retry-After and all.
func modernRefusal(err error) (Reply, bool) {
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest && he.Status != http.StatusNotFound {
		return Reply{}, false
	}
	e := replyError(he)
	if e == nil {
		return Reply{}, false
	}
	return Reply{Err: e, Status: he.Status}, true
}

// withMeta returns params, a JSON object (nil or empty for {}), with meta as its _meta
// member; params must not have one.
func withMeta(params, meta []byte) ([]byte, error) {
	return appendWithMeta(make([]byte, 0, len(params)+len(meta)+10), params, meta, nil)
}

// appendWithMeta appends to dst what withMeta returns, members (the trace context's,
// telemetry.AppendMeta; nil = none) added inside meta.
func appendWithMeta(dst, params, meta, members []byte) ([]byte, error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 {
		p = []byte(`{}`)
	}
	if p[0] != '{' || !mcp.Valid(p) {
		return dst, fmt.Errorf("want a JSON object, got %.40q", p)
	}
	if bytes.Contains(p, []byte(`"_meta"`)) { // then a member, or a string inside one?
		hasMeta := false
		mcp.EachMember(p, func(name, _ []byte) bool {
			hasMeta = hasMeta || string(name) == "_meta"
			return !hasMeta
		})
		if hasMeta {
			return dst, fmt.Errorf("params already carry a _meta")
		}
	}
	dst = append(dst, p[:len(p)-1]...) // without the closing brace
	if len(bytes.TrimSpace(p[1:len(p)-1])) > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":`...)
	if len(members) == 0 {
		dst = append(dst, meta...)
		return append(dst, '}'), nil
	}
	inner := trimSpace(meta[:len(meta)-1]) // meta is an object: { ... }
	dst = append(dst, inner...)
	if len(inner) > 1 {
		dst = append(dst, ',')
	}
	dst = append(dst, members...)
	return append(dst, "}}"...), nil
}

// modernSession is the requester of the modern era on a target: a counter of request ids
// (E7: unique among the requests still awaiting a reply) and the version sent. It is no
// session: nothing is carried from one request to the next (E4).
type modernSession struct {
	t       *Target
	version string
	nextID  int64
}

// call sends one request of the modern era, op spelled by V20260728, and reads its reply.
func (s *modernSession) call(ctx context.Context, op mcp.Op, params []byte, caps mcp.ModernClientCapabilities) (Reply, error) {
	s.nextID++
	id, method := mcp.IntID(s.nextID), mcp.V20260728{}.Method(op)
	if s.t.Tracer == nil {
		r, err := s.t.newModernRequest(id, s.version, method, params, caps, nil)
		if err != nil {
			return Reply{}, err
		}
		return s.post(ctx, r)
	}
	ctx, span := s.t.Tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient)) // the probe's requests (trace.go)
	defer span.End()
	var members [128]byte
	r, err := s.t.newModernRequest(id, s.version, method, params, caps, telemetry.AppendMeta(members[:0], span.SpanContext()))
	if err != nil {
		return Reply{}, err
	}
	rep, err := s.post(ctx, r)
	if span.IsRecording() {
		annotateSpan(span, op, id, method, "", s.version, "", rep, err)
	}
	return rep, err
}

// post sends r and reads its reply.
func (s *modernSession) post(ctx context.Context, r modernRequest) (Reply, error) {
	method := r.method
	u, err := s.t.endpoint()
	if err != nil {
		return Reply{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(r.body))
	if err != nil {
		return Reply{}, err
	}
	for k, v := range s.t.Header {
		req.Header[k] = slices.Clone(v)
	}
	req.Header["Accept"] = acceptBoth
	req.Header["Content-Type"] = contentJSON
	for _, h := range [...]struct{ name, value string }{
		{mcp.HeaderProtocolVersion, r.headers.ProtocolVersion}, {mcp.HeaderMethod, r.headers.Method}, {mcp.HeaderName, r.headers.Name},
	} {
		if h.value != "" { // none: the header is left out (only the contract suite leaves one out on purpose)
			req.Header.Set(h.name, h.value)
		}
	}
	resp, err := s.t.send(req)
	if err != nil {
		return Reply{}, &TransportError{Op: method, Err: err}
	}
	// A Session of no session reads the reply: no id to lose (a 404 is the era's unknown
	// method, E27, not a session gone), and a server request on the stream, which the era
	// does not have (E28), is refused.
	rep, _, err := (&Session{t: s.t}).readReply(ctx, resp, r.id, method, nil, CutNone, nil)
	return rep, err
}

// replyError returns the JSON-RPC error of a reply refused with an HTTP status (the first
// bytes of its body, as HTTPError keeps them); nil when the body holds none.
func replyError(he *HTTPError) *mcp.Error {
	body := he.Body
	if mediaType(he.ContentType) == "text/event-stream" {
		_, data, ok := bytes.Cut([]byte(body), []byte("data:"))
		if !ok {
			return nil
		}
		line, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte("\n"))
		body = string(line)
	}
	msg, perr := mcp.Decode([]byte(body))
	if perr != nil || msg.Kind != mcp.KindError {
		return nil
	}
	return msg.Error
}
