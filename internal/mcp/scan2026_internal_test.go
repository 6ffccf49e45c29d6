package mcp

import (
	"strings"
	"testing"
)

// fullScan is what ScanModernRequest stands for: ClassifyRequest, CheckHeaders and
// ReadRequestMeta in the order a server runs them, and the summary read from their results.
func fullScan(m *Message, h RequestHeaders, supported []string) (ModernSummary, bool) {
	era, e := ClassifyRequest(m.Method, m.Params, h.ProtocolVersion)
	if e != nil || era != EraModern || CheckHeaders(h, m) != nil {
		return ModernSummary{}, false
	}
	meta, e := ReadRequestMeta(m.Params, supported)
	if e != nil {
		return ModernSummary{}, false
	}
	s := ModernSummary{DeclaresTasks: meta.ClientCapabilities.DeclaresTasks(), SupportsForm: meta.ClientCapabilities.Elicitation.SupportsForm()}
	if p := NameParam(m.Method); p != "" {
		if name, ok := stringMember(m.Params, p); ok {
			s.Name = []byte(name)
		}
	}
	return s, true
}

const (
	scanVersion = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	scanTasks   = `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
)

// scanCases are requests the fast scan must take (fast) or leave to the full readers; the
// fuzzer starts from them.
var scanCases = []struct {
	fast           bool
	method, params string
	version, name  string // headers; Mcp-Method is the method unless the params say otherwise
}{
	{true, "tasks/get", `{"taskId":"t-1","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t-1"},
	{true, "tasks/get", `{"_meta":{` + scanTasks + `,` + scanVersion + `},"taskId":"t-1"}`, "2026-07-28", "t-1"},
	{true, "tasks/cancel", `{"taskId":"a b","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{}}}`, "2026-07-28", "a b"},
	{true, "tasks/update", `{"taskId":"t","inputResponses":{"k":{"action":"accept"}},"_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t"},
	{true, "tools/call", `{"name":"work","arguments":{"s":"\u00e9\n"},"_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "work"},
	{true, "tools/list", `{"_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"roots":{},"sampling":{"tools":{},"context":null},"experimental":{"x":{}}}}}`, "2026-07-28", ""},
	{true, "server/discover", ` {"_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}} `, "2026-07-28", ""},
	{true, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{"x":1},"other":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":null,"icons":[]},"io.modelcontextprotocol/logLevel":"info","progressToken":7,"traceparent":"00-x"}}`, "2026-07-28", "t"},
	{true, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}},"extensions":null},"progressToken":"p"}}`, "2026-07-28", "t"},
	{true, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":null,"roots":null}}}`, "2026-07-28", "t"},

	// Left to the full readers: well formed but unusual.
	{false, "tasks/get", `{"taskId":"t\u002d1","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t-1"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "=?base64?dA==?="},
	{false, "tasks/get", `{"taskId":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28",` + scanTasks + `}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"Extensions":{"io.modelcontextprotocol/tasks":{}}}}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol\/tasks":{}}}}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","TaskId":"u","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `,` + scanTasks + `}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"FORM":{}}}}}`, "2026-07-28", "t"},

	// Faults: the full readers say what is wrong.
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "u"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2025-11-25", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", ""},
	{false, "tasks/get", `{"taskId":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01",` + scanTasks + `}}`, "2027-01-01", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{"io.modelcontextprotocol/protocolVersion":20260728,` + scanTasks + `}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":[]}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":true}}}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"roots":true}}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":1}}}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `,"io.modelcontextprotocol/clientInfo":{"name":"c"}}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":1}}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `,"io.modelcontextprotocol/logLevel":"loud"}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `,"progressToken":1.5}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":7,"_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "7"},
	{false, "tasks/get", `{"_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":null}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t"}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}`, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t","_meta":{` + scanVersion + `,` + scanTasks + `}}{}`, "2026-07-28", "t"},
	{false, "tasks/get", ``, "2026-07-28", "t"},
	{false, "tasks/get", `{"taskId":"t\u0001","_meta":{` + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t\x01"},
	{false, "tasks/get", "{\"taskId\":\"t\xff\",\"_meta\":{" + scanVersion + `,` + scanTasks + `}}`, "2026-07-28", "t\xff"},
}

// TestScanModernRequest: the fast scan takes the common requests, with the summary the full
// readers give, and leaves the others to them. That it allocates nothing is measured through
// the server (mockserver's TestModernTasksGetAllocs).
func TestScanModernRequest(t *testing.T) {
	supported := []string{Version20260728}
	for _, c := range scanCases {
		m := &Message{Kind: KindRequest, Method: c.method, Params: []byte(c.params)}
		h := RequestHeaders{ProtocolVersion: c.version, Method: c.method, Name: c.name}
		got, ok := ScanModernRequest(m, h, supported)
		want, wantOK := fullScan(m, h, supported)
		if ok != c.fast {
			t.Errorf("%s %s (headers %q %q): fast %v, want %v", c.method, c.params, c.version, c.name, ok, c.fast)
		}
		if ok && (!wantOK || !sameSummary(got, want)) {
			t.Errorf("%s %s: fast %+v, full %+v (ok %v)", c.method, c.params, got, want, wantOK)
		}
	}
}

func sameSummary(a, b ModernSummary) bool {
	return a.DeclaresTasks == b.DeclaresTasks && a.SupportsForm == b.SupportsForm && string(a.Name) == string(b.Name) && (a.Name == nil) == (b.Name == nil)
}

// FuzzScanModernMatchesFull holds ScanModernRequest to the full readers: whenever it takes a
// request, ClassifyRequest, CheckHeaders and ReadRequestMeta accept it too, and say what it
// says.
func FuzzScanModernMatchesFull(f *testing.F) {
	for _, c := range scanCases {
		f.Add(c.method, c.params, c.version, c.method, c.name)
	}
	f.Add("tasks/get", `{"taskId":"t","_meta":{`+scanVersion+`,`+scanTasks+`}}`, "2026-07-28", "tasks/cancel", "t")
	f.Add("tools/call", `{"name":"w","_meta":{`+scanVersion+`,`+scanTasks+`}}`, "2026-07-28", "tools/call", "w\t")
	f.Fuzz(func(t *testing.T, method, params, version, hmethod, name string) {
		supported := []string{Version20260728, "2026-12-01"}
		m := &Message{Kind: KindRequest, Method: method, Params: []byte(params)}
		h := RequestHeaders{ProtocolVersion: version, Method: hmethod, Name: name}
		got, ok := ScanModernRequest(m, h, supported)
		if !ok {
			return
		}
		want, wantOK := fullScan(m, h, supported)
		if !wantOK || !sameSummary(got, want) {
			t.Fatalf("%q %q (headers %q %q %q): fast %+v, full %+v (ok %v)", method, params, version, hmethod, name, got, want, wantOK)
		}
		if p := strings.TrimSpace(params); len(got.Name) > 0 && !strings.Contains(p, string(got.Name)) {
			t.Fatalf("name %q is not a span of the params", got.Name)
		}
	})
}
