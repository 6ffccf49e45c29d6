package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Over Streamable HTTP 2026-07-28 each request mirrors parts of its body into headers, so
// that gateways can route on them (docs/RULES.md#e24): the server checks that they agree with
// the body (E26), and values that are no plain ASCII travel base64-encoded (E25). Header
// names are case-insensitive (http.Header.Get canonicalizes them); values are not.

// Header names of Streamable HTTP 2026-07-28 (E24).
const (
	HeaderProtocolVersion = "MCP-Protocol-Version" // = _meta's protocolVersion, on every POST
	HeaderMethod          = "Mcp-Method"           // = method, on every request
	HeaderName            = "Mcp-Name"             // = the member NameParam names, for those methods
	HeaderParamPrefix     = "Mcp-Param-"           // + x-mcp-header name: a marked tool argument
)

// The markers of a base64-encoded header value (E25): case-sensitive, lowercase.
const (
	encodedPrefix = "=?base64?"
	encodedSuffix = "?="
)

// RequestHeaders are the MCP headers of one POST (E24), each as received: Name still encoded
// (E25), "" when absent.
type RequestHeaders struct {
	ProtocolVersion string // MCP-Protocol-Version
	Method          string // Mcp-Method
	Name            string // Mcp-Name
}

// NameParam returns the member of params that Mcp-Name mirrors for method: "name" for
// tools/call and prompts/get, "uri" for resources/read, "taskId" for tasks/get, tasks/update
// and tasks/cancel (E24, E64); "" for a method without Mcp-Name.
func NameParam(method string) string {
	switch method {
	case MethodToolsCall, MethodPromptsGet:
		return "name"
	case MethodResourcesRead:
		return "uri"
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		return "taskId"
	}
	return ""
}

// HeadersFor returns the headers a client sends with a request for method with params
// (E24, E64): the _meta version, the method, and the encoded Mcp-Name where the method has
// one. An error says params lack what the headers mirror: no version in _meta, or no string
// where Mcp-Name is taken from.
func HeadersFor(method string, params json.RawMessage) (RequestHeaders, error) {
	h := RequestHeaders{Method: method}
	if err := json.Unmarshal(bodyVersion(params), &h.ProtocolVersion); err != nil || h.ProtocolVersion == "" {
		return h, fmt.Errorf("mcp: %s params carry no %s to mirror in %s", method, MetaProtocolVersion, HeaderProtocolVersion)
	}
	var err error
	h.Name, err = NameHeader(method, params)
	return h, err
}

// NameHeader returns the Mcp-Name value of a request for method with params, encoded (E24,
// E25, E64): "" for a method that has none; an error when params lack the string it mirrors.
func NameHeader(method string, params json.RawMessage) (string, error) {
	p := NameParam(method)
	if p == "" {
		return "", nil
	}
	name, ok := stringMember(params, p)
	if !ok {
		return "", fmt.Errorf("mcp: %s params carry no string %q to mirror in %s", method, p, HeaderName)
	}
	return EncodeHeaderValue(name), nil
}

// CheckHeaders checks the MCP headers of a POST against its decoded body (E24, E26) and
// returns nil or the -32020 error (over HTTP, status 400) that says what is wrong: a
// required header missing, a value with invalid characters or a malformed encoding, or a
// value that differs from the body (Mcp-Name decoded first, E25).
//
// A request requires MCP-Protocol-Version equal to its _meta version, Mcp-Method equal to
// its method, and Mcp-Name where NameParam names a member. When the body lacks the member a
// header mirrors (no _meta version, no name), the header is not compared: the body is then
// invalid, which ReadRequestMeta or the method's own checks answer with -32602. The
// specification defines no header for notification POSTs: for those, a header present must
// still be well formed, and Mcp-Method, when present, equal the method.
//
// Mcp-Param-{Name} headers need the tool's inputSchema: see MatchParamHeader.
func CheckHeaders(h RequestHeaders, m *Message) *Error {
	for _, f := range [...]struct{ name, value string }{
		{HeaderProtocolVersion, h.ProtocolVersion}, {HeaderMethod, h.Method}, {HeaderName, h.Name},
	} {
		if !validHeaderValue(f.value) {
			return mismatch("%s has invalid characters", f.name)
		}
	}
	if m.Kind != KindRequest {
		if h.Method != "" && h.Method != m.Method {
			return mismatch("%s %s does not match the body's method %s", HeaderMethod, clipString(h.Method), clipString(m.Method))
		}
		return nil
	}
	switch raw := bodyVersion(m.Params); {
	case h.ProtocolVersion == "":
		return mismatch("the %s header is missing", HeaderProtocolVersion)
	case raw != nil:
		var v string
		if json.Unmarshal(raw, &v) == nil && raw[0] == '"' && v != h.ProtocolVersion {
			return mismatch("%s %s does not match %s %s", HeaderProtocolVersion, clipString(h.ProtocolVersion), MetaProtocolVersion, clipString(v))
		}
	}
	switch {
	case h.Method == "":
		return mismatch("the %s header is missing", HeaderMethod)
	case h.Method != m.Method:
		return mismatch("%s %s does not match the body's method %s", HeaderMethod, clipString(h.Method), clipString(m.Method))
	}
	p := NameParam(m.Method)
	if p == "" {
		return nil
	}
	if h.Name == "" {
		return mismatch("the %s header is missing: %s needs it (params.%s)", HeaderName, m.Method, p)
	}
	name, err := DecodeHeaderValue(h.Name)
	if err != nil {
		return mismatch("%s: %v", HeaderName, err)
	}
	if body, ok := stringMember(m.Params, p); ok && body != name {
		return mismatch("%s %s does not match params.%s %s", HeaderName, clipString(name), p, clipString(body))
	}
	return nil
}

