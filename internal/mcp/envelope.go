package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// The per-request _meta envelope of protocol 2026-07-28 (docs/RULES.md#e1): each request says
// which version it speaks, what its client can do and who the client is, and a server takes
// all three from that request alone (E4). There is no initialize and no session.

// RequestMeta is the _meta envelope of one modern request (the schema's RequestMetaObject).
// ReadRequestMeta reads it from a request's params; json.Marshal writes it, strictly: the
// two required keys always, the others when set.
type RequestMeta struct {
	// ProtocolVersion is io.modelcontextprotocol/protocolVersion (required, E1).
	ProtocolVersion string
	// ClientCapabilities is io.modelcontextprotocol/clientCapabilities (required, E1): what
	// the client can do for this request; the zero value is written as {} (none).
	ClientCapabilities ModernClientCapabilities
	// ClientInfo is io.modelcontextprotocol/clientInfo (E2), nil when not sent: for display
	// only (E6).
	ClientInfo *Implementation
	// LogLevel is io.modelcontextprotocol/logLevel, "" when not sent.
	LogLevel string
	// ProgressToken is progressToken, a JSON string or integer; nil when not sent.
	ProgressToken json.RawMessage
}

// ModernClientCapabilities are the client capabilities of 2026-07-28 (the schema's
// ClientCapabilities; ClientCapabilities is 2025-11-25's): declared per request, and only
// for that request (E4). A legacy "tasks" member is no declaration of the Tasks extension
// and is not read (E37).
type ModernClientCapabilities struct {
	Elicitation *ElicitationCapability `json:"elicitation,omitempty"`
	Sampling    *SamplingCapability    `json:"sampling,omitempty"`
	Roots       *Leaf                  `json:"roots,omitempty"`
	// Experimental and Extensions map names to settings objects; an extension is declared
	// by its key, {} meaning no settings.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// SamplingCapability is the client's capabilities.sampling of 2026-07-28.
type SamplingCapability struct {
	Context *Leaf `json:"context,omitempty"`
	Tools   *Leaf `json:"tools,omitempty"`
}

// TasksExtension reports whether c declares the Tasks extension (docs/RULES.md#e39), and
// with what settings: {} by the extension schema, which defines none; a reader keeps any
// other object it was sent, for the caller to report.
func (c *ModernClientCapabilities) TasksExtension() (settings json.RawMessage, declared bool) {
	settings, declared = c.Extensions[ExtTasks]
	return settings, declared
}

// DeclaresTasks reports whether c declares the Tasks extension (E39).
func (c *ModernClientCapabilities) DeclaresTasks() bool {
	_, ok := c.Extensions[ExtTasks]
	return ok
}

// DeclareTasks adds the Tasks extension to c, with its only settings, {}.
func (c *ModernClientCapabilities) DeclareTasks() {
	if c.Extensions == nil {
		c.Extensions = map[string]json.RawMessage{}
	}
	c.Extensions[ExtTasks] = json.RawMessage(`{}`)
}

// ModernServerCapabilities are the server capabilities of 2026-07-28 that tasksim reads or
// sends, as server/discover advertises them (the schema's ServerCapabilities). The legacy
// tasks.* capabilities are never advertised (E37).
type ModernServerCapabilities struct {
	Tools      *ToolsCapability           `json:"tools,omitempty"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// DeclaresTasks reports whether c advertises the Tasks extension.
func (c *ModernServerCapabilities) DeclaresTasks() bool {
	_, ok := c.Extensions[ExtTasks]
	return ok
}

// DeclareTasks adds the Tasks extension to c, with its only settings, {}.
func (c *ModernServerCapabilities) DeclareTasks() {
	if c.Extensions == nil {
		c.Extensions = map[string]json.RawMessage{}
	}
	c.Extensions[ExtTasks] = json.RawMessage(`{}`)
}

// logLevels are the values of the schema's LoggingLevel.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// MarshalJSON writes the envelope (E1, E2). An empty ProtocolVersion is an error: no
// request may go without one.
func (m RequestMeta) MarshalJSON() ([]byte, error) {
	if m.ProtocolVersion == "" {
		return nil, errors.New("mcp: RequestMeta without a ProtocolVersion (docs/RULES.md#e1)")
	}
	if m.LogLevel != "" && !slices.Contains(logLevels, m.LogLevel) {
		return nil, fmt.Errorf("mcp: RequestMeta: log level %q is not one of the schema's", m.LogLevel)
	}
	caps, err := json.Marshal(m.ClientCapabilities)
	if err != nil {
		return nil, fmt.Errorf("mcp: RequestMeta: clientCapabilities: %w", err)
	}
	b := append([]byte(`{"`+MetaProtocolVersion+`":`), AppendString(nil, m.ProtocolVersion)...)
	b = append(b, `,"`+MetaClientCapabilities+`":`...)
	b = append(b, caps...)
	if m.ClientInfo != nil {
		info, err := json.Marshal(m.ClientInfo)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"`+MetaClientInfo+`":`...)
		b = append(b, info...)
	}
	if m.LogLevel != "" {
		b = append(b, `,"`+MetaLogLevel+`":`...)
		b = AppendString(b, m.LogLevel)
	}
	if m.ProgressToken != nil {
		if !isStringOrInteger(m.ProgressToken) {
			return nil, fmt.Errorf("mcp: RequestMeta: progressToken must be a string or an integer, got %s", clip(m.ProgressToken))
		}
		b = append(b, `,"`+MetaProgressToken+`":`...)
		b = append(b, m.ProgressToken...)
	}
	return append(b, '}'), nil
}

