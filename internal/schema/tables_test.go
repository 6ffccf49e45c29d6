package schema

import (
	"strings"
	"testing"
)

// Every definition the method tables name must exist in the schema, or a typo would turn a
// check into a plain "no definition" error.
func TestTablesNameExistingDefs(t *testing.T) {
	s, err := shared()
	if err != nil {
		t.Fatal(err)
	}
	methods := []string{
		"initialize", "notifications/initialized", "ping", "tools/list", "tools/call",
		"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status",
		"notifications/cancelled", "notifications/progress", "elicitation/create", "sampling/createMessage",
	}
	for _, m := range methods {
		defs, _ := resultDefs(m)
		if d := messageDef(m); d != "" {
			defs = append(defs, d)
		} else {
			t.Errorf("messageDef(%q) is empty", m)
		}
		for _, d := range defs {
			if _, ok := s.defs[d]; !ok {
				t.Errorf("method %s: schema has no definition %q", m, d)
			}
		}
	}
	for _, d := range []string{"JSONRPCMessage", "JSONRPCRequest", "JSONRPCNotification", "JSONRPCResponse", "JSONRPCResultResponse", "JSONRPCErrorResponse"} {
		if _, ok := s.defs[d]; !ok {
			t.Errorf("schema has no definition %q", d)
		}
	}
}

// The same for the tables of the modern era, whose names may point into either schema.
func TestTables2026NameExistingDefs(t *testing.T) {
	m, err := sharedModern()
	if err != nil {
		t.Fatal(err)
	}
	exists := func(def string) bool {
		if d, ok := strings.CutPrefix(def, "ext:"); ok {
			_, ok := m.ext.defs[d]
			return ok
		}
		_, ok := m.core.defs[def]
		return ok
	}
	methods := []string{
		"server/discover", "tools/list", "tools/call", "subscriptions/listen", "tasks/get", "tasks/update",
		"tasks/cancel", "notifications/subscriptions/acknowledged", "notifications/tasks",
		"notifications/cancelled", "notifications/progress",
	}
	for _, meth := range methods {
		defs := []string{messageDef2026(meth)}
		if defs[0] == "" {
			t.Errorf("messageDef2026(%q) is empty", meth)
		}
		for _, d := range resultDefs2026(meth) {
			defs = append(defs, d)
		}
		for _, d := range defs {
			if d != "" && !exists(d) {
				t.Errorf("method %s: no definition %q", meth, d)
			}
		}
	}
	for _, d := range errorDefs2026 {
		if !exists(d) {
			t.Errorf("errorDefs2026: no definition %q", d)
		}
	}
	for _, d := range []string{"JSONRPCMessage", "JSONRPCRequest", "JSONRPCNotification", "JSONRPCResponse",
		"JSONRPCResultResponse", "JSONRPCErrorResponse", "RequestParams", "NotificationMetaObject"} {
		if !exists(d) {
			t.Errorf("core schema has no definition %q", d)
		}
	}
}
