package main

// `tasksim probe` and `tasksim run` against real third-party peers on the official
// TypeScript SDK (@modelcontextprotocol/sdk), started by internal/peers on 127.0.0.1:
// server-everything, the SDK team's reference server, and sdk-tasks, a small server of ours
// on the SDK's own task store, message queue and tasks/* handlers. They skip, saying how to
// install Node.js and the packages, unless TASKSIM_REQUIRE_NODE=1 (.ci/run) makes a missing
// peer a failure.
//
// What the peers do that these tests rely on, from their code (internal/peers/testdata/
// node_modules/@modelcontextprotocol/...):
//
//   - server-everything registers simulate-research-query (taskSupport required; arguments
//     topic, required, and ambiguous) only once notifications/initialized has arrived
//     (server/index.js, oninitialized). Each task gets ttl 300000 and pollInterval 1000 and
//     goes through 4 stages of 1 s; with ambiguous true, and a client that declared
//     elicitation, it goes input_required at the third stage and asks one elicitation/create,
//     queued for the tasks/result stream (tools/simulate-research-query.js).
//   - The SDK answers every POST that carries a request as an SSE stream (no
//     enableJsonResponse in either peer); server-everything also primes each stream with an
//     id and empty data (it has an event store).
//   - The SDK turns any error of a tools/call, argument validation included, into a
//     CallToolResult with isError (server/mcp.js), not a JSON-RPC error.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/peers"
	"github.com/tasksim/tasksim/results"
)

// Server-everything's task tool, and what it grants every task.
const (
	everythingTool       = "simulate-research-query"
	everythingPollMs     = 1000
	everythingTTLMs      = 300000
	everythingServerName = "mcp-servers/everything"
)

// TestPeerEverythingProbe: the manifest of server-everything: 2025-11-25, tasks with list
// and cancel, simulate-research-query required with its declared arguments, a session id,
// DELETE accepted, a GET stream offered.
func TestPeerEverythingProbe(t *testing.T) {
	url := peers.Start(t, peers.Everything)
	m, _ := probe(t, "--target", url)
	if m.ProtocolVersion != "2025-11-25" || m.Server.Name != everythingServerName {
		t.Errorf("protocol %q server %+v, want 2025-11-25 and %s", m.ProtocolVersion, m.Server, everythingServerName)
	}
	if !m.Tasks.Declared || !m.Tasks.List || !m.Tasks.Cancel || !m.Tasks.ToolsCall {
		t.Errorf("tasks leaves %+v, want all declared", m.Tasks)
	}
	if got := m.taskSupport(everythingTool); got != "required" {
		t.Errorf("%s taskSupport %q, want required (tools: %+v)", everythingTool, got, m.Tools)
	}
	if got := m.taskSupport("echo"); got != "forbidden" {
		t.Errorf("echo taskSupport %q, want forbidden (no execution declared)", got)
	}
	for _, tl := range m.Tools {
		if tl.Name == everythingTool && strings.Join(tl.Args, ",") != "ambiguous,topic" {
			t.Errorf("%s args %v, want ambiguous and topic", tl.Name, tl.Args)
		}
	}
	s := m.Session
	if !m.SessionID || !s.IDIssued || s.DeleteStatus != 200 || !s.DeleteAccepted || s.GetStatus != 200 || !s.GetStreamOffered {
		t.Errorf("session evidence %+v", s)
	}
}

