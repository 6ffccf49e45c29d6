package client

import (
	"context"
	"errors"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// members are trace context members as telemetry.AppendMeta writes them.
const members = `"traceparent":"00-0102-0304-01"`

// TestTraceParams (2025-11-25): the trace context goes into the params' _meta, added to
// the one they have (its members kept, ours first) or in one of its own; params that are
// no object are refused.
func TestTraceParams(t *testing.T) {
	for _, tc := range []struct{ params, want string }{
		{``, `{"_meta":{` + members + `}}`},
		{`{}`, `{"_meta":{` + members + `}}`},
		{`{"taskId":"t1"}`, `{"taskId":"t1","_meta":{` + members + `}}`},
		{` {"taskId":"t1"} `, `{"taskId":"t1","_meta":{` + members + `}}`},
		{`{"name":"work","_meta":{"progressToken":1}}`, `{"name":"work","_meta":{` + members + `,"progressToken":1}}`},
		{`{"name":"work","_meta":{ }}`, `{"name":"work","_meta":{` + members + ` }}`},
		{`{"note":"_meta","_meta":{}}`, `{"note":"_meta","_meta":{` + members + `}}`},
		{`{"name":"work","_meta":null}`, `{"name":"work","_meta":null}`},
	} {
		got, err := appendTraceParams(nil, []byte(tc.params), []byte(members))
		if err != nil || string(got) != tc.want || !mcp.Valid(got) {
			t.Errorf("appendTraceParams(%s) = %s, %v; want %s", tc.params, got, err, tc.want)
		}
	}
	if _, err := appendTraceParams(nil, []byte(`[1]`), []byte(members)); err == nil {
		t.Error("appendTraceParams of an array: want an error")
	}
}

// TestTraceEnvelope (2026-07-28): the trace context goes inside the envelope's _meta, after
// its members; without members the envelope is written as it is.
func TestTraceEnvelope(t *testing.T) {
	meta := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`)
	got, err := appendWithMeta(nil, []byte(`{"taskId":"t1"}`), meta, []byte(members))
	want := `{"taskId":"t1","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + members + `}}`
	if err != nil || string(got) != want {
		t.Errorf("appendWithMeta with members = %s, %v\nwant %s", got, err, want)
	}
	got, err = appendWithMeta(nil, nil, []byte(`{}`), []byte(members))
	if want := `{"_meta":{` + members + `}}`; err != nil || string(got) != want {
		t.Errorf("appendWithMeta of an empty envelope = %s, %v; want %s", got, err, want)
	}
	got, _ = appendWithMeta(nil, []byte(`{"taskId":"t1"}`), meta, nil)
	if want := `{"taskId":"t1","_meta":` + string(meta) + `}`; string(got) != want {
		t.Errorf("appendWithMeta without members = %s, want %s", got, want)
	}
}

// TestErrorType: error.type of a request's span, by what came of it.
func TestErrorType(t *testing.T) {
	for _, tc := range []struct {
		op   mcp.Op
		rep  Reply
		err  error
		want string
	}{
		{mcp.OpTasksGet, Reply{Result: []byte(`{"taskId":"t","status":"working"}`)}, nil, ""},
		{mcp.OpTasksGet, Reply{Err: &mcp.Error{Code: -32602}}, nil, "-32602"},
		{mcp.OpToolsCall, Reply{Result: []byte(`{"content":[],"isError":true}`)}, nil, "tool_error"},
		{mcp.OpTasksResult, Reply{Result: []byte(`{"content":[],"isError":false}`)}, nil, ""},
		{mcp.OpTasksGet, Reply{Result: []byte(`{"status":"completed","result":{"isError":true}}`)}, nil, "tool_error"},
		{mcp.OpTasksGet, Reply{}, &HTTPError{Status: 429}, "429"},
		{mcp.OpTasksGet, Reply{}, &TransportError{Op: "tasks/get", Err: ErrCut}, "cut"},
		{mcp.OpTasksGet, Reply{}, ErrSessionGone, "404"},
		{mcp.OpTasksGet, Reply{}, &ProtocolError{Msg: "x"}, "protocol"},
		{mcp.OpTasksGet, Reply{}, &TransportError{Op: "tasks/get", Err: context.DeadlineExceeded}, "timeout"},
		{mcp.OpTasksGet, Reply{}, &TransportError{Op: "tasks/get", Err: errors.New("connection refused")}, "transport"},
	} {
		if got := errorType(tc.op, tc.rep, tc.err); got != tc.want {
			t.Errorf("errorType(%v, %+v, %v) = %q, want %q", tc.op, tc.rep, tc.err, got, tc.want)
		}
	}
}
