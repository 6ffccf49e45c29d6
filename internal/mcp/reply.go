package mcp

// ResultReader reads the result of a reply in DecodeReply's pass over the whole reply, as
// ParseTask (TaskReader) or ParseGetTaskResult (GetTaskResultReader) would read the
// Message's Result after it, so that a poll's reply is scanned once, not twice. When Read
// is false after DecodeReply (the reply had no result object, or it is no reply the
// single pass reads, as Decode leaves some to encoding/json), the caller parses Result
// itself. A ResultReader is used for one reply.
type ResultReader struct {
	kind resultKind
	// Read says that DecodeReply read the result: then Task (TaskReader) or TaskResult and
	// Quirks (GetTaskResultReader) and Err are what the Parse function returns for it.
	Read       bool
	Task       Task
	TaskResult TaskResult
	Quirks     Quirks
	Err        error

	collected bool   // collect has run: the members below are the result's
	odd       bool   // collect's odd, or the result was no valid object
	plain     uint64 // collect's plain
	task      taskMembers
	wire      taskFields
}

// resultKind is what a ResultReader reads.
type resultKind uint8

const (
	readTask          resultKind = iota + 1 // a Task (ParseTask)
	readGetTaskResult                       // a tasks/get result of 2026-07-28 (ParseGetTaskResult)
)

// TaskReader reads the Task of a 2025-11-25 tasks/get or tasks/cancel reply, as ParseTask.
func TaskReader() ResultReader { return ResultReader{kind: readTask} }

// GetTaskResultReader reads the result of a 2026-07-28 tasks/get reply, as
// ParseGetTaskResult.
func GetTaskResultReader() ResultReader { return ResultReader{kind: readGetTaskResult} }

// collect reads the members of the result object r reads (DecodeReply's pass).
func (rr *ResultReader) collect(r *objectReader) {
	switch rr.kind {
	case readTask:
		rr.plain, rr.odd = collect(r, rr.task[:], taskMemberIndex, taskMemberNames[:])
	case readGetTaskResult:
		rr.plain, rr.odd = collect(r, rr.wire[:], taskWireIndex, taskWireNames[:])
	default:
		for r.next() {
		}
	}
	rr.odd = rr.odd || !r.ok()
	rr.collected = rr.kind != 0
}

// finish reads the result raw (a span of the reply, valid for the call) from the members
// collected, once the reply is known to be a valid result response.
func (rr *ResultReader) finish(raw []byte) {
	switch rr.kind {
	case readTask:
		rr.Task, rr.Err = rr.task.taskOf(raw, rr.plain, rr.odd)
	case readGetTaskResult:
		var w taskWire
		err := rr.wire.wire(raw, &w, rr.plain, rr.odd)
		rr.TaskResult, rr.Quirks, rr.Err = getTaskResultOf(taskResultOf(&w, err))
	}
	rr.Read = true
}
