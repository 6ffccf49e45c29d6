package loadgen_test

// Interop with an independent MCP Tasks server: the load generator against
// github.com/mark3labs/mcp-go v1.2.1 (server.MCPServer with task capabilities, served by its
// server.StreamableHTTPServer on a loopback httptest listener, in this process). The run uses
// real time, so these tests assert outcomes and counts, never timings; each run is bounded by
// its Duration and Grace, and by a context deadline as a backstop.
//
// What mcp-go v1.2.1 does, with evidence from its source
// ($(go env GOMODCACHE)/github.com/mark3labs/mcp-go@v1.2.1):
//
//   - No pollInterval, ever. handleTaskAugmentedToolCall creates every task with
//     s.createTask(ctx, taskID, name, ttl, nil), commented "pollInterval is nil - server
//     doesn't set a default" (server/server.go:2294-2295); mcp.Task.PollInterval is
//     `json:"pollInterval,omitempty"` (mcp/types.go:1747) and nothing else sets it. The
//     manifest must say poll_interval_found false, and policy server must poll at its
//     configured fallback (PollPolicy.Interval).
//   - It cancels tasks on its own. HandleMessage wraps the request context in
//     context.WithCancel with `defer cancel()` (server/request_handler.go:112-113), and the
//     task goroutine derives its context from that request context
//     (executeRegularToolAsTask, server/server.go:2446; executeTaskTool, server.go:2343). The
//     context therefore ends as soon as the CreateTaskResult has been built. A tool handler
//     that honours its context returns context.Canceled, and mcp-go marks the task cancelled
//     with statusMessage "context canceled" although nobody sent tasks/cancel
//     (server/server.go:2468-2490; the same code for task tools at 2356-2377). Only a handler
//     that ignores its context completes. The client must count these tasks cancelled (R14
//     allows working -> cancelled), not unknown.
//   - A handler error fails the task: completeTask(entry, nil, err) sets status failed with
//     the error as statusMessage (server/server.go:2983-2986), and tasks/result answers with a
//     JSON-RPC -32603 error carrying the same message (server/server.go:2707-2713).
//   - The ttl is enforced by deletion: scheduleTaskCleanup sleeps ttl ms from creation,
//     cancels the unfinished task's context, deletes it and keeps a tombstone
//     (server/server.go:3086-3113); tasks/get then answers -32602 "task has expired"
//     (server/server.go:2903-2908, 2610-2616). The spec allows purging at ttl
//     (docs/RULES.md#gap-9); the client counts such tasks expired.
//   - Tasks are scoped to the Mcp-Session-Id (getTask, server/server.go:2913-2918), which
//     tasksim's clients carry on every request (docs/RULES.md#gap-8).
//   - Status notifications go to every session: completeTask and the self-cancel path call
//     sendTaskStatusNotification, which uses SendNotificationToAllClients
//     (server/server.go:3116-3136), and broadcastToSession marks each session to answer in
//     SSE from then on (server/session.go:250-252). A client therefore receives other
//     sessions' task ids (a leak: without an auth binding, docs/RULES.md#r54 relies on
//     task ids being hard to guess; mcp-go's session scoping still refuses a foreign
//     tasks/get) and gets its tasks/get replies as SSE streams with foreign notifications ahead of the reply (the
//     first test logs how many; typically most of them are foreign). The client must read
//     the reply out of such a stream and ignore the notifications (R20).
//   - An isError tool result completes the task (completeTask stores it with status
//     completed, server/server.go:2987-2989), where the spec says it SHOULD fail
//     (docs/RULES.md#r51). Not exercised here: the client keeps the first terminal
//     status it sees (R14), so such a task counts completed.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
)

// mcpgoWork is how long the mcp-go tool handler of the main run works. With the 250 ms
// fallback a task is polled about every 250 ms: 4 times working and once completed, fewer
// on a loaded machine, where each gap also holds the reply's latency. The 1 s default
// interval would poll it twice, polling without a wait hundreds of times: the gap between
// these makes the poll count evidence of the interval used without asserting a timing.
// mcpgoShort is how long the handlers of the self-termination runs work.
const (
	mcpgoWork     = 1200 * time.Millisecond
	mcpgoShort    = 200 * time.Millisecond
	mcpgoFallback = 250 * time.Millisecond
)

