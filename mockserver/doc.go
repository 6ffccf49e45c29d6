// Package mockserver is tasksim's mock MCP Tasks server: a Streamable HTTP endpoint that
// speaks protocol 2025-11-25 Tasks exactly (docs/RULES.md), with sessions, bearer-token
// tenants, a task store with a TTL reaper, an event-driven executor for the default tools
// (tools.go), the input_required flow, backpressure (task caps, a bounded
// executor, rate limits), a downstream system of record and a domain ledger, idempotent
// creates keyed by idempotency_key (idempotency.go), injected server faults for chaos
// runs (faults.go), and deliberately insecure (insecure.go) or broken (knownbad.go) modes
// that prove tasksim's checks can fail. It answers protocol 2026-07-28 with the Tasks
// extension too (modern.go).
//
// Server is one task core that knows no era (core.go, store.go, task.go), one front end per
// era over it (front.go: sessionFront, statelessFront) and the HTTP endpoint they share
// (http.go). The insecure and known-bad modes are wrappers chosen once when the server is
// built (modes.go and each front end's modes), never tests in the request path.
//
// It is shaped like net/http/httptest.Server: NewServer listens on 127.0.0.1:0 and exposes
// URL, NewUnstartedServer leaves starting to the caller, and Close waits for in-flight
// requests. Handler returns the bare http.Handler for in-process tests.
//
// It may import internal/mcp, metrics and scenarios; it must never import loadgen (the two
// meet only on the wire).
package mockserver
