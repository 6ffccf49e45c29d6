// Package conform is the contract suite: named cases that check an MCP server against the
// Tasks rules of protocol 2025-11-25 and of 2026-07-28 with the Tasks extension
// (docs/RULES.md), one list of cases, each declaring its era (cases.go, eras.go), each with
// the rule ids it checks, a verdict (pass, fail or skip) and the exchanges it rests on.
// `tasksim conform` runs it against any target, and a run with `contract: true` runs it
// before the load, as its contract gate.
//
// The suite creates tasks, and tasks have effects on a real server. It creates as few as its
// cases need, cancels every task it created that is still running when it ends (where the
// server declares tasks/cancel), and lists the ids it created and those it left behind.
//
// A case never passes on missing evidence: a case that cannot observe what it checks (the
// server lacks the capability, no tool of that kind is listed, no second identity was
// given, the granted ttl is longer than the budget, a task ended before it could be
// cancelled) is skipped, and says why and what would let it run.
//
// Every reply the suite reads is validated against the official JSON schemas of its era
// (internal/schema, embedded in the binary): a reply that fails them fails the case that read
// it, naming the definition and the path (docs/RULES.md#conform-schema).
//
// Against tasksim's own mock server (serverInfo "tasksim-mock") the suite knows the tools
// and their arguments (duration_ms, outcome, input_required), so that every case runs;
// against another server it uses the tool and arguments given, or builds the minimal
// arguments each tool's inputSchema requires (client.MinimalArgs), and knows a call that
// ends in a tool error or a protocol error only when told (Options.FailArgs, ErrorArgs).
//
// The package imports client (the MCP client, and its raw request path for the broken
// requests the cases send), internal/mcp (the wire types), results (the result model) and
// internal/schema (the official schemas); it runs no load.
package conform
