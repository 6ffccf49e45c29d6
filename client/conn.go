package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Target is an MCP endpoint and how to reach it. One Target, and so one http.Transport, is
// shared by every virtual client of a run.
type Target struct {
	// URL is the Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp.
	URL string
	// Header is added to every request (e.g. Authorization). Values are never logged.
	Header http.Header
	// Client carries the requests; see NewHTTPClient.
	Client *http.Client
	// Dialect speaks the wire protocol; V20251125 when nil.
	Dialect mcp.Dialect
	// ClientInfo is sent in initialize, and in the _meta of modern requests (E2).
	ClientInfo mcp.Implementation
	// Protocol pins the era tasksim speaks with the target: ProtocolAuto ("") detects it
	// (Era, docs/RULES.md#e32), ProtocolLegacy (2025-11-25) and ProtocolModern (2026-07-28)
	// skip the detection. A run's virtual clients speak the era the probe describes
	// (ProbeWith, then DialerFor), which is the pinned one when it is pinned.
	Protocol string
	// Dialer, when set, opens a run's virtual clients' connections in an era this package
	// does not implement (DialerFor): the era is then the Dialer's, whatever the manifest
	// says. nil: the manifest's era, 2025-11-25 or 2026-07-28.
	Dialer Dialer
	// Tracer, when set, makes every request a client span, its trace context carried in
	// params._meta (trace.go, docs/METRICS.md#traces); nil = no span, no trace context: the
	// requests are what they would be without tracing.
	Tracer trace.Tracer

	u   *url.URL  // URL parsed, filled in by CacheEndpoint for a run; nil = parse per request
	era *eraCache // the era found (Era); nil until the first detection
	// base holds the rendered shared header fields of the POSTs (headBase), by Target: a
	// copy of t (a tenant's, with its own token) shares the map, never the entry. Made by
	// CacheEndpoint; nil: POSTs render their header maps.
	base *sync.Map
}

// NewHTTPClient returns a client whose keep-alive pool holds up to conns idle connections,
// so that thousands of virtual clients reuse connections instead of piling up TIME_WAIT
// sockets (conns <= 0 keeps no idle http:// connection, and net/http's default of two a
// host for https://). A virtual client may hold a blocking tasks/result stream and a
// poll at once, so size conns at twice the number of clients.
//
// http:// targets go through a lean HTTP/1.1 transport that runs each request in the
// caller's goroutine (h1.go: no goroutines per connection, a few allocations per request);
// https:// targets go through net/http's Transport with the same pool size. Neither uses a
// proxy or compression: load goes straight to the target, byte for byte.
func NewHTTPClient(conns int) *http.Client {
	return NewHTTPClientWith(ClientOptions{IdleConns: conns})
}

// ClientOptions configure the HTTP client of NewHTTPClientWith.
type ClientOptions struct {
	// IdleConns is the size of the keep-alive pool (NewHTTPClient's conns).
	IdleConns int
	// SourceAddrs are the local addresses connections are dialed from, each dial taking the
	// next, round robin (source.go); nil = the system's choice. Check them against the
	// target with CheckSourceAddrs first: a dial from an address that cannot reach the
	// target fails.
	SourceAddrs []netip.Addr
	// TLS configures https:// connections (TLSOptions.Config); nil = Go's defaults.
	TLS *tls.Config
}

// NewHTTPClientWith is NewHTTPClient with the options o.
func NewHTTPClientWith(o ClientOptions) *http.Client {
	conns := o.IdleConns
	src := newSourceAddrs(o.SourceAddrs)
	plain := newH1Transport(conns)
	plain.sources = src
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	st := &schemeTransport{plain: plain}
	st.other = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return src.dialer(dialer).DialContext(ctx, network, addr)
		},
		TLSClientConfig:     st.watchCertRequests(o.TLS),
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: st}
}

