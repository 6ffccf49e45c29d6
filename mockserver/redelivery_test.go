package mockserver_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

// TestElicitationRedeliveryR38: a pending elicitation/create whose stream ends before the
// client answered is sent again, so that a task is never left in input_required for want of
// a stream (docs/RULES.md: R38, R39), yet one message is on one live stream at a
// time (H6). Once the answer is in, the next tasks/result returns the result (R17) and asks
// nothing again.
func TestElicitationRedeliveryR38(t *testing.T) {
	tests := []struct {
		name string
		// overlap: the next tasks/result stream opens while the first is still up (the server
		// has not noticed the drop yet), then the first ends.
		overlap  bool
		answered bool // the client POSTed its answer before its stream ended
		onGET    bool // the elicitation went out on the GET stream, which then ends
		silent   bool // the stream's request context stays alive: the server must find out by writing
	}{
		{name: "stream dropped before the answer, next tasks/result after"},
		{name: "stream dropped before the answer, next tasks/result already open", overlap: true},
		{name: "stream dropped right after the answer", answered: true},
		{name: "GET stream dropped before the answer, tasks/result open", onGET: true},
		{name: "stream closed unnoticed before the answer, next tasks/result after", silent: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			t0 := time.Now()
			var get *response
			var dropGET func()
			if tc.onGET {
				req, cancel := ruleWithContext(c.request(http.MethodGet, ""))
				req.Header.Set("Accept", "text/event-stream")
				get, dropGET = h.do(req), cancel
				rulePriming(t, get)
			}
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
			var first *response
			var drop func()
			if tc.onGET {
				first, drop = get, dropGET
			} else {
				req, cancel := ruleWithContext(ruleReq(c, "tasks/result", map[string]any{"taskId": tk.TaskID}))
				first, drop = ruleRecv(t, ruleAsync(h, req)), cancel
				rulePriming(t, first)
				if tc.silent {
					defer cancel()
					drop = first.hangUp
				}
			}
			ruleUntil(t0, time.Second) // the first phase ends: input_required
			elicit := ruleNextMessage(t, first)
			ruleElicitation(t, elicit, tk.TaskID)
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusInputRequired)

			var next *response
			if tc.overlap || tc.onGET {
				next = ruleStream(t, c, tk.TaskID)
				synctest.Wait()
				ruleQuiet(t, next, "H6: a second stream while the first carries the elicitation")
			}
			if tc.answered {
				ruleAnswer(t, c, elicit, mcp.ElicitAccept)
			}
			drop()
			synctest.Wait()
			if next == nil {
				next = ruleStream(t, c, tk.TaskID)
			}
			if !tc.answered {
				again := ruleNextMessage(t, next)
				if string(again.ID) != string(elicit.ID) {
					t.Fatalf("re-sent elicitation %s, want the pending one %s", again.Raw, elicit.Raw)
				}
				ruleAnswer(t, c, again, mcp.ElicitAccept)
			}
			res := ruleToolResult(t, ruleOK(t, ruleFinal(t, next))) // no elicitation again: the result
			if res.IsError {
				t.Fatalf("result isError: %+v", res)
			}
			ruleElapsed(t, t0, 2*time.Second, "the result")
			if st := h.srv.Stats(); st.Effects != 1 {
				t.Errorf("%d effects, want 1", st.Effects)
			}
		})
	}
}
