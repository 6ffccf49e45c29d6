package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The modern era (2026-07-28 with the Tasks extension) is checked against two schemas: the
// core one and the extension's. In the tables below a definition named "ext:X" is the
// extension's X, any other the core schema's, as the validation record of the spec digest
// writes them.

// modern is the pair of compiled schemas of the modern era.
type modern struct{ core, ext *Schema }

// sharedModern returns the shared core and extension schemas.
func sharedModern() (modern, error) {
	core, err := shared2026()
	if err != nil {
		return modern{}, err
	}
	ext, err := sharedExt()
	if err != nil {
		return modern{}, err
	}
	return modern{core, ext}, nil
}

// check validates v, found at JSON pointer at within raw, against def ("ext:X" or a core
// definition).
func (m modern) check(def, at string, v any, raw []byte) error {
	if d, ok := strings.CutPrefix(def, "ext:"); ok {
		return m.ext.check(d, at, v, raw)
	}
	return m.core.check(def, at, v, raw)
}

// resultDefs2026 returns, for a method whose replies are known here, the definition its
// result must match for each resultType it may carry; nil for any other method (the
// envelope alone is checked, and its Result requires a resultType, E11).
//
//	method                resultType      result must match
//	server/discover       complete        DiscoverResult
//	tools/list            complete        ListToolsResult
//	tools/call            complete        CallToolResult
//	                      input_required  InputRequiredResult (MRTR, E15)
//	                      task            ext:CreateTaskResult (E45)
//	tasks/get             complete        ext:GetTaskResult (E50, E51)
//	tasks/update          complete        ext:UpdateTaskResult (E58)
//	tasks/cancel          complete        ext:CancelTaskResult (E60)
//	subscriptions/listen  complete        SubscriptionsListenResult (E20)
//
// The schemas leave resultType a plain string on most of these, so the table's choice by
// resultType is a rule on top of them: a value the method may not return fails as E13
// (unknown to the client) or E45 ("task" on a result that is not a CreateTaskResult).
func resultDefs2026(method string) map[string]string {
	switch method {
	case "server/discover":
		return map[string]string{"complete": "DiscoverResult"}
	case "tools/list":
		return map[string]string{"complete": "ListToolsResult"}
	case "tools/call":
		return map[string]string{"complete": "CallToolResult", "input_required": "InputRequiredResult", "task": "ext:CreateTaskResult"}
	case "tasks/get":
		return map[string]string{"complete": "ext:GetTaskResult"}
	case "tasks/update":
		return map[string]string{"complete": "ext:UpdateTaskResult"}
	case "tasks/cancel":
		return map[string]string{"complete": "ext:CancelTaskResult"}
	case "subscriptions/listen":
		return map[string]string{"complete": "SubscriptionsListenResult"}
	}
	return nil
}

// messageDef2026 returns the definition a request or notification with this method must
// match besides its JSON-RPC envelope; "" when the method is not known here. The names are
// the specification's, not package mcp's, so that a misspelt method constant there fails
// here.
func messageDef2026(method string) string {
	switch method {
	case "server/discover":
		return "DiscoverRequest"
	case "tools/list":
		return "ListToolsRequest"
	case "tools/call":
		return "CallToolRequest"
	case "subscriptions/listen":
		return "SubscriptionsListenRequest"
	case "tasks/get":
		return "ext:GetTaskRequest"
	case "tasks/update":
		return "ext:UpdateTaskRequest"
	case "tasks/cancel":
		return "ext:CancelTaskRequest"
	case "notifications/subscriptions/acknowledged":
		return "SubscriptionsAcknowledgedNotification"
	case "notifications/tasks":
		return "ext:TaskStatusNotification"
	case "notifications/cancelled":
		return "CancelledNotification"
	case "notifications/progress":
		return "ProgressNotification"
	}
	return ""
}

// errorDefs2026 maps the error codes 2026-07-28 defines to the response each must match
// (E5, E9, E26).
var errorDefs2026 = map[int64]string{
	-32020: "HeaderMismatchError",
	-32021: "MissingRequiredClientCapabilityError",
	-32022: "UnsupportedProtocolVersionError",
}

