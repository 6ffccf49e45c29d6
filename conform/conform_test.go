package conform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
)

// inProcess returns a target that serves every request with a mock server of cfg, in this
// process and in virtual time when called inside a synctest bubble.
func inProcess(t *testing.T, cfg mockserver.Config, header http.Header) *client.Target {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &client.Target{
		URL:        "http://mock.invalid/mcp",
		Header:     header,
		Client:     &http.Client{Transport: client.HandlerTransport(srv.Handler())},
		ClientInfo: mcp.Implementation{Name: "conform-test", Version: "1"},
	}
}

// runSuite runs the suite in a synctest bubble against a mock of cfg.
func runSuite(t *testing.T, cfg mockserver.Config, o conform.Options) *results.Contract {
	t.Helper()
	var res *results.Contract
	synctest.Test(t, func(t *testing.T) {
		o.Target = inProcess(t, cfg, o.Target.Header)
		var err error
		res, err = conform.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
	})
	return res
}

// verdicts maps case id to verdict.
func verdicts(c *results.Contract) map[string]results.CaseVerdict {
	m := map[string]results.CaseVerdict{}
	for _, k := range c.Cases {
		m[k.ID] = k.Verdict
	}
	return m
}

func dump(t *testing.T, c *results.Contract) {
	t.Helper()
	for _, k := range c.Cases {
		t.Logf("%-5s %-20s %s %s", k.Verdict, k.ID, strings.Join(k.Rules, ","), k.Message)
		if k.Verdict == results.CaseFail {
			for _, e := range k.Evidence {
				t.Logf("        %s %s -> %d %s", e.Method, e.Request, e.HTTPStatus, e.Reply)
			}
		}
	}
	t.Logf("created %v left %v notes %v", c.Created, c.LeftBehind, c.Notes)
}

// TestDefaultMockPasses: against the default mock every case that can run passes; the
// skips are exactly those that need what the default server does not offer (tasks.list,
// offered only with an authorization context, R54) or what was not given (a second
// identity), and the one that needs a server without tasks.
func TestDefaultMockPasses(t *testing.T) {
	res := runSuite(t, mockserver.Config{}, conform.Options{Target: &client.Target{}})
	skips := map[string]bool{"tasks.ignored": true, "list.pages": true, "list.bad_cursor": true, "isolation.get": true,
		"isolation.session": true, "isolation.result": true, "isolation.cancel": true, "isolation.list": true}
	for _, k := range res.Cases {
		want := results.CasePass
		if skips[k.ID] {
			want = results.CaseSkip
		}
		if k.Verdict != want {
			t.Errorf("%s: %s (%s), want %s", k.ID, k.Verdict, k.Message, want)
		}
	}
	if len(res.Cases) != len(conform.Cases()) || res.Verdict != results.VerdictPass || len(res.LeftBehind) != 0 {
		dump(t, res)
		t.Errorf("%d verdicts for %d cases, verdict %s, left behind %v", len(res.Cases), len(conform.Cases()), res.Verdict, res.LeftBehind)
	}
}

// TestCredentialsNeverInTheResult: a server that echoes the credentials it got in its
// errors (in a JSON-RPC message and in an HTTP error body) leaves no trace of either
// identity's token, whole or after its scheme, anywhere in the result.
func TestCredentialsNeverInTheResult(t *testing.T) {
	cfg, a, b := tenants()
	synctest.Test(t, func(t *testing.T) {
		srv, err := mockserver.NewHandlerServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body []byte
			if r.Body != nil {
				body, _ = io.ReadAll(r.Body)
			}
			auth := r.Header.Get("Authorization")
			switch {
			case bytes.Contains(body, []byte(`"tasks/cancel"`)):
				http.Error(w, "upstream rejected credentials "+auth, http.StatusBadGateway)
				return
			case bytes.Contains(body, []byte(`"tasks/result"`)) && strings.Contains(auth, "beta"):
				w.Header().Set("Content-Type", "application/json")
				id := mcpID(body)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no task for %s"}}`, id, strings.TrimPrefix(auth, "Bearer "))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			srv.Handler().ServeHTTP(w, r)
		})
		target := &client.Target{URL: "http://mock.invalid/mcp", Header: a,
			Client: &http.Client{Transport: client.HandlerTransport(echo)}, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}
		res, err := conform.Run(context.Background(), conform.Options{Target: target, Other: b})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(res)
		for _, secret := range []string{"tok-alpha-1234", "tok-beta-5678"} {
			if bytes.Contains(out, []byte(secret)) {
				t.Errorf("%s appears in the result: %s", secret, out)
			}
		}
		if !bytes.Contains(out, []byte("[redacted]")) {
			t.Error("nothing was redacted: the server's echo did not reach the result, and the test shows nothing")
		}
	})
}

// mcpID returns the raw id of a JSON-RPC request.
func mcpID(body []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	return string(m.ID)
}

// tenants is a mock configuration with two tenants, and their headers.
func tenants() (mockserver.Config, http.Header, http.Header) {
	cfg := mockserver.Config{Tokens: map[string]string{"tok-alpha-1234": "alpha", "tok-beta-5678": "beta"}}
	return cfg, http.Header{"Authorization": {"Bearer tok-alpha-1234"}}, http.Header{"Authorization": {"Bearer tok-beta-5678"}}
}

func TestTenantMockPasses(t *testing.T) {
	cfg, a, b := tenants()
	res := runSuite(t, cfg, conform.Options{Target: &client.Target{Header: a}, Other: b})
	dump(t, res)
	v := verdicts(res)
	for _, k := range res.Cases {
		if k.Verdict == results.CaseFail {
			t.Errorf("%s failed: %s", k.ID, k.Message)
		}
	}
	for _, id := range []string{"list.pages", "list.bad_cursor", "isolation.get", "isolation.result", "isolation.cancel", "isolation.list"} {
		if v[id] != results.CasePass {
			t.Errorf("%s: %s, want pass", id, v[id])
		}
	}
	if res.Verdict != results.VerdictPass {
		t.Errorf("verdict %s", res.Verdict)
	}
}

// TestToolOnAServerWithoutTasks: --tool names the tool tasks.ignored calls on a server
// without tasks (every tool there is "forbidden", and that is no usage error), and a tool
// the server does not list is one.
func TestToolOnAServerWithoutTasks(t *testing.T) {
	res := runSuite(t, mockserver.Config{NoTasks: true}, conform.Options{Target: &client.Target{}, Tool: "work_sync", Only: []string{"tasks.ignored"}})
	if len(res.Cases) != 1 || res.Cases[0].Verdict != results.CasePass || !strings.Contains(res.Cases[0].Message, `"work_sync"`) {
		dump(t, res)
		t.Errorf("tasks.ignored did not pass with the tool given")
	}
	synctest.Test(t, func(t *testing.T) {
		_, err := conform.Run(context.Background(), conform.Options{Target: inProcess(t, mockserver.Config{}, nil), Tool: "nope"})
		var oe *conform.OptionError
		if !errors.As(err, &oe) || !strings.Contains(oe.Msg, `"nope"`) {
			t.Errorf("--tool nope: %v, want an OptionError naming it", err)
		}
	})
}