// send sends one request. A plain client (no cookie jar, no overall timeout: what
// NewHTTPClient returns) hands it straight to its transport: http.Client.Do would only add
// redirect bookkeeping (a header copy per request), and MCP endpoints do not redirect POSTs.
// A request with a reply deadline (ReplyBy) that the transport does not enforce itself gets
// it as a context deadline, released when its body is closed.
func (t *Target) send(req *http.Request) (*http.Response, error) {
	c := t.Client
	rt := c.Transport
	direct := rt != nil && c.Jar == nil && c.Timeout == 0 && c.CheckRedirect == nil
	if at, ok := replyDeadline(req.Context()); ok && !(direct && enforcesReplyBy(rt, req)) {
		req, cancel := withReplyDeadline(req, at)
		resp, err := sendOn(c, direct, req)
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	return sendOn(c, direct, req)
}

// sendOn sends req with c: straight through its transport when direct (send), else by Do.
func sendOn(c *http.Client, direct bool, req *http.Request) (*http.Response, error) {
	if direct {
		resp, err := c.Transport.RoundTrip(req)
		if err != nil {
			if cerr := requestErr(req.Context()); cerr != nil {
				err = cerr // as Do reports a cancelled or expired request
			}
		}
		return resp, err
	}
	// Do may write the request's header (cookies from a Jar): give it a copy, since a
	// session's POSTs share theirs.
	r := *req
	r.Header = req.Header.Clone()
	return c.Do(&r)
}

// DialectInUse is the dialect t's requests are spelled in: Dialect, or V20251125 when nil.
// loadgen's engine spells its virtual clients' requests with it.
func (t *Target) DialectInUse() mcp.Dialect { return t.dialect() }

func (t *Target) dialect() mcp.Dialect {
	if t.Dialect == nil {
		return mcp.V20251125{}
	}
	return t.Dialect
}

// Errors of one request, classified so that the engine can count them without strings.
var (
	// ErrSessionGone is a 404 on a request with a session id: the server ended the session
	// and the client must initialize again (H8).
	ErrSessionGone = errors.New("session not found (HTTP 404): re-initialize")
)

// HTTPError is a non-2xx reply other than a session 404.
type HTTPError struct {
	Status      int
	RetryAfter  time.Duration // from Retry-After on 429 and 503; 0 when absent
	ContentType string        // of the body; "" when none was given
	// Body holds the first bytes of the body as sent, for the secret detector; Error shows
	// only what reads as a message (a JSON-RPC error's, or a line of plain text), never an
	// HTML page.
	Body string
}

// Error says the status and, where the body holds one, the server's message:
// "HTTP 400 Bad Request: JSON-RPC error -32600: Bad Request: Mcp-Session-Id header is
// required", "HTTP 502 Bad Gateway (an HTML page)".
func (e *HTTPError) Error() string {
	msg := "HTTP " + strconv.Itoa(e.Status)
	if text := http.StatusText(e.Status); text != "" {
		msg += " " + text
	}
	if b := bodyMessage(e.ContentType, e.Body); b != "" {
		msg += b
	}
	return msg
}

// bodyMessage is what an error body says, for a message: ": " and the message of a
// JSON-RPC error or the first line of plain text (at most maxMessage bytes), " (an
// HTML page)" for HTML, "" for an empty body or anything else.
func bodyMessage(contentType, body string) string {
	switch mt := mediaType(contentType); {
	case body == "":
		return ""
	case mt == "text/html" || mt == "application/xhtml+xml" || strings.HasPrefix(strings.TrimSpace(body), "<"):
		return " (an HTML page)"
	case mt == "application/json" || mt == "text/event-stream":
		if _, data, ok := strings.Cut(body, "data:"); ok && mt == "text/event-stream" {
			body, _, _ = strings.Cut(strings.TrimSpace(data), "\n")
		}
		if msg, perr := mcp.Decode([]byte(body)); perr == nil && msg.Error != nil {
			return ": JSON-RPC error " + strconv.Itoa(msg.Error.Code) + ": " + OneLine(msg.Error.Message, maxMessage)
		}
		return ""
	case mt == "" || mt == "text/plain":
		line, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
		return ": " + OneLine(line, maxMessage)
	}
	return ""
}

// TransportError is a failure below HTTP: refused, reset, timed out, or a reply that could
// not be read.
type TransportError struct {
	Op  string
	Err error
	// Answered says the server had answered (HTTP 200, a stream begun) before the exchange
	// broke: the reply, not the request, was lost.
	Answered bool
}

func (e *TransportError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

// ProtocolError is a reply that is not valid JSON-RPC or MCP.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "protocol error: " + e.Msg }

// VersionError is an initialize answered with a protocol version tasksim does not speak.
type VersionError struct{ Version string }

func (e *VersionError) Error() string {
	return fmt.Sprintf("the server answered protocol version %q, which tasksim does not speak", e.Version)
}

// Reply is the answer to one request: a result or a JSON-RPC error.
type Reply struct {
	Result json.RawMessage
	Err    *mcp.Error
	// Status is the HTTP status of a JSON-RPC error that came with one other than 200: in
	// 2026-07-28 a -32602 or -32601 is refused with 400 or 404 (E27); 0 means 200.
	Status int
}

// ServerHandler receives what the server sends on a reply stream besides the reply itself:
// server requests (elicitation/create) and notifications. Either method may be nil-safe.
type ServerHandler interface {
	// Request answers a server request; the returned result (or error) is POSTed back.
	Request(msg *mcp.Message) (result []byte, rpcErr *mcp.Error)
	// Notify sees a notification (e.g. notifications/tasks/status).
	Notify(msg *mcp.Message)
}

// Session is one MCP session over Streamable HTTP (H1-H4, H8, H9). It is used by one
// virtual client at a time for its requests; a blocking tasks/result may run beside them.
type Session struct {
	t       *Target
	id      string // Mcp-Session-Id; "" when the server uses none
	version string
	// env is the envelope of the requests of 2026-07-28 (modern.go): a Session with one is
	// no session but a stateless requester, opened without a request (Target.Stateless).
	env     *Envelope
	lastHdr atomic.Pointer[modernHeaders] // the latest request's header (modernHeader)
	init    *mcp.InitializeResult         // nil for a virtual client's session (connect)
	// postHdr is the header of every POST once the session is open, shared by them (a
	// RoundTripper does not modify a request); nil until then.
	postHdr http.Header
	// fields are the rendered shared header fields of its POSTs (Target.headBase), looked up
	// once when the session opens: a slice of the Target's rendering, shared; nil: the
	// POSTs take the header map's path (headfields.go).
	fields []byte
	nextID atomic.Int64
	retry  atomic.Int64 // the latest SSE retry field, in ms; 0 = none seen (H5)
}

// Version is the protocol version the session sends in MCP-Protocol-Version.
func (s *Session) Version() string { return s.version }

// Retry is the reconnection delay the server asked for in the latest SSE retry field it
// sent on this session; 0 when it sent none.
func (s *Session) Retry() time.Duration { return time.Duration(s.retry.Load()) * time.Millisecond }

// Cut is a fault injected by the client into its own transport: the connection is
// dropped at a chosen point of one exchange, as a network failure would drop it. The server
// keeps whatever it did with the request.
type Cut uint8

// Cuts.
const (
	CutNone Cut = iota
	// CutReply sends the request and drops the connection without reading the reply (fault
	// points 1 and 5): the server processed the request, the client never learns how.
	CutReply
	// CutStream drops an SSE reply stream after its first event, before the response (fault
	// point 3). A reply that is not a stream is read normally.
	CutStream
	// CutBeforeAnswer drops the stream when a server request (elicitation/create) arrives on
	// it, before it is answered (fault point 4).
	CutBeforeAnswer
	// CutAfterAnswer answers the server request, then drops the stream (fault point 4).
	CutAfterAnswer
)

// ErrCut is the error of an exchange cut by the client's own fault injection (Cut); it comes
// wrapped in a *TransportError, since that is what the client saw.
var ErrCut = errors.New("connection cut (injected fault)")

// Init is what initialize told the client: nil for the sessions of a run's virtual clients,
// which keep only the negotiated version (ten thousand copies of serverInfo and the
// capabilities would be that many more objects for every garbage collection to mark).
func (s *Session) Init() *mcp.InitializeResult { return s.init }

// ID returns the session id ("" if the server issued none).
func (s *Session) ID() string { return s.id }

// Connect opens a session: initialize, then notifications/initialized (H1). It fails if the
// server answers with a protocol version this client cannot speak.
func (t *Target) Connect(ctx context.Context, caps mcp.ClientCapabilities) (*Session, error) {
	return t.connect(ctx, caps, true)
}

// ConnectLean is Connect without keeping the InitializeResult (Init returns nil): a run's
// virtual clients open sessions by the thousand and never read it, so they do not hold it.
func (t *Target) ConnectLean(ctx context.Context, caps mcp.ClientCapabilities) (*Session, error) {
	return t.connect(ctx, caps, false)
}

// connect is Connect; keepInit says whether the session keeps the InitializeResult.
func (t *Target) connect(ctx context.Context, caps mcp.ClientCapabilities, keepInit bool) (*Session, error) {
	s := &Session{t: t}
	params, err := json.Marshal(mcp.InitializeParams{
		ProtocolVersion: t.dialect().Version(),
		Capabilities:    caps,
		ClientInfo:      t.ClientInfo,
	})
	if err != nil {
		return nil, err
	}
	rep, hdr, err := s.do(ctx, t.dialect().Method(mcp.OpInitialize), params, "", nil, nil, CutNone)
	if err != nil {
		return nil, err
	}
	if rep.Err != nil {
		return nil, fmt.Errorf("initialize: %w", rep.Err)
	}
	init := new(mcp.InitializeResult)
	if err := json.Unmarshal(rep.Result, init); err != nil {
		return nil, &ProtocolError{Msg: "initialize result: " + err.Error()}
	}
	if !mcp.SessionVersion(init.ProtocolVersion) {
		return nil, &VersionError{Version: init.ProtocolVersion}
	}
	s.id = hdr.Get("Mcp-Session-Id")
	s.version = mcp.InternVersion(init.ProtocolVersion)
	if keepInit {
		s.init = init
	}
	s.postHdr = s.postHeader()
	s.fields = t.headBase(s.version)
	if err := s.post(ctx, mcp.AppendRequest(nil, mcp.ID{}, t.dialect().Method(mcp.OpInitialized), nil)); err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	return s, nil
}

// Call sends one request and waits for its reply, whether it comes as application/json or
// as an SSE stream (H4); h sees server requests and notifications met on the stream.
func (s *Session) Call(ctx context.Context, method string, params []byte, h ServerHandler) (Reply, error) {
	rep, _, err := s.do(ctx, method, params, "", nil, h, CutNone)
	return rep, err
}

// CallOp is Call of op, spelled by the session's dialect: V20260728 for the requester of
// 2026-07-28, the Target's (V20251125 by default) for a session. An op the era does not have
// is an error, and nothing is sent.
func (s *Session) CallOp(ctx context.Context, op mcp.Op, params []byte, h ServerHandler) (Reply, error) {
	return s.CallOpCut(ctx, op, params, h, CutNone)
}

// CallOpCut is CallOp with a fault injected at the point cut names (CallCut).
func (s *Session) CallOpCut(ctx context.Context, op mcp.Op, params []byte, h ServerHandler, cut Cut) (Reply, error) {
	method := s.dialect().Method(op)
	if method == "" {
		return Reply{}, fmt.Errorf("client: %s has no method in protocol %s", op, s.dialect().Version())
	}
	rep, _, err := s.do(ctx, method, params, "", nil, h, cut)
	return rep, err
}

// callTask is CallOpCut of a request about the task ref whose params are ref's own
// ({"taskId": ...}: tasks/get, tasks/cancel). In 2026-07-28 its Mcp-Name is ref's
// (TaskRef.name), not read back out of params: that was about 1,800 instructions of every
// poll. rr, when not nil, reads the result of a JSON reply in the pass that decodes it
// (mcp.DecodeReply); rr.Read false: the caller parses Reply.Result.
func (s *Session) callTask(ctx context.Context, op mcp.Op, ref TaskRef, rr *mcp.ResultReader, cut Cut) (Reply, error) {
	method := s.dialect().Method(op)
	if method == "" {
		return Reply{}, fmt.Errorf("client: %s has no method in protocol %s", op, s.dialect().Version())
	}
	name := ""
	if s.env != nil && mcp.NameParam(method) == "taskId" {
		name = ref.name()
	}
	rep, _, err := s.do(ctx, method, ref.Params(), name, rr, nil, cut)
	return rep, err
}

// dialect is the dialect of s's requests: V20260728 for a requester of 2026-07-28
// (stateless), else its Target's.
func (s *Session) dialect() mcp.Dialect {
	if s.env != nil {
		return mcp.V20260728{}
	}
	return s.t.dialect()
}

// CallCut is Call with a fault injected at the point cut names. It returns an error
// wrapping ErrCut when the cut happened; a cut whose point never came (CutStream on a JSON
// reply, CutBeforeAnswer on a stream without a server request) leaves the call whole.
func (s *Session) CallCut(ctx context.Context, method string, params []byte, h ServerHandler, cut Cut) (Reply, error) {
	rep, _, err := s.do(ctx, method, params, "", nil, h, cut)
	return rep, err
}

// Close ends the session with DELETE (H9). A 405 (the server does not let clients end
// sessions) or 404 (already gone) is not an error.
func (s *Session) Close(ctx context.Context) error {
	if s.id == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.t.URL, nil)
	if err != nil {
		return err
	}
	s.header(req)
	resp, err := s.t.send(req)
	if err != nil {
		return &TransportError{Op: "DELETE", Err: err}
	}
	drain(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent, http.StatusMethodNotAllowed, http.StatusNotFound:
		return nil
	}
	return &HTTPError{Status: resp.StatusCode}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (s *Session) header(req *http.Request) {
	h := req.Header
	for k, v := range s.t.Header {
		h[k] = v
	}
	h["Accept"] = acceptBoth
	if s.id != "" {
		h["Mcp-Session-Id"] = []string{s.id}
	}
	if s.version != "" {
		h["Mcp-Protocol-Version"] = []string{s.version}
	}
}

var (
	acceptBoth  = []string{"application/json, text/event-stream"}
	contentJSON = []string{"application/json"}
)

// newPost builds a POST of body to the endpoint: what http.NewRequestWithContext builds,
// on the endpoint parsed once (endpoint) and with the session's shared header.
func (s *Session) newPost(ctx context.Context, body []byte) (*http.Request, error) {
	hdr := s.postHdr
	if hdr == nil {
		hdr = s.postHeader()
	}
	return s.newPostWith(ctx, body, hdr)
}

// newPostWith is newPost with the header hdr.
func (s *Session) newPostWith(ctx context.Context, body []byte, hdr http.Header) (*http.Request, error) {
	u, err := s.t.endpoint()
	if err != nil {
		return nil, err
	}
	req := http.Request{
		Method:        http.MethodPost,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hdr,
		ContentLength: int64(len(body)),
		Host:          u.Host,
	}
	pb := &postBody{body: body}
	pb.Reset(body)
	// GetBody as NewRequest sets it: net/http may then send again a request of which nothing
	// was written on a reused connection.
	req.Body, req.GetBody = pb, pb.again
	return req.WithContext(ctx), nil
}

// postBody is a POST's body: a reader of its bytes whose Close does nothing, and the maker
// of a fresh one for GetBody (a method value): two allocations where io.NopCloser,
// bytes.NewReader and a closure were three.
type postBody struct {
	bytes.Reader
	body []byte
}

// Close implements io.Closer: there is nothing to release.
func (*postBody) Close() error { return nil }

// again is GetBody: a new reader of the same bytes.
func (p *postBody) again() (io.ReadCloser, error) {
	n := &postBody{body: p.body}
	n.Reset(p.body)
	return n, nil
}

// postHeader is the header of a POST on s as it stands.
func (s *Session) postHeader() http.Header {
	h := make(http.Header, len(s.t.Header)+4)
	s.header(&http.Request{Header: h})
	h["Content-Type"] = contentJSON
	return h
}

// endpoint returns t.URL parsed as http.NewRequest parses it: the copy New parsed once for
// the run (parsing it for every request was a tenth of the client's allocations), else a
// fresh one. Requests share the *url.URL, which nothing modifies (a RoundTripper must not).
func (t *Target) endpoint() (*url.URL, error) {
	if t.u != nil {
		return t.u, nil
	}
	return parseEndpoint(t.URL)
}

// CacheEndpoint parses URL once, so that every request of a run reuses it instead of
// parsing it again; a URL that does not parse still fails on every request. loadgen calls it
// before a run, while nothing else uses t: it is not safe while requests are under way.
func (t *Target) CacheEndpoint() {
	if t.u == nil {
		t.u, _ = parseEndpoint(t.URL) // an unparsable URL fails on every request, as before
	}
	if t.base == nil {
		t.base = new(sync.Map)
	}
}

// parseEndpoint parses raw as http.NewRequest does, an empty port dropped.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err == nil && strings.HasSuffix(u.Host, ":") && strings.LastIndexByte(u.Host, ':') > strings.LastIndexByte(u.Host, ']') {
		u.Host = strings.TrimSuffix(u.Host, ":") // "host:" and "[::1]:" mean the default port
	}
	return u, err
}