// mcpgoHooks counts what mcp-go's task hooks report, by final status, and keeps the status
// messages of the cancelled tasks.
type mcpgoHooks struct {
	mu                                   sync.Mutex
	created, completed, failed, canceled int
	cancelMsgs                           map[string]int
	owner                                map[string]string // task id -> session id
	noSession                            int               // tasks created without a session id
}

func (h *mcpgoHooks) taskHooks() *mcpgoserver.TaskHooks {
	th := &mcpgoserver.TaskHooks{}
	th.AddOnTaskCreated(func(_ context.Context, m mcpgoserver.TaskMetrics) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.created++
		if h.owner == nil {
			h.owner = map[string]string{}
		}
		h.owner[m.TaskID] = m.SessionID
		if m.SessionID == "" {
			h.noSession++
		}
	})
	th.AddOnTaskCompleted(func(context.Context, mcpgoserver.TaskMetrics) { h.mu.Lock(); h.completed++; h.mu.Unlock() })
	th.AddOnTaskFailed(func(context.Context, mcpgoserver.TaskMetrics) { h.mu.Lock(); h.failed++; h.mu.Unlock() })
	th.AddOnTaskCancelled(func(_ context.Context, m mcpgoserver.TaskMetrics) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.canceled++
		if h.cancelMsgs == nil {
			h.cancelMsgs = map[string]int{}
		}
		h.cancelMsgs[m.StatusMessage]++
	})
	return th
}

// wireTap wraps mcp-go's handler and watches what it sends: how many replies were SSE
// streams, how many mentioned pollInterval at all, and which task status notifications
// went to which session.
type wireTap struct {
	h http.Handler

	mu                 sync.Mutex
	replies, sse, poll int
	notified           []notified
}

// notified is one notifications/tasks/status seen on a reply to session.
type notified struct{ session, taskID string }

func (t *wireTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tw := &tapWriter{ResponseWriter: w}
	t.h.ServeHTTP(tw, r)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.replies++
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		t.sse++
	}
	if bytes.Contains(tw.body.Bytes(), []byte(`"pollInterval"`)) {
		t.poll++
	}
	for line := range bytes.Lines(tw.body.Bytes()) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &msg) == nil && msg.Method == mcp.MethodTaskStatus {
			t.notified = append(t.notified, notified{r.Header.Get("Mcp-Session-Id"), msg.Params.TaskID})
		}
	}
}

// foreign counts the status notifications delivered to a session that does not own the
// task.
func (t *wireTap) foreign(h *mcpgoHooks) (all, foreign int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range t.notified {
		if h.owner[n.taskID] != n.session {
			foreign++
		}
	}
	return len(t.notified), foreign
}

type tapWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *tapWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *tapWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startMCPGo serves an mcp-go server with tasks (list, cancel, tools/call) and one tool on
// a loopback listener and returns its endpoint.
func startMCPGo(t *testing.T, hooks *mcpgoHooks, tool mcpgo.Tool, handler mcpgoserver.ToolHandlerFunc) (string, *wireTap) {
	t.Helper()
	s := mcpgoserver.NewMCPServer("mcp-go-interop", "1.2.1",
		mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithTaskCapabilities(true, true, true),
		mcpgoserver.WithTaskHooks(hooks.taskHooks()),
	)
	s.AddTool(tool, handler)
	h := mcpgoserver.NewStreamableHTTPServer(s,
		mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))
	tap := &wireTap{h: h}
	srv := httptest.NewServer(tap)
	t.Cleanup(func() {
		_ = h.Shutdown(context.Background())
		srv.Close()
	})
	return srv.URL + "/mcp", tap
}

// runMCPGo probes the target, decides, and runs cfg against it to the end of its grace;
// during, when given, runs beside the engine.
func runMCPGo(t *testing.T, url string, cfg loadgen.Config, during ...func(*loadgen.Engine)) (*client.Manifest, *metrics.Snapshot, *loadgen.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+cfg.Grace+10*time.Second)
	defer cancel()
	hc := client.NewHTTPClient(2 * cfg.Clients)
	defer hc.CloseIdleConnections()
	target := &client.Target{
		URL:        url,
		Client:     hc,
		ClientInfo: mcp.Implementation{Name: "tasksim-test", Version: "1"},
	}
	m, err := client.Probe(ctx, target, cfg.Tool)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := m.Decide(cfg.Fallback); err != nil {
		t.Fatalf("decide: %v", err)
	}
	rec := metrics.NewRecorder(max(1, cfg.Shards), time.Now())
	eng, err := loadgen.New(cfg, target, m, rec)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, f := range during {
		wg.Go(func() { f(eng) })
	}
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the run outlived duration + grace + 10 s: %v", ctx.Err())
	}
	t.Logf("run took %v", time.Since(start).Round(time.Millisecond))
	rec.Flush(time.Now())
	return m, rec.Total(), eng
}