// TestPeerEverythingProbeCreateTask: --create-task calls the first task tool,
// simulate-research-query, with the minimal arguments its inputSchema requires ("topic", a
// string), observes what the server grants (pollInterval 1 s, ttl 5 min) and cancels the
// task. With --args it calls the tool with those instead; with arguments the tool refuses,
// the SDK's -32602 is noted and nothing is observed.
func TestPeerEverythingProbeCreateTask(t *testing.T) {
	url := peers.Start(t, peers.Everything)
	m, _ := probe(t, "--target", url, "--create-task")
	if m.PollIntervalMs == nil || *m.PollIntervalMs != 1000 || m.TTLMs == nil || *m.TTLMs != 300_000 {
		t.Errorf("poll_interval_ms %v ttl_ms %v, want 1000 and 300000", m.PollIntervalMs, m.TTLMs)
	}
	if n := m.notes(); !strings.Contains(n, `one task of "`+everythingTool+`" was created`) || !strings.Contains(n, "the task was cancelled") {
		t.Errorf("notes %q: want the task created and cancelled", n)
	}
	m, _ = probe(t, "--target", url, "--create-task", "--args", `{"topic":7}`)
	if m.PollIntervalMs != nil || m.TTLMs != nil {
		t.Errorf("poll_interval_ms %v ttl_ms %v, want null: the tool refused its arguments", m.PollIntervalMs, m.TTLMs)
	}
	if n := m.notes(); !strings.Contains(n, `tools/call of "`+everythingTool+`" was refused`) || !strings.Contains(n, "-32602") {
		t.Errorf("notes %q: want the refusal (-32602) noted", n)
	}
}