// mismatch is a -32020 error (E26).
func mismatch(format string, args ...any) *Error {
	return Errorf(CodeHeaderMismatch, "Header mismatch: "+format+" (E26)", args...)
}

// stringMember returns the string member name of the object params; ok is false when
// params is no object or the member is missing or no string.
func stringMember(params json.RawMessage, name string) (s string, ok bool) {
	var raw []byte
	if v := bytes.TrimSpace(params); len(v) == 0 || v[0] != '{' || !EachMember(v, func(n, v []byte) bool {
		if string(n) == name {
			raw = v
		}
		return true
	}) {
		return "", false
	}
	// readString: json.Unmarshal's reading, without encoding/json for a plain string (a
	// client builds Mcp-Name from each poll's params).
	if len(raw) == 0 || raw[0] != '"' || readString(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// validHeaderValue reports whether v holds only what an MCP header value may hold: visible
// ASCII, space and tab (RFC 9110 field values without obs-text; E25 encodes everything
// else).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// EncodeHeaderValue returns s as a client sends it in Mcp-Name or Mcp-Param-{Name} (E25):
// as it is when it is plain, otherwise "=?base64?" + the standard base64 of its bytes
// (UTF-8) + "?=". Plain means non-empty, visible ASCII and inner spaces only (no control
// character, tab included, and no space at either end), and not itself of the encoded form
// (starting with "=?base64?" and ending with "?="). The empty string is encoded too
// ("=?base64??="), so that it cannot pass for an absent header. DecodeHeaderValue inverts it
// for every s that is valid UTF-8.
func EncodeHeaderValue(s string) string {
	if plainHeaderValue(s) {
		return s
	}
	return encodedPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + encodedSuffix
}

// plainHeaderValue reports whether EncodeHeaderValue sends s as it is.
func plainHeaderValue(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || looksEncoded(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// looksEncoded reports whether v has the encoded form's markers.
func looksEncoded(v string) bool {
	return strings.HasPrefix(v, encodedPrefix) && strings.HasSuffix(v, encodedSuffix)
}

// DecodeHeaderValue returns the value a received Mcp-Name or Mcp-Param-{Name} stands for
// (E25): the decoded text of the encoded form, or v itself when plain. The markers are
// case-sensitive, so "=?BASE64?...?=" is a plain value. An error says v has characters no
// header value may have, or is of the encoded form without being canonical standard base64
// of valid UTF-8; a server answers either with -32020 (E26).
func DecodeHeaderValue(v string) (string, error) {
	if !validHeaderValue(v) {
		return "", errors.New("the value has invalid characters")
	}
	if !looksEncoded(v) {
		return v, nil
	}
	if len(v) < len(encodedPrefix)+len(encodedSuffix) {
		return "", fmt.Errorf("%s is no base64-encoded value", clipString(v))
	}
	inner := v[len(encodedPrefix) : len(v)-len(encodedSuffix)]
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s is not valid base64", clipString(v))
	case !utf8.Valid(b):
		return "", fmt.Errorf("%s does not decode to UTF-8 text", clipString(v))
	}
	return string(b), nil
}

// ParamHeaderValue returns the Mcp-Param-{Name} value a client sends for a tool argument
// marked with x-mcp-header (E24, E25): a string as it is, an integer in decimal, a boolean as
// true or false, each encoded by EncodeHeaderValue. ok is false for null, where the header is
// omitted, and for other types, which x-mcp-header may not mark.
func ParamHeaderValue(arg json.RawMessage) (value string, ok bool) {
	s, ok := paramText(arg)
	if !ok {
		return "", false
	}
	return EncodeHeaderValue(s), true
}

// MatchParamHeader reports whether a received Mcp-Param-{Name} value, still encoded, stands
// for the argument arg of the body (E26): it is decoded first; a string must be equal, a
// boolean spelled true or false, and an integer equal as a number ("42.0" matches 42, as the
// specification asks). A value that cannot be decoded matches nothing.
func MatchParamHeader(value string, arg json.RawMessage) bool {
	got, err := DecodeHeaderValue(value)
	if err != nil {
		return false
	}
	want, ok := paramText(arg)
	switch {
	case !ok:
		return false
	case got == want:
		return true
	}
	a := bytes.TrimSpace(arg)
	if len(a) == 0 || (a[0] != '-' && (a[0] < '0' || a[0] > '9')) {
		return false
	}
	x, err1 := strconv.ParseFloat(got, 64)
	y, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && x == y
}

// paramText returns the text of an argument a header may mirror: a string, an integer
// (decimal, within ±(2^53-1)) or a boolean.
func paramText(arg json.RawMessage) (string, bool) {
	a := bytes.TrimSpace(arg)
	switch {
	case len(a) == 0:
		return "", false
	case string(a) == "true", string(a) == "false":
		return string(a), true
	case a[0] == '"':
		var s string
		return s, json.Unmarshal(a, &s) == nil
	case a[0] == '-' || (a[0] >= '0' && a[0] <= '9'):
		f, err := strconv.ParseFloat(string(a), 64)
		if err != nil || f != float64(int64(f)) || f > 1<<53-1 || f < -(1<<53-1) {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}
