package mockserver

// The server writes its replies in place (task.appendLocked, appendToolResult, stamps); these
// tests hold them to the bytes the mcp package writes for the same values, the way the
// server wrote them before.

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// TestStampMatchesFormatTime: a stamp writes what mcp.FormatTime writes for the instant it
// was taken from, at every sub-millisecond offset, before and after the epoch.
func TestStampMatchesFormatTime(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{
		time.Unix(0, 0), time.Unix(0, 999_999), time.Unix(0, -1), time.Unix(-1, 999_999_999),
		time.Date(2025, 11, 25, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2025, 11, 25, 12, 0, 0, 1_000_000, time.FixedZone("X", -7*3600)),
		time.Now(),
	}
	for range 10_000 {
		times = append(times, time.Unix(r.Int64N(1<<34)-1<<33, r.Int64N(1e9)))
	}
	for _, at := range times {
		want := string(mcp.AppendString(nil, mcp.FormatTime(at)))
		if got := string(stampOf(at).appendJSON(nil)); got != want {
			t.Fatalf("%v: stamp writes %s, FormatTime %s", at, got, want)
		}
	}
}

// wireRef is a task's wire form as the server built it before it wrote tasks itself: an
// mcp.Task with formatted times and pointers, for the dialect to encode.
func wireRef(tk *task, created, updated time.Time) mcp.Task {
	pi := mcp.Ms(tk.srv.pollInterval(tk.tool).Milliseconds())
	var ttl *mcp.Ms
	if tk.ttl.ok {
		ttl = &tk.ttl.ms
	}
	return mcp.Task{
		TaskID: tk.id, Status: tk.status, StatusMessage: tk.wireMessageLocked(),
		CreatedAt: mcp.FormatTime(created), LastUpdatedAt: mcp.FormatTime(updated),
		TTL: ttl, PollInterval: &pi,
	}
}

// TestTaskWireMatchesDialect: appendLocked and appendCreateLocked write the bytes of
// mcp.V20251125's AppendTask and AppendCreateResult, over statuses, messages that need
// escaping, ttls (null, 0, large), ids, pollInterval policies and the insecure modes that
// change the statusMessage.
func TestTaskWireMatchesDialect(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{PollInterval: 1500 * time.Millisecond, Poll: PollPolicy{Kind: "per_tool", PerTool: map[string]time.Duration{ToolWorkTask: 20 * time.Second}}},
		{Inject: true, Insecure: Insecure{EchoSecrets: true}},
	} {
		srv, err := NewHandlerServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		created := time.Date(2025, 11, 25, 10, 30, 0, 123_456_789, time.Local)
		updated := created.Add(90*time.Minute + 999*time.Microsecond)
		for _, st := range []mcp.Status{mcp.StatusWorking, mcp.StatusInputRequired, mcp.StatusCompleted, mcp.StatusFailed, mcp.StatusCancelled} {
			for _, msg := range []string{"", "plain", `quote " and \ and <tag> & é and ` + "\n\t\x01"} {
				for _, ttl := range []optMs{{}, {ms: 0, ok: true}, {ms: 3_600_000, ok: true}, {ms: 1 << 53, ok: true}} {
					for _, tool := range []string{ToolWork, ToolWorkTask} {
						tk := &task{srv: srv, id: randomID(), tool: tool, status: st, statusMessage: msg,
							created: stampOf(created), updated: stampOf(updated), ttl: ttl, echo: "arguments: " + msg}
						if tool == ToolWorkTask {
							tk.id = `id "odd" ` + tk.id
						}
						ref := wireRef(tk, created, updated)
						if got, want := string(tk.appendLocked(nil)), string(mcp.V20251125{}.AppendTask(nil, &ref)); got != want {
							t.Fatalf("tasks/get:\n got %s\nwant %s", got, want)
						}
						if got, want := string(tk.appendCreateLocked([]byte("x"))), "x"+string(mcp.V20251125{}.AppendCreateResult(nil, &ref)); got != want {
							t.Fatalf("tools/call:\n got %s\nwant %s", got, want)
						}
					}
				}
			}
		}
		srv.Close()
	}
}

// toolResultRef is appendToolResult as it was written before it wrote the text and the _meta
// in place.
func toolResultRef(p *workPlan, end ending, taskID, statusMessage string) []byte {
	var text string
	isError := true
	switch end {
	case endCompleted:
		isError = false
		text = "work completed in " + itoa(p.duration.Milliseconds()) + " ms"
	case endCancelled:
		text = "task was cancelled before its work finished"
	default:
		text = statusMessage
		if text == "" {
			text = endMessage(end)
		}
	}
	dst := append([]byte(`{"content":[{"type":"text","text":`), mcp.AppendString(nil, text)...)
	dst = append(dst, '}')
	if end == endCompleted && p.payloadBytes > 0 {
		dst = append(dst, `,{"type":"text","text":"`+strings.Repeat("x", p.payloadBytes)+`"}`...)
	}
	dst = append(dst, ']')
	if isError {
		dst = append(dst, `,"isError":true`...)
	}
	if taskID != "" {
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, mcp.RelatedTaskMeta(taskID)...)
	}
	return append(dst, '}')
}

func TestToolResultMatchesReference(t *testing.T) {
	for _, end := range []ending{endCompleted, endToolError, endRPCError, endDeclined, endCancelled, endDownstream} {
		for _, p := range []workPlan{{}, {duration: 1500 * time.Millisecond, payloadBytes: 3}, {duration: 86_400_000 * time.Millisecond}} {
			for _, id := range []string{"", "0123456789abcdef0123456789abcdef", `q"uote`, "ünïcode\n"} {
				for _, msg := range []string{"", "input round 1 answered with decline", "<&>\"\\"} {
					got := string(appendToolResult([]byte("x"), &p, end, id, msg))
					if want := "x" + string(toolResultRef(&p, end, id, msg)); got != want {
						t.Fatalf("ending %d, plan %+v, id %q, msg %q:\n got %s\nwant %s", end, p, id, msg, got, want)
					}
				}
			}
		}
	}
}

// acceptsRef is accepts as it was written before it stopped splitting the header.
func acceptsRef(accept, mt string) bool {
	for _, part := range strings.Split(accept, ",") {
		t := strings.TrimSpace(part)
		if i := strings.IndexByte(t, ';'); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		if t == mt || t == "*/*" || (strings.HasSuffix(t, "/*") && strings.HasPrefix(mt, t[:len(t)-1])) {
			return true
		}
	}
	return false
}

func FuzzAccepts(f *testing.F) {
	for _, s := range []string{"", ",", "text/event-stream", "application/json, text/event-stream",
		"application/json,,text/*;q=0.5", " */* ", "text/event-stream;q=1,", "text/", "/*", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		for _, mt := range []string{"text/event-stream", "application/json"} {
			if got, want := accepts(accept, mt), acceptsRef(accept, mt); got != want {
				t.Fatalf("accepts(%q, %q) = %v, want %v", accept, mt, got, want)
			}
		}
	})
}