func mcpgoConfig(tool string, d time.Duration) loadgen.Config {
	return loadgen.Config{
		Tool:     tool,
		Clients:  5,
		Duration: d,
		Grace:    5 * time.Second,
		Poll:     loadgen.PollPolicy{Kind: loadgen.PollServer, Interval: mcpgoFallback},
		Seed:     1,
	}
}

// work returns a tool handler that works for d; it ignores its context when honourCtx is
// false, which is the only way a task completes on mcp-go v1.2.1 (see the file comment).
func work(d time.Duration, honourCtx bool, fail error) mcpgoserver.ToolHandlerFunc {
	return func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if honourCtx {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d):
			}
		} else {
			time.Sleep(d)
		}
		if fail != nil {
			return nil, fail
		}
		return mcpgo.NewToolResultText("done"), nil
	}
}

// noProtocolTrouble fails the test on any transport, protocol or HTTP error, and on any
// JSON-RPC error outside allowed (method -> code).
func noProtocolTrouble(t *testing.T, snap *metrics.Snapshot, allowed map[mcp.Op]int) {
	t.Helper()
	for m := range mcp.NumOps {
		for _, o := range []metrics.Outcome{metrics.OutcomeHTTPError, metrics.OutcomeTransport, metrics.OutcomeProtocol} {
			if n := snap.Requests[m][o]; n != 0 {
				t.Errorf("%s: %d requests ended %s, want 0", m, n, o)
			}
		}
		for slot, n := range snap.RPCCodes[m] {
			if n == 0 {
				continue
			}
			if code, ok := allowed[m]; !ok || metrics.RPCCodeSlot(code) != slot {
				t.Errorf("%s: %d JSON-RPC errors %s, want none", m, n, metrics.RPCCodeLabel(slot))
			}
		}
	}
}

