package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// TestHeadFieldsAreTheHeaderMaps: a session's POSTs through the lean transport with their
// fields rendered once (headFields: a Target prepared by CacheEndpoint) carry on the wire
// exactly the header the header-map path sends (a Target without the cache), in both eras:
// a 2025-11-25 session's id, a 2026-07-28 requester's Mcp-Method and Mcp-Name, the
// Target's own header; and a Target header that the session overrides takes the map path.
func TestHeadFieldsAreTheHeaderMaps(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		msg, _ := mcp.Decode(b)
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mcp.AppendResult(nil, msg.ID, []byte(`{}`)))
	}))
	defer s.Close()
	hc := NewHTTPClient(4)
	defer hc.CloseIdleConnections()
	for n, extra := range []http.Header{
		{"Authorization": {"Bearer t0k3n"}, "X-Two": {"a", "b"}},
		{"Mcp-Session-Id": {"the user's"}, "Mcp-Method": {"the user's"}, "Accept": {"*/*"}}, // overridden by the session
	} {
		var heads [2][]http.Header
		for i, cached := range []bool{false, true} {
			tg := &Target{URL: s.URL, Client: hc, Header: extra}
			if cached {
				tg.CacheEndpoint()
			}
			env, err := tg.NewEnvelope(ProtocolModern, mcp.ModernClientCapabilities{})
			if err != nil {
				t.Fatal(err)
			}
			legacy, modern := tg.Attach("5b9f0c2e8d7a4e31a1c4f0d2b6e8a913", ProtocolLegacy), tg.Stateless(env)
			ref := NewTaskRef("t-1")
			mu.Lock()
			got = nil
			mu.Unlock()
			for _, sess := range []*Session{legacy, modern} {
				for range 2 { // the second from the cache
					if _, err := sess.callTask(context.Background(), mcp.OpTasksGet, ref, nil, CutNone); err != nil {
						t.Fatal(err)
					}
					if _, err := sess.CallOp(context.Background(), mcp.OpToolsCall, []byte(`{"name":"work"}`), nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			mu.Lock()
			heads[i] = got
			mu.Unlock()
			if cached {
				v, _ := tg.base.Load(tg)
				if lean := v.(*renderedBase).fields != nil; lean != (n == 0) {
					t.Errorf("Target header %v: rendered fields used %v, want %v", extra, lean, n == 0)
				}
			}
		}
		if !reflect.DeepEqual(heads[0], heads[1]) {
			t.Errorf("Target header %v:\nheader maps %v\nrendered    %v", extra, heads[0], heads[1])
		}
	}
}

// BenchmarkSessionPoll: a poll of a 2025-11-25 session and of a 2026-07-28 requester
// (callTask, tasks/get) over loopback, its header fields rendered once (a Target prepared by
// CacheEndpoint, as a run's is) against its header map written for each request. The
// server is net/http's in the same process: ns/op and allocs/op count both sides.
func BenchmarkSessionPoll(b *testing.B) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg, _ := mcp.Decode(body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mcp.AppendResult(nil, msg.ID, []byte(`{"taskId":"t-1","status":"working"}`)))
	}))
	defer s.Close()
	hc := NewHTTPClient(4)
	defer hc.CloseIdleConnections()
	for _, era := range []string{ProtocolLegacy, ProtocolModern} {
		for _, path := range []string{"header-map", "rendered"} {
			b.Run(era+"/"+path, func(b *testing.B) {
				tg := &Target{URL: s.URL, Client: hc}
				tg.CacheEndpoint()
				if path == "header-map" {
					tg.base = nil // no rendered fields: each request writes its header map
				}
				sess := tg.Attach("5b9f0c2e8d7a4e31a1c4f0d2b6e8a913", ProtocolLegacy)
				if era == ProtocolModern {
					env, err := tg.NewEnvelope(ProtocolModern, mcp.ModernClientCapabilities{})
					if err != nil {
						b.Fatal(err)
					}
					sess = tg.Stateless(env)
				}
				ref := NewTaskRef("t-1")
				b.ReportAllocs()
				for b.Loop() {
					sess.Idle() // as a client between two polls
					if _, err := sess.callTask(context.Background(), mcp.OpTasksGet, ref, nil, CutNone); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