// post sends a notification or a response: the server answers 202 (H4).
func (s *Session) post(ctx context.Context, body []byte) error {
	req, err := s.newPost(ctx, body)
	if err != nil {
		return err
	}
	resp, err := s.t.send(req)
	if err != nil {
		return &TransportError{Op: "POST", Err: err}
	}
	defer drain(resp.Body)
	if resp.StatusCode/100 != 2 {
		return statusError(resp, s.id != "")
	}
	return nil
}

// do sends one request and reads its reply: under a client span when the Target has a
// Tracer (doTraced, trace.go), else as it is. A request about a task (callTask) may say
// its Mcp-Name in 2026-07-28 (name; "": read from params) and bring the reader of its
// result (rr; nil: none).
func (s *Session) do(ctx context.Context, method string, params []byte, name string, rr *mcp.ResultReader, h ServerHandler, cut Cut) (Reply, http.Header, error) {
	id := mcp.IntID(s.nextID.Add(1))
	if s.t.Tracer != nil {
		return s.doTraced(ctx, id, method, params, name, rr, h, cut)
	}
	return s.exchange(ctx, id, method, params, nil, name, rr, h, cut)
}

// exchange is do of request id, its params' _meta carrying the trace context members
// (telemetry.AppendMeta; nil = none).
func (s *Session) exchange(ctx context.Context, id mcp.ID, method string, params, members []byte, name string, rr *mcp.ResultReader, h ServerHandler, cut Cut) (Reply, http.Header, error) {
	if len(members) > 0 && s.env == nil { // 2025-11-25: in the params' own _meta
		var err error
		if params, err = appendTraceParams(nil, params, members); err != nil {
			return Reply{}, nil, fmt.Errorf("%s params: %w", method, err)
		}
	}
	bp, fp := bufPool.Get().(*[]byte), bufPool.Get().(*[]byte) // the body, the rendered fields
	defer bufPool.Put(fp)
	defer bufPool.Put(bp)
	body, req, lp, err := s.build(ctx, (*bp)[:0], (*fp)[:0], id, method, params, members, name)
	if err != nil {
		return Reply{}, nil, err
	}
	var resp *http.Response
	if lp.t != nil {
		resp, err = lp.send(req)
		*fp = lp.fields[:0]
	} else {
		resp, err = s.t.send(req)
	}
	*bp = body[:0]
	if err != nil {
		return Reply{}, nil, &TransportError{Op: method, Err: err}
	}
	if cut == CutReply {
		resp.Body.Close() // unread: the connection is dropped, not returned to the pool
		return Reply{}, resp.Header, &TransportError{Op: method, Err: ErrCut}
	}
	return s.readReply(ctx, resp, id, method, h, cut, rr)
}

