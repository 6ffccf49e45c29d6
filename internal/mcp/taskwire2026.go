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
	r := newObjectReader(raw)
	plain, odd := collect(&r, f[:], taskWireIndex, taskWireNames[:])
	return f.wire(raw, w, plain, odd || !r.ok())
}

// wire is readTaskWire of raw from its members f, collected (plain: collect's); odd leaves
// raw to encoding/json, as does a member of the wrong type.
func (f *taskFields) wire(raw []byte, w *taskWire, plain uint64, odd bool) error {
	if odd || f.read(w, plain) != nil {
		var std taskWire // declared here: only this path hands it to encoding/json, and allocates it
		err := json.Unmarshal(raw, &std)
		*w = std
		return err
	}
	return nil
}

// taskFields holds the raw values of taskWire's members, by their index in taskWireNames;
// nil = absent.
type taskFields [numTaskWire][]byte

// taskWireIndex returns the index of name in taskWireNames, -1 for another name.
func taskWireIndex(name []byte) int {
	switch string(name) { // a switch on strings compiles to a search, not a scan
	case "resultType":
		return twResultType
	case "taskId":
		return twTaskID
	case "status":
		return twStatus
	case "statusMessage":
		return twStatusMessage
	case "createdAt":
		return twCreatedAt
	case "lastUpdatedAt":
		return twLastUpdatedAt
	case "ttlMs":
		return twTTLMs
	case "pollIntervalMs":
		return twPollIntervalMs
	case "inputRequests":
		return twInputRequests
	case "result":
		return twResult
	case "error":
		return twError
	case "task":
		return twTask
	case "_meta":
		return twMeta
	}
	return -1
}

// read sets w from the members' raw values f as json.Unmarshal would (bit i of plain: f[i]
// is a string the scanner found plain); an error says that
// one is not of its member's type (readTaskWire then leaves it all to encoding/json).
func (f *taskFields) read(w *taskWire, plain uint64) error {
	// The four optional strings and statusMessage, read by readStrings in one allocation
	// for their texts and one for the optional ones' storage.
	opt := new([4]string)
	idx := [...]int{twResultType, twTaskID, twCreatedAt, twLastUpdatedAt, twStatusMessage}
	var raws [len(idx)][]byte
	var known uint64
	for k, i := range idx {
		raws[k] = f[i]
		known |= (plain >> i & 1) << k
	}
	if err := readStrings(raws[:], known, []*string{&opt[0], &opt[1], &opt[2], &opt[3], &w.StatusMessage}); err != nil {
		return err
	}
	for k, dst := range [...]**string{&w.ResultType, &w.TaskID, &w.CreatedAt, &w.LastUpdatedAt} {
		if v := raws[k]; v != nil && string(v) != "null" {
			*dst = &opt[k]
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
	// The targets of encoding/json are declared where they are used, so that w itself does
	// not escape (and is not allocated) for the replies that have neither member.
	if v := f[twInputRequests]; v != nil && err == nil && string(v) != "null" {
		in := w.InputRequests
		err = json.Unmarshal(v, &in)
		w.InputRequests = in
	}
	if v := f[twError]; v != nil && err == nil && string(v) != "null" {
		e := w.Error
		err = json.Unmarshal(v, &e)
		w.Error = e
	}
	return err
}
