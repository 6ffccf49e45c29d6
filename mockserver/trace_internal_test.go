package mockserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRemoteParent: the span context a request's params._meta carries, read from its
// traceparent and tracestate; none without a _meta, with a malformed traceparent, or with
// one that is no string.
func TestRemoteParent(t *testing.T) {
	const tp = `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
	sc := remoteParent([]byte(`{"taskId":"t1","_meta":{"x":1,` + tp + `,"tracestate":"a=1"}}`))
	if !sc.IsValid() || !sc.IsRemote() || !sc.IsSampled() || sc.SpanID().String() != "b7ad6b7169203331" || sc.TraceState().String() != "a=1" {
		t.Errorf("remoteParent = %v", sc)
	}
	for _, params := range []string{``, `{}`, `{"taskId":"t1"}`, `{"_meta":{"traceparent":"00-zz"}}`,
		`{"_meta":{"traceparent":1}}`, `{"_meta":"` + tp + `"}`, `{"meta":{` + tp + `}}`} {
		if remoteParent([]byte(params)).IsValid() {
			t.Errorf("remoteParent(%s) is valid, want none", params)
		}
	}
}

// FuzzRemoteParent: any params, as a client may send them, read without a panic; a span
// context read is valid and remote.
func FuzzRemoteParent(f *testing.F) {
	f.Add([]byte(`{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=1"}}`))
	f.Add([]byte(`{"name":"work","_meta":{"traceparent":"00-"}}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		if sc := remoteParent(params); sc.IsValid() && !sc.IsRemote() {
			t.Errorf("remoteParent(%q) = %v: valid but not remote", params, sc)
		}
	})
}

// TestTracedWriterErrorType: error.type of a server span from the reply written: the
// JSON-RPC error code first, then an HTTP error status, then a tool's isError.
func TestTracedWriterErrorType(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{200, `{"jsonrpc":"2.0","id":1,"result":{"taskId":"t"}}`, ""},
		{200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`, "-32602"},
		{400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`, "-32601"},
		{429, `too many`, "429"},
		{200, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`, "tool_error"},
	} {
		w := &tracedWriter{ResponseWriter: httptest.NewRecorder()}
		w.WriteHeader(tc.status)
		_, _ = w.Write([]byte(tc.body))
		if got := w.errorType(); got != tc.want {
			t.Errorf("%d %s: error.type %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
}

// failingFlush is a ResponseWriter whose client has gone: its flush fails.
type failingFlush struct{ *httptest.ResponseRecorder }

func (failingFlush) FlushError() error { return errors.New("client gone") }

// TestTracedWriterKeepsFlushError: a traced reply's flush reports the error of the writer
// under it, so the SSE writers see a client leave with tracing on as they do without it.
func TestTracedWriterKeepsFlushError(t *testing.T) {
	w := failingFlush{httptest.NewRecorder()}
	if err := http.NewResponseController(w).Flush(); err == nil {
		t.Fatal("the writer itself: want its flush error")
	}
	if err := http.NewResponseController(&tracedWriter{ResponseWriter: w}).Flush(); err == nil {
		t.Error("through tracedWriter the flush error is lost")
	}
}