// ReadRequestMeta reads the _meta envelope of a modern request from its params, which must
// be a JSON object (or absent), and checks it: E3 (a required key missing or of the wrong
// type: -32602), E9 (a version not among supported: -32022 with data {supported,
// requested}). It reads only params: nothing is kept from one request for the next (E4).
//
// The version is checked before anything else in the envelope, since the envelope of
// another version may have another shape: a client that speaks only 2027-01-01 learns what
// the server supports, whatever else it sent. supported lists the versions the server
// serves statelessly, as the error's data will list them. The error has no id: the caller
// answers with the request's (AppendError), over HTTP with HTTPStatus(code), 400 for both
// (E27).
//
// Capability leaves and settings must be objects, as in the schema; an extension's settings
// are kept as sent (TasksExtension). Keys it does not know (traceparent, vendor keys) are
// ignored.
func ReadRequestMeta(params json.RawMessage, supported []string) (RequestMeta, *Error) {
	var m RequestMeta
	meta, err := metaOf(params)
	if err != nil {
		return m, err
	}
	var version, caps, info, level, token []byte
	if !EachMember(meta, func(name, v []byte) bool {
		switch string(name) {
		case MetaProtocolVersion:
			version = v
		case MetaClientCapabilities:
			caps = v
		case MetaClientInfo:
			info = v
		case MetaLogLevel:
			level = v
		case MetaProgressToken:
			token = v
		}
		return true
	}) {
		return m, invalidMeta("params._meta is not one JSON object")
	}

	switch {
	case version == nil:
		return m, invalidMeta("params._meta lacks %q", MetaProtocolVersion)
	case json.Unmarshal(version, &m.ProtocolVersion) != nil || version[0] != '"':
		return m, invalidMeta("%s must be a string, got %s", MetaProtocolVersion, clip(version))
	case !slices.Contains(supported, m.ProtocolVersion):
		return m, UnsupportedProtocolVersion(m.ProtocolVersion, supported)
	}

	switch {
	case caps == nil:
		return m, invalidMeta("params._meta lacks %q", MetaClientCapabilities)
	case caps[0] != '{':
		return m, invalidMeta("%s must be an object, got %s", MetaClientCapabilities, clip(caps))
	}
	if err := json.Unmarshal(caps, &m.ClientCapabilities); err != nil {
		return m, invalidMeta("%s: %v", MetaClientCapabilities, err)
	}
	for _, set := range []*map[string]json.RawMessage{&m.ClientCapabilities.Extensions, &m.ClientCapabilities.Experimental} {
		for name, v := range *set {
			if len(v) == 0 || v[0] != '{' {
				return m, invalidMeta("%s: the settings of %q must be an object, got %s", MetaClientCapabilities, name, clip(v))
			}
		}
		if len(*set) == 0 {
			*set = nil // {} declares nothing, as an absent member
		}
	}

	if info != nil {
		var impl struct{ Name, Version *string }
		if info[0] != '{' || json.Unmarshal(info, &impl) != nil || impl.Name == nil || impl.Version == nil {
			return m, invalidMeta("%s must be an object with a string name and version, got %s", MetaClientInfo, clip(info))
		}
		m.ClientInfo = new(Implementation)
		if err := json.Unmarshal(info, m.ClientInfo); err != nil {
			return m, invalidMeta("%s: %v", MetaClientInfo, err)
		}
	}
	if level != nil {
		if json.Unmarshal(level, &m.LogLevel) != nil || !slices.Contains(logLevels, m.LogLevel) {
			return m, invalidMeta("%s must be one of %v, got %s", MetaLogLevel, logLevels, clip(level))
		}
	}
	if token != nil {
		if !isStringOrInteger(token) {
			return m, invalidMeta("%s must be a string or an integer, got %s", MetaProgressToken, clip(token))
		}
		m.ProgressToken = bytes.Clone(token)
	}
	return m, nil
}