// build builds the POST of request id on s: its body appended to dst, and, when it goes
// through the lean transport (leanFields), its fields rendered, appended to fdst (lp.t nil:
// the request's header map says them).
func (s *Session) build(ctx context.Context, dst, fdst []byte, id mcp.ID, method string, params, members []byte, name string) (body []byte, req *http.Request, lp leanPost, err error) {
	if s.env == nil {
		body = mcp.AppendRequest(dst, id, method, params)
		lp = s.leanFields(fdst, "", "")
		req, err = s.newPost(ctx, body)
		return body, req, lp, err
	}
	if body, err = s.modernBody(dst, id, method, params, members); err != nil {
		return dst, nil, lp, err
	}
	if s.postHdr != nil && s.leanTransport() != nil && name == "" {
		if name, err = mcp.NameHeader(method, params); err != nil {
			return body, nil, lp, err // as modernHeader fails
		}
	}
	if lp = s.leanFields(fdst, method, name); lp.t != nil {
		req, err = s.newPostWith(ctx, body, s.postHdr) // Mcp-Method and Mcp-Name are in the fields
		return body, req, lp, err
	}
	hdr, err := s.modernHeader(method, params, name)
	if err != nil {
		return body, nil, lp, err
	}
	req, err = s.newPostWith(ctx, body, hdr)
	return body, req, lp, err
}

