package mockserver_test

// Tests of subscriptions/listen with notifications.taskIds (docs/RULES.md#e17 to #e20,
// #e61 to #e63). Every message a stream carries is validated against the 2026-07-28 and
// extension schemas (mcptest.ValidateMessage2026, ValidateReply2026).

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// listenStream is one open subscriptions/listen.
type listenStream struct {
	mc     *modernClient
	id     string // the listen request's id as JSON text: the subscriptionId (E18)
	resp   *response
	cancel context.CancelFunc
}

// listen opens a subscriptions/listen with filter as params.notifications.
func (mc *modernClient) listen(filter map[string]any) *listenStream {
	mc.h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	body := mc.body("subscriptions/listen", map[string]any{"notifications": filter})
	msg, _ := mcp.Decode(body)
	return &listenStream{mc: mc, id: msg.ID.String(), resp: mc.h.do(mc.request(ctx, body)), cancel: cancel}
}

// listenTasks listens for the tasks ids.
func (mc *modernClient) listenTasks(ids ...string) *listenStream {
	return mc.listen(map[string]any{"taskIds": ids})
}

// next returns the next message of the stream, validated, and whether it is the listen's
// result; ok is false when the stream ended.
func (ls *listenStream) next() (msg mcp.Message, raw []byte, ok bool) {
	t := ls.mc.h.t
	t.Helper()
	data, ok := ls.resp.nextEvent()
	if !ok {
		return mcp.Message{}, nil, false
	}
	m, perr := mcp.Decode(data)
	if perr != nil {
		t.Fatalf("listen: undecodable event %s: %v", data, perr)
	}
	if m.Kind == mcp.KindResult || m.Kind == mcp.KindError {
		if err := mcptest.ValidateReply2026("subscriptions/listen", data); err != nil {
			t.Errorf("listen result fails the schemas: %.600v", err)
		}
	} else if err := mcptest.ValidateMessage2026(data); err != nil {
		t.Errorf("listen event fails the schemas: %.600v\n%s", err, data)
	}
	return m, data, true
}

// ack reads the acknowledgement, which must come first (E17), and returns its taskIds (nil
// when it has none).
func (ls *listenStream) ack() []string {
	t := ls.mc.h.t
	t.Helper()
	if ct := ls.resp.Header.Get("Content-Type"); ls.resp.Status != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("listen: HTTP %d %s, want 200 text/event-stream: %s", ls.resp.Status, ct, ls.resp.all())
	}
	m, raw, ok := ls.next()
	if !ok || m.Method != mcp.MethodSubscriptionsAcknowledged {
		t.Fatalf("listen: first event %s, want the acknowledgement (E17)", raw)
	}
	ls.checkSubscription(m.Params, raw)
	var p struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for k, v := range p.Notifications {
		if k != "taskIds" {
			t.Errorf("ack agrees to %s, which the server does not send (E19)", k)
		}
		_ = json.Unmarshal(v, &ids)
	}
	return ids
}

// checkSubscription wants params._meta to name the listen (E18).
func (ls *listenStream) checkSubscription(params []byte, raw []byte) {
	t := ls.mc.h.t
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	if got := string(p.Meta[mcp.MetaSubscriptionID]); got != ls.id {
		t.Errorf("subscriptionId %s, want %s (E18): %s", got, ls.id, raw)
	}
}

// task reads the next event, which must be a notifications/tasks, and returns the task.
func (ls *listenStream) task() mcp.DetailedTask {
	t := ls.mc.h.t
	t.Helper()
	m, raw, ok := ls.next()
	if !ok || m.Method != mcp.MethodTaskNotification {
		t.Fatalf("listen: event %s (stream open: %v), want notifications/tasks", raw, ok)
	}
	d, sub, q, err := mcp.ParseTaskNotification(m.Method, m.Params)
	if err != nil || q != 0 || sub.String() != ls.id {
		t.Fatalf("notification %s: %v, quirks %v, subscription %s", raw, err, q, sub)
	}
	// E62: the task exactly as tasks/get returns it now (time stands still in the bubble).
	got := ls.mc.ok("tasks/get", map[string]any{"taskId": d.TaskID})
	if want := taskMembers(t, got.Result); want != taskMembers(t, m.Params) {
		t.Errorf("notification %s\nis not what tasks/get returns: %s (E62)", m.Params, got.Result)
	}
	return d
}