// TestPeerEverythingRun: a short closed-model run of simulate-research-query: every task
// created completes, its result read, with no request failing; and the same with an
// ambiguous topic, where each task asks one question on its tasks/result stream.
func TestPeerEverythingRun(t *testing.T) {
	url := peers.Start(t, peers.Everything)
	for _, tc := range []struct {
		name, args string
		input      bool
	}{
		{"plain", `{"topic":"tasksim"}`, false},
		{"input_required", `{"topic":"python","ambiguous":true}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A task takes ~4 s (4 stages of 1 s) and is polled every second: three clients
			// start one each in the 2 s of load; grace is a bound, not a wait (too few tasks
			// finish for the cleanup_lag probe, which would wait out the 5 min ttl).
			sum := runPeer(t, url, "--tool", everythingTool, "--args", tc.args, "--clients", "3",
				"--duration", "2s", "--set", "grace=30s")
			wantClean(t, sum)
			man := sum.Manifest
			if man == nil || man.TaskSupport != "required" || !man.AsTask ||
				ms(man.PollIntervalMs) != everythingPollMs || ms(man.TTLMs) != everythingTTLMs {
				t.Errorf("manifest %+v", man)
			}
			elicited := sum.Counters["elicitations_received"]
			if tc.input && (elicited != sum.Tasks.Created || sum.Counters["elicitations_accepted"] != elicited) {
				t.Errorf("elicitations %d received, %d accepted; want one accepted per task (%d)",
					elicited, sum.Counters["elicitations_accepted"], sum.Tasks.Created)
			}
			if !tc.input && elicited != 0 {
				t.Errorf("%d elicitations without ambiguous", elicited)
			}
		})
	}
}

// TestPeerSDKTasksProbe: the manifest of our SDK server: one tool per taskSupport and what
// it grants a task created without a requested ttl.
func TestPeerSDKTasksProbe(t *testing.T) {
	url := peers.Start(t, peers.SDKTasks, "--poll-interval", "150", "--ttl", "45000")
	m, _ := probe(t, "--target", url, "--create-task")
	if m.ProtocolVersion != "2025-11-25" || m.Server.Name != "sdk-tasks-server" {
		t.Errorf("protocol %q server %+v", m.ProtocolVersion, m.Server)
	}
	if !m.Tasks.Declared || !m.Tasks.List || !m.Tasks.Cancel || !m.Tasks.ToolsCall {
		t.Errorf("tasks leaves %+v, want all declared", m.Tasks)
	}
	for tool, want := range map[string]string{"work": "optional", "work_task": "required", "work_sync": "forbidden"} {
		if got := m.taskSupport(tool); got != want {
			t.Errorf("%s taskSupport %q, want %q", tool, got, want)
		}
	}
	if m.PollIntervalMs == nil || *m.PollIntervalMs != 150 || m.TTLMs == nil || *m.TTLMs != 45000 {
		t.Errorf("poll_interval_ms %v ttl_ms %v, want 150 and 45000; notes %q", m.PollIntervalMs, m.TTLMs, m.Notes)
	}
	if n := m.notes(); !strings.Contains(n, `task of "work" was created`) || !strings.Contains(n, "the task was cancelled") {
		t.Errorf("notes %q: want the task created and cancelled", n)
	}
	s := m.Session
	if !s.IDIssued || s.DeleteStatus != 200 || s.GetStatus != 200 || !s.GetStreamOffered {
		t.Errorf("session evidence %+v", s)
	}
}

// TestPeerSDKTasksRun: short runs against our SDK server, one per path of the SDK's task
// support: the required and the optional tool, a 200 KB result, results read by blocking
// tasks/result at once, cancels, and input_required answered on the tasks/result stream.
func TestPeerSDKTasksRun(t *testing.T) {
	url := peers.Start(t, peers.SDKTasks, "--poll-interval", "100")
	// task_ttl bounds the run: on a real target one finished task in ten is polled after
	// its expiry to measure cleanup_lag, and the server's default ttl is a minute.
	short := []string{"--clients", "4", "--duration", "2s", "--set", "grace=20s", "--set", "task_ttl=5s"}
	t.Run("work_task", func(t *testing.T) {
		sum := runPeer(t, url, short...)
		wantClean(t, sum)
		if man := sum.Manifest; man == nil || man.TaskSupport != "required" || ms(man.PollIntervalMs) != 100 {
			t.Errorf("manifest %+v", man)
		}
	})
	t.Run("work optional", func(t *testing.T) {
		sum := runPeer(t, url, append(short, "--tool", "work")...)
		wantClean(t, sum)
		if man := sum.Manifest; man == nil || man.TaskSupport != "optional" || !man.AsTask {
			t.Errorf("manifest %+v", man)
		}
	})
	t.Run("200 KB result", func(t *testing.T) {
		// The result is one JSON-RPC message of ~205 KB on one SSE data line; a task counts
		// completed only once its tasks/result reply decoded whole (else result_lost).
		sum := runPeer(t, url, append(short, "--set", "args.payload_bytes=204800")...)
		wantClean(t, sum)
		if r := sum.Requests["tasks/result"]; r.ByOutcome["ok"] != sum.Tasks.Completed {
			t.Errorf("tasks/result %+v, want one ok per completed task (%d)", r, sum.Tasks.Completed)
		}
	})
	t.Run("result block", func(t *testing.T) {
		// tasks/result right after the create: the SDK holds the stream open, re-reading
		// its store every pollInterval, until the task ends.
		sum := runPeer(t, url, append(short, "--set", "client.result=block", "--set", "args.duration_ms=800")...)
		wantClean(t, sum)
		if n := sum.Requests["tasks/get"].Count; n != 0 {
			t.Errorf("%d tasks/get with result: block", n)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		// Cancels go out 100-300 ms into tasks of 10 s: none can come late.
		sum := runPeer(t, url, append(short, "--set", "args.duration_ms=10000", "--set", "client.cancel.probability=1",
			"--set", "client.cancel.delay.min=100ms", "--set", "client.cancel.delay.max=300ms")...)
		wantVerdict(t, sum)
		g := sum.Gates.Cancellation
		if sum.Tasks.Created == 0 || sum.Tasks.Cancelled != sum.Tasks.Created || !g.Evaluated || !g.Pass ||
			sum.Counters["cancels_acked"] != sum.Tasks.Created {
			t.Errorf("tasks %+v, cancellation gate %+v, counters %v: want every task cancelled, each cancel acknowledged",
				sum.Tasks, g, sum.Counters)
		}
		wantNoErrors(t, sum)
	})
	t.Run("input_required", func(t *testing.T) {
		sum := runPeer(t, url, append(short, "--set", "args.input_required=true", "--set", "args.duration_ms=600")...)
		wantClean(t, sum)
		if e := sum.Counters["elicitations_received"]; e != sum.Tasks.Created || sum.Counters["elicitations_accepted"] != e {
			t.Errorf("counters %v: want one elicitation received and accepted per task (%d)", sum.Counters, sum.Tasks.Created)
		}
	})
}

// runPeer runs `tasksim run smoke --target url ARGS...` and returns its summary; the run
// must exit 0.
func runPeer(t *testing.T, url string, args ...string) *results.Summary {
	t.Helper()
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, append([]string{"run", "smoke", "--target", url, "--no-progress", "--out", dir}, args...)...)
	if code != 0 {
		t.Fatalf("run exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	sum, err := results.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// wantClean: tasks were created and every one completed with its result read, no request
// failed, and the verdict is pass.
func wantClean(t *testing.T, sum *results.Summary) {
	t.Helper()
	wantVerdict(t, sum)
	if tk := sum.Tasks; tk.Created == 0 || tk.Completed != tk.Created {
		t.Errorf("tasks %+v, want some created and all completed", tk)
	}
	if n := sum.Counters["results_lost"]; n != 0 {
		t.Errorf("%d results lost", n)
	}
	wantNoErrors(t, sum)
}

func wantVerdict(t *testing.T, sum *results.Summary) {
	t.Helper()
	if sum.Verdict != results.VerdictPass {
		b, _ := json.Marshal(sum.Gates)
		t.Errorf("verdict %s, want pass; gates %s", sum.Verdict, b)
	}
}

func wantNoErrors(t *testing.T, sum *results.Summary) {
	t.Helper()
	for method, r := range sum.Requests {
		if r.Errors != 0 {
			t.Errorf("%s: %d errors of %d: %+v", method, r.Errors, r.Count, r)
		}
	}
}

// TestPeerExtTasksRequester: the official requester, @modelcontextprotocol/ext-tasks 0.2.2
// on @modelcontextprotocol/client 2.4.0 (internal/peers/testdata/ext-tasks-requester.mjs),
// drives `tasksim serve` through the task lifecycle in the era the client negotiates:
// 2026-07-28 against a server of both eras or of the modern one only (server/discover,
// a task created by the server, tasks/get with the result or error inline, input through
// tasks/update), 2025-11-25 against a legacy-only one (initialize, tasks/result,
// elicitation on its stream). A tool result with isError is a completed task in the
// modern era (E49) and a failed one in the legacy era (R51).
func TestPeerExtTasksRequester(t *testing.T) {
	type call struct {
		args         string
		status       string // the requester's outcome
		modernStatus string // when the modern era differs
		inputs       int
	}
	calls := []call{
		{args: `{"duration_ms":200}`, status: "completed"},
		{args: `{"duration_ms":200,"outcome":"error"}`, status: "failed"},
		{args: `{"duration_ms":200,"outcome":"failed"}`, status: "failed", modernStatus: "completed"},
		{args: `{"duration_ms":200,"input_rounds":2}`, status: "completed", inputs: 2},
	}
	for _, tc := range []struct{ protocols, era string }{{"both", "modern"}, {"modern", "modern"}, {"legacy", "legacy"}} {
		t.Run(tc.protocols, func(t *testing.T) {
			url := startServe(t, "--protocols", tc.protocols, "--poll-interval", "100ms")
			for _, c := range calls {
				out, err := peers.Run(t, time.Minute, "ext-tasks-requester.mjs", url, "work_task", c.args)
				var got struct {
					Era     string `json:"era"`
					Inputs  int    `json:"inputs"`
					Error   string `json:"error"`
					Outcome struct {
						Status string `json:"status"`
					} `json:"outcome"`
				}
				if jerr := json.Unmarshal(out, &got); jerr != nil || err != nil {
					t.Fatalf("%s: %v / %v: %s", c.args, err, jerr, out)
				}
				want := c.status
				if tc.era == "modern" && c.modernStatus != "" {
					want = c.modernStatus
				}
				if got.Era != tc.era || got.Outcome.Status != want || got.Inputs != c.inputs {
					t.Errorf("%s: era %q, outcome %q, inputs %d; want %q, %q, %d (%s)", c.args, got.Era, got.Outcome.Status,
						got.Inputs, tc.era, want, c.inputs, got.Error)
				}
			}
		})
	}
}

// ms is a manifest's figure in ms; -1 for null (none seen).
func ms(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
