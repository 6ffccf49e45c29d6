package mcp_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// TestE8DiscoverResult: server/discover answers with the versions, the capabilities (the
// extension among them) and the cache hints the schema requires, resultType "complete".
func TestE8DiscoverResult(t *testing.T) {
	r := mcp.DiscoverResult{
		SupportedVersions: []string{mcp.Version20260728, mcp.Version20251125},
		Capabilities:      mcp.ModernServerCapabilities{Tools: &mcp.ToolsCapability{ListChanged: true}},
		Instructions:      "Long reindex jobs run as tasks.",
		TTLMs:             60000,
		CacheScope:        mcp.CachePublic,
		Meta:              mcp.ServerInfoMeta(mcp.Implementation{Name: "tasksim", Version: "0.1.0"}),
	}
	r.Capabilities.DeclareTasks()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"resultType":"complete","supportedVersions":`) {
		t.Errorf("DiscoverResult = %s", b)
	}
	mcptest.Must(t, mcptest.Validate2026("DiscoverResult", b))
	mcptest.Must(t, mcptest.ValidateReply2026(mcp.MethodServerDiscover, mcp.AppendResult(nil, mcp.StringID("d-1"), b)))
	var back mcp.DiscoverResult
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("read back %+v, %v", back, err)
	}
	// The smallest: a private result cached for no time, no extension.
	min, err := json.Marshal(mcp.DiscoverResult{SupportedVersions: []string{mcp.Version20260728}, CacheScope: mcp.CachePrivate})
	if err != nil {
		t.Fatal(err)
	}
	mcptest.Must(t, mcptest.Validate2026("DiscoverResult", min))

	for name, edit := range map[string]func(*mcp.DiscoverResult){
		"no version":     func(r *mcp.DiscoverResult) { r.SupportedVersions = nil },
		"negative ttlMs": func(r *mcp.DiscoverResult) { r.TTLMs = -1 },
		"no cacheScope":  func(r *mcp.DiscoverResult) { r.CacheScope = "" },
		"extension settings []": func(r *mcp.DiscoverResult) {
			r.Capabilities.Extensions = map[string]json.RawMessage{mcp.ExtTasks: json.RawMessage(`[]`)}
		},
	} {
		bad := r
		edit(&bad)
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("%s: written %s", name, b)
		}
	}
}

// TestE15InputRequiredResult: an MRTR result carries input requests, request state or both,
// of the three allowed methods, with resultType "input_required".
func TestE15InputRequiredResult(t *testing.T) {
	for _, r := range []mcp.InputRequiredResult{
		{InputRequests: mcp.InputRequests{"pick-shard": {Method: mcp.MethodElicit, Params: json.RawMessage(elicitReq)}}, RequestState: "eyJ2IjoxfQ.c2ln"},
		{RequestState: "opaque"},
		{InputRequests: mcp.InputRequests{"s": {Method: mcp.MethodSamplingCreateMessage, Params: validParams[mcp.MethodSamplingCreateMessage]}, "r": {Method: mcp.MethodRootsList}}},
		{InputRequests: mcp.InputRequests{"u": {Method: mcp.MethodElicit, Params: json.RawMessage(`{"mode":"url","message":"Sign in","url":"https://example.com/auth"}`)}}},
	} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		mcptest.Must(t, mcptest.Validate2026("InputRequiredResult", b))
		mcptest.Must(t, mcptest.ValidateReply2026(mcp.MethodToolsCall, mcp.AppendResult(nil, mcp.IntID(40), b)))
		reply, q, err := mcp.ParseCallToolReply(b, false) // E15 needs no extension
		if err != nil || q != 0 || reply.Input == nil || reply.ResultType != mcp.ResultInputRequired {
			t.Fatalf("ParseCallToolReply(%s) = %+v, %v, %v", b, reply, q, err)
		}
		if !reflect.DeepEqual(*reply.Input, r) {
			t.Errorf("round trip:\n got %+v\nwant %+v", *reply.Input, r)
		}
	}
	for name, r := range map[string]mcp.InputRequiredResult{
		"neither":                   {},
		"a method not allowed":      {InputRequests: mcp.InputRequests{"k": {Method: "tools/call", Params: json.RawMessage(`{}`)}}},
		"elicitation without form":  {InputRequests: mcp.InputRequests{"k": {Method: mcp.MethodElicit, Params: json.RawMessage(`{"message":"m"}`)}}},
		"url mode without a url":    {InputRequests: mcp.InputRequests{"k": {Method: mcp.MethodElicit, Params: json.RawMessage(`{"mode":"url","message":"m"}`)}}},
		"sampling without messages": {InputRequests: mcp.InputRequests{"k": {Method: mcp.MethodSamplingCreateMessage, Params: json.RawMessage(`{"maxTokens":5}`)}}},
		"roots with params [] ":     {InputRequests: mcp.InputRequests{"k": {Method: mcp.MethodRootsList, Params: json.RawMessage(`[]`)}}},
	} {
		if b, err := json.Marshal(r); err == nil {
			t.Errorf("%s: written %s", name, b)
		}
	}
}

// TestE1Requests: every request tasksim's clients build carries the envelope, and is a valid
// request of the era: tools/call (and its MRTR retry, E16), tasks/get, tasks/update,
// tasks/cancel (E1, ext-gap-2).
func TestE1Requests(t *testing.T) {
	meta := json.RawMessage(mustJSON(t, declaring()))
	call := mcp.CallToolRequestParams{Name: "bulk_reindex", Arguments: json.RawMessage(`{"shard":"eu-3"}`), Meta: meta}
	retry := call
	retry.InputResponses = mcp.InputResponses{"pick-shard": json.RawMessage(`{"action":"accept","content":{"shard":"eu-3"}}`)}
	retry.RequestState = "eyJ2IjoxfQ.c2ln"
	update := mcp.UpdateTaskParams{TaskID: "tsk-1", InputResponses: mcp.InputResponses{"confirm-drop-1": json.RawMessage(`{"action":"decline"}`)}, Meta: meta}
	for i, tc := range []struct {
		method string
		params any
	}{
		{mcp.MethodToolsCall, call},
		{mcp.MethodToolsCall, retry},
		{mcp.MethodTasksGet, mcp.TaskIDParams{TaskID: "tsk-1", Meta: meta}},
		{mcp.MethodTasksCancel, mcp.TaskIDParams{TaskID: "tsk-1", Meta: meta}},
		{mcp.MethodTasksUpdate, update},
	} {
		params, err := json.Marshal(tc.params)
		if err != nil {
			t.Fatal(err)
		}
		req := mcp.AppendRequest(nil, mcp.IntID(int64(44+i)), tc.method, params)
		mcptest.Must(t, mcptest.ValidateMessage2026(req))
		m, derr := mcp.Decode(req)
		if derr != nil {
			t.Fatal(derr)
		}
		got, rerr := mcp.ReadRequestMeta(m.Params, supported)
		if rerr != nil || !reflect.DeepEqual(got, declaring()) {
			t.Errorf("%s: the server reads %+v, %v", tc.method, got, rerr)
		}
		h, err := mcp.HeadersFor(tc.method, m.Params)
		if err != nil || mcp.CheckHeaders(h, &m) != nil {
			t.Errorf("%s: headers %+v, %v", tc.method, h, err)
		}
	}
	var back mcp.UpdateTaskParams
	if b, _ := json.Marshal(update); json.Unmarshal(b, &back) != nil || !reflect.DeepEqual(back, update) {
		t.Errorf("UpdateTaskParams read back %+v", back)
	}
	for _, bad := range []mcp.UpdateTaskParams{{InputResponses: update.InputResponses}, {TaskID: "t"}, {TaskID: "t", InputResponses: mcp.InputResponses{}}} {
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("UpdateTaskParams %+v written: %s", bad, b)
		}
	}
}

// TestE41ParseCallToolReply: a client that declared the extension handles each of the three
// results (E41); "task" without the declaration, or a resultType nobody defined, is invalid
// (E13); each row names its rule.
func TestE41ParseCallToolReply(t *testing.T) {
	task := `"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":2000`
	tests := []struct {
		rule  string
		raw   string
		tasks bool
		want  mcp.ResultType
		quirk mcp.Quirks
		err   string
	}{
		{"E41 complete", `{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":true}`, true, mcp.ResultComplete, 0, ""},
		{"E12 no resultType", `{"content":[]}`, true, mcp.ResultComplete, mcp.QuirkNoResultType, ""},
		{"E41 input_required", `{"resultType":"input_required","requestState":"s"}`, true, mcp.ResultInputRequired, 0, ""},
		{"E41 task", `{"resultType":"task",` + task + `}`, true, mcp.ResultTask, 0, ""},
		{"ext-gap-5 a nested task", `{"resultType":"task","task":{` + task + `}}`, true, mcp.ResultTask, mcp.QuirkNestedTask, ""},
		{"ext-gap-11 an MRTR retry may become a task", `{"resultType":"task",` + task + `,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`, true, mcp.ResultTask, 0, ""},
		{"E13 task without the declaration", `{"resultType":"task",` + task + `}`, false, "", 0, "did not declare"},
		{"E13 an unknown resultType", `{"resultType":"deferred","content":[]}`, true, "", 0, "unknown resultType"},
		{"E15 input_required with neither member", `{"resultType":"input_required"}`, true, "", 0, "neither"},
		{"a created task without ttlMs", `{"resultType":"task","taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a"}`, true, "", 0, "ttlMs"},
		{"a result that is no object", `[]`, true, "", 0, "object"},
	}
	for _, tc := range tests {
		r, q, err := mcp.ParseCallToolReply([]byte(tc.raw), tc.tasks)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %+v, %v; want an error with %q", tc.rule, r, err, tc.err)
			}
			continue
		}
		n := 0
		for _, set := range []bool{r.Call != nil, r.Input != nil, r.Task != nil} {
			if set {
				n++
			}
		}
		if err != nil || r.ResultType != tc.want || q != tc.quirk || n != 1 {
			t.Errorf("%s: got %+v, %v, %v; want %s, quirks %v, one result", tc.rule, r, q, err, tc.want, tc.quirk)
		}
		if r.Task != nil && (r.Task.TaskID != "t" || r.Task.PollIntervalMs == nil || *r.Task.PollIntervalMs != 2000) {
			t.Errorf("%s: task %+v", tc.rule, r.Task)
		}
	}
}
