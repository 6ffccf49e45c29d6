package mcp_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// FuzzDecodeReplyMatchesTwoPasses holds DecodeReply's single pass to the two it replaces:
// the Message is Decode's, and when the reader read the result, what it holds is what
// ParseTask or ParseGetTaskResult returns for the Message's Result. A reply with a result
// object that Decode accepts is always read.
func FuzzDecodeReplyMatchesTwoPasses(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":3,"result":{"taskId":"7c2b","status":"working","createdAt":"2026-12-04T18:34:30.668Z","lastUpdatedAt":"2026-12-04T18:34:30.668Z","ttl":60000,"pollInterval":1000}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"a","ttlMs":null,"pollIntervalMs":1000,"result":{"content":[]},"_meta":{"x":{"name":"m"}}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a","ttlMs":5}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"taskId":"t","taskId":"u","status":"working"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"TaskId":"t","status":"failed","ttl":"x"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"taskId":"t\u00e9","status":"input_required","statusMessage":"a\"b"}, "result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"taskId":"t","status":"working"},"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"taskId":"t",}}`,
		`{"jsonrpc":"2.0","id":3,"result":[1]}`,
		`{"jsonrpc":"2.0","id":3,"Result":{"taskId":"t"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"gone"}}`,
		` {"result":{"taskId":"t"},"jsonrpc":"2.0","id":3} `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := mcp.Decode(in)
		for _, kind := range []string{"task", "get"} {
			rr := mcp.TaskReader()
			if kind == "get" {
				rr = mcp.GetTaskResultReader()
			}
			m2, err2 := mcp.DecodeReply(in, &rr)
			if !reflect.DeepEqual(m, m2) || !reflect.DeepEqual(err, err2) {
				t.Fatalf("DecodeReply(%q) = %+v, %v; Decode = %+v, %v", in, m2, err2, m, err)
			}
			if !rr.Read {
				if err == nil && m.Kind == mcp.KindResult && isObject(m.Result) && plainEnvelope(in) {
					t.Fatalf("DecodeReply(%q) left a result object unread", in)
				}
				continue
			}
			if err != nil || m.Kind != mcp.KindResult {
				t.Fatalf("DecodeReply(%q) read a result of a message that is none (%v)", in, err)
			}
			var want, got [2]any
			if kind == "task" {
				tk, terr := mcp.ParseTask(m.Result)
				want, got = [2]any{tk, fmt.Sprint(terr)}, [2]any{rr.Task, fmt.Sprint(rr.Err)}
			} else {
				r, q, terr := mcp.ParseGetTaskResult(m.Result)
				want, got = [2]any{[2]any{r, q}, fmt.Sprint(terr)}, [2]any{[2]any{rr.TaskResult, rr.Quirks}, fmt.Sprint(rr.Err)}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s of %q: one pass %+v, two passes %+v", kind, in, got, want)
			}
		}
	})
}

// isObject reports whether raw is a JSON object (its first byte).
func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// plainEnvelope reports whether Decode reads in as it is, without encoding/json: no member
// repeated or named in another case (then DecodeReply reads the result too).
func plainEnvelope(in []byte) bool {
	seen := map[string]bool{}
	plain := true
	mcp.EachMember(in, func(name, _ []byte) bool {
		n := string(name)
		plain = plain && !seen[n] && !mcp.FoldsTo(name, "jsonrpc", "id", "method", "params", "result", "error")
		seen[n] = true
		return true
	})
	return plain
}

// BenchmarkTaskReply reads a poll's reply as a client does, in each era: Decode and then
// ParseTask (or ParseGetTaskResult) of its Result, two passes over the task, against
// DecodeReply with the era's reader, one pass. one-pass must stay the cheaper.
func BenchmarkTaskReply(b *testing.B) {
	for _, era := range []struct {
		name  string
		reply string
		rr    func() mcp.ResultReader
		parse func([]byte) error
	}{
		{"2025-11-25", `{"jsonrpc":"2.0","id":3,"result":{"taskId":"7c2b4b46b71b1d7d5ae78e940a3ce232","status":"working","createdAt":"2026-12-04T18:34:30.668Z","lastUpdatedAt":"2026-12-04T18:34:30.668Z","ttl":60000,"pollInterval":1000}}`,
			mcp.TaskReader, func(raw []byte) error { _, err := mcp.ParseTask(raw); return err }},
		{"2026-07-28", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","taskId":"310643009f50e2f006fca8d9c8d197d1","status":"working","createdAt":"2026-12-04T18:46:58.949Z","lastUpdatedAt":"2026-12-04T18:46:58.949Z","ttlMs":300000,"pollIntervalMs":1000,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasksim-mock","version":"0.1.0"}}}}`,
			mcp.GetTaskResultReader, func(raw []byte) error { _, _, err := mcp.ParseGetTaskResult(raw); return err }},
	} {
		in := []byte(era.reply)
		b.Run(era.name+"/two-passes", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, err := mcp.Decode(in)
				if err != nil || era.parse(m.Result) != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(era.name+"/one-pass", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rr := era.rr()
				if _, err := mcp.DecodeReply(in, &rr); err != nil || !rr.Read || rr.Err != nil {
					b.Fatal(err, rr.Err)
				}
			}
		})
	}
}
