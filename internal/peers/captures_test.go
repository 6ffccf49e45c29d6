package peers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// captures is where capture.mjs writes the peers' replies.
const captures = "../../client/testdata/sse"

// TestCapturesMatchTheSchema: every JSON-RPC message in the captured replies is valid MCP
// 2025-11-25 (mcptest, the official schema), and each reply ends with the response to the
// request its file is named after, so the files are evidence of what conforming servers
// send and not of a broken capture. The session GET stream holds no response. The
// unknown-session replies are HTTP error bodies, not messages of the session: they need
// only be a JSON-RPC error object (the SDK's transport writes "id": null there, which
// JSON-RPC 2.0 allows and the MCP schema does not; server-everything omits the id).
func TestCapturesMatchTheSchema(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(captures, "*-*.*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s (%v)", captures, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".md") {
			continue
		}
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(name, "-unknown-session.") {
				var e struct {
					Error *struct {
						Code    *int    `json:"code"`
						Message *string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(b, &e); err != nil || e.Error == nil || e.Error.Code == nil || e.Error.Message == nil {
					t.Errorf("not a JSON-RPC error object (%v): %s", err, b)
				}
				return
			}
			msgs := [][]byte{b}
			if strings.HasSuffix(name, ".sse") {
				msgs = sseData(b)
			}
			if len(msgs) == 0 {
				t.Fatal("no message")
			}
			for _, m := range msgs {
				if err := mcptest.ValidateMessage(m); err != nil {
					t.Errorf("%v", err)
				}
			}
			method := methodOf(name)
			if method == "" {
				return
			}
			last := msgs[len(msgs)-1]
			if err := mcptest.ValidateReply(method, last); err != nil {
				t.Errorf("as the reply to %s: %v", method, err)
			}
		})
	}
}

// methodOf is the request a capture answers, from its name ("" when it holds no reply to
// check as one).
func methodOf(name string) string {
	for _, p := range []struct{ part, method string }{
		{"-get-stream.", ""},
		{"-initialize.", "initialize"}, {"-tools-list.", "tools/list"}, {"-tools-call", "tools/call"},
		{"-tasks-get", "tasks/get"}, {"-tasks-list.", "tasks/list"}, {"-tasks-cancel", "tasks/cancel"},
		{"-tasks-result", "tasks/result"},
	} {
		if strings.Contains(name, p.part) {
			return p.method
		}
	}
	return ""
}

// sseData returns the data of each event of an SSE body that has any, by the rules of the
// WHATWG event stream format: lines end with LF, CR or CRLF; a blank line ends an event;
// "data" fields are joined with LF; one space after the colon is dropped; comments and
// other fields are ignored. Events without data (priming events) are skipped.
func sseData(b []byte) [][]byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	b = bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
	var out [][]byte
	var data []byte
	seen := false
	for line := range bytes.Lines(b) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(line) == 0 {
			if seen && len(data) > 0 {
				out = append(out, data)
			}
			data, seen = nil, false
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if seen {
			data = append(data, '\n')
		}
		data = append(data, value...)
		seen = true
	}
	return out
}