// metaOf returns the raw _meta object of params; a missing or malformed one is a -32602
// (E3).
func metaOf(params json.RawMessage) ([]byte, *Error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		return nil, invalidMeta("the request has no params, so no _meta")
	}
	if p[0] != '{' {
		return nil, invalidMeta("params must be an object")
	}
	var meta []byte
	if !EachMember(p, func(name, v []byte) bool {
		if string(name) == "_meta" {
			meta = v
		}
		return true
	}) {
		return nil, invalidMeta("params is not one JSON object")
	}
	switch {
	case meta == nil || string(meta) == "null":
		return nil, invalidMeta("params._meta is missing")
	case meta[0] != '{':
		return nil, invalidMeta("params._meta must be an object, got %s", clip(meta))
	}
	return meta, nil
}

// invalidMeta is the -32602 of a malformed envelope (E3).
func invalidMeta(format string, args ...any) *Error {
	return Errorf(CodeInvalidParams, "invalid params: "+format+" (E3)", args...)
}

// isStringOrInteger reports whether v is a JSON string or integer (RequestId, ProgressToken).
func isStringOrInteger(v []byte) bool {
	var id ID
	return id.UnmarshalJSON(v) == nil
}

// UnsupportedProtocolVersionData is the data of a -32022 error (E9).
type UnsupportedProtocolVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// UnsupportedProtocolVersion returns the -32022 error for a request of version requested,
// naming the versions the server supports (E9; over HTTP, 400).
func UnsupportedProtocolVersion(requested string, supported []string) *Error {
	if supported == nil {
		supported = []string{}
	}
	data, _ := json.Marshal(UnsupportedProtocolVersionData{Supported: supported, Requested: requested})
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
}

// MissingRequiredClientCapabilityData is the data of a -32021 error (E5).
type MissingRequiredClientCapabilityData struct {
	RequiredCapabilities ModernClientCapabilities `json:"requiredCapabilities"`
}

// MissingRequiredClientCapability returns the -32021 error that says serving the request
// needs the capabilities required, which it did not declare (E5; over HTTP, 400).
func MissingRequiredClientCapability(message string, required ModernClientCapabilities) *Error {
	data, err := json.Marshal(MissingRequiredClientCapabilityData{RequiredCapabilities: required})
	if err != nil { // a settings value that is no JSON: name no settings rather than none
		data = []byte(`{"requiredCapabilities":{}}`)
	}
	return &Error{Code: CodeMissingRequiredClientCapability, Message: message, Data: data}
}

// RequireTasks returns nil when the request declares the Tasks extension, and otherwise the
// -32021 error naming it in data.requiredCapabilities, for method: a tasks/* request or a
// subscriptions/listen with taskIds (E61, E65), or a call that can be served only as a task
// (E44). A task is never created for a request that did not declare it (E39).
func (m *RequestMeta) RequireTasks(method string) *Error {
	if m.ClientCapabilities.DeclaresTasks() {
		return nil
	}
	var req ModernClientCapabilities
	req.DeclareTasks()
	return MissingRequiredClientCapability(method+" needs the Tasks extension "+ExtTasks+" declared in this request's clientCapabilities", req)
}

// ServerInfoMeta returns the _meta of a result that names the server (E6):
// {"io.modelcontextprotocol/serverInfo": info}.
func ServerInfoMeta(info Implementation) json.RawMessage {
	b, _ := json.Marshal(info) // strings only: cannot fail
	return append(append([]byte(`{"`+MetaServerInfo+`":`), b...), '}')
}

// SubscriptionMeta returns the _meta of a notification on a subscriptions/listen stream, and
// of the listen result that ends it: {"io.modelcontextprotocol/subscriptionId": id}, id being
// the listen request's (E18, E20).
func SubscriptionMeta(id ID) json.RawMessage {
	return append(appendID([]byte(`{"`+MetaSubscriptionID+`":`), id), '}')
}
