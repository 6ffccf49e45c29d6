package loadgen

import (
	"context"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// What a cancel did (docs/METRICS.md#cancels_sent). Each cancel sent ends in at most one of
// these, judged by what the client saw of its task, in either era:
//
//	counter           the cancel ...                     evidence
//	cancels_acked     took effect                        the task ended cancelled: the reply
//	                                                     showed it (2025-11-25), or a later
//	                                                     poll after an acknowledgement
//	cancels_ignored   was accepted while the task had    2025-11-25: the reply showed the task
//	                  work left, and the task went on    still working, and it then ended
//	                  to end completed or failed         completed or failed (R27 forbids it).
//	                                                     2026-07-28: acknowledged, and the
//	                                                     task ended later, since its creation,
//	                                                     than the acknowledgement came, since
//	                                                     the create was sent (ignoredCancel)
//	cancels_late      came when the task was already     a -32602 refusal (R26); a reply
//	                  terminal                           showing it completed or failed; an
//	                                                     acknowledgement of a task seen
//	                                                     terminal, or whose end came before
//	                                                     the cancel could arrive
//	cancels_undone    turned a task the client had seen  the reply, or the read after an
//	                  completed or failed into cancelled acknowledgement, shows it cancelled:
//	                                                     an invalid transition too (R14, R26)
//
// A cancel whose reply was lost (a cut, a transport failure) is judged by none. cancels_refused
// (a -32602 while the task was working) and cancels_broken (an accepted cancel that did not
// stay cancelled) are checks of their own, in task.go and observe.go.

// cancelAccepted applies the successful reply to a cancel that shows the task (2025-11-25),
// already applied (readTask): wasTerminal says the client had seen the task completed or
// failed before it sent the cancel (Lifecycle.LateCancelDue), violations how many R14
// violations the lifecycle held before the reply.
func (v *vu) cancelAccepted(ctx context.Context, t *taskState, wasTerminal bool, violations int) {
	lc := &v.lc
	switch {
	case wasTerminal:
		v.lateCancelRead(lc, violations)
	case lc.Status == mcp.StatusCancelled:
		v.shard.Add(metrics.CancelsAcked, 1)
		v.shard.RecordDuration(metrics.CancelLatency, time.Since(lc.CancelSentAt))
		v.confirmCancelled(ctx, t)
	case !lc.Status.Terminal():
		// Accepted, yet still working: R27 wants it cancelled before the reply. What it ends
		// as says whether the cancel took effect late or was ignored.
		t.ackPending, t.ackAt = true, time.Now()
	default: // the reply shows it completed or failed: terminal when the cancel came
		v.shard.Add(metrics.CancelsLate, 1)
	}
}

// lateCancelRead judges a cancel sent to a task the client had seen completed or failed,
// from the reply (2025-11-25) or the read that followed the acknowledgement (2026-07-28):
// a new R14 violation to cancelled means the server undid the task's end; anything else is
// a late cancel that changed nothing, as it must.
func (v *vu) lateCancelRead(lc *Lifecycle, violations int) {
	if len(lc.Violations) > violations && lc.Violations[len(lc.Violations)-1].To == mcp.StatusCancelled {
		v.shard.Add(metrics.CancelsUndone, 1)
		return
	}
	v.shard.Add(metrics.CancelsLate, 1)
}

// cancelAcked applies a cancel's acknowledgement (E60), which says nothing of the outcome:
// the cancel is judged when the task is next seen terminal (settleCancel). The acknowledged
// cancel of a task the client had seen completed or failed (wasTerminal; E60 leaves that
// case open, docs/RULES.md#e60) is read back once, at once: the read must show the task as
// it was.
func (v *vu) cancelAcked(ctx context.Context, t *taskState, wasTerminal bool) {
	lc := &v.lc
	if !wasTerminal {
		t.ackPending, t.ackOnly, t.ackAt = true, true, time.Now()
		lc.Replied(t.ackAt)
		return
	}
	lc.Replied(time.Now())
	n := len(lc.Violations)
	lc.PollSent()
	v.shard.Add(metrics.Polls, 1)
	tr, rep, err := v.link.Get(ctx, t.ref)
	v.observe(&tr, rep, err, t)
	if _, payloadLost := lost(err); err != nil && !payloadLost || rep.Err != nil {
		return // no evidence either way (a purge after the end is allowed)
	}
	v.lateCancelRead(lc, n)
}

// settleCancel judges an accepted cancel (t.ackPending) when its task is first seen
// terminal: cancelled, it took effect (cancel_latency: from the cancel to this reply);
// completed or failed, it was ignored when the task still had work left as the cancel
// arrived (ignoredCancel), and late otherwise.
func (v *vu) settleCancel(now time.Time, t *taskState) {
	t.ackPending = false
	lc := &v.lc
	switch {
	case lc.Status == mcp.StatusCancelled:
		v.shard.Add(metrics.CancelsAcked, 1)
		v.shard.RecordDuration(metrics.CancelLatency, now.Sub(lc.CancelSentAt))
	case v.ignoredCancel(t):
		v.shard.Add(metrics.CancelsIgnored, 1)
	default:
		v.shard.Add(metrics.CancelsLate, 1)
	}
}

// ignoredCancel reports whether t's task, seen completed or failed after its cancel was
// accepted, still had work left when the cancel arrived. Where the reply to the cancel was
// the task (2025-11-25), it showed it not terminal: yes. Where it was an acknowledgement
// (t.ackOnly, 2026-07-28) it says nothing, so the task's own timestamps decide, each span on
// one clock so that no skew enters:
//
//	ignored = (lastUpdatedAt(terminal) - createdAt)  >  (ackAt - createSent)
//	          server clock: creation to the end        client clock: an upper bound of the
//	                                                   time from creation to the cancel's
//	                                                   arrival
//
// A task without those timestamps is not judged ignored.
func (v *vu) ignoredCancel(t *taskState) bool {
	if !t.ackOnly {
		return true
	}
	srv := &t.srv
	if srv.terminal.IsZero() || srv.created.IsZero() || t.createSent.IsZero() || t.ackAt.IsZero() {
		return false
	}
	return srv.terminal.Sub(srv.created) > t.ackAt.Sub(t.createSent)
}
