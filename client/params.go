package client

import "github.com/tasksim/tasksim/internal/mcp"

// clientCaps are what tasksim's clients declare: form elicitation, so the server may ask for
// input (R60).
var clientCaps = mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: mcp.On()}}

// ClientCapabilities are the capabilities tasksim's clients declare: form-mode
// elicitation, which they answer (the input_required flow). It is exported so that every
// session of a run (loadgen's virtual clients and probes) and of the contract suite
// declares the same capabilities as the capability probe did.
func ClientCapabilities() mcp.ClientCapabilities { return clientCaps }

// TaskIDParams are the params of a request about one task, {"taskId":id} (tasks/get,
// tasks/result, tasks/cancel), built without encoding/json: the engine sends one per poll.
// The probe's cancel and loadgen's virtual clients share it.
func TaskIDParams(id string) []byte {
	b := append([]byte(`{"taskId":`), mcp.AppendString(nil, id)...)
	return append(b, '}')
}
