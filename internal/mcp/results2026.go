package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Results and request params of protocol 2026-07-28 besides tasks (task2026.go). Every
// result carries resultType (docs/RULES.md#e11): the MarshalJSON methods here write it, and
// refuse what the schema would.

// DiscoverResult is the result of server/discover (docs/RULES.md#e8), written with
// resultType "complete". It is cacheable: TTLMs (≥ 0) says for how long, CacheScope by whom;
// the schema requires both.
type DiscoverResult struct {
	// SupportedVersions are the protocol versions the server speaks; a dual-era server lists
	// its legacy ones too.
	SupportedVersions []string                 `json:"supportedVersions"`
	Capabilities      ModernServerCapabilities `json:"capabilities"`
	Instructions      string                   `json:"instructions,omitempty"`
	TTLMs             Ms                       `json:"ttlMs"`
	CacheScope        CacheScope               `json:"cacheScope"`
	Meta              json.RawMessage          `json:"_meta,omitempty"` // e.g. ServerInfoMeta (E6)
}

// MarshalJSON writes r with resultType "complete". It refuses no supported version, a
// negative TTLMs, a CacheScope other than public or private, and capability settings that
// are no JSON objects.
func (r DiscoverResult) MarshalJSON() ([]byte, error) {
	switch {
	case len(r.SupportedVersions) == 0:
		return nil, errors.New("mcp: DiscoverResult names no supported version")
	case r.TTLMs < 0:
		return nil, fmt.Errorf("mcp: DiscoverResult: ttlMs %d is negative", r.TTLMs)
	case r.CacheScope != CachePublic && r.CacheScope != CachePrivate:
		return nil, fmt.Errorf("mcp: DiscoverResult: cacheScope %q is not public or private", r.CacheScope)
	}
	for name, v := range r.Capabilities.Extensions {
		if len(v) == 0 || v[0] != '{' {
			return nil, fmt.Errorf("mcp: DiscoverResult: the settings of extension %q must be an object", name)
		}
	}
	type plain DiscoverResult // without this method
	return marshalWithResultType(ResultComplete, plain(r))
}