// TestMCPGoInterop: tasks run on mcp-go to completion; the manifest reports what mcp-go
// declares and that it advertises no pollInterval; the client then polls at its configured
// fallback.
func TestMCPGoInterop(t *testing.T) {
	hooks := &mcpgoHooks{}
	url, tap := startMCPGo(t, hooks,
		mcpgo.NewTool("work", mcpgo.WithDescription("works a while"), mcpgo.WithTaskSupport(mcpgo.TaskSupportRequired)),
		work(mcpgoWork, false, nil))
	m, snap, eng := runMCPGo(t, url, mcpgoConfig("work", 3*time.Second))

	// The manifest, as mcp-go declares it.
	if m.ProtocolVersion != mcpgo.ProtocolVersion20251125 {
		t.Errorf("manifest protocol_version %q, want %q", m.ProtocolVersion, mcpgo.ProtocolVersion20251125)
	}
	if m.Server.Name != "mcp-go-interop" || !m.SessionID {
		t.Errorf("manifest server %+v, session_id %v; want mcp-go-interop with a session id", m.Server, m.SessionID)
	}
	if want := (client.TasksManifest{Declared: true, List: true, Cancel: true, ToolsCall: true}); m.Tasks != want {
		t.Errorf("manifest tasks %+v, want %+v", m.Tasks, want)
	}
	if m.TaskSupport != string(mcp.TaskRequired) || !m.AsTask {
		t.Errorf("manifest tool_task_support %q, as_task %v; want required, true", m.TaskSupport, m.AsTask)
	}
	if m.PollIntervalFound || m.PollIntervalMs != nil {
		t.Errorf("manifest poll_interval_found %v (%v), want false: mcp-go advertises none", m.PollIntervalFound, m.PollIntervalMs)
	}
	if m.FirstPollInterval() != 0 {
		t.Errorf("FirstPollInterval %v, want 0", m.FirstPollInterval())
	}
	if m.FallbackInterval != mcpgoFallback.Milliseconds() {
		t.Errorf("manifest fallback_interval_ms %d, want %d", m.FallbackInterval, mcpgoFallback.Milliseconds())
	}
	if m.TTLMs != nil {
		t.Errorf("manifest ttl_ms %d, want null: no ttl was requested and mcp-go sets none", *m.TTLMs)
	}

	// Outcomes.
	created, completed := snap.Counters[metrics.TasksCreated], snap.Counters[metrics.TasksCompleted]
	if created == 0 || completed != created {
		t.Errorf("%d tasks created, %d completed; want > 0, all completed", created, completed)
	}
	for _, c := range []metrics.Counter{metrics.TasksFailed, metrics.TasksCancelled, metrics.TasksExpired, metrics.TasksUnknown, metrics.InvalidTransitions} {
		if n := snap.Counters[c]; n != 0 {
			t.Errorf("%s = %d, want 0", c, n)
		}
	}
	if v := eng.Violations(); len(v) != 0 {
		t.Errorf("violations %+v, want none", v)
	}
	if r := eng.Refusals(); len(r) != 0 {
		t.Errorf("creates refused %v, want none", r)
	}
	noProtocolTrouble(t, snap, nil)
	if n := snap.RequestCount(mcp.OpTasksResult); n != completed {
		t.Errorf("%d tasks/result calls for %d completed tasks, want one each", n, completed)
	}
	hooks.mu.Lock()
	if hooks.completed != int(completed) || hooks.canceled != 0 || hooks.failed != 0 || hooks.noSession != 0 {
		t.Errorf("mcp-go hooks: %d completed, %d cancelled, %d failed, %d without session; want %d, 0, 0, 0",
			hooks.completed, hooks.canceled, hooks.failed, hooks.noSession, completed)
	}
	hooks.mu.Unlock()

	// The fallback was used: no reply ever carried a pollInterval, and the median task was
	// polled at least 3 times (see mcpgoWork) but not in a hot loop.
	tap.mu.Lock()
	if tap.poll != 0 {
		t.Errorf("%d of %d mcp-go replies mention pollInterval, want 0", tap.poll, tap.replies)
	}
	t.Logf("mcp-go: %d replies, %d of them SSE streams", tap.replies, tap.sse)
	tap.mu.Unlock()
	all, foreign := tap.foreign(hooks)
	t.Logf("mcp-go: %d notifications/tasks/status on reply streams, %d of them about another session's task", all, foreign)
	ppt := snap.Summary(metrics.PollsPerTask)
	if ppt.P50 < 3 || ppt.Max > 12 {
		t.Errorf("polls_per_task p50 %v, max %v; want p50 >= 3, max <= 12 (250 ms polls of 1.2 s tasks)", ppt.P50, ppt.Max)
	}
	t.Logf("%d tasks completed; polls_per_task min %v p50 %v max %v", completed, ppt.Min, ppt.P50, ppt.Max)
}

