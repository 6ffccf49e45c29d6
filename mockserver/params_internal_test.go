package mockserver

// The fast readers of params.go must agree with encoding/json whenever they take an input:
// same values, and no input taken that encoding/json refuses. Inputs they give up on are
// decoded by encoding/json itself, so only the inputs they take need checking.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// paramSeeds are params objects for the three readers: plain ones they take, and every kind
// they must leave to encoding/json.
var paramSeeds = []string{
	`{"taskId":"0123456789abcdef0123456789abcdef"}`,
	`{"taskId":"t-1","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"x"}}}`,
	`{"_META":[1,{"a":null}],"taskId":""}`,
	`{"taskId":"a","taskId":"b"}`,
	`{"taskId":"a","TaskID":"b"}`,
	`{"TASKID":"a"}`,
	`{"task\u0049d":"a"}`,
	`{"taskId":"caf\u00e9"}`,
	`{"taskId":"café"}`,
	`{"taskId":"a\"b"}`,
	`{"taskId":null}`,
	`{"taskId":7}`,
	`{"taskId":"a"} `,
	`{"taskId":"a"}{}`,
	`{"taskId":"\xff"}`,
	`{"other":"\xff","taskId":"a"}`,
	`{}`, `[]`, `null`, `"x"`, ``, `{`,
	`{"name":"work","arguments":{"duration_ms":86400000},"task":{"ttl":3600000}}`,
	`{"name":"work_task","arguments":{"duration_ms":0,"outcome":"failed","input_required":true,"input_rounds":3,"idempotency_key":"k-1","payload_bytes":10,"note":"caf\u00e9 \\ secret"},"task":{}}`,
	`{"name":"work_sync","arguments":null}`,
	`{"name":"nope","arguments":[1,2],"_meta":{"progressToken":1}}`,
	`{"name":"work","task":null}`,
	`{"name":"work","task":{"ttl":null}}`,
	`{"name":"work","task":{"ttl":1.5}}`,
	`{"name":"work","task":{"ttl":12000.0}}`,
	`{"name":"work","task":{"ttl":-1}}`,
	`{"name":"work","task":{"ttl":9007199254740993}}`,
	`{"name":"work","task":{"ttl":99999999999999999999}}`,
	`{"name":"work","task":{"TTL":5}}`,
	`{"name":"work","task":{"ttl":5,"extra":true}}`,
	`{"name":"work","task":7}`,
	`{"Name":"work"}`,
	`{"name":"work","Arguments":{}}`,
	`{"name":"w\u006frk"}`,
	`{"name":1}`,
	`{"duration_ms":1e3}`, `{"duration_ms":-0}`, `{"duration_ms":null}`, `{"duration_ms":"5"}`,
	`{"duration_ms":9223372036854775808}`, `{"Duration_MS":5}`, `{"outcome":"weird"}`,
	`{"outcome":"completed","outcome":"error"}`, `{"input_required":false}`, `{"input_required":1}`,
	`{"input_rounds":-2}`, `{"payload_bytes":2.0}`, `{"idempotency_key":"k\n"}`, `{"note":5}`,
	`{"unknown":1}`, `{"note":"\ud800"}`,
	`{"taskId":"t","ta\u017fkId":"x"}`, // encoding/json folds "ſ" to "s": the name is taskId to it
	`{"taskId":"t","taſkId":"x"}`,
	`{"task\u0049d":"t"}`, // an escaped name is taskId
}

func FuzzParamReaders(f *testing.F) {
	for _, s := range paramSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		checkTaskIDReader(t, params)
		checkCallReader(t, params)
		if len(params) > 0 && string(params) != "null" { // planWork's condition
			checkArgsReader(t, params)
		}
	})
}

// TestParamReadersMatchEncodingJSON runs the seeds, and checks that the readers take the
// plain requests a load generator sends, so that they are not always giving up.
func TestParamReadersMatchEncodingJSON(t *testing.T) {
	for _, s := range paramSeeds {
		checkTaskIDReader(t, []byte(s))
		checkCallReader(t, []byte(s))
		if s != "" && s != "null" {
			checkArgsReader(t, []byte(s))
		}
	}
	if id, ok := readTaskID([]byte(paramSeeds[1])); !ok || string(id) != "t-1" {
		t.Errorf("readTaskID gave up on a plain request (%q, %v)", id, ok)
	}
	var p callParams
	if !p.read([]byte(paramSeeds[22])) || p.name != ToolWork || !p.task || p.ttl != (optMs{ms: 3600000, ok: true}) {
		t.Errorf("callParams.read gave up on a plain request: %+v", p)
	}
	var a workArgs
	if !readArgs([]byte(`{"duration_ms":0,"outcome":"failed","input_required":true,"input_rounds":3,"idempotency_key":"k-1","payload_bytes":10,"note":"n"}`), &a) {
		t.Errorf("readArgs gave up on plain arguments: %+v", a)
	}
}

func checkTaskIDReader(t *testing.T, params []byte) {
	id, ok := readTaskID(params)
	if !ok {
		return
	}
	var p mcp.TaskIDParams
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("readTaskID took %q, which encoding/json refuses: %v", params, err)
	}
	if string(id) != p.TaskID {
		t.Fatalf("readTaskID(%q) = %q, encoding/json reads %q", params, id, p.TaskID)
	}
}

func checkCallReader(t *testing.T, params []byte) {
	var p callParams
	if !p.read(params) {
		return
	}
	var cp mcp.CallToolParams
	if err := json.Unmarshal(params, &cp); err != nil {
		t.Fatalf("callParams.read took %q, which encoding/json refuses: %v", params, err)
	}
	want := callParams{name: cp.Name, args: cp.Arguments, task: cp.Task != nil}
	if cp.Task != nil && cp.Task.TTL != nil {
		want.ttl = optMs{ms: *cp.Task.TTL, ok: true}
	}
	if p.name != want.name || !bytes.Equal(p.args, want.args) || p.task != want.task || p.ttl != want.ttl {
		t.Fatalf("callParams.read(%q) = %+v, encoding/json reads %+v", params, p, want)
	}
}

func checkArgsReader(t *testing.T, raw []byte) {
	var a workArgs
	if !readArgs(raw, &a) {
		return
	}
	want, err := decodeArgs(raw)
	if err != nil {
		t.Fatalf("readArgs took %q, which encoding/json refuses: %v", raw, err)
	}
	want.Note = "" // accepted and never read: readArgs does not keep it
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("readArgs(%q) = %+v, encoding/json reads %+v", raw, a, want)
	}
}

// TestReadersAllocateNothing: taking the taskId of a request, and the params of a
// task-augmented tools/call, allocate nothing; arguments allocate only what workArgs points
// to.
func TestReadersAllocateNothing(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector drops sync.Pool items at random, so counts vary under -race")
	}
	get := []byte(paramSeeds[0])
	call := []byte(paramSeeds[22])
	args := []byte(`{"duration_ms":86400000,"outcome":"completed"}`)
	for _, c := range []struct {
		name string
		max  float64
		f    func()
	}{
		{"readTaskID", 0, func() { readTaskID(get) }},
		{"readCallParams", 0, func() { _, _ = readCallParams(call) }},
		{"readArgs", 1, func() { var a workArgs; readArgs(args, &a) }}, // a.DurationMs
	} {
		if n := testing.AllocsPerRun(100, c.f); n > c.max {
			t.Errorf("%s: %v allocations, want at most %v", c.name, n, c.max)
		}
	}
}
