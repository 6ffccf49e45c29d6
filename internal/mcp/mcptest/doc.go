// Package mcptest is test support for the MCP wire layer, as net/http/httptest is for
// net/http: it checks JSON-RPC messages and MCP results against the official JSON schema of
// protocol 2025-11-25 (testdata/schema-2025-11-25.json, embedded byte for byte from the
// spec snapshot described in docs/RULES.md#schema), using the draft 2020-12 validator
// github.com/santhosh-tekuri/jsonschema/v6.
//
// It owns the embedded schema, the table that maps each method to the definitions its reply
// must match, and the *SchemaError that says which definition failed and why.
//
// It is for tests only: production code must not import it (a test in this package checks
// the module for such imports). It imports neither tasksim's wire layer (package mcp) nor
// anything else of tasksim, so that it stays an independent oracle whose method names come
// from the spec, not from the code under test, and so that tests of any package, package
// mcp's own internal tests included, can use it.
//
// The schema is the source of truth, with two JSON-RPC 2.0 rules it cannot express added on
// top and reported as such: a response carries exactly one of "result" and "error", and a
// message's shape (method and id, method alone, result, error) picks the one member of the
// JSONRPCMessage union it must match, so that {"id":null,"method":"x"} is judged as a request
// (and fails, H11) rather than passing as a notification with an extra member.
//
// Formats ("uri", "byte") are annotations only, as draft 2020-12 specifies by default.
package mcptest
