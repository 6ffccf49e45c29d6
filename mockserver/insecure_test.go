package mockserver_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mockserver"
)

// Each insecure mode of insecure.go breaks exactly the rule it names, and the same request
// on the default server is denied (R46, R52-R54).

var twoTenants = map[string]string{"ta": "acme", "tb": "globex"}

func TestInsecureNoTenantCheck(t *testing.T) {
	for _, insecure := range []bool{false, true} {
		h := newHarness(t, mockserver.Config{Tokens: twoTenants, Insecure: mockserver.Insecure{NoTenantCheck: insecure}})
		a, b := h.connect(withToken("ta")), h.connect(withToken("tb"))
		task := a.createTask("work_task", map[string]any{"duration_ms": 0})
		_, e := b.get(task.TaskID)
		if leaked := e == nil; leaked != insecure {
			t.Errorf("no_tenant_check=%v: tasks/get by another tenant leaked=%v (%v)", insecure, leaked, e)
		}
		list := b.call("tasks/list", map[string]any{})
		if leaked := strings.Contains(string(list.Result), task.TaskID); leaked != insecure {
			t.Errorf("no_tenant_check=%v: tasks/list of another tenant shows the task: %v", insecure, leaked)
		}
		r := b.call("tasks/cancel", map[string]any{"taskId": task.TaskID})
		if insecure != (r.Err == nil || !strings.Contains(r.Err.Message, "not yours")) {
			t.Errorf("no_tenant_check=%v: tasks/cancel by another tenant: %s", insecure, r.Raw)
		}
	}
}

func TestInsecureSessionBound(t *testing.T) {
	for _, insecure := range []bool{false, true} {
		h := newHarness(t, mockserver.Config{Tokens: twoTenants, Insecure: mockserver.Insecure{SessionBound: insecure}})
		a := h.connect(withToken("ta"))
		task := a.createTask("work_task", map[string]any{"duration_ms": 0})
		// The same tenant on a new session: sees it, unless tasks are bound to the session.
		a2 := h.connect(withToken("ta"))
		if _, e := a2.get(task.TaskID); (e != nil) != insecure {
			t.Errorf("session_bound=%v: a second session of the tenant: %v", insecure, e)
		}
		// Another tenant on the creator's session (a leaked session id): denied, unless bound.
		hijack := *a
		hijack.token = "tb"
		if _, e := hijack.get(task.TaskID); (e == nil) != insecure {
			t.Errorf("session_bound=%v: another tenant's token on the creator's session: %v", insecure, e)
		}
	}
}

func TestInsecurePredictableIDs(t *testing.T) {
	for _, insecure := range []bool{false, true} {
		h := newHarness(t, mockserver.Config{Insecure: mockserver.Insecure{PredictableIDs: insecure}})
		c := h.connect()
		id1 := c.createTask("work_task", map[string]any{"duration_ms": 0}).TaskID
		id2 := c.createTask("work_task", map[string]any{"duration_ms": 0}).TaskID
		if len(id1) != 32 || len(id2) != 32 {
			t.Errorf("ids %q %q: want 32 hex digits", id1, id2)
		}
		seq := id1 == strings.Repeat("0", 31)+"1" && id2 == strings.Repeat("0", 31)+"2"
		if seq != insecure {
			t.Errorf("predictable_ids=%v: ids %s, %s", insecure, id1, id2)
		}
	}
}

func TestInsecureEchoSecrets(t *testing.T) {
	const secret = "tsk-secret-00ff"
	for _, insecure := range []bool{false, true} {
		h := newHarness(t, mockserver.Config{Insecure: mockserver.Insecure{EchoSecrets: insecure}})
		c := h.connect()
		task := c.createTask("work_task", map[string]any{"duration_ms": 0, "note": secret})
		got, e := c.get(task.TaskID)
		if e != nil {
			t.Fatal(e)
		}
		if echoed := strings.Contains(got.StatusMessage, secret); echoed != insecure {
			t.Errorf("echo_secrets=%v: statusMessage %q", insecure, got.StatusMessage)
		}
	}
}

func TestInjectCanary(t *testing.T) {
	h := newHarness(t, mockserver.Config{Inject: true})
	c := h.connect()
	task := c.createTask("work_task", map[string]any{"duration_ms": 0})
	got, _ := c.get(task.TaskID)
	if !strings.Contains(got.StatusMessage, mockserver.InjectionPrefix) {
		t.Errorf("statusMessage %q: no injection canary", got.StatusMessage)
	}
	r := c.call("tasks/result", map[string]any{"taskId": task.TaskID})
	if r.Err != nil || !strings.Contains(string(r.Result), "tsk-inject-") || !strings.Contains(string(r.Result), "work completed") {
		t.Errorf("tasks/result %s: want the canary and the result", r.Raw)
	}
}

// TestRevocation: scope all answers 401 from the set time on; scope results denies
// tasks/result (403) and nothing else.
func TestRevocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Tokens: twoTenants, Revocations: []mockserver.Revocation{
			{Tenant: "acme", At: 10 * time.Second},
			{Tenant: "globex", At: 10 * time.Second, Scope: mockserver.RevokeResults},
		}})
		a, b := h.connect(withToken("ta")), h.connect(withToken("tb"))
		ta := a.createTask("work_task", map[string]any{"duration_ms": 0})
		tb := b.createTask("work_task", map[string]any{"duration_ms": 0})
		if r := b.call("tasks/result", map[string]any{"taskId": tb.TaskID}); r.Err != nil {
			t.Fatalf("before revocation: %v", r.Err)
		}
		time.Sleep(10 * time.Second) // virtual time
		resp := a.start("tasks/get", map[string]any{"taskId": ta.TaskID})
		if resp.all(); resp.Status != http.StatusUnauthorized {
			t.Errorf("scope all: tasks/get HTTP %d, want 401", resp.Status)
		}
		resp = b.start("tasks/result", map[string]any{"taskId": tb.TaskID})
		if resp.all(); resp.Status != http.StatusForbidden {
			t.Errorf("scope results: tasks/result HTTP %d, want 403", resp.Status)
		}
		if _, e := b.get(tb.TaskID); e != nil {
			t.Errorf("scope results: tasks/get denied: %v", e)
		}
	})
}

func TestSecurityConfigProblems(t *testing.T) {
	_, err := mockserver.NewHandlerServer(mockserver.Config{Tokens: twoTenants,
		Revocations: []mockserver.Revocation{{Tenant: "nobody"}, {Tenant: "acme", At: -1, Scope: "some"}},
		Insecure:    mockserver.Insecure{SessionBound: true, NoTenantCheck: true}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`tenant "nobody" has no token`, "at must not be negative", `scope must be`, "exclude each other"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
