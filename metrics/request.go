package metrics

import (
	"strconv"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Requests are counted per mcp.Op: the operation indexes the request tables, so counting
// a request needs no string; mcp.Op.Name keys them in outputs. mcp.OpDelete is the HTTP
// DELETE that ends a Streamable HTTP session.

// LatencyOf returns the histogram of op's send -> reply latency; ok is false for the ops
// that have none (tools/list, DELETE, notifications).
func LatencyOf(op mcp.Op) (h Hist, ok bool) {
	switch op {
	case mcp.OpInitialize:
		return LatencyInitialize, true
	case mcp.OpToolsCall:
		return LatencyToolsCall, true
	case mcp.OpTasksGet:
		return LatencyTasksGet, true
	case mcp.OpTasksResult:
		return LatencyTasksResult, true
	case mcp.OpTasksList:
		return LatencyTasksList, true
	case mcp.OpTasksCancel:
		return LatencyTasksCancel, true
	case mcp.OpTasksUpdate:
		return LatencyTasksUpdate, true
	}
	return 0, false
}

// Outcome classifies how one request ended.
type Outcome uint8

// The outcomes. OutcomeOK, OutcomeStopped, OutcomeBackpressure, OutcomeExpected and
// OutcomeInjected are not errors (IsError); every other outcome is.
const (
	OutcomeOK        Outcome = iota // a result arrived
	OutcomeRPCError                 // a JSON-RPC error object arrived (its code is counted)
	OutcomeHTTPError                // the HTTP status said no (its status is counted)
	OutcomeTransport                // connection refused or reset, timeout, cancelled
	OutcomeProtocol                 // a reply arrived but was malformed
	// OutcomeStopped: the run's own end cut the request off (grace period over, a second
	// Ctrl-C) before a reply: no outcome of the target's, so not an error.
	OutcomeStopped
	// OutcomeBackpressure: the target pushed back, as it may under load: HTTP 429, HTTP
	// 503 with Retry-After, or a create refused for capacity. Counted as a
	// backpressure_signals signal, not as an error.
	OutcomeBackpressure
	// OutcomeExpected: a JSON-RPC error the contract calls for in the situation, not a
	// failure: tasks/cancel of a task that was already terminal answers -32602 (R26);
	// tasks/result of a task seen failed answers the failed call's own error (R17).
	OutcomeExpected
	// OutcomeInjected: tasksim's own fault injection cut the exchange (a client fault of the
	// scenario: the reply dropped, the stream cut): the load generator did it, not the target.
	OutcomeInjected
	NumOutcomes // number of outcomes; not an outcome
)

// IsError reports whether o counts as an error (requests.errors, the error budget).
func (o Outcome) IsError() bool {
	switch o {
	case OutcomeOK, OutcomeStopped, OutcomeBackpressure, OutcomeExpected, OutcomeInjected:
		return false
	}
	return true
}

// Name returns "ok", "rpc_error", "http_error", "transport", "protocol", "stopped",
// "backpressure", "expected" or "injected".
func (o Outcome) Name() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeRPCError:
		return "rpc_error"
	case OutcomeHTTPError:
		return "http_error"
	case OutcomeTransport:
		return "transport"
	case OutcomeProtocol:
		return "protocol"
	case OutcomeStopped:
		return "stopped"
	case OutcomeBackpressure:
		return "backpressure"
	case OutcomeExpected:
		return "expected"
	case OutcomeInjected:
		return "injected"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// String returns Name.
func (o Outcome) String() string { return o.Name() }

// NumRPCCodes is the number of slots of the per-method JSON-RPC error code table: the six
// codes tasksim knows (-32700 parse error, -32600 invalid request, -32601 method not
// found, -32602 invalid params, -32603 internal error, -32042 URL elicitation required)
// and one slot, the last, for any other code. The table is bounded whatever a peer sends.
const NumRPCCodes = 7

// RPCCodeSlot returns the slot of a JSON-RPC error code in the RPCCodes tables.
func RPCCodeSlot(code int) int {
	switch code {
	case -32700:
		return 0
	case -32600:
		return 1
	case -32601:
		return 2
	case -32602:
		return 3
	case -32603:
		return 4
	case -32042:
		return 5
	}
	return NumRPCCodes - 1
}

// RPCCodeLabel returns slot i's code as summary.json keys it ("-32602"), or "other".
func RPCCodeLabel(i int) string {
	switch i {
	case 0:
		return "-32700"
	case 1:
		return "-32600"
	case 2:
		return "-32601"
	case 3:
		return "-32602"
	case 4:
		return "-32603"
	case 5:
		return "-32042"
	}
	return "other"
}

// NumHTTPStatuses is the number of slots of the per-method HTTP status table: 400, 401,
// 403, 404, 405, 406, 413, 415, 429, 500, 502, 503, 504, and the last slot for any other
// status.
const NumHTTPStatuses = 14

// HTTPStatusSlot returns the slot of an HTTP status in the HTTPStatuses tables.
func HTTPStatusSlot(status int) int {
	switch status {
	case 400:
		return 0
	case 401:
		return 1
	case 403:
		return 2
	case 404:
		return 3
	case 405:
		return 4
	case 406:
		return 5
	case 413:
		return 6
	case 415:
		return 7
	case 429:
		return 8
	case 500:
		return 9
	case 502:
		return 10
	case 503:
		return 11
	case 504:
		return 12
	}
	return NumHTTPStatuses - 1
}

// HTTPStatusLabel returns slot i's status ("429"), or "other".
func HTTPStatusLabel(i int) string {
	switch i {
	case 0:
		return "400"
	case 1:
		return "401"
	case 2:
		return "403"
	case 3:
		return "404"
	case 4:
		return "405"
	case 5:
		return "406"
	case 6:
		return "413"
	case 7:
		return "415"
	case 8:
		return "429"
	case 9:
		return "500"
	case 10:
		return "502"
	case 11:
		return "503"
	case 12:
		return "504"
	}
	return "other"
}