// InputRequiredResult asks the client for input before the request can complete (MRTR,
// docs/RULES.md#e15): a tools/call, prompts/get or resources/read answered with it is
// retried by the client, with a new id, carrying inputResponses under the same keys and
// requestState unchanged (E16). It is written with resultType "input_required".
type InputRequiredResult struct {
	InputRequests InputRequests `json:"inputRequests,omitempty"`
	// RequestState is opaque to the client, which echoes it (E16); "" when not sent.
	RequestState string          `json:"requestState,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON writes r with resultType "input_required". It refuses a result with neither
// input requests nor request state, and an input request of another method than
// elicitation/create, sampling/createMessage and roots/list (E15). Whether the request's
// capabilities allow each one is the caller's to check.
func (r InputRequiredResult) MarshalJSON() ([]byte, error) {
	if len(r.InputRequests) == 0 && r.RequestState == "" {
		return nil, errors.New("mcp: an InputRequiredResult carries inputRequests, requestState or both (docs/RULES.md#e15)")
	}
	if err := r.InputRequests.check(); err != nil {
		return nil, fmt.Errorf("mcp: InputRequiredResult: %w", err)
	}
	type plain InputRequiredResult
	return marshalWithResultType(ResultInputRequired, plain(r))
}

// marshalWithResultType marshals v, a struct, with "resultType": rt as its first member.
func marshalWithResultType(rt ResultType, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return WithResultType(b, rt)
}

// CallToolRequestParams are the params of a tools/call of 2026-07-28 (CallToolParams are
// 2025-11-25's): no task parameter, which a modern server ignores (E37), and, on an MRTR
// retry, the answers and state of the previous round (E16).
type CallToolRequestParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	InputResponses InputResponses  `json:"inputResponses,omitempty"`
	RequestState   string          `json:"requestState,omitempty"`
	// Meta is the request's envelope: json.Marshal of a RequestMeta (E1).
	Meta json.RawMessage `json:"_meta"`
}

// UpdateTaskParams are the params of tasks/update (docs/RULES.md#e55): answers to the
// outstanding input requests of a task, by key; a subset is allowed (E58). The request is
// acknowledged with an empty result (AppendEmptyResult).
type UpdateTaskParams struct {
	TaskID         string         `json:"taskId"`
	InputResponses InputResponses `json:"inputResponses"`
	// Meta is the request's envelope: json.Marshal of a RequestMeta (E1; the extension's
	// examples leave it out, docs/RULES.md#ext-gap-2).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON writes p, refusing an empty taskId or an empty set of answers (the schema
// requires inputResponses, and an update without answers says nothing).
func (p UpdateTaskParams) MarshalJSON() ([]byte, error) {
	switch {
	case p.TaskID == "":
		return nil, errors.New("mcp: tasks/update without taskId")
	case len(p.InputResponses) == 0:
		return nil, fmt.Errorf("mcp: tasks/update of %q answers nothing: inputResponses is empty", p.TaskID)
	}
	type plain UpdateTaskParams
	return json.Marshal(plain(p))
}

// CallReply is a tools/call reply of 2026-07-28 as ParseCallToolReply reads it: one of
// three results, by resultType (docs/RULES.md#ext-gap-11: a client switches on it for every
// reply, an MRTR retry included).
type CallReply struct {
	ResultType ResultType           // "complete" when the reply had none (E12)
	Call       *CallToolResult      // complete: the tool ran synchronously
	Input      *InputRequiredResult // input_required: retry with inputResponses (E16)
	Task       *TaskResult          // task: a CreateTaskResult (E41)
}

// ParseCallToolReply reads the result of a tools/call whose request declared the Tasks
// extension (tasks) or not. resultType selects the shape; "task" is an error when tasks is
// false, and so is any value not known (E13). Quirks reports what was accepted leniently:
// a missing resultType (E12), a task nested under "task" (docs/RULES.md#ext-gap-5).
func ParseCallToolReply(raw []byte, tasks bool) (CallReply, Quirks, error) {
	rt, q, err := ReadResultType(raw)
	if err != nil {
		return CallReply{}, q, fmt.Errorf("tools/call %w", err)
	}
	r := CallReply{ResultType: rt}
	switch {
	case rt == ResultComplete:
		r.Call = new(CallToolResult)
		if err := json.Unmarshal(raw, r.Call); err != nil {
			return CallReply{}, q, fmt.Errorf("CallToolResult: %w", err)
		}
	case rt == ResultInputRequired:
		var w struct {
			InputRequests InputRequests   `json:"inputRequests"`
			RequestState  *string         `json:"requestState"`
			Meta          json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return CallReply{}, q, fmt.Errorf("InputRequiredResult: %w", err)
		}
		if w.InputRequests == nil && w.RequestState == nil {
			return CallReply{}, q, errors.New("InputRequiredResult carries neither inputRequests nor requestState (docs/RULES.md#e15)")
		}
		r.Input = &InputRequiredResult{InputRequests: w.InputRequests, Meta: w.Meta}
		if w.RequestState != nil {
			r.Input.RequestState = *w.RequestState
		}
	case rt == ResultTask && tasks:
		tr, tq, err := ParseTaskResult(raw)
		q |= tq
		if err != nil {
			return CallReply{}, q, fmt.Errorf("CreateTaskResult: %w", err)
		}
		r.Task = &tr
	case rt == ResultTask:
		return CallReply{}, q, fmt.Errorf("tools/call: resultType %q answers a request that did not declare %s (docs/RULES.md#e13)", rt, ExtTasks)
	default:
		known := []string{string(ResultComplete), string(ResultInputRequired)}
		if tasks {
			known = append(known, string(ResultTask))
		}
		return CallReply{}, q, fmt.Errorf("tools/call: unknown resultType %q, want one of %v (docs/RULES.md#e13)", rt, known)
	}
	return r, q, nil
}
