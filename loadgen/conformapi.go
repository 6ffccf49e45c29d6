package loadgen

import (
	"context"
	"net/http"

	"github.com/tasksim/tasksim/internal/mcp"
)

// What the contract suite (package conform) needs of the client beyond a run's: requests
// on a session it did not open the usual way (none, a made-up one, an ended one), the
// reply's HTTP header, and the operator's words for a failed initialize. A run never uses
// these.

// Attach returns a Session over session id id (none when "") that sends version in
// MCP-Protocol-Version (none when ""), without initialize: for checks of the session rules
// (a request without a session id, or with one the server ended: H2, H8) and for an
// initialize of the caller's own making. Closing it sends DELETE with id.
func (t *Target) Attach(id, version string) *Session {
	s := &Session{t: t, id: id, version: version}
	s.postHdr = s.postHeader()
	return s
}

// CallHeader is Call, and also returns the reply's HTTP header (nil when no reply came).
func (s *Session) CallHeader(ctx context.Context, method string, params []byte, h ServerHandler) (Reply, http.Header, error) {
	return s.do(ctx, method, params, h, CutNone)
}

// Notify sends a notification (no id, no reply expected): the server answers 202 (H4).
func (s *Session) Notify(ctx context.Context, method string, params []byte) error {
	return s.post(ctx, mcp.AppendRequest(nil, mcp.ID{}, method, params))
}

// Version is the protocol version the session sends in MCP-Protocol-Version.
func (s *Session) Version() string { return s.version }

// ExplainConnect says why a Connect to t failed in an operator's terms, as a run's probe
// says it: the target cannot be reached, is not an MCP endpoint, refused the credentials
// (naming the headers sent, never their values), refused initialize, or answered a
// protocol version tasksim does not speak.
func (t *Target) ExplainConnect(err error) error { return t.connectError(err) }

// ClientCapabilities are the capabilities tasksim's clients declare: form-mode
// elicitation, which they answer (the input_required flow).
func ClientCapabilities() mcp.ClientCapabilities { return clientCaps }
