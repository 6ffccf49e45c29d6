package conform

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/schema"
)

// Every reply the suite reads is checked against the official JSON schemas of its era
// (internal/schema, embedded in the binary): 2025-11-25's, or 2026-07-28's core schema with
// the Tasks extension's. A reply that fails them fails the case that read it, naming the
// definition and the path within the reply that failed, once per method and case. The rule
// is docs/RULES.md#schema (2025-11-25) or #schema-2026, unless the failure is of a rule the
// schemas cannot express (E13, E14, E45), which is named instead. A reply the requester's
// SDK validates the same way (the official @modelcontextprotocol/ext-tasks settles a task
// whose reply fails its schema as failed) is not one a client can use.

// The rule ids of a schema failure.
const (
	ruleSchema     = "schema"
	ruleSchema2026 = "schema-2026"
)

// checkSchema validates the reply p to method against the schemas of the era (modern for
// 2026-07-28) and fails the case when it does not match. A failure to get a reply (an HTTP
// error, a timeout) has nothing to validate.
func (r *run) checkSchema(modern bool, method string, p reply) {
	if p.err != nil || (p.rpc == nil && p.result == nil) {
		return
	}
	if r.schemaSeen[method] {
		return
	}
	raw := jsonrpcReply(p)
	var err error
	rule := ruleSchema
	if modern {
		rule = ruleSchema2026
		err = schema.ValidateReply2026(method, raw)
		if err == nil {
			err = inlineResult2026(method, p)
		}
	} else {
		err = schema.ValidateReply(method, raw)
	}
	if err == nil {
		return
	}
	var se *schema.Error
	if errors.As(err, &se) && se.Rule != "" {
		rule = se.Rule
	}
	if r.schemaSeen == nil {
		r.schemaSeen = map[string]bool{}
	}
	r.schemaSeen[method] = true
	if r.ctx.Err() == nil {
		r.schemaFails = append(r.schemaFails, schemaFail{rule, r.s.redact(fmt.Sprintf("the %s reply does not match the official schema: %s", method, schemaText(err)))})
	}
}

// schemaFail is a schema failure of a case, added to its failures when it ends, after those
// of the rules the case checks (which are named first).
type schemaFail struct{ rule, text string }

// addSchemaFails adds the schema failures of the case to its failures.
func (r *run) addSchemaFails() {
	for _, f := range r.schemaFails {
		r.failed = append(r.failed, f.rule+": "+f.text)
		if !slices.Contains(r.broken, f.rule) {
			r.broken = append(r.broken, f.rule)
		}
	}
}

// jsonrpcReply rebuilds the JSON-RPC response of p: its result as sent, or its error.
func jsonrpcReply(p reply) []byte {
	if p.rpc != nil {
		e, _ := json.Marshal(p.rpc)
		return append(append([]byte(`{"jsonrpc":"2.0","id":1,"error":`), e...), '}')
	}
	return append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":`), p.result...), '}')
}

// inlineResult2026 checks the result a completed task inlines in its tasks/get: the suite's
// tasks are made by tools/call, so it is the CallToolResult the call would have returned
// (E50), and must match that definition of the core schema, resultType included (E11). The
// extension's schema leaves it a plain object.
func inlineResult2026(method string, p reply) error {
	if (mcp.V20260728{}).Op(method) != mcp.OpTasksGet || p.rpc != nil {
		return nil
	}
	var t struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(p.result, &t) != nil || t.Status != mcp.StatusCompleted.String() || len(t.Result) == 0 {
		return nil
	}
	if err := schema.Validate2026("CallToolResult", t.Result); err != nil {
		return fmt.Errorf("the inlined result at /result (the task's CallToolResult, E50): %w", err)
	}
	return nil
}

// schemaText is err on one line without the quoted reply (the evidence has it), cut to a
// length a verdict can carry.
func schemaText(err error) string {
	text, _, _ := strings.Cut(err.Error(), "\n  in: ")
	text = strings.ReplaceAll(strings.TrimPrefix(text, "schema: "), ": schema: ", ": ")
	return oneLine(text, 400)
}
