package mockserver

import (
	"bytes"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/telemetry"
)

// Server spans (Config.Tracer, `tasksim serve --otlp-endpoint`, docs/METRICS.md#traces):
// every JSON-RPC request a POST carries, in either era, is one span of kind Server named
// as the OpenTelemetry MCP semantic conventions name it ("{mcp.method.name}", with the
// tool for tools/call), the child of the client span whose W3C trace context the request's
// params._meta carries (traceparent, tracestate), so that a run's trace shows what the
// server did. What the reply was is read from the bytes written (tracedWriter): the HTTP
// status, a JSON-RPC error's code, a tool's isError. Without a Tracer nothing here runs.

// traced routes msg under a server span.
func (s *Server) traced(w http.ResponseWriter, r *http.Request, tenant string, msg *mcp.Message) {
	parent := remoteParent(msg.Params)
	ctx := r.Context()
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	tool := ""
	if s.dialect.Op(msg.Method) == mcp.OpToolsCall { // tools/call in every era
		tool = stringMember(msg.Params, "name")
	}
	name := msg.Method
	if tool != "" {
		name += " " + tool
	}
	ctx, span := s.cfg.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	if !span.IsRecording() {
		s.route(w, r.WithContext(ctx), tenant, msg)
		return
	}
	tw := &tracedWriter{ResponseWriter: w}
	s.route(tw, r.WithContext(ctx), tenant, msg)
	attrs := []attribute.KeyValue{attribute.String(telemetry.AttrMethod, msg.Method), attribute.String(telemetry.AttrRequestID, msg.ID.String())}
	if v := r.Header.Get(headerProtocolVersion); v != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrProtocol, v))
	}
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		sid = w.Header().Get(headerSessionID) // initialize opened it
	}
	if sid != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrSessionID, sid))
	}
	if tool != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrToolName, tool))
	}
	if et := tw.errorType(); et != "" {
		attrs = append(attrs, attribute.String(telemetry.AttrErrorType, et))
		span.SetStatus(codes.Error, et)
	}
	span.SetAttributes(attrs...)
}

// remoteParent returns the span context params._meta carries; invalid when none.
func remoteParent(params []byte) trace.SpanContext {
	var tp, ts string
	mcp.EachMember(params, func(name, value []byte) bool {
		if string(name) != "_meta" {
			return true
		}
		mcp.EachMember(value, func(n, v []byte) bool {
			isParent, isState := telemetry.IsTraceMember(n)
			switch {
			case isParent:
				tp = stringValue(v)
			case isState:
				ts = stringValue(v)
			}
			return true
		})
		return false
	})
	return telemetry.Remote(tp, ts)
}

// stringValue is a JSON string value without its quotes; "" for another value or one with
// escapes (a W3C trace context has none).
func stringValue(v []byte) string {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return ""
	}
	return string(v[1 : len(v)-1])
}

// stringMember returns the string member name of the JSON object b; "" when it has none.
func stringMember(b []byte, name string) string {
	s := ""
	mcp.EachMember(b, func(n, v []byte) bool {
		if string(n) == name {
			s = stringValue(v)
			return false
		}
		return true
	})
	return s
}

// tracedWriter is the ResponseWriter of a traced request: it keeps the status written and
// what the body said of the reply (the first JSON-RPC error code, whether a result had
// isError: true), for the span's error.type. Flush and Unwrap keep streams working
// (http.ResponseController).
type tracedWriter struct {
	http.ResponseWriter
	status    int
	code      string // the JSON-RPC error code written; "" = none
	toolError bool
}

// WriteHeader implements http.ResponseWriter.
func (w *tracedWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write implements http.ResponseWriter, reading the reply as it goes.
func (w *tracedWriter) Write(b []byte) (int, error) {
	if w.code == "" {
		if _, rest, ok := bytes.Cut(b, []byte(`"error":{"code":`)); ok {
			end := bytes.IndexAny(rest, ",}")
			if end > 0 {
				w.code = string(bytes.TrimSpace(rest[:end]))
			}
		}
	}
	w.toolError = w.toolError || bytes.Contains(b, []byte(`"isError":true`))
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *tracedWriter) Flush() { _ = w.FlushError() }

// FlushError flushes, and says why it could not (a client gone): http.ResponseController
// looks for it before Flush, so the SSE writers that watch a flush's error (http.go,
// listen.go) see a client leave with tracing on as they do without it.
func (w *tracedWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the writer wrapped, for http.ResponseController.
func (w *tracedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errorType is error.type of the reply written: the JSON-RPC error code, else an HTTP
// status of 400 or more, else "tool_error" for a tool's execution error; "" for a result.
func (w *tracedWriter) errorType() string {
	switch {
	case w.code != "":
		return w.code
	case w.status >= 400:
		return strconv.Itoa(w.status)
	case w.toolError:
		return telemetry.ErrorTool
	}
	return ""
}

var _ http.Flusher = (*tracedWriter)(nil)
