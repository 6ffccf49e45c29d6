// Package schema owns the official JSON schemas of MCP, embedded byte for byte from the
// sources described in docs/RULES.md#sources (official/), and their validator, the draft
// 2020-12 validator github.com/santhosh-tekuri/jsonschema/v6:
//
//   - protocol 2025-11-25 (official/schema-2025-11-25.json): Validate, ValidateReply,
//     ValidateMessage;
//   - protocol 2026-07-28 (official/schema-2026-07-28.json): Validate2026;
//   - its Tasks extension io.modelcontextprotocol/tasks (official/ext-tasks-schema.json):
//     ValidateExt;
//   - the modern era, both of the last two at once: ValidateReply2026, ValidateMessage2026.
//
// It owns the tables that map each method to the definitions its messages and replies must
// match, and the *Error that says which definition (or rule) failed, where, and why.
//
// Two users: the contract suite (package conform), which validates every reply it reads,
// and the tests of every package, through internal/mcp/mcptest. It is for checking, never
// for a hot path: a validation parses the whole message into generic values. The load
// generator and the mock server must not import it (deps_test.go). It imports nothing of
// tasksim, so that it stays an independent oracle whose method names come from the spec,
// not from the code under test.
//
// The schemas are the source of truth, with two JSON-RPC 2.0 rules they cannot express
// added on top and reported as such: a response carries exactly one of "result" and
// "error", and a message's shape (method and id, method alone, result, error) picks the one
// member of the JSONRPCMessage union it must match, so that {"id":null,"method":"x"} is
// judged as a request (and fails, H11) rather than passing as a notification with an extra
// member. For the modern era, the resultType of a reply selects the definition it must match
// and the error codes E14 forbids fail, both reported with their rule id (E13, E45, E14);
// and every request must carry the core RequestParams (the _meta envelope, E1), the task
// methods included, whose definitions in the extension schema leave it out.
//
// Formats ("uri", "byte") are annotations only, as draft 2020-12 specifies by default.
package schema
