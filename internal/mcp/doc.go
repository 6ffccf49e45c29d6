// Package mcp is tasksim's wire layer: the JSON-RPC 2.0 envelope, the MCP and Tasks message
// types of each protocol dialect, method names, error codes, and the task state-transition
// table (spec/TASKS.md section 6, rule R14) that both the mock server and the load generator
// obey.
//
// It owns no network I/O and imports only the standard library. Everything that differs
// between protocol revisions (method names, field names, result shapes) is reached through a
// Dialect, so that the 2026-07-28 Tasks extension can be added without touching the engines.
package mcp
