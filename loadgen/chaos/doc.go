// Package chaos owns tasksim's chaos proxy: an in-process TCP proxy that sits between the
// clients and the target (the embedded mock server or any --target URL) and injects the
// network faults of the scenario (scenarios.NetworkFaults), in the spirit of Toxiproxy's toxics:
//
//	latency     every chunk, in either direction, is held back by a sample of a Dist
//	bandwidth   each direction of each connection is capped at so many bytes per second
//	reset       the client's connection is reset (TCP RST) after N bytes went downstream
//	black_hole  the connection is accepted, its bytes read and dropped, nothing is answered
//	half_open   the upstream side is closed after a while; the client's side stays open, silent
//
// The last three are drawn per connection, each from its own Trigger. Every decision is a
// pure function of (seed, connection index, offset from the proxy's epoch) (see Decide), so
// a seed gives the same fault to the same connection however accepts interleave.
//
// The proxy moves bytes and knows nothing of HTTP or MCP. It imports only the standard
// library, metrics (fault events) and scenarios (the fault schema); never internal/mcp,
// loadgen or mockserver.
package chaos
