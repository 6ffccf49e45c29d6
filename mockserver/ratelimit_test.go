package mockserver_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

// bpGet sends tasks/get and returns the HTTP status, Retry-After and the JSON-RPC error.
func bpGet(c *client, id string) (int, string, *mcp.Error) {
	c.h.t.Helper()
	resp := c.start("tasks/get", map[string]any{"taskId": id})
	body := resp.all()
	msg, perr := mcp.Decode(body)
	if perr != nil {
		c.h.t.Fatalf("tasks/get: HTTP %d, undecodable body %s", resp.Status, body)
	}
	return resp.Status, resp.Header.Get("Retry-After"), msg.Error
}

// TestRateLimitGetPerClient: with rate r and burst b, exactly b polls pass at once, the next
// gets 429 + Retry-After, one more passes after 1/r of virtual time, and another session
// has its own bucket.
func TestRateLimitGetPerClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const burst = 3
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{GetRatePerClient: 2, Burst: burst}})
		c := h.connect()
		tk := c.createTask("work", map[string]any{"duration_ms": 60_000})
		for i := range burst {
			if st, _, e := bpGet(c, tk.TaskID); st != http.StatusOK || e != nil {
				t.Fatalf("poll %d of the burst: HTTP %d %v", i+1, st, e)
			}
		}
		st, ra, e := bpGet(c, tk.TaskID)
		if st != http.StatusTooManyRequests || ra != "1" || e == nil || !strings.Contains(e.Message, "rate limited") {
			t.Fatalf("poll %d: HTTP %d Retry-After %q error %v, want 429, 1, rate limited", burst+1, st, ra, e)
		}
		other := h.connect()
		if st, _, e := bpGet(other, tk.TaskID); st != http.StatusOK || e != nil {
			t.Fatalf("another session: HTTP %d %v, want its own bucket", st, e)
		}
		time.Sleep(499 * time.Millisecond)
		if st, _, _ := bpGet(c, tk.TaskID); st != http.StatusTooManyRequests {
			t.Fatalf("at 499 ms: HTTP %d, want 429 (a token takes 500 ms)", st)
		}
		time.Sleep(time.Millisecond)
		if st, _, e := bpGet(c, tk.TaskID); st != http.StatusOK || e != nil {
			t.Fatalf("after 1/rate: HTTP %d %v, want one more poll", st, e)
		}
		if st, _, _ := bpGet(c, tk.TaskID); st != http.StatusTooManyRequests {
			t.Fatalf("right after: HTTP %d, want 429", st)
		}
		if n := h.srv.Stats().RateLimited; n != 3 {
			t.Errorf("RateLimited %d, want 3", n)
		}
	})
}

// TestRateLimitCreatePerTenant: creates of one tenant share a bucket across sessions; a
// refused create takes no token and creates no task; another tenant is not limited.
func TestRateLimitCreatePerTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{
			Tokens:       map[string]string{"ta": "alice", "tb": "bob"},
			Backpressure: mockserver.Backpressure{CreateRatePerTenant: 0.25, Burst: 2},
		})
		a1, a2, b := h.connect(withToken("ta")), h.connect(withToken("ta")), h.connect(withToken("tb"))
		a1.createTask("work", map[string]any{"duration_ms": 100})
		a2.createTask("work", map[string]any{"duration_ms": 100})
		st, hdr, _, e := bpCreate(a1, map[string]any{"duration_ms": 100})
		if st != http.StatusTooManyRequests || hdr.Get("Retry-After") != "4" || e == nil {
			t.Fatalf("alice's 3rd create: HTTP %d Retry-After %q %v, want 429 and 4 (1/0.25 s)", st, hdr.Get("Retry-After"), e)
		}
		b.createTask("work", map[string]any{"duration_ms": 100})
		time.Sleep(4 * time.Second)
		a2.createTask("work", map[string]any{"duration_ms": 100})
		if s := h.srv.Stats(); s.TasksCreated != 4 || s.RateLimited != 1 {
			t.Errorf("created %d rate limited %d, want 4 and 1", s.TasksCreated, s.RateLimited)
		}
	})
}

// TestRateLimitRetryAfterRoundsUp: Retry-After is the reservation delay in whole seconds,
// rounded up: a bucket refilling every 2.5 s says 3.
func TestRateLimitRetryAfterRoundsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{GetRatePerClient: 0.4}})
		c := h.connect()
		tk := c.createTask("work", map[string]any{"duration_ms": 60_000})
		bpGet(c, tk.TaskID)
		if st, ra, _ := bpGet(c, tk.TaskID); st != http.StatusTooManyRequests || ra != "3" {
			t.Fatalf("HTTP %d Retry-After %q, want 429 and 3", st, ra)
		}
		time.Sleep(2 * time.Second)
		if st, ra, _ := bpGet(c, tk.TaskID); st != http.StatusTooManyRequests || ra != "1" {
			t.Fatalf("0.5 s before the token: HTTP %d Retry-After %q, want 429 and 1", st, ra)
		}
	})
}
