// Package loadgen is tasksim's load generator: virtual clients, the client-side task state
// machine, arrival models, client policies, client-side faults and gate probes, driving the
// MCP client of package client. Virtual clients are state machines run on a pool of sender
// goroutines; a client waiting for its next poll is a timer, not a goroutine (executor.go).
//
// It may import client, internal/mcp, metrics and scenarios; it must never import mockserver
// (the two meet only on the wire, or through an http.Handler handed in by cmd/tasksim or a
// test).
package loadgen
