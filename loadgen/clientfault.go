package loadgen

import (
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// The client's own faults (docs/METRICS.md#eras) wrap the connection the driver calls, as
// Toxiproxy's toxics wrap a pipe (faultconn.go): faultConn's methods take the decisions of
// the requests they send, inject them (a cut handed to the exchange as client.Cut, the
// connection forgotten with dropSession before or after it) and return what came of it, a
// reply the fault lost after it was read as a *lostReply; the driver's steps (task.go) call
// the Conn and apply what comes back. Where each fault is decided:
//
//	create_reply         faultConn.Create: the reply is cut, the connection dropped
//	after_create         the driver (beginTask): every task begun, one found by
//	                     reconciliation too, once it is set up; no Create returns those
//	before_result        faultConn.Result, before the call; where reads inline the
//	                     payload, faultConn.Get: the read bringing it is lost (losePayload)
//	result_stream        faultConn.Result (a stream cut); inline: faultConn.Get, as above
//	input_before_answer  faultConn.Result (a stream cut); inline: the driver (answerInputs),
//	                     between the poll's read being applied and the answers being drawn
//	input_after_answer   faultConn.Result (a stream cut); inline: faultConn.Answer
//	cancel_reply         faultConn.Cancel: the reply is cut, the connection dropped
//	crash                the driver (stepPoll, recovery.go): a fault of the client's
//	                     process, which loses its memory, not of its connection
//
// All of them draw from the client's fault stream (vu.frng), which the backoff jitter draws
// from too: each is drawn where the request it breaks is sent, so that a seed gives one run.
// A session gone (404, H8) is no fault of the client's: vu.call re-dials for it.

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
