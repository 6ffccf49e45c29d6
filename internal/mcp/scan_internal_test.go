package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// scanSeeds are texts at the edges of the JSON grammar, valid and not.
var scanSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+10,"b":[true,false,null,{"c":"\u00e9\ud800\n"}]}`,
	`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":"\x"}`, `{"a":"\u12"}`,
	`{"a":"` + "\x01" + `"}`, `{"a":"` + "\xff" + `"}`, `{"a":tru}`, `{"a" 1}`, `{"a":1,}`,
	`{"a":1}{}`, `{"a":[1,]}`, `{"a":[,1]}`, `[1,2]`, `"s"`, `12`, `nul`, `{"a":1`, `{"\"a":2}`,
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	`{"a":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`,
	`{"a":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`,
}

// FuzzScannerMatchesValid holds the scanner to json.Valid: every text it accepts encoding/json
// accepts, and the other way round, nesting bound included.
func FuzzScannerMatchesValid(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
		isObject := false
		if v := strings.TrimLeft(string(b), " \t\r\n"); len(v) > 0 && v[0] == '{' {
			isObject = json.Valid(b)
		}
		if got := eachMember(b, func(_, _ []byte) bool { return true }); got != isObject {
			t.Fatalf("eachMember(%q) = %v, want %v", b, got, isObject)
		}
		for r := newObjectReader(b); r.next(); {
			checkPlain(t, r.value, r.plainString)
		}
	})
}

// checkPlain fails unless plain says whether v is a string without escape, all ASCII.
func checkPlain(t *testing.T, v []byte, plain bool) {
	t.Helper()
	want := len(v) > 0 && v[0] == '"' && !strings.Contains(string(v[1:len(v)-1]), `\`)
	for _, c := range v {
		want = want && c < 0x80
	}
	if plain != want {
		t.Fatalf("value %q: plainString %v, want %v", v, plain, want)
	}
}

// TestObjectReaderPlain checks the plain flag on string values around the word boundary,
// and that a nested object's names do not stand for the member's.
func TestObjectReaderPlain(t *testing.T) {
	in := `{"a":"abcdefg","b":"abcdefgh","c":"abcdefghé","d":"ab\ncdefghij","e\u0065":{"x":"y"},"f":1,"g":"` +
		"\u00e9" + `"}`
	var names []string
	for r := newObjectReader([]byte(in)); r.next(); {
		checkPlain(t, r.value, r.plainString)
		names = append(names, string(r.name))
	}
	if got := strings.Join(names, ","); got != "a,b,c,d,ee,f,g" {
		t.Fatalf("names %s", got)
	}
}

// TestEachMemberSpans checks the names and values EachMember hands out: names unescaped,
// values the raw spans of the input.
func TestEachMemberSpans(t *testing.T) {
	in := ` {"a" : 1 , "b\u0063":{"x":[1, "y"]},"d":"e\"f"} `
	var got []string
	if !EachMember([]byte(in), func(name, v []byte) bool {
		got = append(got, string(name)+"="+string(v))
		return true
	}) {
		t.Fatal("EachMember refused a valid object")
	}
	want := []string{`a=1`, `bc={"x":[1, "y"]}`, `d="e\"f"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestDecodeAllocs guards the per-reply cost of reading a tasks/get reply in 2025-11-25: the
// envelope (Decode: the id's text and the copy of the result) and its task (ParseTask: its
// strings in one allocation, its two durations in another).
func TestDecodeAllocs(t *testing.T) {
	msg := []byte(benchReply)
	var m Message
	if n := testing.AllocsPerRun(100, func() { m, _ = Decode(msg) }); n != 2 {
		t.Errorf("Decode of a tasks/get reply: %v allocations, want 2 (the id, the result's copy)", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseTask(m.Result) }); n != 2 {
		t.Errorf("ParseTask of a tasks/get reply: %v allocations, want 2 (its strings, its durations)", n)
	}
}

// TestParseGetTaskResultAllocs guards the per-poll cost of reading a tasks/get reply in
// 2026-07-28: the strings' texts and their storage (one allocation each), the two
// durations and the copies of the raw members kept (readTaskWire), not one per string.
func TestParseGetTaskResultAllocs(t *testing.T) {
	raw := []byte(taskWireSeeds[0])
	if n := testing.AllocsPerRun(100, func() { _, _, _ = ParseGetTaskResult(raw) }); n > 5 {
		t.Errorf("ParseGetTaskResult: %v allocations, want at most 5", n)
	}
}

// benchReply is a tasks/get reply of 2025-11-25, as tasksim's mock sends it.
const benchReply = `{"jsonrpc":"2.0","id":12345,"result":{"taskId":"7f3c9a1e2b4d6f80a1b2c3d4e5f60718","status":"working",` +
	`"statusMessage":"working","createdAt":"2026-11-30T08:14:44.123Z","lastUpdatedAt":"2026-11-30T08:14:46.123Z","ttl":60000,"pollInterval":2000}}`

// BenchmarkScan validates a tasks/get reply with the scanner and with json.Valid.
func BenchmarkScan(b *testing.B) {
	msg := []byte(benchReply)
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !validJSON(msg) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			if !json.Valid(msg) {
				b.Fatal("invalid")
			}
		}
	})
}

// TestPlainString checks the eight-bytes-at-a-time test of plain strings against its
// definition (no backslash, valid UTF-8), across the word boundary.
func TestPlainString(t *testing.T) {
	for _, s := range []string{"", "abc", "abcdefgh", "abcdefghi", `abcdefg\`, `abcdefgh\`, "abcdefgé", "abcdefgh\xff",
		"\xff", "2026-11-30T08:14:44.123Z", "working\x7f"} {
		want := !strings.Contains(s, `\`) && utf8.ValidString(s)
		if got := plainString([]byte(s)); got != want {
			t.Errorf("plainString(%q) = %v, want %v", s, got, want)
		}
	}
}
