package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeMatchesEncodingJSON holds Decode to decodeStd, the encoding/json reading it
// replaced for plain messages: the same error (code and text) or the same message, on every
// input. Decode's single pass must agree wherever it does not hand the input over.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":"c-17","method":"tools/call","params":{"name":"r","task":{"ttl":120000}}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"taskId":"t","status":"working","ttl":null,"pollInterval":2000}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error","data":{"at":3}}}`,
		`{"jsonrpc":"2\u002e0","\u006dethod":"ping","id":"\u0063-1"}`,
		`{"jsonrpc":"2.0","method":"a","method":"b","id":1,"id":2}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"x\xff\",\"params\":{\"s\":\"\xfe\"}}",
		`{"jsonrpc":"2.0","method":null,"result":null,"id":1}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1},"error":{"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"method":5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"error":null,"result":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping",}`,
		`{"jsonrpc":"2.0","id":1,"method":"p\ud800"}`,
		`{"Method":"ping","jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","ID":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"meth\u017fod":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":2.0,"id":1,"method":"ping"}`,
		`{"a":[[[{"b":1e5}]]],"jsonrpc":"2.0","id":-0,"method":"ping"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, gerr := Decode(in)
		if b := bytes.TrimSpace(in); len(b) == 0 || b[0] != '{' {
			return // the same code path either way
		}
		want, werr := decodeStd(bytes.TrimSpace(in))
		if !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("Decode(%q): error %v; encoding/json's reading: %v", in, gerr, werr)
		}
		if got.Kind != want.Kind || got.ID.String() != want.ID.String() || got.Method != want.Method ||
			!bytes.Equal(got.Params, want.Params) || !bytes.Equal(got.Result, want.Result) ||
			!reflect.DeepEqual(got.Error, want.Error) {
			t.Fatalf("Decode(%q) = %+v (error %+v)\nencoding/json's reading: %+v", in, got, got.Error, want)
		}
	})
}

// FuzzParseTaskMatchesEncodingJSON holds ParseTask to json.Unmarshal into a Task: the same
// error text, or the same Task.
func FuzzParseTaskMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"taskId":"7f3c","status":"working","statusMessage":"w","createdAt":"2026-11-30T08:14:44.123Z","lastUpdatedAt":"2026-11-30T08:14:46.123Z","ttl":60000,"pollInterval":2000}`,
		`{"taskId":"t\u0031","status":"input_required","ttl":null,"pollInterval":1500.7}`,
		`{"taskId":null,"status":"completed","ttl":-5,"extra":{"a":[1,2,{"b":null}]}}`,
		`{"taskId":"t","status":"done"}`,
		`{"taskId":"t","status":null}`,
		`{"taskId":"t","status":"work\u0069ng","ttl":"60000"}`,
		`{"taskId":"t","status":"failed","ttl":1e400}`,
		`{"taskId":"t","status":"failed","ttl":9007199254740993}`,
		"{\"taskId\":\"\xff\",\"status\":\"cancelled\"}",
		`{"taskId":"a","taskId":"b","status":"working","status":"failed"}`,
		`{"taskId":"a","taskId":null,"status":"working"}`,
		`{"status":"bogus","status":"working"}`,
		`{"taskId":5,"status":"working"}`,
		`{"TaskId":"t","Status":"working"}`,
		`{"taskId":"t","status":"working"} x`,
		`null`, `[]`, `"t"`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, gerr := ParseTask(in)
		var want Task
		werr := json.Unmarshal(in, &want)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("ParseTask(%q): error %v; json.Unmarshal: %v", in, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseTask(%q) = %+v\njson.Unmarshal: %+v", in, got, want)
		}
	})
}

// ParseCallReply reads what encoding/json read, the odd cases included.
func TestParseCallReplyMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":null}}`,
		`{"Task":{"taskId":"t","status":"working"}}`,                    // a name in another case
		`{"task":{"taskId":"t"},"task":{"status":"working"}}`,           // repeated: encoding/json merges
		`{"task":null,"content":[{"type":"text","text":"ok"}]}`,         // null: a plain result
		`{"content":[{"type":"text","text":"ok"}],"isError":false}`,     // a plain result
		`{"task":{"status":"working"}}`,                                 // no taskId
		`{"task":5}`, `[]`, `{"task":{"taskId":"t","status":"x"}}`, `{`, // errors
	} {
		gt, gr, gerr := V20251125{}.ParseCallReply([]byte(in))
		wt, wr, werr := parseCallReplyStd([]byte(in))
		if !reflect.DeepEqual(gt, wt) || !reflect.DeepEqual(gr, wr) || (gerr == nil) != (werr == nil) ||
			(gerr != nil && gerr.Error() != werr.Error()) {
			t.Errorf("ParseCallReply(%s) = %+v, %+v, %v\nencoding/json's reading: %+v, %+v, %v", in, gt, gr, gerr, wt, wr, werr)
		}
	}
}

// BenchmarkDecode reads a tasks/get reply with Decode, and with decodeStd, the
// encoding/json reading it replaced.
func BenchmarkDecode(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"taskId":"7f3c9a1e2b4d6f80a1b2c3d4e5f60718","status":"working",` +
		`"statusMessage":"working","createdAt":"2026-11-30T08:14:44.123Z","lastUpdatedAt":"2026-11-30T08:14:46.123Z","ttl":60000,"pollInterval":2000}}`)
	for _, c := range []struct {
		name   string
		decode func([]byte) (Message, *Error)
	}{{"scanner", Decode}, {"encoding_json", decodeStd}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
