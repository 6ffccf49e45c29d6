package client

import (
	"context"
	"net/http"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The raw request path of 2025-11-25: requests on a session not opened the usual way (none,
// a made-up one, an ended one, another identity's), a notification of the caller's own, and
// the reply's HTTP header. Connect and Call send what the protocol says; these send what a
// check of the protocol needs to send, deliberately broken requests included (the contract
// suite, package conform, is their main user; loadgen's isolation probes borrow a session
// id with Attach).

// Attach returns a Session over session id id (none when "") that sends version in
// MCP-Protocol-Version (none when ""), without initialize: for checks of the session rules
// (a request without a session id, or with one the server ended: H2, H8) and for an
// initialize of the caller's own making. Closing it sends DELETE with id.
func (t *Target) Attach(id, version string) *Session {
	s := &Session{t: t, id: id, version: version}
	s.postHdr = s.postHeader()
	s.fields = t.headBase(version)
	return s
}

// CallHeader is Call, and also returns the reply's HTTP header (nil when no reply came).
func (s *Session) CallHeader(ctx context.Context, method string, params []byte, h ServerHandler) (Reply, http.Header, error) {
	return s.do(ctx, method, params, "", nil, h, CutNone)
}

// Notify sends a notification (no id, no reply expected): the server answers 202 (H4).
func (s *Session) Notify(ctx context.Context, method string, params []byte) error {
	return s.post(ctx, mcp.AppendRequest(nil, mcp.ID{}, method, params))
}

// ExplainConnect says why a Connect to t failed in an operator's terms, as a run's probe
// says it: the target cannot be reached, is not an MCP endpoint, refused the credentials
// (naming the headers sent, never their values), refused initialize, or answered a
// protocol version tasksim does not speak. An initialize sent on the raw path (Attach,
// CallHeader) fails in the same words with it.
func (t *Target) ExplainConnect(err error) error { return t.connectError(err) }
