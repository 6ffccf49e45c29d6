package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/telemetry"
)

// Tracing (Target.Tracer, docs/METRICS.md#traces): every request a Session sends, in any
// era, is one client span named after the OpenTelemetry MCP semantic conventions,
// "{mcp.method.name} {gen_ai.tool.name}" for tools/call and "{mcp.method.name}" for the
// others, its W3C trace context carried in the request's params._meta (traceparent,
// tracestate) so that the server's spans join it. The span's parent is the span of the
// request's context (the load generator's task span for a create); a request whose context
// carries a link (telemetry.WithLink: a poll of a task) links to it. Attributes are set
// only on a span that records (sampled): an unsampled request costs its span's ids and
// the trace context it carries, no attribute.
//
// With no Tracer nothing of this runs: do pays one nil check, the body is what it was.

// doTraced is do of request id under a client span of s's Target's Tracer; nameHdr and
// rr are do's (the Mcp-Name the caller has, the reader of the result).
func (s *Session) doTraced(ctx context.Context, id mcp.ID, method string, params []byte, nameHdr string, rr *mcp.ResultReader, h ServerHandler, cut Cut) (Reply, http.Header, error) {
	tool := ""
	if s.dialect().Op(method) == mcp.OpToolsCall {
		tool = stringMember(params, "name")
	}
	name := method
	if tool != "" {
		name += " " + tool
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	if l := telemetry.LinkOf(ctx); l.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: l}))
	}
	ctx, span := s.t.Tracer.Start(ctx, name, opts...)
	defer span.End()
	var members [128]byte
	rep, hdr, err := s.exchange(ctx, id, method, params, telemetry.AppendMeta(members[:0], span.SpanContext()), nameHdr, rr, h, cut)
	if span.IsRecording() {
		s.annotate(span, id, method, tool, rep, err)
	}
	return rep, hdr, err
}

// annotate sets the convention's attributes of a request's span from its reply, and the
// span's status: an error when error.type is set.
func (s *Session) annotate(span trace.Span, id mcp.ID, method, tool string, rep Reply, err error) {
	annotateSpan(span, s.dialect().Op(method), id, method, tool, s.version, s.id, rep, err)
}

// annotateSpan is annotate of a request of op in protocol version on session sessionID
// ("": none), for any requester.
func annotateSpan(span trace.Span, op mcp.Op, id mcp.ID, method, tool, version, sessionID string, rep Reply, err error) {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, attribute.String(telemetry.AttrMethod, method), attribute.String(telemetry.AttrRequestID, id.String()))
	if version != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrProtocol, version))
	}
	if sessionID != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrSessionID, sessionID))
	}
	if tool != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrToolName, tool))
	}
	if et := errorType(op, rep, err); et != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrErrorType, et))
		span.SetStatus(codes.Error, et) // the type only: an error's text may quote the target
	}
	span.SetAttributes(attrs...)
}

// errorType is error.type of a request's span: "" when it succeeded; the JSON-RPC error
// code of an error reply ("-32602"); "tool_error" for a tool's execution error (isError in
// a tools/call or tasks/result result, or in the result a 2026-07-28 tasks/get inlines);
// the HTTP status of a refusal ("429"); "cut" for the client's own fault (ErrCut);
// "protocol" for a reply that is no JSON-RPC reply; "timeout" when the request's context
// ended; "transport" for any other failure.
func errorType(op mcp.Op, rep Reply, err error) string {
	var he *HTTPError
	var pe *ProtocolError
	switch {
	case err == nil && rep.Err != nil:
		return strconv.Itoa(rep.Err.Code)
	case err == nil:
		if toolError(op, rep.Result) {
			return telemetry.ErrorTool
		}
		return ""
	case errors.Is(err, ErrCut):
		return "cut"
	case errors.Is(err, ErrSessionGone):
		return strconv.Itoa(http.StatusNotFound)
	case errors.As(err, &he):
		return strconv.Itoa(he.Status)
	case errors.As(err, &pe):
		return "protocol"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout"
	}
	return "transport"
}

// toolError reports whether a result of op carries a tool's execution error: isError true
// at its top (tools/call, tasks/result) or in the result it inlines (tasks/get, E50).
func toolError(op mcp.Op, result []byte) bool {
	switch op {
	case mcp.OpToolsCall, mcp.OpTasksResult:
		return isErrorMember(result)
	case mcp.OpTasksGet:
		inner := false
		mcp.EachMember(result, func(name, value []byte) bool {
			if string(name) == "result" {
				inner = isErrorMember(value)
				return false
			}
			return true
		})
		return inner
	}
	return false
}

// isErrorMember reports whether the JSON object b has isError: true.
func isErrorMember(b []byte) bool {
	is := false
	mcp.EachMember(b, func(name, value []byte) bool {
		if string(name) == "isError" {
			is = string(value) == "true"
			return false
		}
		return true
	})
	return is
}

// stringMember returns the string member name of the JSON object b; "" when it has none.
func stringMember(b []byte, name string) string {
	var s string
	mcp.EachMember(b, func(n, value []byte) bool {
		if string(n) == name {
			_ = json.Unmarshal(value, &s)
			return false
		}
		return true
	})
	return s
}

// appendTraceParams appends params (a JSON object; nil or empty for {}) with the trace
// context members in its _meta: added to the _meta it has, or in a _meta of their own (a
// _meta that is no object is left alone, the request untraced on the wire). A
// request of 2025-11-25 carries its trace context so; 2026-07-28's goes inside the
// envelope (appendWithMeta).
func appendTraceParams(dst, params, members []byte) ([]byte, error) {
	p := trimSpace(params)
	if len(p) == 0 {
		p = []byte(`{}`)
	}
	if p[0] != '{' || !mcp.Valid(p) {
		return dst, errors.New("client: params to trace are no JSON object")
	}
	at := -1 // the offset in p just inside the _meta object
	other := false
	mcp.EachMember(p, func(name, value []byte) bool {
		if string(name) != "_meta" {
			return true
		}
		if value[0] == '{' {
			at = cap(p) - cap(value) + 1 // value is a span of p
		} else {
			other = true
		}
		return false
	})
	switch {
	case other: // a _meta that is no object (null): left as it is, without the context
		return append(dst, p...), nil
	case at >= 0:
		dst = append(dst, p[:at]...)
		dst = append(dst, members...)
		if trimSpace(p[at:])[0] != '}' { // the _meta has members: ours go first
			dst = append(dst, ',')
		}
		return append(dst, p[at:]...), nil
	}
	dst = append(dst, p[:len(p)-1]...)
	if len(trimSpace(p[1:len(p)-1])) > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":{`...)
	dst = append(dst, members...)
	return append(dst, "}}"...), nil
}

// trimSpace is bytes.TrimSpace for JSON's whitespace.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