// taskMembers is a task object without resultType and _meta, canonical, for comparison.
func taskMembers(t testing.TB, obj []byte) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "resultType")
	delete(m, "_meta")
	b, _ := json.Marshal(m)
	return string(b)
}

// end wants the graceful end: the listen result naming the subscription (E20), then EOF.
func (ls *listenStream) end() {
	t := ls.mc.h.t
	t.Helper()
	m, raw, ok := ls.next()
	if !ok || m.Kind != mcp.KindResult || m.ID.String() != ls.id {
		t.Fatalf("listen: %s (open: %v), want the listen result (E20)", raw, ok)
	}
	ls.checkSubscription(m.Result, raw)
	ls.eof()
}

// eof wants the stream to end now, with nothing more on it.
func (ls *listenStream) eof() {
	t := ls.mc.h.t
	t.Helper()
	if _, raw, ok := ls.next(); ok {
		t.Fatalf("listen: %s after the end", raw)
	}
}

func listenServer(t *testing.T, cfg mockserver.Config) *harness {
	cfg.StatusNotifications = true
	return modernServer(t, cfg)
}

// TestE17E20ListenLifecycle: the ack lists only the caller's tasks; each is reported as it
// is, then at every status change, input rounds answered through tasks/update included; the
// stream ends with the listen result once all are terminal, and nothing of the listen is
// left behind.
func TestE17E20ListenLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := listenServer(t, mockserver.Config{Tokens: map[string]string{"tok-a": "alice", "tok-b": "bob"}})
		alice, bob := h.modern(modernToken("tok-a")), h.modern(modernToken("tok-b"))
		a := alice.create("work_task", map[string]any{"duration_ms": 1000, "input_required": true})
		b := alice.create("work", map[string]any{"duration_ms": 2000, "outcome": "error"})
		c := bob.create("work", map[string]any{"duration_ms": 2000})
		ls := alice.listenTasks(a.TaskID, b.TaskID, c.TaskID, "no-such-task", a.TaskID)
		if got, want := ls.ack(), []string{a.TaskID, b.TaskID}; !slices.Equal(got, want) {
			t.Fatalf("ack taskIds %v, want %v: only the caller's, once each (E67)", got, want)
		}
		for _, id := range []string{a.TaskID, b.TaskID} {
			if d := ls.task(); d.TaskID != id || d.Status != mcp.StatusWorking {
				t.Fatalf("snapshot %+v, want %s working", d, id)
			}
		}
		if n := h.srv.Subscribers(a.TaskID); n != 1 {
			t.Fatalf("%d listens registered with a, want 1", n)
		}
		time.Sleep(500 * time.Millisecond)
		d := ls.task()
		if d.TaskID != a.TaskID || d.Status != mcp.StatusInputRequired || len(d.InputRequests) != 1 {
			t.Fatalf("at 0.5 s: %+v, want a input_required with its input request", d)
		}
		for k := range d.InputRequests {
			alice.ok("tasks/update", map[string]any{"taskId": a.TaskID, "inputResponses": map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"answer": "y"}}}})
		}
		if d := ls.task(); d.TaskID != a.TaskID || d.Status != mcp.StatusWorking {
			t.Fatalf("after tasks/update: %+v, want a working", d)
		}
		time.Sleep(500 * time.Millisecond)
		if d := ls.task(); d.TaskID != a.TaskID || d.Status != mcp.StatusCompleted || d.Result == nil {
			t.Fatalf("at 1 s: %+v, want a completed with its result inline (E62)", d)
		}
		time.Sleep(time.Second)
		if d := ls.task(); d.TaskID != b.TaskID || d.Status != mcp.StatusFailed || d.Error == nil {
			t.Fatalf("at 2 s: %+v, want b failed with its error inline", d)
		}
		ls.end()
		synctest.Wait()
		st := h.srv.Stats()
		if st.Subscriptions != 0 || h.srv.Subscribers(a.TaskID) != 0 || h.srv.Subscribers(b.TaskID) != 0 || h.srv.Subscribers(c.TaskID) != 0 {
			t.Fatalf("after the end: %d open, subscribers %d %d %d; want none", st.Subscriptions,
				h.srv.Subscribers(a.TaskID), h.srv.Subscribers(b.TaskID), h.srv.Subscribers(c.TaskID))
		}
		if n := st.ModernRequests[mcp.OpSubscriptionsListen][mockserver.OutcomeOK]; n != 1 {
			t.Errorf("subscriptions_listen ok = %d, want 1", n)
		}
		var notes = map[string]uint64{}
		st.Notifications.Each(func(era, method string, n uint64) { notes[era+"/"+method] = n })
		if notes["modern/tasks_status"] != 6 || notes["modern/subscriptions_acknowledged"] != 1 {
			t.Errorf("notifications %v, want 6 task notifications and 1 ack", notes)
		}
		if st.OrphanedTasks != 0 {
			t.Errorf("a result delivered by a notification counts as fetched")
		}
	})
}

