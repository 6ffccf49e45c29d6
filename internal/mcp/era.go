package mcp

import (
	"encoding/json"
	"fmt"
)

// Era is the protocol era a request is served in (docs/RULES.md#eras): legacy (2025-11-25 and
// older, with initialize and sessions) or modern (2026-07-28 and later, stateless). A server
// that answers both on one endpoint picks the era per request (ClassifyRequest), never by
// method name: tasks/get and tasks/cancel exist in both, with other shapes.
type Era uint8

const (
	EraLegacy Era = iota + 1
	EraModern
)

// String returns "legacy" or "modern".
func (e Era) String() string {
	switch e {
	case EraLegacy:
		return "legacy"
	case EraModern:
		return "modern"
	}
	return fmt.Sprintf("Era(%d)", e)
}

// ClassifyRequest picks the era of one request from its method, its params and the value of
// its MCP-Protocol-Version header ("" when absent, or when the transport has no headers), by
// tasksim's rule where the specification gives none (docs/RULES.md#era-detection), the one
// the TypeScript SDK v2 and mcp-go follow:
//
//  1. params._meta names a modern io.modelcontextprotocol/protocolVersion (IsModern), or one
//     that is no string (a malformed envelope: ReadRequestMeta will say so, E3): modern.
//     Then validate the whole envelope (ReadRequestMeta) and the headers (CheckHeaders).
//  2. Otherwise, a header naming a modern version contradicts the body: initialize, or a
//     body with a legacy version in _meta, gets -32020 (E26); any other request, having no
//     envelope at all, gets -32602 (E3).
//  3. Anything else is legacy: initialize starts a session; requests of a session, and
//     those a legacy server refuses (no session), go to the legacy front end.
//
// JSON-RPC batches, posted responses and GET or DELETE never reach it: they are legacy
// traffic, which a modern-only server answers with -32022 or 405 (E30).
func ClassifyRequest(method string, params json.RawMessage, protocolHeader string) (Era, *Error) {
	raw := bodyVersion(params)
	if raw != nil {
		var v string
		if json.Unmarshal(raw, &v) != nil || raw[0] != '"' || IsModern(v) {
			return EraModern, nil
		}
	}
	if IsModern(protocolHeader) {
		if raw != nil || method == MethodInitialize {
			return 0, Errorf(CodeHeaderMismatch, "Header mismatch: %s %s does not match the request, which is not of a modern version (E26)",
				HeaderProtocolVersion, clipString(protocolHeader))
		}
		return 0, invalidMeta("%s %s names a modern version, but params._meta lacks %q", HeaderProtocolVersion, clipString(protocolHeader), MetaProtocolVersion)
	}
	return EraLegacy, nil
}

// bodyVersion returns the raw value of params._meta["io.modelcontextprotocol/protocolVersion"],
// nil when params, its _meta or the key is missing (or null) or no object.
func bodyVersion(params json.RawMessage) []byte {
	meta, err := metaOf(params)
	if err != nil {
		return nil
	}
	var v []byte
	EachMember(meta, func(name, value []byte) bool {
		if string(name) == MetaProtocolVersion {
			v = value
		}
		return true
	})
	if string(v) == "null" {
		return nil
	}
	return v
}

// clipString quotes s for an error message, cut to 40 bytes.
func clipString(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}
