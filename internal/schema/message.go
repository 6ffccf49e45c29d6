package schema

import (
	"errors"
	"fmt"
	"strings"
)

// resultDefs returns the definitions a successful reply to method must match. When anyOne
// is true, matching one of them is enough; otherwise the result must match all of them.
// nil means the method is not known here: only the envelope is checked.
//
//	method        result must match
//	initialize    InitializeResult
//	tools/list    ListToolsResult
//	tools/call    CallToolResult or CreateTaskResult (neither union lists CreateTaskResult:
//	              docs/RULES.md#gap-5)
//	tasks/get     GetTaskResult
//	tasks/result  GetTaskPayloadResult and CallToolResult (tasksim only task-augments
//	              tools/call, and the payload is the original request's result, R17)
//	tasks/list    ListTasksResult
//	tasks/cancel  CancelTaskResult
//	ping          EmptyResult
func resultDefs(method string) (defs []string, anyOne bool) {
	switch method {
	case "initialize":
		return []string{"InitializeResult"}, false
	case "tools/list":
		return []string{"ListToolsResult"}, false
	case "tools/call":
		return []string{"CallToolResult", "CreateTaskResult"}, true
	case "tasks/get":
		return []string{"GetTaskResult"}, false
	case "tasks/result":
		return []string{"GetTaskPayloadResult", "CallToolResult"}, false
	case "tasks/list":
		return []string{"ListTasksResult"}, false
	case "tasks/cancel":
		return []string{"CancelTaskResult"}, false
	case "ping":
		return []string{"EmptyResult"}, false
	}
	return nil, false
}

// messageDef returns the definition a request or notification with this method must match
// besides its JSON-RPC envelope; "" when the method is not known here. The names are the
// spec's (docs/RULES.md#methods), not package mcp's, so that a misspelt method constant
// there fails here.
func messageDef(method string) string {
	switch method {
	case "initialize":
		return "InitializeRequest"
	case "notifications/initialized":
		return "InitializedNotification"
	case "ping":
		return "PingRequest"
	case "tools/list":
		return "ListToolsRequest"
	case "tools/call":
		return "CallToolRequest"
	case "tasks/get":
		return "GetTaskRequest"
	case "tasks/result":
		return "GetTaskPayloadRequest"
	case "tasks/list":
		return "ListTasksRequest"
	case "tasks/cancel":
		return "CancelTaskRequest"
	case "notifications/tasks/status":
		return "TaskStatusNotification"
	case "notifications/cancelled":
		return "CancelledNotification"
	case "notifications/progress":
		return "ProgressNotification"
	case "elicitation/create":
		return "ElicitRequest"
	case "sampling/createMessage":
		return "CreateMessageRequest"
	}
	return ""
}

// ValidateReply checks raw, one whole JSON-RPC response to a request for method: the
// envelope against JSONRPCResultResponse or JSONRPCErrorResponse and, for a result, the
// result against the definitions of its method (see resultDefs). An error reply is checked
// as an envelope only, whatever the method. For an unknown method only the envelope is
// checked.
func ValidateReply(method string, raw []byte) error {
	s, err := shared()
	if err != nil {
		return err
	}
	return s.ValidateReply(method, raw)
}

// ValidateReply is the package-level ValidateReply on s.
func (s *Schema) ValidateReply(method string, raw []byte) error {
	v, err := s.parse("JSONRPCResponse", raw)
	if err != nil {
		return err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return s.check("JSONRPCResponse", "", v, raw)
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case hasResult && hasError:
		return ruleError(raw, `a response carries "result" or "error", not both`)
	case hasError:
		return s.check("JSONRPCErrorResponse", "", v, raw)
	}
	if err := s.check("JSONRPCResultResponse", "", v, raw); err != nil {
		return err
	}
	defs, anyOne := resultDefs(method)
	var errs []error
	for _, def := range defs {
		err := s.check(def, "/result", obj["result"], raw)
		if err == nil && anyOne {
			return nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case len(errs) == 0:
		return nil
	case anyOne:
		return fmt.Errorf("schema: %s result matches none of %s:\n%w", method, strings.Join(defs, ", "), errors.Join(errs...))
	default:
		return errors.Join(errs...)
	}
}

// ValidateMessage checks raw, any single JSON-RPC message, against JSONRPCMessage and
// against the member of that union its shape selects (a "method" and an "id" make a
// request, a "method" alone a notification, then "error" and "result"). A request or
// notification whose method is known here (see messageDef) must also match that method's
// definition, e.g. ElicitRequest for elicitation/create and TaskStatusNotification for
// notifications/tasks/status, and a method the schema defines as a notification must not
// carry an "id".
func ValidateMessage(raw []byte) error {
	s, err := shared()
	if err != nil {
		return err
	}
	return s.ValidateMessage(raw)
}

// ValidateMessage is the package-level ValidateMessage on s.
func (s *Schema) ValidateMessage(raw []byte) error {
	v, err := s.parse("JSONRPCMessage", raw)
	if err != nil {
		return err
	}
	if err := s.check("JSONRPCMessage", "", v, raw); err != nil {
		return err
	}
	obj := v.(map[string]any) // every member of JSONRPCMessage is an object
	member, err := shapeOf(obj, raw)
	if err != nil {
		return err
	}
	if err := s.check(member, "", v, raw); err != nil {
		return err
	}
	_, hasID := obj["id"]
	method, _ := obj["method"].(string)
	def := messageDef(method)
	if def == "" {
		return nil
	}
	if strings.HasSuffix(def, "Notification") && hasID {
		return ruleError(raw, fmt.Sprintf(`%q is a notification (%s) and must not carry an "id"`, method, def))
	}
	return s.check(def, "", v, raw)
}

// shapeOf returns the member of the JSONRPCMessage union that the shape of obj, a message
// the union accepted, selects: a "method" and an "id" make a request, a "method" alone a
// notification, then "error" and "result". A shape that is none of them breaks a JSON-RPC 2.0
// rule.
func shapeOf(obj map[string]any, raw []byte) (string, error) {
	_, hasID := obj["id"]
	_, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case hasMethod && (hasResult || hasError):
		return "", ruleError(raw, `a request or notification carries neither "result" nor "error"`)
	case hasMethod && hasID:
		return "JSONRPCRequest", nil
	case hasMethod:
		return "JSONRPCNotification", nil
	case hasResult && hasError:
		return "", ruleError(raw, `a response carries "result" or "error", not both`)
	case hasError:
		return "JSONRPCErrorResponse", nil
	}
	return "JSONRPCResultResponse", nil
}

// ruleError reports a JSON-RPC 2.0 rule that the schema does not express.
func ruleError(raw []byte, rule string) error {
	return &Error{Err: errors.New(rule), Instance: excerpt(raw)}
}