// TestE61ListenNeedsExtension: taskIds without the extension is -32021 with 400; a filter
// without taskIds asks for nothing the server sends: an empty ack, then the graceful end.
func TestE61ListenNeedsExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := listenServer(t, mockserver.Config{})
		un := h.modern(undeclared)
		r := un.wantError("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}}, mcp.CodeMissingRequiredClientCapability)
		var d mcp.MissingRequiredClientCapabilityData
		if json.Unmarshal(r.Err.Data, &d) != nil || !d.RequiredCapabilities.DeclaresTasks() || r.Status != http.StatusBadRequest {
			t.Fatalf("HTTP %d %s: want 400 naming the extension", r.Status, r.Raw)
		}
		for _, bad := range []string{`{}`, `{"notifications":{"taskIds":"x"}}`, `{"notifications":{"taskIds":[1]}}`, `{"notifications":null}`} {
			mc := h.modern()
			params := `{"_meta":` + string(mc.envelope()) + `,` + bad[1:]
			if bad == `{}` {
				params = `{"_meta":` + string(mc.envelope()) + `}`
			}
			status, _, raw := mc.postRaw([]byte(`{"jsonrpc":"2.0","id":"bad","method":"subscriptions/listen","params":` + params + `}`))
			if r := decodeModern(t, "subscriptions/listen", status, raw); r.Err == nil || r.Err.Code != mcp.CodeInvalidParams {
				t.Errorf("params %s: %s, want -32602", bad, raw)
			}
		}
		ls := un.listen(map[string]any{"toolsListChanged": true})
		if ids := ls.ack(); ids != nil {
			t.Fatalf("ack taskIds %v, want none asked, none agreed", ids)
		}
		ls.end()
	})
}

// TestListenStatusNotificationsOff: server.status_notifications off means no task
// notifications in this era either: the ack agrees to no taskIds, and the listen ends.
func TestListenStatusNotificationsOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 1000})
		ls := mc.listenTasks(tk.TaskID)
		if ids := ls.ack(); ids == nil || len(ids) != 0 {
			t.Fatalf("ack taskIds %v, want [] (none agreed)", ids)
		}
		ls.end()
	})
}

// TestListenDisconnectFreesEverything: a client that closes its listen ends it at once:
// the handler returns, the open count and every task's registration drop, and nothing more
// is written (E21). synctest.Test fails on a goroutine left blocked in the bubble.
func TestListenDisconnectFreesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := listenServer(t, mockserver.Config{})
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 5000})
		ls := mc.listenTasks(tk.TaskID)
		ls.ack()
		ls.task()
		if st := h.srv.Stats(); st.Subscriptions != 1 || h.srv.Subscribers(tk.TaskID) != 1 {
			t.Fatalf("open %d, subscribers %d; want 1 and 1", st.Subscriptions, h.srv.Subscribers(tk.TaskID))
		}
		ls.cancel()
		synctest.Wait()
		select {
		case <-ls.resp.done:
		default:
			t.Fatal("the listen handler still runs after its client left")
		}
		if st := h.srv.Stats(); st.Subscriptions != 0 || h.srv.Subscribers(tk.TaskID) != 0 {
			t.Fatalf("after the disconnect: open %d, subscribers %d; want 0 and 0", st.Subscriptions, h.srv.Subscribers(tk.TaskID))
		}
		ls.eof() // dropped, no result
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got := mc.get(tk.TaskID); got.Status != mcp.StatusCompleted {
			t.Fatalf("the task after its listener left: %+v", got)
		}
	})
}