// leanFields returns the POST of s's lean path: the lean transport and the fields of a
// POST of method (a request of 2026-07-28: method and its Mcp-Name name; "" for 2025-11-25)
// rendered, appended to dst. lp.t is nil when the POST takes the header map's path: s not
// open yet (no postHdr), another transport, or a value that does not render.
func (s *Session) leanFields(dst []byte, method, name string) (lp leanPost) {
	if s.postHdr == nil {
		return lp
	}
	t := s.leanTransport()
	if t == nil {
		return lp
	}
	fields, ok := s.headFields(dst, method, name)
	if !ok {
		return lp
	}
	return leanPost{t: t, fields: fields}
}

// readReply reads the reply to request id, then drains or drops the body: a status other
// than 200 is an error (statusError), a JSON or SSE body the reply (H4). The modern era's
// requests (modern.go) read theirs with it too, on a Session of no session. rr, when not
// nil, reads the result of a JSON reply (readJSON).
func (s *Session) readReply(ctx context.Context, resp *http.Response, id mcp.ID, method string, h ServerHandler, cut Cut, rr *mcp.ResultReader) (Reply, http.Header, error) {
	if resp.StatusCode != http.StatusOK {
		defer drain(resp.Body)
		err := statusError(resp, s.id != "" && s.dialect().Op(method) != mcp.OpInitialize)
		if s.env != nil {
			if rep, ok := modernRefusal(err); ok {
				return rep, resp.Header, nil
			}
		}
		return Reply{}, resp.Header, err
	}
	ct := firstValue(resp.Header["Content-Type"]) // Get's answer: both transports canonicalise
	mt := mediaType(ct)
	if mt == "text/event-stream" {
		rep, err := s.readStream(ctx, resp.Body, id, method, h, cut)
		if err != nil {
			resp.Body.Close() // a failed or cut stream is dropped, never drained: it may last long
		} else {
			drain(resp.Body)
		}
		return rep, resp.Header, err
	}
	defer drain(resp.Body)
	if mt == "text/html" || mt == "application/xhtml+xml" {
		return Reply{}, resp.Header, &ProtocolError{Msg: method + " reply is an HTML page (" + mt + "), not JSON-RPC"}
	}
	rep, err := readJSON(resp.Body, id, method, rr)
	if err != nil && ct != "" && mt != "application/json" {
		err = withContentType(err, ct)
	}
	return rep, resp.Header, err
}

