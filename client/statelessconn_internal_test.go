package client

import (
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// TestParseCallOfTheEnvelope (readCreated, the create of statelessConn): in 2026-07-28 a CreateTaskResult is a valid answer only to a
// tools/call that declared the Tasks extension (E13, E39): a run with the sync fallback,
// whose envelope declares none, takes it as the invalid reply it is.
func TestParseCallOfTheEnvelope(t *testing.T) {
	created := []byte(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-08-03T14:00:00Z",` +
		`"lastUpdatedAt":"2026-08-03T14:00:00Z","ttlMs":60000,"pollIntervalMs":1000}`)
	plain := []byte(`{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
	for _, tc := range []struct {
		declared    bool
		raw         []byte
		task, call  bool
		errContains string
	}{
		{true, created, true, false, ""},
		{false, created, false, false, "#e13"},
		{false, plain, false, true, ""},
		{true, plain, false, true, ""},
	} {
		var caps mcp.ModernClientCapabilities
		if tc.declared {
			caps.DeclareTasks()
		}
		env, err := (&Target{}).NewEnvelope(ProtocolModern, caps)
		if err != nil {
			t.Fatal(err)
		}
		cr := readCreated(tc.raw, env.DeclaresTasks())
		task, call, err := cr.Task, cr.Call, cr.Malformed
		switch {
		case tc.errContains != "" && (err == nil || !strings.Contains(err.Error(), tc.errContains)):
			t.Errorf("declared %v, %s: error %v, want one citing %s", tc.declared, tc.raw, err, tc.errContains)
		case tc.errContains == "" && (err != nil || (task != nil) != tc.task || (call != nil) != tc.call):
			t.Errorf("declared %v, %s: task %v call %v err %v", tc.declared, tc.raw, task, call, err)
		}
	}
}

// TestTaskRefName: the Mcp-Name a request about a task carries from its TaskRef (callTask)
// is the one NameHeader reads out of the request's params, for plain ids and for ids that
// must be encoded (E25).
func TestTaskRefName(t *testing.T) {
	for _, id := range []string{"5b9f0c2e8d7a4e31a1c4f0d2b6e8a913", "tâche 1", " lead", "=?base64?eA==?=", "a\"b\\c"} {
		ref := NewTaskRef(id)
		for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksCancel} {
			want, err := mcp.NameHeader(m, ref.Params())
			if err != nil {
				t.Fatal(err)
			}
			if got := ref.name(); got != want {
				t.Errorf("%s of %q: Mcp-Name %q, want %q", m, id, got, want)
			}
		}
		if got, want := (TaskRef{ID: id}).name(), ref.name(); got != want {
			t.Errorf("a TaskRef not made by NewTaskRef: %q, want %q", got, want)
		}
	}
}

// TestModernHeaderAllocs guards the cost of the header of a poll in 2026-07-28 after the
// client was idle (Session.Idle drops the cached one): with the name from the TaskRef it is
// the header map and its values and the cache entry, without reading the name back out of
// params (a closure, the name string and the scan: about 1,800 instructions).
func TestModernHeaderAllocs(t *testing.T) {
	tg := &Target{URL: "http://127.0.0.1:8080/mcp"}
	env, err := tg.NewEnvelope(ProtocolModern, mcp.ModernClientCapabilities{})
	if err != nil {
		t.Fatal(err)
	}
	s := tg.Stateless(env)
	ref := NewTaskRef("5b9f0c2e8d7a4e31a1c4f0d2b6e8a913")
	build := func(name string) func() {
		return func() {
			s.Idle()
			if _, err := s.modernHeader(mcp.MethodTasksGet, ref.Params(), name); err != nil {
				t.Fatal(err)
			}
		}
	}
	fromRef := testing.AllocsPerRun(100, build(ref.name()))
	fromParams := testing.AllocsPerRun(100, build(""))
	t.Logf("from the TaskRef %v, from params %v", fromRef, fromParams)
	// the map and its group, the two value slices, the cache entry and its params copy
	if fromRef > 6 || fromRef >= fromParams {
		t.Errorf("header of a poll: %v allocations from the TaskRef, %v from params; want at most 6, and fewer", fromRef, fromParams)
	}
	h, _ := s.modernHeader(mcp.MethodTasksGet, ref.Params(), "")
	if got := h[mcp.HeaderName]; len(got) != 1 || got[0] != ref.ID {
		t.Errorf("Mcp-Name %q, want %q", got, ref.ID)
	}
}