// TestListenCap: Config.MaxSubscriptions open listens, and one more is refused with 429,
// Retry-After and a JSON-RPC error; once one ends there is room again.
func TestListenCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := listenServer(t, mockserver.Config{MaxSubscriptions: 1, Backpressure: mockserver.Backpressure{RetryAfter: 3 * time.Second}})
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 5000})
		first := mc.listenTasks(tk.TaskID)
		first.ack()
		status, hdr, raw := mc.postRaw(mc.body("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{tk.TaskID}}}))
		r := decodeModernStatus(t, "subscriptions/listen", status, raw, http.StatusTooManyRequests)
		if r.Err == nil || r.Err.Code != mcp.CodeInternalError || hdr.Get("Retry-After") != "3" {
			t.Fatalf("second listen: HTTP %d Retry-After %q %s, want 429, 3 and -32603", status, hdr.Get("Retry-After"), raw)
		}
		if st := h.srv.Stats(); st.SubscriptionsRefused != 1 || st.Rejections.Of(http.StatusTooManyRequests) != 1 {
			t.Fatalf("refused %d, 429s %d; want 1 and 1", st.SubscriptionsRefused, st.Rejections.Of(http.StatusTooManyRequests))
		}
		first.cancel()
		synctest.Wait()
		again := mc.listenTasks(tk.TaskID)
		if ids := again.ack(); len(ids) != 1 {
			t.Fatalf("after the first ended: ack %v", ids)
		}
		again.cancel()
	})
}

// TestListenEnds: the server's shutdown ends a listen gracefully (E20), a restart drops it
// without the result, and a task that vanishes (its ttl ran out) is reported no more.
func TestListenEnds(t *testing.T) {
	t.Run("shutdown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := listenServer(t, mockserver.Config{})
			mc := h.modern()
			ls := mc.listenTasks(mc.create("work", map[string]any{"duration_ms": 5000}).TaskID)
			ls.ack()
			ls.task()
			h.srv.Close()
			ls.end()
		})
	})
	t.Run("restart", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := listenServer(t, mockserver.Config{Faults: scenarios.ServerFaults{Restart: scenarios.Schedule{At: []scenarios.Duration{scenarios.Duration(time.Second)}}}})
			mc := h.modern()
			tk := mc.create("work", map[string]any{"duration_ms": 5000})
			ls := mc.listenTasks(tk.TaskID)
			ls.ack()
			ls.task()
			time.Sleep(time.Second)
			ls.eof() // no listen result: a drop, the client may listen again (E20)
			synctest.Wait()
			if st := h.srv.Stats(); st.Subscriptions != 0 || st.Faults.Restart != 1 || h.srv.Subscribers(tk.TaskID) != 0 {
				t.Fatalf("after the restart: open %d, restarts %d, subscribers %d", st.Subscriptions, st.Faults.Restart, h.srv.Subscribers(tk.TaskID))
			}
		})
	})
	t.Run("ttl", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := listenServer(t, mockserver.Config{DefaultTTL: time.Second, ReaperInterval: 100 * time.Millisecond})
			mc := h.modern()
			tk := mc.create("work", map[string]any{"duration_ms": 5000})
			ls := mc.listenTasks(tk.TaskID)
			ls.ack()
			ls.task()
			time.Sleep(1100 * time.Millisecond)
			ls.end() // the purged task is reported no more, nothing else is left
			mc.wantError("tasks/get", map[string]any{"taskId": tk.TaskID}, mcp.CodeInvalidParams)
		})
	})
}

// decodeModernStatus is decodeModern for a reply whose HTTP status is not the one E27 gives
// its code (a 429 of backpressure carries -32603).
func decodeModernStatus(t testing.TB, method string, status int, raw []byte, want int) modernReply {
	t.Helper()
	if status != want {
		t.Fatalf("%s: HTTP %d, want %d: %s", method, status, want, raw)
	}
	if err := mcptest.ValidateReply2026(method, raw); err != nil {
		t.Errorf("%s reply fails the 2026-07-28 schemas: %.600v", method, err)
	}
	msg, perr := mcp.Decode(raw)
	if perr != nil || !strings.HasPrefix(string(raw), "{") {
		t.Fatalf("%s: undecodable reply %s", method, raw)
	}
	return modernReply{Status: status, Raw: raw, Result: msg.Result, Err: msg.Error}
}
