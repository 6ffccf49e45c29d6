package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// JSON-RPC 2.0 and MCP error codes (docs/RULES.md#error-codes).
const (
	CodeParseError             = -32700 // malformed JSON
	CodeInvalidRequest         = -32600 // not a valid JSON-RPC 2.0 message (batches included)
	CodeMethodNotFound         = -32601 // unknown method, or taskSupport violated (R8, R10)
	CodeInvalidParams          = -32602 // bad params, unknown tool, unknown or foreign taskId (R46, R53)
	CodeInternalError          = -32603 // internal failure (R48)
	CodeURLElicitationRequired = -32042 // URL elicitation required
)

// Error is a JSON-RPC error object. It is also a Go error so that handlers can return it.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ID is a JSON-RPC request id: a string or an integer, never null (H11). The zero ID is
// "absent", which marks a notification. It keeps the exact JSON text so that a reply echoes
// the id byte for byte.
type ID struct{ raw string }

// StringID returns the id "s" as a JSON string.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// IntID returns the integer id n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// String returns the id's JSON text, e.g. `"c-1"` or `7`; "" for an absent id.
func (id ID) String() string { return id.raw }

// MarshalJSON writes the id; an absent id is written as null, JSON-RPC 2.0's spelling
// (AppendError leaves an absent id out instead, as the MCP schema requires).
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON accepts a string or an integer and rejects anything else, null included.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("empty id")
	}
	switch {
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("id: %w", err)
		}
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		if _, err := strconv.ParseInt(string(b), 10, 64); err != nil {
			return fmt.Errorf("id must be a string or an integer, got %s", b)
		}
	default:
		return fmt.Errorf("id must be a string or an integer, got %s", b)
	}
	id.raw = string(b)
	return nil
}

// Kind classifies a decoded message.
type Kind uint8

const (
	KindRequest      Kind = iota + 1 // method and id
	KindNotification                 // method, no id
	KindResult                       // id and result
	KindError                        // error (id may be absent if the request was unreadable)
)

// Message is one decoded JSON-RPC 2.0 message. Params and Result stay raw: the method
// decides their type.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
	Kind   Kind
}

// Decode parses exactly one JSON-RPC 2.0 message. It returns a *Error with code -32700 for
// malformed JSON and -32600 for anything that is JSON but not a single valid message; a JSON
// array (a batch) is rejected with -32600 because 2025-11-25 has no batches. When the id
// could be read, the returned Message carries it so that the error reply can echo it.
//
// Plain messages are read in one validating pass (split, by scanner); anything
// encoding/json might read differently (a member repeated or spelled in another case, a
// member of the wrong type) goes to decodeStd, the encoding/json reading, so that answers
// and error texts are encoding/json's (FuzzDecodeMatchesEncodingJSON). Params, Result and
// the id are copies: the Message does not alias b.
func Decode(b []byte) (Message, *Error) { return DecodeReply(b, nil) }

// DecodeReply is Decode, with the result of a reply read by rr in the same pass when it is
// an object (ResultReader): a client reads a task from every poll's reply, and reading it
// again from Result took a second pass over it. rr may be nil.
func DecodeReply(b []byte, rr *ResultReader) (Message, *Error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Message{}, notAnObject(b)
	}
	var env members
	switch ok := env.split(b, rr); {
	case !ok:
		return Message{}, Errorf(CodeParseError, "parse error: body is not valid JSON")
	case env.odd:
		return decodeStd(b)
	}
	jsonrpc, ok1 := readStr(env.jsonrpc)
	method, ok2 := readStr(env.method)
	rpcErr, ok3 := readErrorMember(env.error)
	if !ok1 || !ok2 || !ok3 {
		return decodeStd(b) // a member of the wrong type: encoding/json's words for it
	}
	var m Message
	hasID := len(env.id) > 0 && string(env.id) != "null"
	if hasID {
		if err := m.ID.UnmarshalJSON(env.id); err != nil {
			return Message{}, Errorf(CodeInvalidRequest, "invalid request: %v", err)
		}
	}
	if jsonrpc == nil || *jsonrpc != "2.0" {
		return m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	err := m.fill(&env, method, rpcErr, hasID) // before m is read for the return
	if err == nil && m.Kind == KindResult && rr != nil && rr.collected {
		rr.finish(env.result) // a span of b: what rr keeps, it copies
	}
	return m, err
}