// TestMCPGoSelfTermination: tasks that mcp-go ends on its own are counted by their real
// outcome, never unknown, and the run ends normally. The client sends no tasks/cancel.
func TestMCPGoSelfTermination(t *testing.T) {
	cases := []struct {
		name    string
		handler mcpgoserver.ToolHandlerFunc
		ttl     time.Duration
		want    metrics.Counter
		allowed map[mcp.Op]int // JSON-RPC errors that the outcome implies
		check   func(t *testing.T, h *mcpgoHooks, n int64)
	}{
		{
			// The handler honours its context, which mcp-go ends right after the create.
			name:    "cancelled by mcp-go",
			handler: work(mcpgoShort, true, nil),
			want:    metrics.TasksCancelled,
			check: func(t *testing.T, h *mcpgoHooks, n int64) {
				if msg := context.Canceled.Error(); h.canceled < int(n) || h.cancelMsgs[msg] != h.canceled {
					t.Errorf("mcp-go cancelled %d tasks with messages %v; want >= %d, all %q", h.canceled, h.cancelMsgs, n, msg)
				}
			},
		},
		{
			name:    "failed by the handler",
			handler: work(mcpgoShort, false, errors.New("tool broke")),
			want:    metrics.TasksFailed,
			allowed: map[mcp.Op]int{mcp.OpTasksResult: mcp.CodeInternalError},
			check: func(t *testing.T, h *mcpgoHooks, n int64) {
				if h.failed < int(n) || h.canceled != 0 {
					t.Errorf("mcp-go failed %d and cancelled %d tasks; want >= %d and 0", h.failed, h.canceled, n)
				}
			},
		},
		{
			// A 100 ms ttl purges the task before its 1.2 s of work are done.
			name:    "purged at ttl",
			handler: work(mcpgoWork, false, nil),
			ttl:     100 * time.Millisecond,
			want:    metrics.TasksExpired,
			allowed: map[mcp.Op]int{mcp.OpTasksGet: mcp.CodeInvalidParams},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hooks := &mcpgoHooks{}
			url, _ := startMCPGo(t, hooks,
				mcpgo.NewTool("work", mcpgo.WithTaskSupport(mcpgo.TaskSupportOptional)), tc.handler)
			cfg := mcpgoConfig("work", 1500*time.Millisecond)
			cfg.TaskTTL = tc.ttl
			m, snap, _ := runMCPGo(t, url, cfg)
			if m.PollIntervalFound {
				t.Errorf("manifest poll_interval_found true, want false")
			}
			if tc.ttl > 0 && (m.TTLMs == nil || *m.TTLMs != tc.ttl.Milliseconds()) {
				t.Errorf("manifest ttl_ms %v, want %d", m.TTLMs, tc.ttl.Milliseconds())
			}
			created := snap.Counters[metrics.TasksCreated]
			if created == 0 {
				t.Fatal("no task created")
			}
			for _, c := range []metrics.Counter{metrics.TasksCompleted, metrics.TasksFailed, metrics.TasksCancelled, metrics.TasksExpired, metrics.TasksUnknown} {
				want := int64(0)
				if c == tc.want {
					want = created
				}
				if n := snap.Counters[c]; n != want {
					t.Errorf("%s = %d, want %d of %d created", c, n, want, created)
				}
			}
			if n := snap.Counters[metrics.InvalidTransitions]; n != 0 {
				t.Errorf("%d invalid transitions, want 0", n)
			}
			if n := snap.RequestCount(mcp.OpTasksCancel); n != 0 {
				t.Errorf("%d tasks/cancel sent, want 0: mcp-go ended these tasks itself", n)
			}
			noProtocolTrouble(t, snap, tc.allowed)
			if tc.check != nil {
				hooks.mu.Lock()
				tc.check(t, hooks, snap.Counters[tc.want])
				hooks.mu.Unlock()
			}
		})
	}
}

// TestMCPGoRollback: a rollback drill against mcp-go, a server tasksim did not write. The
// switch flips once tasks are running: those are polled to their end (mcp-go completes
// each), every later call is a plain tools/call that mcp-go answers synchronously, and
// mcp-go's own hooks saw exactly the tasks the clients saw created: none after the switch.
func TestMCPGoRollback(t *testing.T) {
	hooks := &mcpgoHooks{}
	url, _ := startMCPGo(t, hooks,
		mcpgo.NewTool("work", mcpgo.WithDescription("works a while"), mcpgo.WithTaskSupport(mcpgo.TaskSupportOptional)),
		work(mcpgoShort, false, nil))
	cfg := mcpgoConfig("work", 3*time.Second)
	cfg.Fallback = client.FallbackSync
	cfg.Rollback = loadgen.RollbackPolicy{On: true}
	_, snap, eng := runMCPGo(t, url, cfg, func(e *loadgen.Engine) {
		for e.InFlight() == 0 { // the switch finds tasks running: a condition, not a delay
			runtime.Gosched()
		}
		e.RollBack("tasks running")
	})
	rb := eng.Rollback()
	if rb.Trigger != "tasks running" || rb.PreSwitch == 0 || rb.Settled != rb.PreSwitch || rb.CreatesAfter != 0 || rb.TasksAfter != 0 {
		t.Errorf("rollback %+v: the running tasks settled, nothing created after", rb)
	}
	if rb.FallbackCalls == 0 || rb.FallbackErrors != 0 || snap.Counters[metrics.SyncCalls] != rb.FallbackCalls {
		t.Errorf("fallback %d calls, %d errors, sync_calls %d", rb.FallbackCalls, rb.FallbackErrors, snap.Counters[metrics.SyncCalls])
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if created := snap.Counters[metrics.TasksCreated]; int64(hooks.created) != created {
		t.Errorf("mcp-go created %d tasks, the clients saw %d created: a task after the switch", hooks.created, created)
	}
	noProtocolTrouble(t, snap, nil)
}
