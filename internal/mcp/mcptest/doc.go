// Package mcptest is test support for the MCP wire layer, as net/http/httptest is for
// net/http: it checks JSON-RPC messages and MCP results against the official JSON schemas of
// 2025-11-25, of 2026-07-28 and of its Tasks extension (Validate, ValidateReply,
// ValidateMessage, Validate2026, ValidateExt, ValidateReply2026, ValidateMessage2026), and
// Must and MustFail turn their verdicts into test failures.
//
// The schemas and their validator are package internal/schema's, which the contract suite
// also uses in production: one embedded copy of each schema (docs/RULES.md#sources). This
// package names them for tests and adds nothing to what they judge.
//
// It is for tests only: production code must not import it (a test in this package checks
// the module for such imports). It imports nothing of tasksim but internal/schema, which
// imports nothing of tasksim, so that it stays an independent oracle and tests of any
// package, package mcp's own internal tests included, can use it.
package mcptest
