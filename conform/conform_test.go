package conform_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
)

// inProcess returns a target that serves every request with a mock server of cfg, in this
// process and in virtual time when called inside a synctest bubble.
func inProcess(t *testing.T, cfg mockserver.Config, header http.Header) *loadgen.Target {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &loadgen.Target{
		URL:        "http://mock.invalid/mcp",
		Header:     header,
		Client:     &http.Client{Transport: loadgen.HandlerTransport(srv.Handler())},
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

func TestDefaultMockPasses(t *testing.T) {
	res := runSuite(t, mockserver.Config{}, conform.Options{Target: &loadgen.Target{}})
	dump(t, res)
	for _, k := range res.Cases {
		if k.Verdict == results.CaseFail {
			t.Errorf("%s failed: %s", k.ID, k.Message)
		}
	}
}

// tenants is a mock configuration with two tenants, and their headers.
func tenants() (mockserver.Config, http.Header, http.Header) {
	cfg := mockserver.Config{Tokens: map[string]string{"tok-alpha-1234": "alpha", "tok-beta-5678": "beta"}}
	return cfg, http.Header{"Authorization": {"Bearer tok-alpha-1234"}}, http.Header{"Authorization": {"Bearer tok-beta-5678"}}
}

func TestTenantMockPasses(t *testing.T) {
	cfg, a, b := tenants()
	res := runSuite(t, cfg, conform.Options{Target: &loadgen.Target{Header: a}, Other: b})
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
