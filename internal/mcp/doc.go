// Package mcp is tasksim's wire layer: the JSON-RPC 2.0 envelope, the MCP and Tasks message
// types of each protocol dialect, method names, error codes, and the task state-transition
// table (docs/RULES.md#r14) that both the mock server and the load generator
// obey.
//
// It owns no network I/O. Besides the standard library it imports only jsontext (the
// tokenizer of the JSON v2 prototype, github.com/go-json-experiment/json), with which
// Decode, ParseTask and EachMember read plain messages in one pass. Everything that differs
// between protocol revisions (method names, field names, result shapes) is reached through a
// Dialect, so that the 2026-07-28 Tasks extension can be added without touching the engines;
// one exception: the mock server writes a task's wire form itself, for speed, pinned to
// V20251125.AppendTask by a test (mockserver TestTaskWireMatchesDialect).
package mcp
