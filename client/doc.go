// Package client is tasksim's MCP client, as a library: the Streamable HTTP transport (a
// lean hand-written HTTP/1.1 client for http:// targets, net/http for https://, SSE replies,
// an in-process transport for tests), the protocol eras and their detection and pinning
// (2025-11-25 sessions, the stateless 2026-07-28 requester), tools/list pages, the capability
// probe and its manifest, pins of a manifest, the minimal arguments of a tool, and a raw
// request path for checks that send deliberately broken requests.
//
// It knows nothing of load: virtual clients, policies, fault schedules and metrics are
// loadgen's, which drives the client; the contract suite (conform), the runner, sweep and
// cmd/tasksim use it directly. It may import internal/mcp only (besides the standard library
// and third-party modules); never metrics, scenarios, loadgen or mockserver (the client and
// the mock server meet only on the wire, or through an http.Handler handed to
// HandlerTransport by cmd/tasksim or a test).
package client
