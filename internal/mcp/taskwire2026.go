package mcp

import (
	"bytes"
	"encoding/json"
)

// taskWireNames are the members of taskWire, in the order of taskFields.
var taskWireNames = [...]string{"resultType", "taskId", "status", "statusMessage", "createdAt",
	"lastUpdatedAt", "ttlMs", "pollIntervalMs", "inputRequests", "result", "error", "task", "_meta"}

// Indexes of taskWireNames.
const (
	twResultType = iota
	twTaskID
	twStatus
	twStatusMessage
	twCreatedAt
	twLastUpdatedAt
	twTTLMs
	twPollIntervalMs
	twInputRequests
	twResult
	twError
	twTask
	twMeta
	numTaskWire
)

// readTaskWire is json.Unmarshal(raw, w) for raw, a JSON object, read in one pass of the
// tokenizer (EachMember), as ParseTask reads a 2025-11-25 task: every tasks/get reply of
// 2026-07-28 goes through it, and encoding/json validates the whole input first and then
// scans it again. The plain case (exact member names, each at most once, values of their
// types) is read here; anything else (a name that matches only by case, a repeated member,
// a value of the wrong type, invalid JSON) by encoding/json itself, for its reading and its
// words. The raw values kept past the call are copied, as json.RawMessage copies them: raw
// may be a reused buffer.
func readTaskWire(raw []byte, w *taskWire) error {
	var f taskFields
	odd := false
	ok := EachMember(raw, func(name, v []byte) bool {
		i := taskWireIndex(name)
		if i < 0 {
			odd = odd || FoldsTo(name, taskWireNames[:]...)
			return true
		}
		odd = odd || f[i] != nil
		f[i] = v
		return true
	})
	if !ok || odd || f.read(w) != nil {
		*w = taskWire{}
		return json.Unmarshal(raw, w)
	}
	return nil
}

// taskFields holds the raw values of taskWire's members, by their index in taskWireNames;
// nil = absent.
type taskFields [numTaskWire][]byte

// taskWireIndex returns the index of name in taskWireNames, -1 for another name.
func taskWireIndex(name []byte) int {
	for i, n := range taskWireNames {
		if string(name) == n {
			return i
		}
	}
	return -1
}

// read sets w from the members' raw values f as json.Unmarshal would; an error says that
// one is not of its member's type (readTaskWire then leaves it all to encoding/json).
func (f *taskFields) read(w *taskWire) error {
	for _, s := range [...]struct {
		i   int
		dst **string
	}{{twResultType, &w.ResultType}, {twTaskID, &w.TaskID}, {twCreatedAt, &w.CreatedAt}, {twLastUpdatedAt, &w.LastUpdatedAt}} {
		if v := f[s.i]; v != nil && string(v) != "null" {
			*s.dst = new(string)
			if err := readString(v, *s.dst); err != nil {
				return err
			}
		}
	}
	if v := f[twStatusMessage]; v != nil {
		if err := readString(v, &w.StatusMessage); err != nil {
			return err
		}
	}
	// status and ttlMs are read into the task (detailed) while raw is still the caller's,
	// so they stay spans of it; the payloads and _meta outlive the call: copies.
	w.Status, w.TTLMs = f[twStatus], f[twTTLMs]
	for _, s := range [...]struct {
		i   int
		dst *json.RawMessage
	}{{twResult, &w.Result}, {twTask, &w.Task}, {twMeta, &w.Meta}} {
		if v := f[s.i]; v != nil {
			*s.dst = bytes.Clone(v)
		}
	}
	var err error
	if v := f[twPollIntervalMs]; v != nil {
		w.PollIntervalMs, err = readMs(v)
	}
	if v := f[twInputRequests]; v != nil && err == nil && string(v) != "null" {
		err = json.Unmarshal(v, &w.InputRequests)
	}
	if v := f[twError]; v != nil && err == nil && string(v) != "null" {
		err = json.Unmarshal(v, &w.Error)
	}
	return err
}
