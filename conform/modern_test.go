package conform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
)

// exchange is one modern request the suite sent and the reply it got, as bytes.
type exchange struct {
	method string
	reply  []byte
}

// runRecorded runs the suite in a synctest bubble against a mock of cfg, and returns the
// modern exchanges (requests with a modern MCP-Protocol-Version) with their replies.
func runRecorded(t *testing.T, cfg mockserver.Config, o conform.Options) (*results.Contract, []exchange) {
	t.Helper()
	var res *results.Contract
	var mu sync.Mutex
	var seen []exchange
	synctest.Test(t, func(t *testing.T) {
		srv, err := mockserver.NewHandlerServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		rec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if !mcp.IsModern(r.Header.Get(mcp.HeaderProtocolVersion)) {
				srv.Handler().ServeHTTP(w, r)
				return
			}
			rw := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rw, r)
			for k, v := range rw.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rw.Code)
			_, _ = w.Write(rw.Body.Bytes())
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			mu.Lock()
			seen = append(seen, exchange{m.Method, rw.Body.Bytes()})
			mu.Unlock()
		})
		target := &client.Target{URL: "http://mock.invalid/mcp", Header: o.Target.Header,
			Client: &http.Client{Transport: client.HandlerTransport(rec)}, ClientInfo: mcp.Implementation{Name: "conform-test", Version: "1"}}
		o.Target = target
		res, err = conform.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
	})
	return res, seen
}

// TestModernMockPasses: against the mock answering only 2026-07-28 the era is detected, and
// against one answering both eras --protocol 2026-07-28 chooses it; every modern case
// passes (the isolation case too: tenants are on), and every reply the suite got validates
// against the official schemas of 2026-07-28 and of the Tasks extension.
func TestModernMockPasses(t *testing.T) {
	for _, tc := range []struct {
		name      string
		protocols mockserver.Protocols
		protocol  string
	}{
		{"modern only, detected", mockserver.ProtocolsModern, ""},
		{"both, pinned", mockserver.ProtocolsBoth, conform.ProtocolModern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, a, b := tenants()
			cfg.Protocols = tc.protocols
			res, seen := runRecorded(t, cfg, conform.Options{Target: &client.Target{Header: a}, Other: b, Protocol: tc.protocol})
			for _, k := range res.Cases {
				if k.Verdict != results.CasePass {
					t.Errorf("%s: %s (%s)", k.ID, k.Verdict, k.Message)
				}
			}
			if len(res.Cases) != len(conform.ModernCases()) || res.Verdict != results.VerdictPass || res.Protocol != conform.ProtocolModern || len(res.LeftBehind) != 0 {
				dump(t, res)
				t.Errorf("%d verdicts for %d cases, verdict %s, protocol %q, left behind %v", len(res.Cases), len(conform.ModernCases()), res.Verdict, res.Protocol, res.LeftBehind)
			}
			if len(seen) < 40 {
				t.Errorf("only %d modern exchanges recorded", len(seen))
			}
			for _, e := range seen {
				if err := mcptest.ValidateReply2026(e.method, e.reply); err != nil {
					t.Errorf("%s: %v\n%s", e.method, err, e.reply)
				}
			}
		})
	}
}

// TestBothSuites: --protocol both runs the legacy suite, then the modern one, into one
// result that names both eras.
func TestBothSuites(t *testing.T) {
	cfg, a, b := tenants()
	cfg.Protocols = mockserver.ProtocolsBoth
	res := runSuite(t, cfg, conform.Options{Target: &client.Target{Header: a}, Other: b, Protocol: conform.ProtocolBoth})
	if want := len(conform.Cases()) + len(conform.ModernCases()); len(res.Cases) != want || res.Verdict != results.VerdictPass {
		dump(t, res)
		t.Errorf("%d verdicts for %d cases, verdict %s", len(res.Cases), want, res.Verdict)
	}
	if res.Protocol != "2025-11-25 and 2026-07-28" {
		t.Errorf("protocol %q", res.Protocol)
	}
}

// TestProtocolTheTargetDoesNotSpeak: asking a legacy-only server for the modern suite, or a
// modern-only one for the legacy suite, is an error that says so, and runs nothing.
func TestProtocolTheTargetDoesNotSpeak(t *testing.T) {
	for _, tc := range []struct {
		protocols mockserver.Protocols
		protocol  string
		want      string
	}{
		{mockserver.ProtocolsLegacy, conform.ProtocolModern, "does not speak 2026-07-28"},
		{mockserver.ProtocolsModern, conform.ProtocolLegacy, "speaks only 2026-07-28"},
		{mockserver.ProtocolsLegacy, "2024-01-01", `protocol "2024-01-01"`},
	} {
		synctest.Test(t, func(t *testing.T) {
			_, err := conform.Run(context.Background(), conform.Options{Target: inProcess(t, mockserver.Config{Protocols: tc.protocols}, nil), Protocol: tc.protocol})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s against %s: %v, want an error saying %q", tc.protocol, tc.protocols, err, tc.want)
			}
		})
	}
}
