package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Requests of the modern era (protocol 2026-07-28, docs/RULES.md#e1): no initialize and no
// session. Each request carries its version, the client's capabilities for it and the
// client's name in params._meta (E1, E2), and mirrors the version, the method and, where the
// method has one, the name into headers (E24, E25: mcp.HeadersFor). The reply is read as a
// session's is (Session.readReply): JSON or an SSE stream (E23); a status other than 200 is
// an *HTTPError whose Body holds the JSON-RPC error (E27).
//
// Only what the probe and era detection need is here: server/discover, tools/list,
// tools/call and tasks/cancel. Virtual clients of a run speak 2025-11-25 (README, modern-era
// gaps).

// modernRequest is one request of the modern era as sent: the body and the MCP headers.
type modernRequest struct {
	id      mcp.ID
	method  string
	body    []byte
	headers mcp.RequestHeaders
}

// newModernRequest builds the request for method with params (a JSON object, nil for none),
// the envelope of version and caps added as params._meta.
func (t *Target) newModernRequest(id mcp.ID, version, method string, params []byte, caps mcp.ModernClientCapabilities) (modernRequest, error) {
	info := t.ClientInfo
	if info.Name == "" {
		info = mcp.Implementation{Name: "tasksim", Version: "dev"}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	meta, err := json.Marshal(mcp.RequestMeta{ProtocolVersion: version, ClientCapabilities: caps, ClientInfo: &info})
	if err != nil {
		return modernRequest{}, err
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

// withMeta returns params, a JSON object (nil or empty for {}), with meta as its _meta
// member; params must not have one.
func withMeta(params, meta []byte) ([]byte, error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 {
		p = []byte(`{}`)
	}
	if p[0] != '{' || !json.Valid(p) {
		return nil, fmt.Errorf("want a JSON object, got %.40q", p)
	}
	hasMeta := false
	mcp.EachMember(p, func(name, _ []byte) bool {
		hasMeta = hasMeta || string(name) == "_meta"
		return !hasMeta
	})
	if hasMeta {
		return nil, fmt.Errorf("params already carry a _meta")
	}
	out := make([]byte, 0, len(p)+len(meta)+10)
	out = append(out, p[:len(p)-1]...) // without the closing brace
	if len(bytes.TrimSpace(p[1:len(p)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"_meta":`...)
	out = append(out, meta...)
	return append(out, '}'), nil
}

// modernSession is the requester of the modern era on a target: a counter of request ids
// (E7: unique among the requests still awaiting a reply) and the version sent. It is no
// session: nothing is carried from one request to the next (E4).
type modernSession struct {
	t       *Target
	version string
	nextID  int64
}

// call sends one request of the modern era and reads its reply.
func (s *modernSession) call(ctx context.Context, method string, params []byte, caps mcp.ModernClientCapabilities) (Reply, error) {
	s.nextID++
	r, err := s.t.newModernRequest(mcp.IntID(s.nextID), s.version, method, params, caps)
	if err != nil {
		return Reply{}, err
	}
	return s.post(ctx, r)
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
	rep, _, err := (&Session{t: s.t}).readReply(ctx, resp, r.id, method, nil, CutNone)
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
