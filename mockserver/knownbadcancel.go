package mockserver

import (
	"github.com/tasksim/tasksim/internal/mcp"
)

// Known-bad modes of tasks/cancel that act on tasks of either era, so that a run (not only
// tasksim conform) is shown to see what a cancel did (docs/METRICS.md#cancels_ignored):
//
//	cancel_ignored   tasks/cancel of a task that is not terminal is accepted and does nothing:
//	                 2025-11-25 answers the task as it is (working), 2026-07-28 acknowledges
//	                 (E60, as usual); the work goes on and the task ends completed or failed.
//	                 2025-11-25 forbids it (R27: cancelled before replying); 2026-07-28 allows
//	                 it (E60: the server MAY never stop the work), and the cancellation gate
//	                 then fails beyond its documented share.
//	cancel_terminal  tasks/cancel of a completed or failed task turns it cancelled (R26: it
//	                 must be refused in 2025-11-25; R14, R28: a terminal status never
//	                 changes): 2025-11-25 answers it cancelled, 2026-07-28 acknowledges, and
//	                 later reads show it cancelled.
//
// They, and cancel_terminal_ok and cancel_not_final (knownbad.go), wrap the honest cancel
// (canceller), chosen once: a server with none of them cancels with (*task).cancel.

// canceller returns the cancel of the task core as the known-bad cancel modes wrap it.
func (k *KnownBad) canceller() func(t *task, dst []byte) ([]byte, *mcp.Error) {
	kb := *k
	if !kb.CancelTerminal && !kb.CancelTerminalOK && !kb.CancelIgnored && !kb.CancelNotFinal {
		return (*task).cancel
	}
	return func(t *task, dst []byte) ([]byte, *mcp.Error) {
		t.mu.Lock()
		terminal := t.status.Terminal()
		switch {
		case terminal && kb.CancelTerminal && t.status != mcp.StatusCancelled:
			return t.cancelTerminalLocked(dst), nil
		case terminal && kb.CancelTerminalOK: // the task as it is (R26 broken)
			dst = t.appendLocked(dst)
			t.mu.Unlock()
			return dst, nil
		case !terminal && kb.CancelIgnored:
			return t.cancelIgnoredLocked(dst), nil
		case !terminal && t.timer != nil && kb.CancelNotFinal: // its work is under way
			return t.cancelNotFinalLocked(dst), nil
		}
		return t.cancelLocked(dst)
	}
}

// cancelIgnoredLocked answers a cancel of t, not terminal, as cancel_ignored does: the task as
// it is. Called with t.mu held; unlocks it.
func (t *task) cancelIgnoredLocked(dst []byte) []byte {
	dst = t.appendLocked(dst)
	t.mu.Unlock()
	return dst
}

// cancelTerminalLocked turns t, completed or failed, cancelled, as cancel_terminal does, and
// answers it. Called with t.mu held; unlocks it.
func (t *task) cancelTerminalLocked(dst []byte) []byte {
	t.status, t.statusMessage = mcp.StatusCancelled, "cancelled by requestor"
	t.updated = stampOf(t.srv.clock.Now())
	dst = t.appendLocked(dst)
	snap := t.srv.statusNotification(t)
	t.mu.Unlock()
	t.srv.notifyOwner(t.owner, snap)
	return dst
}
