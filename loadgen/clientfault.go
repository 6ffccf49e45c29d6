package loadgen

import (
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// The client's own faults (docs/METRICS.md#eras), decided at their fault points by
// the driver (task.go): a cut is handed to the request it breaks (client.Cut), a dropped
// connection forgets the client's client.Conn (dropSession), a crash forgets the task too
// (recovery.go). In an era that inlines payloads (client.Traits.Inline) fault point 3 is the
// read that brings the payload (losePayload), and fault point 4 the Answer of inline input
// (answerInputs).

// dropSession forgets the client's connection without DELETE, as a lost connection with a
// client that has to start over does; the next request dials a new one.
func (v *vu) dropSession() {
	v.conn = nil
	v.resuming = v.cur != ""
}

// draw decides a client fault at one opportunity: inside a window of t always, else with
// its probability, drawn from the client's fault stream (so turning a fault on does not
// change any other random decision of the run). Nothing is recorded: fires records a fault
// that happens once decided; a stream cut, whose point may never come, is recorded by
// injected when it happened.
func (v *vu) draw(t scenarios.Trigger) bool {
	if !t.On() {
		return false
	}
	if t.InWindow(scenarios.Duration(time.Since(v.e.start))) {
		return true
	}
	return t.Probability > 0 && v.frng.Float64() < t.Probability
}

// cut decides a cut that always happens once decided (the request is sent, its reply lost).
func (v *vu) cut(t scenarios.Trigger, kind string, c client.Cut) client.Cut {
	if v.fires(t, kind) {
		return c
	}
	return client.CutNone
}

// injected records a stream cut that happened.
func (v *vu) injected(c client.Cut) {
	kind := map[client.Cut]string{client.CutStream: "result_stream", client.CutBeforeAnswer: "input_before_answer",
		client.CutAfterAnswer: "input_after_answer"}[c]
	v.shard.Add(metrics.FaultsInjected, 1)
	v.e.cfg.Events.Add(metrics.Event{At: time.Now(), Source: "client", Kind: kind, Task: v.cur})
}

// retryDelay is the wait before asking again after a cut stream: the stream's retry field
// when the server sent one (H5), else the backoff.
func (v *vu) retryDelay(n int) time.Duration {
	if s := v.session(); s != nil {
		if d := s.Retry(); d > 0 {
			return d
		}
	}
	return backoff(v.e.recovery.Backoff, n, v.frng)
}

// losePayload decides whether the read that brings a task's payload inline is lost: fault
// point 3, before_result or result_stream, recorded under the name drawn.
func (v *vu) losePayload() bool {
	f := &v.e.cfg.Faults
	if v.fires(f.BeforeResult, "before_result") {
		return true
	}
	if v.draw(f.ResultStream) {
		v.injected(client.CutStream)
		return true
	}
	return false
}