// notAnObject is Decode's error for a body that is empty or not a JSON object: validity
// decides between -32700 and -32600 (rare paths).
func notAnObject(b []byte) *Error {
	switch {
	case len(b) == 0:
		return Errorf(CodeParseError, "parse error: empty body")
	case !validJSON(b):
		return Errorf(CodeParseError, "parse error: body is not valid JSON")
	case b[0] == '[':
		return Errorf(CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported by protocol 2025-11-25")
	}
	return Errorf(CodeInvalidRequest, "invalid request: a message must be a JSON object")
}

// readErrorMember reads the error member: nil when absent or null; ok is false when it is
// not an object encoding/json reads as an Error.
func readErrorMember(raw []byte) (e *Error, ok bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	e = new(Error)
	if raw[0] != '{' || json.Unmarshal(raw, e) != nil {
		return nil, false
	}
	return e, true
}

// fill sets m's kind and members from a message's envelope whose jsonrpc and id have been
// read, or says why it is no valid message (m keeps the id, for the error reply).
func (m *Message) fill(env *members, method *string, rpcErr *Error, hasID bool) *Error {
	switch {
	case method != nil:
		if *method == "" {
			return Errorf(CodeInvalidRequest, `invalid request: "method" is empty`)
		}
		if env.result != nil || rpcErr != nil {
			return Errorf(CodeInvalidRequest, `invalid request: a request carries neither "result" nor "error"`)
		}
		if len(env.id) > 0 && !hasID {
			return Errorf(CodeInvalidRequest, `invalid request: "id" must not be null (H11)`)
		}
		if len(env.params) > 0 && env.params[0] != '{' && string(env.params) != "null" {
			return Errorf(CodeInvalidRequest, `invalid request: "params" must be an object`)
		}
		m.Method = *method
		if len(env.params) > 0 && string(env.params) != "null" {
			m.Params = bytes.Clone(env.params)
		}
		m.Kind = KindNotification
		if hasID {
			m.Kind = KindRequest
		}
	case rpcErr != nil:
		if env.result != nil {
			return Errorf(CodeInvalidRequest, `invalid request: a response carries "result" or "error", not both`)
		}
		m.Error, m.Kind = rpcErr, KindError
	case env.result != nil:
		if !hasID {
			return Errorf(CodeInvalidRequest, `invalid request: a result response needs an "id"`)
		}
		m.Result, m.Kind = bytes.Clone(env.result), KindResult
	default:
		return Errorf(CodeInvalidRequest, `invalid request: a message needs "method", "result" or "error"`)
	}
	return nil
}

// members holds the raw values of a message's members (nil = absent; a JSON null is
// "null"), as slices of the message split.
type members struct {
	jsonrpc, id, method, params, result, error []byte
	// odd is set by a member repeated, or named in another case than JSON-RPC's
	// ("Method"), which encoding/json reads in its own way (the case folded, repeated
	// objects merged).
	odd bool
}

// split reads b, which starts with '{', as exactly one JSON object into e's members; it
// reports false when b is not valid JSON or holds more than one value. rr, when not nil,
// collects the members of the result, if it is an object (ResultReader.collect), as the
// pass meets them.
func (e *members) split(b []byte, rr *ResultReader) bool {
	r := newObjectReader(b)
	for r.nextName() {
		if rr != nil && string(r.name) == "result" && e.result == nil && r.s.peek() == '{' {
			n := r.objectAt()
			rr.collect(&n)
			if !r.endNested(&n) {
				break
			}
		} else if !r.skipValue() {
			break
		}
		var dst *[]byte
		switch string(r.name) {
		case "jsonrpc":
			dst = &e.jsonrpc
		case "id":
			dst = &e.id
		case "method":
			dst = &e.method
		case "params":
			dst = &e.params
		case "result":
			dst = &e.result
		case "error":
			dst = &e.error
		default:
			e.odd = e.odd || FoldsTo(r.name, "jsonrpc", "id", "method", "params", "result", "error")
			continue
		}
		e.odd = e.odd || *dst != nil
		*dst = r.value
	}
	return r.ok()
}

// EachMember reads b as exactly one JSON object and calls f with each member's name
// (unescaped, valid only during the call) and raw value (a span of b), in order, in one
// validating pass that allocates nothing (scanner). It reports false when b is not exactly
// one JSON object, or when f returns false, having stopped there. Like encoding/json, it
// takes a repeated member and invalid UTF-8 inside strings.
func EachMember(b []byte, f func(name, value []byte) bool) bool {
	return eachMember(b, f)
}

// readStr reads a member that must be a string: nil when absent or null; ok is false when it
// is another type. Known method names and "2.0" come back without allocating.
func readStr(raw []byte) (s *string, ok bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	if raw[0] != '"' {
		return nil, false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		if s, ok := knownStrings[string(inner)]; ok {
			return s, true
		}
	}
	s = new(string)
	if err := json.Unmarshal(raw, s); err != nil { // escapes and invalid UTF-8 as encoding/json has them
		return nil, false
	}
	return s, true
}

// FoldsTo reports whether name is one of names in another case, as encoding/json matches
// member names to fields (Unicode case folding: "ſ" is "s"): a member it would read into
// that field, which a reader of exact names leaves to it.
func FoldsTo(name []byte, names ...string) bool {
	for _, n := range names {
		if string(name) != n && bytes.EqualFold(name, []byte(n)) {
			return true
		}
	}
	return false
}

// knownStrings interns the strings Decode reads on every message.
var knownStrings = func() map[string]*string {
	m := map[string]*string{}
	for _, s := range []string{"2.0", MethodInitialize, MethodInitialized, MethodPing, MethodToolsList,
		MethodToolsCall, MethodTasksGet, MethodTasksResult, MethodTasksList, MethodTasksCancel,
		MethodTaskStatus, MethodElicit, MethodCancelled,
		MethodServerDiscover, MethodTasksUpdate, MethodSubscriptionsListen, MethodTaskNotification} {
		m[s] = &s
	}
	return m
}()

// clip shortens a raw value for an error message.
func clip(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// envelope mirrors the wire form; pointers tell "absent" from "empty".
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
}

// decodeStd is Decode by encoding/json, for a message Decode's single pass leaves to it: b
// is an object, valid or not.
func decodeStd(b []byte) (Message, *Error) {
	// json.Unmarshal checks the whole text before decoding, so the common path validates
	// once: a syntax error is -32700, any other failure (a wrong type) -32600.
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Message{}, Errorf(CodeParseError, "parse error: body is not valid JSON")
		}
		return Message{}, Errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	var m Message
	hasID := len(env.ID) > 0 && string(env.ID) != "null"
	if hasID {
		if err := m.ID.UnmarshalJSON(env.ID); err != nil {
			return Message{}, Errorf(CodeInvalidRequest, "invalid request: %v", err)
		}
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	switch {
	case env.Method != nil:
		if *env.Method == "" {
			return m, Errorf(CodeInvalidRequest, `invalid request: "method" is empty`)
		}
		if env.Result != nil || env.Error != nil {
			return m, Errorf(CodeInvalidRequest, `invalid request: a request carries neither "result" nor "error"`)
		}
		if len(env.ID) > 0 && !hasID {
			return m, Errorf(CodeInvalidRequest, `invalid request: "id" must not be null (H11)`)
		}
		if len(env.Params) > 0 && env.Params[0] != '{' && string(env.Params) != "null" {
			return m, Errorf(CodeInvalidRequest, `invalid request: "params" must be an object`)
		}
		m.Method, m.Params = *env.Method, env.Params
		if string(m.Params) == "null" {
			m.Params = nil
		}
		m.Kind = KindNotification
		if hasID {
			m.Kind = KindRequest
		}
	case env.Error != nil:
		if env.Result != nil {
			return m, Errorf(CodeInvalidRequest, `invalid request: a response carries "result" or "error", not both`)
		}
		m.Error, m.Kind = env.Error, KindError
	case env.Result != nil:
		if !hasID {
			return m, Errorf(CodeInvalidRequest, `invalid request: a result response needs an "id"`)
		}
		m.Result, m.Kind = env.Result, KindResult
	default:
		return m, Errorf(CodeInvalidRequest, `invalid request: a message needs "method", "result" or "error"`)
	}
	return m, nil
}

// AppendResult appends the JSON-RPC response {"jsonrpc":"2.0","id":id,"result":result}.
// result must be valid JSON.
func AppendResult(dst []byte, id ID, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends the JSON-RPC error response for id. An absent id (the request's id
// could not be read) is left out rather than written as JSON-RPC 2.0's "id":null: the
// 2025-11-25 schema makes JSONRPCErrorResponse.id optional but types it string or integer,
// so null fails it.
func AppendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if !id.IsZero() {
		dst = append(dst, `"id":`...)
		dst = append(dst, id.raw...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"error":`...)
	b, _ := json.Marshal(e)
	dst = append(dst, b...)
	return append(dst, '}')
}

// AppendRequest appends a request (or, with a zero id, a notification) for method with
// params already encoded as JSON (nil for none).
func AppendRequest(dst []byte, id ID, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if !id.IsZero() {
		dst = append(dst, `"id":`...)
		dst = append(dst, id.raw...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

func appendID(dst []byte, id ID) []byte {
	if id.IsZero() {
		return append(dst, "null"...)
	}
	return append(dst, id.raw...)
}

// AppendString appends s as a JSON string. Plain printable ASCII (ids, method names) takes a
// copy-only path; anything else goes through encoding/json for correct escaping.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