// ValidateReply2026 is ValidateReply for the modern era: raw is one whole JSON-RPC response
// to a 2026-07-28 request for method. A result response must match the core
// JSONRPCResultResponse (whose result requires a resultType, E11) and, for a method of
// resultDefs2026's table, the definition its resultType selects there. An error response
// must match JSONRPCErrorResponse and, for -32020, -32021 and -32022, the schema's
// definition of that error with its data (E5, E9, E26); codes that E14 forbids fail too:
// -32002, -32042 and any code of -32020…-32099 the specification does not define.
func ValidateReply2026(method string, raw []byte) error {
	m, err := sharedModern()
	if err != nil {
		return err
	}
	v, err := m.core.parse("JSONRPCResponse", raw)
	if err != nil {
		return err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return m.core.check("JSONRPCResponse", "", v, raw)
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case hasResult && hasError:
		return ruleError(raw, `a response carries "result" or "error", not both`)
	case hasError:
		return m.checkError(v, raw)
	}
	if err := m.core.check("JSONRPCResultResponse", "", v, raw); err != nil {
		return err
	}
	defs := resultDefs2026(method)
	if defs == nil {
		return nil
	}
	rt, _ := obj["result"].(map[string]any)["resultType"].(string) // the envelope made both sure
	def, ok := defs[rt]
	if !ok {
		known := make([]string, 0, len(defs))
		for k := range defs {
			known = append(known, fmt.Sprintf("%q", k))
		}
		slices.Sort(known)
		rule := "E13"
		if rt == "task" {
			rule = "E45"
		}
		return mcpRuleError(raw, rule, fmt.Sprintf("a %s result carries resultType %q, not %s", method, rt, strings.Join(known, " or ")))
	}
	return m.check(def, "/result", obj["result"], raw)
}

// checkError validates an error response of 2026-07-28.
func (m modern) checkError(v any, raw []byte) error {
	if err := m.core.check("JSONRPCErrorResponse", "", v, raw); err != nil {
		return err
	}
	// An integer: the envelope checked it; jsonschema.UnmarshalJSON keeps numbers as
	// json.Number.
	num, _ := v.(map[string]any)["error"].(map[string]any)["code"].(json.Number)
	c, err := num.Int64()
	if err != nil {
		return nil // beyond int64: defined by nobody, and no rule here reaches it
	}
	if def, ok := errorDefs2026[c]; ok {
		return m.core.check(def, "", v, raw)
	}
	switch {
	case c == -32002 || c == -32042:
		return mcpRuleError(raw, "E14", fmt.Sprintf("code %d belongs to 2025-11-25 and must not be emitted", c))
	case c <= -32020 && c >= -32099:
		return mcpRuleError(raw, "E14", fmt.Sprintf("code %d is reserved for the MCP specification, which does not define it", c))
	}
	return nil
}

// ValidateMessage2026 is ValidateMessage for the modern era: raw, any single JSON-RPC
// message, must match the core JSONRPCMessage and the member its shape selects. Besides:
//
//   - every request's params must match the core RequestParams: the _meta envelope with
//     protocolVersion and clientCapabilities (E1), including the task methods, whose
//     extension definitions leave it out (docs/RULES.md#ext-gap-2);
//   - a request or notification whose method is known here (see messageDef2026) must
//     match that method's definition, e.g. ext:UpdateTaskRequest for tasks/update and
//     ext:TaskStatusNotification for notifications/tasks, and a notification must not
//     carry an "id";
//   - a notification's params._meta, when present, must match NotificationMetaObject
//     (subscriptionId, E18).
func ValidateMessage2026(raw []byte) error {
	m, err := sharedModern()
	if err != nil {
		return err
	}
	v, err := m.core.parse("JSONRPCMessage", raw)
	if err != nil {
		return err
	}
	if err := m.core.check("JSONRPCMessage", "", v, raw); err != nil {
		return err
	}
	obj := v.(map[string]any) // every member of JSONRPCMessage is an object
	member, err := shapeOf(obj, raw)
	if err != nil {
		return err
	}
	if err := m.core.check(member, "", v, raw); err != nil {
		return err
	}
	_, hasID := obj["id"]
	method, _ := obj["method"].(string)
	def := messageDef2026(method)
	if strings.HasSuffix(def, "Notification") && hasID {
		return ruleError(raw, fmt.Sprintf(`%q is a notification (%s) and must not carry an "id"`, method, def))
	}
	switch member {
	case "JSONRPCRequest":
		if err := m.core.check("RequestParams", "/params", obj["params"], raw); err != nil {
			return err
		}
	case "JSONRPCNotification":
		if params, ok := obj["params"].(map[string]any); ok {
			if meta, ok := params["_meta"]; ok {
				if err := m.core.check("NotificationMetaObject", "/params/_meta", meta, raw); err != nil {
					return err
				}
			}
		}
	}
	if def == "" {
		return nil
	}
	return m.check(def, "", v, raw)
}

// mcpRuleError reports a rule of docs/RULES.md that the schemas do not express.
func mcpRuleError(raw []byte, rule, text string) error {
	return &Error{Rule: rule, Err: errors.New(text), Instance: excerpt(raw)}
}
