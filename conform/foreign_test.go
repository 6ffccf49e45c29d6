package conform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
)

// runForeign runs the suite in a synctest bubble against a mock of cfg that does not say it
// is tasksim's (its serverInfo renamed on the wire), so that the suite knows nothing of its
// tools and uses only what o gives: as against any other server.
func runForeign(t *testing.T, cfg mockserver.Config, o conform.Options) *results.Contract {
	t.Helper()
	var res *results.Contract
	synctest.Test(t, func(t *testing.T) {
		srv, err := mockserver.NewHandlerServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		disguise := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rw, r)
			for k, v := range rw.Header() {
				w.Header()[k] = v
			}
			body := bytes.ReplaceAll(rw.Body.Bytes(), []byte(`"tasksim-mock"`), []byte(`"another-server"`))
			w.Header().Del("Content-Length")
			w.WriteHeader(rw.Code)
			_, _ = w.Write(body)
		})
		o.Target = &client.Target{URL: "http://foreign.invalid/mcp", Header: o.Target.Header,
			Client: &http.Client{Transport: client.HandlerTransport(disguise)}, ClientInfo: mcp.Implementation{Name: "conform-test", Version: "1"}}
		res, err = conform.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
	})
	return res
}

// caseOf returns the verdict of case id in res; it fails the test when id did not run.
func caseOf(t *testing.T, res *results.Contract, id string) results.ContractCase {
	t.Helper()
	for _, c := range res.Cases {
		if c.ID == id {
			return c
		}
	}
	dump(t, res)
	t.Fatalf("case %s did not run", id)
	return results.ContractCase{}
}

// wantVerdict fails the test unless case id of res has verdict v and, for a failure, names
// rule first; each of texts must be in its message (or, for a skip, its message and enable).
func wantVerdict(t *testing.T, res *results.Contract, id string, v results.CaseVerdict, rule string, texts ...string) {
	t.Helper()
	c := caseOf(t, res, id)
	if c.Verdict != v || (rule != "" && (len(c.Broken) == 0 || c.Broken[0] != rule)) {
		dump(t, res)
		t.Fatalf("%s: %s %v (%s), want %s %s", id, c.Verdict, c.Broken, c.Message, v, rule)
	}
	for _, s := range texts {
		if !strings.Contains(c.Message+" "+c.Enable, s) {
			t.Errorf("%s: %q (enable %q) does not say %q", id, c.Message, c.Enable, s)
		}
	}
}

func modernOnly(set func(*mockserver.Config)) mockserver.Config {
	cfg := mockserver.Config{Protocols: mockserver.ProtocolsModern}
	set(&cfg)
	return cfg
}

// TestForeignFailArgs: on a server the suite does not know, E49 is checked only with
// --fail-args and --error-args. A server that ends a tool error failed (is_error_failed)
// fails modern.result.completed with them; without them, the failed case skips naming the
// flag that would enable it.
func TestForeignFailArgs(t *testing.T) {
	base := conform.Options{Target: &client.Target{}, Tool: "work_task", Args: json.RawMessage(`{"duration_ms":50}`),
		Only: []string{"modern.result.completed", "modern.result.failed"}}
	with := base
	with.FailArgs = json.RawMessage(`{"duration_ms":50,"outcome":"failed"}`)
	with.ErrorArgs = json.RawMessage(`{"duration_ms":50,"outcome":"error"}`)

	bad := modernOnly(func(c *mockserver.Config) { c.KnownBad.IsErrorFailed = true })
	res := runForeign(t, bad, with)
	wantVerdict(t, res, "modern.result.completed", results.CaseFail, "E49", "should end completed")
	wantVerdict(t, res, "modern.result.failed", results.CasePass, "")

	res = runForeign(t, modernOnly(func(*mockserver.Config) {}), with)
	wantVerdict(t, res, "modern.result.completed", results.CasePass, "", "isError: completed")

	res = runForeign(t, bad, base)
	wantVerdict(t, res, "modern.result.completed", results.CasePass, "", "--fail-args")
	wantVerdict(t, res, "modern.result.failed", results.CaseSkip, "", "--error-args")
}

