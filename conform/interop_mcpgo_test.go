package conform_test

// The suite against an independent server: github.com/mark3labs/mcp-go v1.2.1, served on a
// loopback listener in this process, in real time (its goroutines are its own). Its known
// task defects (loadgen/interop_mcpgo_test.go has the evidence from its source) must come
// out as failures with their rule ids: no pollInterval (R15), tasks it cancels on its own
// (R27, docs/RULES.md#gap-13), isError results completed (R51).

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/results"
)

// serveMCPGo serves an mcp-go server with tasks (list, cancel, tools/call) and one tool.
func serveMCPGo(t *testing.T, tool mcpgo.Tool, h mcpgoserver.ToolHandlerFunc) *client.Target {
	t.Helper()
	s := mcpgoserver.NewMCPServer("mcp-go", "1.2.1",
		mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithTaskCapabilities(true, true, true))
	s.AddTool(tool, h)
	hs := mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))
	srv := httptest.NewServer(hs)
	hc := client.NewHTTPClient(4)
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		_ = hs.Shutdown(context.Background())
		srv.Close()
	})
	return &client.Target{URL: srv.URL + "/mcp", Header: http.Header{}, Client: hc,
		ClientInfo: mcp.Implementation{Name: "conform-test", Version: "1"}}
}

// mcpgoWork works for d, honouring its context when honour is true, and returns result.
func mcpgoWork(d time.Duration, honour bool, result *mcpgo.CallToolResult) mcpgoserver.ToolHandlerFunc {
	return func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if honour {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d):
			}
		} else {
			time.Sleep(d)
		}
		return result, nil
	}
}

func TestMCPGoDefectsAreFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time interop: skipped with -short")
	}
	cases := []struct {
		name    string
		handler mcpgoserver.ToolHandlerFunc
		fails   map[string]string // case id -> rule its message must start with
	}{
		{
			name:    "self-cancelled tasks",
			handler: mcpgoWork(5*time.Second, true, mcpgo.NewToolResultText("done")), // cancelled by mcp-go long before
			fails:   map[string]string{"get.poll_interval": "R15", "task.lifecycle": "R27"},
		},
		{
			name:    "isError results completed",
			handler: mcpgoWork(200*time.Millisecond, false, mcpgo.NewToolResultError("the tool failed")),
			fails:   map[string]string{"get.poll_interval": "R15", "result.payload": "R51"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := serveMCPGo(t, mcpgo.NewTool("work", mcpgo.WithDescription("works a while"),
				mcpgo.WithTaskSupport(mcpgo.TaskSupportOptional)), tc.handler)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := conform.Run(ctx, conform.Options{Target: target, Budget: 20 * time.Second,
				Only: []string{"init.", "create.", "get.", "task.", "result.", "cancel."}})
			if err != nil {
				t.Fatal(err)
			}
			dump(t, res)
			for _, k := range res.Cases {
				rule, want := tc.fails[k.ID]
				switch {
				case want && (k.Verdict != results.CaseFail || !strings.HasPrefix(k.Message, rule+":")):
					t.Errorf("%s: %s %q; want a failure of %s", k.ID, k.Verdict, k.Message, rule)
				case !want && k.Verdict == results.CaseFail:
					t.Errorf("%s failed: %s", k.ID, k.Message)
				}
			}
			if res.Verdict != results.VerdictFail {
				t.Errorf("verdict %s, want fail", res.Verdict)
			}
		})
	}
}
