// Package mcp is tasksim's wire layer: the JSON-RPC 2.0 envelope, the MCP and Tasks message
// types of each protocol dialect, method names, error codes, and the task state-transition
// table (docs/RULES.md#r14) that both the mock server and the load generator
// obey.
//
// Two eras (docs/RULES.md#eras). Protocol 2025-11-25, with Tasks in its core, is what the
// engines speak today: Task, CreateTaskResult, ParseTask, V20251125. Protocol 2026-07-28 with
// the Tasks extension io.modelcontextprotocol/tasks ("modern") has its wire layer here, not
// yet wired into the engines: the per-request _meta envelope (RequestMeta,
// ReadRequestMeta), telling the eras apart (ClassifyRequest), the HTTP headers
// (CheckHeaders, HeadersFor, EncodeHeaderValue), tasks with their inline payloads
// (DetailedTask, AppendGetTaskResult, ParseGetTaskResult), the other results
// (DiscoverResult, InputRequiredResult, ParseCallToolReply), and V20260728. Its writers are
// strict, its readers lenient where the rules say so, reporting what they accepted as Quirks.
//
// It owns no network I/O. Decode, ParseTask, EachMember and the 2026-07-28 task reader read
// plain messages in one validating pass of its own scanner (scan.go: RFC 8259, as json.Valid
// accepts it, eight bytes of a string at a time). Besides the standard library it imports
// only jsontext (the tokenizer of the JSON v2 prototype, github.com/go-json-experiment/json),
// with which ScanModernRequest walks a server's requests and escaped member names are
// unquoted. Everything that differs
// between protocol revisions (method names, field names, result shapes) is reached through a
// Dialect, so that the engines speak Ops and Tasks whatever the era; Op.Name is an op's one
// name for outputs keyed by it, and TestDialectSeam (at the module root) fails on any method
// name spelled outside this package. One exception: the mock server writes a task's wire
// form itself, for speed, pinned to V20251125.AppendTask by a test (mockserver
// TestTaskWireMatchesDialect).
package mcp
