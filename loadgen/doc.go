// Package loadgen is tasksim's load generator: a lean Streamable HTTP MCP client, virtual
// clients, the client-side task state machine, arrival models, client policies, client-side
// faults and gate probes.
//
// It may import internal/mcp, metrics and scenarios; it must never import mockserver (the
// two meet only on the wire, or through an http.Handler handed in by cmd/tasksim or a test).
package loadgen