// withContentType adds a reply's Content-Type to the message of a protocol error: a
// reply that is not JSON-RPC is often one that was not meant as JSON at all.
func withContentType(err error, ct string) error {
	var pe *ProtocolError // escapes: declared only on this failure path
	if errors.As(err, &pe) {
		pe.Msg += " (the reply's Content-Type is " + OneLine(ct, 80) + ")"
	}
	return err
}

// firstValue is the first of a header's values, "" when there is none.
func firstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// mediaType returns a Content-Type's media type, lower case, without parameters.
func mediaType(ct string) string {
	if ct == "application/json" || ct == "text/event-stream" { // what replies carry
		return ct
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(strings.ToLower(mt))
}

// maxReply bounds a reply body the client will read.
const maxReply = 16 << 20

// readJSON reads a JSON reply to request id; rr, when not nil, reads its result in the
// same pass (mcp.DecodeReply).
func readJSON(body io.Reader, id mcp.ID, method string, rr *mcp.ResultReader) (Reply, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b, err := readAll((*bp)[:0], body, maxReply+1)
	if cap(b) <= 64<<10 {
		*bp = b[:0] // a buffer grown for a large reply is not kept in the pool
	}
	if err != nil {
		return Reply{}, &TransportError{Op: method + " (reading reply)", Err: err}
	}
	if len(b) > maxReply {
		return Reply{}, &ProtocolError{Msg: fmt.Sprintf("%s reply larger than the reply bound (%d MiB)", method, maxReply>>20)}
	}
	msg, perr := mcp.DecodeReply(b, rr)
	if perr != nil {
		return Reply{}, &ProtocolError{Msg: method + " reply: " + perr.Message}
	}
	return replyOf(&msg, id, method)
}

func replyOf(msg *mcp.Message, id mcp.ID, method string) (Reply, error) {
	switch msg.Kind {
	case mcp.KindResult, mcp.KindError:
		if msg.ID != id && !(msg.Kind == mcp.KindError && msg.ID.IsZero()) {
			return Reply{}, &ProtocolError{Msg: fmt.Sprintf("%s reply has id %s, want %s", method, msg.ID, id)}
		}
		return Reply{Result: msg.Result, Err: msg.Error}, nil
	}
	return Reply{}, &ProtocolError{Msg: method + " reply is not a response"}
}

// readStream reads an SSE reply stream (sse.go) until the response to id: priming events
// are skipped (H5), server requests are answered by a separate POST, notifications are
// handed to h. The stream's retry field, wherever it comes, is kept for reconnections.
func (s *Session) readStream(ctx context.Context, body io.Reader, id mcp.ID, method string, h ServerHandler, cut Cut) (Reply, error) {
	sr := getSSEReader(body)
	defer putSSEReader(sr)
	events := 0
	cutErr := func() error { return &TransportError{Op: method + " (SSE stream)", Err: ErrCut} }
	for {
		data, err := sr.next()
		if sr.retry >= 0 {
			s.retry.Store(sr.retry) // H5: the delay the server wants before a reconnection
		}
		switch {
		case errors.Is(err, errSSETooLong):
			return Reply{}, &ProtocolError{Msg: fmt.Sprintf("%s: SSE event larger than the reply bound (%d MiB)", method, maxReply>>20)}
		case err != nil:
			return Reply{}, &TransportError{Op: method + " (SSE stream ended before the reply)", Err: eofAsUnexpected(err), Answered: true}
		}
		if events++; cut == CutStream && events == 1 {
			return Reply{}, cutErr()
		}
		if len(data) == 0 {
			continue // a priming event (H5): an id, perhaps a retry, and empty data
		}
		msg, perr := mcp.Decode(data)
		if perr != nil {
			return Reply{}, &ProtocolError{Msg: method + " SSE data: " + perr.Message}
		}
		switch msg.Kind {
		case mcp.KindResult, mcp.KindError:
			if msg.ID == id || (msg.Kind == mcp.KindError && msg.ID.IsZero()) { // as replyOf reads a JSON body
				return replyOf(&msg, id, method)
			}
		case mcp.KindRequest:
			if cut == CutBeforeAnswer {
				return Reply{}, cutErr()
			}
			s.answer(ctx, &msg, h)
			if cut == CutAfterAnswer {
				return Reply{}, cutErr()
			}
		case mcp.KindNotification:
			if h != nil {
				h.Notify(&msg)
			}
		}
	}
}

// sseReaders keeps readers of finished streams, their buffers with them.
var sseReaders = sync.Pool{New: func() any { return newSSEReader(bufio.NewReaderSize(nil, 4096), maxReply) }}

func getSSEReader(body io.Reader) *sseReader {
	sr := sseReaders.Get().(*sseReader)
	sr.r.Reset(body)
	return sr
}

// putSSEReader returns sr to the pool, without the buffers a large event grew: a run that
// met one 16 MiB result must not keep 16 MiB per pooled reader.
func putSSEReader(sr *sseReader) {
	const keep = 64 << 10
	trim := func(b []byte) []byte {
		if cap(b) > keep {
			return nil
		}
		return b[:0]
	}
	sr.r.Reset(nil)
	*sr = sseReader{r: sr.r, limit: sr.limit, line: trim(sr.line), data: trim(sr.data), event: trim(sr.event), retry: -1}
	sseReaders.Put(sr)
}

// answer POSTs the reply to a server request seen on a stream. Without a handler the
// request is refused with -32601 so that the server is not left waiting.
func (s *Session) answer(ctx context.Context, msg *mcp.Message, h ServerHandler) {
	var body []byte
	if h == nil {
		body = mcp.AppendError(nil, msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "tasksim client does not handle %s here", msg.Method))
	} else if res, e := h.Request(msg); e != nil {
		body = mcp.AppendError(nil, msg.ID, e)
	} else {
		body = mcp.AppendResult(nil, msg.ID, res)
	}
	_ = s.post(ctx, body) // a lost answer shows up as a task stuck in input_required
}

func statusError(resp *http.Response, withSession bool) error {
	if resp.StatusCode == http.StatusNotFound && withSession {
		return ErrSessionGone
	}
	e := &HTTPError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		} else if at, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = max(0, time.Until(at))
		}
	}
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:min(cap(*bp), 1024)] // 512 bytes or more: a message, and what the secret detector scans
	n, _ := io.ReadFull(resp.Body, b)
	e.Body = strings.TrimSpace(string(b[:n]))
	bufPool.Put(bp)
	return e
}

func eofAsUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readAll appends body to b until EOF, reading at most limit bytes (what is beyond is
// left unread). It is io.ReadAll into a reused buffer.
func readAll(b []byte, body io.Reader, limit int) ([]byte, error) {
	for len(b) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
		n, err := body.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// drain reads what is left of a body (at most 64 KiB) so the connection returns to the
// pool.
func drain(body io.ReadCloser) {
	bp := bufPool.Get().(*[]byte)
	buf := (*bp)[:cap(*bp)]
	for left := 64 << 10; left > 0; {
		n, err := body.Read(buf[:min(len(buf), left)])
		left -= n
		if err != nil {
			break
		}
	}
	bufPool.Put(bp)
	body.Close()
}
