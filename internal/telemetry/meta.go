package telemetry

import (
	"context"
	"encoding/hex"
	"strconv"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Attribute names of the OpenTelemetry MCP semantic conventions, and tasksim's own.
const (
	AttrMethod      = "mcp.method.name"
	AttrProtocol    = "mcp.protocol.version"
	AttrRequestID   = "jsonrpc.request.id"
	AttrSessionID   = "mcp.session.id"
	AttrErrorType   = "error.type"
	AttrToolName    = "gen_ai.tool.name"
	AttrTaskID      = "mcp.task.id"
	AttrTaskStatus  = "mcp.task.status"
	AttrTaskOutcome = "tasksim.task.outcome" // the load generator's outcome of the task (docs/METRICS.md#traces)

	// ErrorTool is error.type of a result that is a tool's execution error (isError: true).
	ErrorTool = "tool_error"
)

// Members of a W3C trace context as _meta carries them.
const (
	keyTraceparent = "traceparent"
	keyTracestate  = "tracestate"
)

// AppendMeta appends the members of sc's W3C trace context, as they go inside a _meta
// object: "traceparent":"00-TRACEID-SPANID-FLAGS" and, when sc has one,
// ,"tracestate":"...". Nothing for an invalid sc. A tracestate value may hold a quote or a
// backslash (W3C allows both), so it is written as a JSON string (strconv.AppendQuote on
// printable ASCII, which W3C requires, is JSON's own escaping; any other tracestate is left
// out rather than written in Go's escapes, which are not all JSON's).
func AppendMeta(dst []byte, sc trace.SpanContext) []byte {
	if !sc.IsValid() {
		return dst
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	dst = append(dst, `"traceparent":"00-`...)
	dst = hex.AppendEncode(dst, tid[:])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, sid[:])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, []byte{byte(sc.TraceFlags())})
	dst = append(dst, '"')
	if ts := sc.TraceState().String(); ts != "" && printableASCII(ts) {
		dst = append(dst, `,"tracestate":`...)
		dst = strconv.AppendQuote(dst, ts)
	}
	return dst
}

// printableASCII reports whether s is made of printable ASCII alone (0x20 to 0x7e).
func printableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Remote returns the span context a request's _meta carries (its traceparent and
// tracestate values, as strings), marked remote; invalid when traceparent does not parse
// (W3C Trace Context, by the SDK's own propagator).
func Remote(traceparent, tracestate string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	c := propagation.MapCarrier{keyTraceparent: traceparent}
	if tracestate != "" {
		c[keyTracestate] = tracestate
	}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), c))
}

// IsTraceMember reports whether a _meta member's name is one of the trace context's.
func IsTraceMember(name []byte) (traceparent, tracestate bool) {
	return string(name) == keyTraceparent, string(name) == keyTracestate
}

// linkKey is the context key of the span a request's span links to (WithLink).
type linkKey struct{}

// WithLink returns ctx carrying sc as the span the spans of its requests link to: the
// load generator's task span, linked from each poll (docs/METRICS.md#traces).
func WithLink(ctx context.Context, sc trace.SpanContext) context.Context {
	return context.WithValue(ctx, linkKey{}, sc)
}

// LinkOf returns the span context WithLink put in ctx; invalid when none.
func LinkOf(ctx context.Context) trace.SpanContext {
	sc, _ := ctx.Value(linkKey{}).(trace.SpanContext)
	return sc
}