// TestForeignFailArgsLegacy: --fail-args makes R51 run on a 2025-11-25 server the suite does
// not know: a tool error that ends completed (is_error_completed) fails result.failed; only
// --error-args, and the case runs the half it can, saying which it did not try.
func TestForeignFailArgsLegacy(t *testing.T) {
	o := conform.Options{Target: &client.Target{}, Tool: "work_task", Args: json.RawMessage(`{"duration_ms":50}`),
		FailArgs: json.RawMessage(`{"duration_ms":50,"outcome":"failed"}`), Only: []string{"result.failed"}}
	cfg := mockserver.Config{Protocols: mockserver.ProtocolsLegacy}
	cfg.KnownBad.IsErrorCompleted = true
	wantVerdict(t, runForeign(t, cfg, o), "result.failed", results.CaseFail, "R51")

	o.FailArgs, o.ErrorArgs = nil, json.RawMessage(`{"duration_ms":50,"outcome":"error"}`)
	wantVerdict(t, runForeign(t, mockserver.Config{Protocols: mockserver.ProtocolsLegacy}, o), "result.failed", results.CasePass, "", "not tried: a tool error (--fail-args)")

	o.ErrorArgs = nil
	wantVerdict(t, runForeign(t, mockserver.Config{Protocols: mockserver.ProtocolsLegacy}, o), "result.failed", results.CaseSkip, "", "--fail-args", "--error-args")
}

// TestForeignE44EveryTool: modern.capability calls every listed tool without the extension,
// not only --tool: with --tool naming a tool that never runs as a task, a server that gives
// its task-only tool a task anyway (tasks_undeclared) fails E44.
func TestForeignE44EveryTool(t *testing.T) {
	o := conform.Options{Target: &client.Target{}, Tool: "work_sync", Args: json.RawMessage(`{"duration_ms":50}`), Only: []string{"modern.capability"}}
	bad := modernOnly(func(c *mockserver.Config) { c.KnownBad.TasksUndeclared = true })
	wantVerdict(t, runForeign(t, bad, o), "modern.capability", results.CaseFail, "E44", `"work_task"`)
	wantVerdict(t, runForeign(t, modernOnly(func(*mockserver.Config) {}), o), "modern.capability", results.CasePass, "", "work_task")
}

// TestForeignToolErrorIsNoRefusal: a tool whose call fails on its own (a JSON-RPC error
// with or without params.task) is not read as a refusal of params.task (E37): the control
// call without it tells them apart.
func TestForeignToolErrorIsNoRefusal(t *testing.T) {
	o := conform.Options{Target: &client.Target{}, Tool: "work", Args: json.RawMessage(`{"duration_ms":50,"outcome":"error"}`), Only: []string{"modern.removed"}}
	wantVerdict(t, runForeign(t, modernOnly(func(*mockserver.Config) {}), o), "modern.removed", results.CasePass, "", "not judged")
	o.Args = json.RawMessage(`{"duration_ms":50,"outcome":"failed"}`)
	wantVerdict(t, runForeign(t, modernOnly(func(*mockserver.Config) {}), o), "modern.removed", results.CasePass, "", "isError")
}

// TestNoPassWithoutEvidence: modern.result.completed, whose task ended failed and which
// knows no call ending in a tool error, checked nothing: it skips saying why, and names what
// would let it run.
func TestNoPassWithoutEvidence(t *testing.T) {
	o := conform.Options{Target: &client.Target{}, Tool: "work_task", Args: json.RawMessage(`{"duration_ms":50,"outcome":"error"}`), Only: []string{"modern.result.completed"}}
	wantVerdict(t, runForeign(t, modernOnly(func(*mockserver.Config) {}), o), "modern.result.completed", results.CaseSkip, "", "ended failed, not completed", "--fail-args")
}
