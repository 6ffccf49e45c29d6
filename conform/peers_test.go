package conform_test

// The suite against real third-party servers on the official TypeScript SDK, started by
// internal/peers on 127.0.0.1 (skipped, saying what is missing, without Node.js and the
// packages, unless TASKSIM_REQUIRE_NODE=1). The suite must run to its end against each,
// with a verdict for every case; which cases fail, and why, is pinned below: each is a
// finding about that server, with its rule.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/peers"
	"github.com/tasksim/tasksim/results"
)

func peerTarget(t *testing.T, url string) *client.Target {
	hc := client.NewHTTPClient(4)
	t.Cleanup(hc.CloseIdleConnections)
	return &client.Target{URL: url, Header: http.Header{}, Client: hc,
		ClientInfo: mcp.Implementation{Name: "conform-test", Version: "1"}}
}

// peerFindings are the cases each peer fails, with the rule each failure names. What they
// are (from the peers' code, internal/peers/testdata/node_modules/@modelcontextprotocol):
//
//   - tool.forbidden (R8): the SDK runs a tool without taskSupport called with a task
//     parameter, then finds no task in its result and answers -32602 "Invalid task creation
//     result" (the tool's work is done by then), where -32601 is due before any work.
//   - tool.required (R10): a required tool called without a task parameter is refused, but
//     as a CallToolResult with isError: true whose text names -32601, not as the JSON-RPC
//     error (the SDK turns every tools/call error into such a result).
//   - list.authorization (R54): both serve tasks/list to anyone on the session, with no
//     authorization context (their tasks are scoped to the session, docs/RULES.md#gap-8).
//   - session.deleted (H8), server-everything only: a request on a deleted session gets 400
//     "No valid session ID provided" instead of 404.
var peerFindings = map[string]map[string]string{
	peers.Everything: {"tool.forbidden": "R8", "tool.required": "R10", "list.authorization": "R54", "session.deleted": "H8"},
	peers.SDKTasks:   {"tool.forbidden": "R8", "tool.required": "R10", "list.authorization": "R54"},
}

// TestPeerContract runs the whole suite against each peer: every case gets a verdict, the
// failures are exactly the peer's findings, and the input round trip runs where the tool
// can ask for input (server-everything's simulate-research-query with ambiguous: true).
func TestPeerContract(t *testing.T) {
	args := map[string]string{
		peers.Everything: `{"topic":"tasksim","ambiguous":true}`,
		peers.SDKTasks:   `{"duration_ms":1500,"input_required":true}`,
	}
	tools := map[string]string{peers.Everything: "simulate-research-query", peers.SDKTasks: "work_task"}
	for _, name := range []string{peers.Everything, peers.SDKTasks} {
		t.Run(name, func(t *testing.T) {
			url := peers.Start(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			o := conform.Options{Target: peerTarget(t, url), Budget: 30 * time.Second,
				Tool: tools[name], Args: []byte(args[name])}
			res, err := conform.Run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			dump(t, res)
			if len(res.Cases) != len(conform.Cases()) {
				t.Errorf("%d verdicts for %d cases", len(res.Cases), len(conform.Cases()))
			}
			want := peerFindings[name]
			for _, k := range res.Cases {
				rule, finding := want[k.ID]
				switch {
				case finding && (k.Verdict != results.CaseFail || !strings.HasPrefix(k.Message, rule+":")):
					t.Errorf("%s: %s %q; want the known failure of %s", k.ID, k.Verdict, k.Message, rule)
				case !finding && k.Verdict == results.CaseFail:
					t.Errorf("%s failed: %s", k.ID, k.Message)
				}
			}
			if v := verdicts(res)["input.round_trip"]; v != results.CasePass {
				t.Errorf("input.round_trip %s, want pass", v)
			}
			if len(res.LeftBehind) > 0 {
				t.Errorf("left behind %v", res.LeftBehind)
			}
		})
	}
}

// TestPeerFailArgs: with --fail-args, result.failed runs against a server the suite does not
// know (the SDK task server, whose outcome: failed returns an isError result): its tool error
// ends the task failed and tasks/result returns the result (R51, R17), and the case says it
// did not try a protocol error (no --error-args). Without the flag it skips, naming it.
func TestPeerFailArgs(t *testing.T) {
	url := peers.Start(t, peers.SDKTasks)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := conform.Options{Target: peerTarget(t, url), Budget: 30 * time.Second, Tool: "work_task",
		Args: []byte(`{"duration_ms":50}`), FailArgs: []byte(`{"duration_ms":50,"outcome":"failed"}`), Only: []string{"result.failed"}}
	res, err := conform.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Cases[0]; c.Verdict != results.CasePass || !strings.Contains(c.Message, "isError result: failed") || !strings.Contains(c.Message, "--error-args") {
		dump(t, res)
		t.Errorf("result.failed with --fail-args: %s %q, want a pass on the tool error that names --error-args as not tried", c.Verdict, c.Message)
	}
	o.FailArgs = nil
	if res, err = conform.Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	if c := res.Cases[0]; c.Verdict != results.CaseSkip || !strings.Contains(c.Enable, "--fail-args") {
		t.Errorf("result.failed without --fail-args: %s %q (enable %q), want a skip naming --fail-args", c.Verdict, c.Message, c.Enable)
	}
}
