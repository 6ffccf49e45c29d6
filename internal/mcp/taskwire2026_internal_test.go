package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// taskWireSeeds are tasks of 2026-07-28 as servers send them, and the odd cases that
// readTaskWire hands to encoding/json.
var taskWireSeeds = []string{
	`{"resultType":"complete","taskId":"t-1","status":"working","createdAt":"2026-07-28T09:00:00Z","lastUpdatedAt":"2026-07-28T09:00:01Z","ttlMs":60000,"pollIntervalMs":1000}`,
	`{"resultType":"complete","taskId":"t-1","status":"completed","statusMessage":"done","createdAt":"a","lastUpdatedAt":"b","ttlMs":null,"result":{"content":[{"type":"text","text":"ok"}]},"_meta":{"k":1}}`,
	`{"taskId":"t","status":"failed","createdAt":"a","lastUpdatedAt":"b","ttlMs":5,"error":{"code":-32603,"message":"boom"}}`,
	`{"taskId":"t","status":"input_required","createdAt":"a","lastUpdatedAt":"b","ttlMs":5,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`,
	`{"task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":5}}`,
	`{"TaskId":"t","status":"working"}`,
	`{"taskId":"t","taskId":"u"}`,
	`{"taskId":7,"status":"working"}`,
	`{"taskId":"t\u0031","statusMessage":"a\nb","pollIntervalMs":"5"}`,
	`{"taskId":null,"error":null,"inputRequests":null,"pollIntervalMs":1.5}`,
	"{\"taskId\":\"\xff\",\"statusMessage\":\"\xfe\"}",
	`{"taskId":"t"} x`,
	`{"taskId":"t",}`,
}

// FuzzReadTaskWireMatchesEncodingJSON holds readTaskWire to json.Unmarshal, the reading it
// replaced: the same taskWire, or the same error, on every input.
func FuzzReadTaskWireMatchesEncodingJSON(f *testing.F) {
	for _, s := range taskWireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '{' {
			return // the callers hand it objects only
		}
		var got, want taskWire
		gerr := readTaskWire(b, &got)
		werr := json.Unmarshal(b, &want)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("%q: error %v, encoding/json %v", b, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

// BenchmarkParseGetTaskResult reads a 2026-07-28 tasks/get reply of a working task, the
// modern era's per-poll decode (BenchmarkDecode is the envelope's).
func BenchmarkParseGetTaskResult(b *testing.B) {
	raw := []byte(taskWireSeeds[0])
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseGetTaskResult(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseTask reads the task of a 2025-11-25 tasks/get reply, the legacy era's
// per-poll decode, beside BenchmarkParseGetTaskResult.
func BenchmarkParseTask(b *testing.B) {
	raw := []byte(`{"taskId":"t-1","status":"working","createdAt":"2025-11-25T09:00:00Z","lastUpdatedAt":"2025-11-25T09:00:01Z","ttl":60000,"pollInterval":1000}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseTask(raw); err != nil {
			b.Fatal(err)
		}
	}
}
