package mockserver

import (
	"encoding/json"
	"strconv"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Readers of the params of the hot methods: tools/call (and its arguments) and the
// {"taskId"} of tasks/get, tasks/result and tasks/cancel. encoding/json decodes by
// reflection and allocates for every value it stores; these readers walk the object once
// (mcp.EachMember) and take values as spans of the request, allocating nothing for a plain
// request. They take only what encoding/json would decode to the same values without an
// error, and give up on anything else: a member name in another case (encoding/json
// matches names with Unicode case folding: mcp.FoldsTo), an escape or a byte outside printable ASCII in a string
// they keep, null, a number that is not a plain integer, an unknown argument. The caller
// then decodes with encoding/json as before, so that replies and errors stay byte for byte
// what encoding/json gives (TestParamReadersMatchEncodingJSON, FuzzParamReaders).

// plainString reports whether v is a JSON string of printable ASCII without escapes: the
// bytes between its quotes are what encoding/json decodes it to.
func plainString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}

// plainInt reads v, a JSON value, as an integer of bitSize bits (0 for int), as
// encoding/json reads it into an integer field; ok is false for a fraction, an exponent or
// an overflow, which encoding/json refuses, and for any value but a number.
func plainInt(v []byte, bitSize int) (n int64, ok bool) {
	n, err := strconv.ParseInt(string(v), 10, bitSize)
	return n, err == nil
}

// readTaskID reads the taskId of {"taskId": ..., "_meta": ...} as a span of params; ok is
// false when encoding/json must decode them (mcp.TaskIDParams). Other members are ignored,
// as encoding/json ignores them.
func readTaskID(params []byte) (id []byte, ok bool) {
	ok = mcp.EachMember(params, func(name, v []byte) bool {
		switch {
		case string(name) == "taskId":
			if !plainString(v) {
				return false
			}
			id = v[1 : len(v)-1]
		case mcp.FoldsTo(name, "taskId"):
			return false
		}
		return true // _meta in any case takes any value (json.RawMessage), and others are ignored
	})
	return id, ok
}

// callParams are the params of tools/call as toolsCall reads them (mcp.CallToolParams).
type callParams struct {
	name string          // the tool: one of the constants when it is a default tool
	args json.RawMessage // arguments; nil when absent
	task bool            // params.task is present: a task-augmented call (R4)
	ttl  optMs           // params.task.ttl
}

// readCallParams decodes the params of tools/call, by read when they are plain, else by
// encoding/json.
func readCallParams(params []byte) (callParams, error) {
	var p callParams
	if p.read(params) {
		return p, nil
	}
	var cp mcp.CallToolParams
	err := json.Unmarshal(params, &cp)
	p = callParams{name: toolName([]byte(cp.Name)), args: cp.Arguments, task: cp.Task != nil}
	if cp.Task != nil && cp.Task.TTL != nil {
		p.ttl = optMs{ms: *cp.Task.TTL, ok: true}
	}
	return p, err
}

// read reads plain params into p; p is left partly filled when it reports false.
func (p *callParams) read(params []byte) bool {
	return mcp.EachMember(params, func(name, v []byte) bool {
		switch string(name) {
		case "name":
			if !plainString(v) {
				return false
			}
			p.name = toolName(v[1 : len(v)-1])
		case "arguments":
			p.args = v // any value: a json.RawMessage
		case "task":
			p.task = true
			return v[0] == '{' && mcp.EachMember(v, p.readTask) // null, or another type, is encoding/json's
		default:
			return !mcp.FoldsTo(name, "name", "arguments", "task")
		}
		return true
	})
}

// readTask reads a member of params.task (mcp.TaskMetadata).
func (p *callParams) readTask(name, v []byte) bool {
	switch {
	case string(name) == "ttl":
		// mcp.Ms reads a float64 and refuses values beyond 2^53: an integer within that is
		// the same number either way.
		n, ok := plainInt(v, 64)
		if !ok || n < -(1<<53) || n > 1<<53 {
			return false
		}
		p.ttl = optMs{ms: mcp.Ms(n), ok: true}
	case mcp.FoldsTo(name, "ttl"):
		return false
	}
	return true
}

// toolName returns name as a string: the constant when it names a default tool, so that
// neither the call nor its task keeps a copy.
func toolName(name []byte) string {
	switch string(name) {
	case ToolWork:
		return ToolWork
	case ToolWorkTask:
		return ToolWorkTask
	case ToolWorkSync:
		return ToolWorkSync
	}
	return string(name)
}

// readArgs reads plain arguments of a default tool into a; a is left partly filled when it
// reports false. Like encoding/json with DisallowUnknownFields, it refuses unknown members.
func readArgs(raw []byte, a *workArgs) bool {
	return mcp.EachMember(raw, func(name, v []byte) bool {
		switch string(name) {
		case "duration_ms":
			n, ok := plainInt(v, 64)
			a.DurationMs = &n
			return ok
		case "outcome":
			if !plainString(v) {
				return false
			}
			a.Outcome = outcomeName(v[1 : len(v)-1])
		case "input_required":
			b := string(v) == "true"
			a.InputRequired = &b
			return b || string(v) == "false"
		case "input_rounds":
			n, ok := plainInt(v, 0)
			r := int(n)
			a.InputRounds = &r
			return ok
		case "idempotency_key":
			if !plainString(v) {
				return false
			}
			a.IdempotencyKey = string(v[1 : len(v)-1])
		case "payload_bytes":
			n, ok := plainInt(v, 0)
			a.PayloadBytes = int(n)
			return ok
		case "note":
			return v[0] == '"' // any string, never read
		default:
			return false // unknown, or a known name in another case
		}
		return true
	})
}

// outcomeName returns the outcome argument as a string, without a copy for the valid ones.
func outcomeName(b []byte) string {
	switch string(b) {
	case "completed":
		return "completed"
	case "failed":
		return "failed"
	case "error":
		return "error"
	}
	return string(b)
}
