package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The raw request path of 2026-07-28: one request at a time, well formed by default, and
// broken on purpose where a check asks (an envelope without its version, a header left out
// or contradicting the body), with the reply's HTTP status. The era detection and the probe
// send their requests through the same modernSession; a run's virtual clients use Stateless
// instead. The contract suite (package conform) is the main user of ModernClient.

// ModernRequest is one request of protocol 2026-07-28 as the contract suite sends it. The
// zero value of each field makes it well formed: the _meta envelope of ProtocolModern
// (E1, E2) and the headers of mcp.HeadersFor (E24, E64).
type ModernRequest struct {
	// Method and Params (a JSON object without _meta; nil for {}).
	Method string
	Params json.RawMessage
	// Tasks declares the Tasks extension in clientCapabilities (E39); Form declares form
	// elicitation, which answers the input requests of a task (E50).
	Tasks, Form bool
	// Version is the _meta protocolVersion and the MCP-Protocol-Version header; "" =
	// ProtocolModern.
	Version string
	// Meta, when not nil, is sent as params._meta as it is, instead of the envelope Version,
	// Tasks and Form make (an envelope broken on purpose, E3). The headers are still
	// Version's.
	Meta json.RawMessage
	// Header replaces the MCP headers mcp.HeadersFor gives (keys mcp.HeaderMethod,
	// mcp.HeaderName, mcp.HeaderProtocolVersion): a value "" leaves that header out.
	Header map[string]string
}

// ModernClient sends requests of 2026-07-28 to a target, one at a time: a counter of request
// ids and nothing else (E4, E7). Target.Header (credentials) goes with each request.
type ModernClient struct{ s modernSession }

// ModernClient returns a client of the modern era for t.
func (t *Target) ModernClient() *ModernClient {
	return &ModernClient{s: modernSession{t: t, version: ProtocolModern}}
}

// Send sends req and returns its reply and the HTTP status. A JSON-RPC error refused with an
// HTTP status (400, 404: E27) is a Reply with Err, and that status; an HTTP error whose body
// holds no JSON-RPC error is returned as an *HTTPError, with its status; a failure to get an
// answer at all has status 0.
func (c *ModernClient) Send(ctx context.Context, req ModernRequest) (Reply, int, error) {
	r, err := c.build(req)
	if err != nil {
		return Reply{}, 0, err
	}
	rep, err := c.s.post(ctx, r)
	var he *HTTPError
	switch {
	case err == nil:
		return rep, 200, nil
	case errors.As(err, &he):
		if e := replyError(he); e != nil {
			return Reply{Err: e}, he.Status, nil
		}
		return Reply{}, he.Status, err
	}
	return Reply{}, 0, err
}

// build makes the request req says.
func (c *ModernClient) build(req ModernRequest) (modernRequest, error) {
	version := req.Version
	if version == "" {
		version = ProtocolModern
	}
	var caps mcp.ModernClientCapabilities
	if req.Tasks {
		caps.DeclareTasks()
	}
	if req.Form {
		caps.Elicitation = &mcp.ElicitationCapability{Form: &mcp.Leaf{}}
	}
	c.s.nextID++
	id := mcp.IntID(c.s.nextID)
	var r modernRequest
	if req.Meta == nil {
		var err error
		if r, err = c.s.t.newModernRequest(id, version, req.Method, req.Params, caps, nil); err != nil {
			return r, err
		}
	} else {
		p, err := withMeta(req.Params, req.Meta)
		if err != nil {
			return r, fmt.Errorf("%s params: %w", req.Method, err)
		}
		h, _ := mcp.HeadersFor(req.Method, p) // what the body lacks is left out
		h.ProtocolVersion, h.Method = version, req.Method
		r = modernRequest{id: id, method: req.Method, body: mcp.AppendRequest(nil, id, req.Method, p), headers: h}
	}
	for k, v := range req.Header {
		switch k {
		case mcp.HeaderMethod:
			r.headers.Method = v
		case mcp.HeaderName:
			r.headers.Name = v
		case mcp.HeaderProtocolVersion:
			r.headers.ProtocolVersion = v
		default:
			return r, fmt.Errorf("ModernRequest.Header: %q is no MCP header", k)
		}
	}
	return r, nil
}

// ListTools lists every tool, page by page, each page a complete result (E11-E13).
func (c *ModernClient) ListTools(ctx context.Context) ([]mcp.Tool, error) { return c.s.listTools(ctx) }
