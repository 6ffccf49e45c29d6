package loadgen

import (
	"math/rand/v2"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Outcome is how a task ended as the client saw it (docs/METRICS.md#task-outcomes).
type Outcome uint8

const (
	OutcomePending   Outcome = iota // not known yet
	OutcomeCompleted                // terminal completed observed
	OutcomeFailed                   // terminal failed observed (isError, JSON-RPC error)
	OutcomeCancelled                // terminal cancelled observed
	OutcomeExpired                  // the task vanished (-32602) after its ttl, before a terminal status was seen
	OutcomeUnknown                  // never established: deadline passed, or the create was lost
	// OutcomeResultLost: terminal completed or failed observed, but the payload could not be
	// read (the result budget spent, purged first, access revoked). For the caller the work
	// is not done: what it produced never arrived, so the domain outcome is unknown.
	OutcomeResultLost
	// OutcomeLost: the task vanished (-32602) before a terminal status was seen and before
	// its granted ttl ran out (Lifecycle.Gone): the server lost it (a restart without durable
	// storage, a purge), so whether its work happened is unknown.
	OutcomeLost
)

var outcomeNames = [...]string{"pending", "completed", "failed", "cancelled", "expired", "unknown", "result_lost", "lost"}

// LostGrace is how long before its expiry a task may vanish and still count expired rather
// than lost (docs/METRICS.md#lost): it absorbs the millisecond resolution of createdAt and
// a reaper that rounds its instants.
const LostGrace = time.Second

func (o Outcome) String() string { return outcomeNames[o] }

// ResultStrategy says how the client gets the payload.
type ResultStrategy uint8

const (
	// ResultPoll polls tasks/get to a terminal status, then calls tasks/result.
	ResultPoll ResultStrategy = iota
	// ResultBlock calls tasks/result at once and waits on it (R18).
	ResultBlock
)

// StepKind is what a virtual client does next for one task.
type StepKind uint8

const (
	StepPoll   StepKind = iota + 1 // send tasks/get at Step.At
	StepResult                     // call tasks/result now (until Step.At at the latest)
	StepCancel                     // send tasks/cancel at Step.At
	StepDone                       // the task is finished with Lifecycle.Outcome
)

// Step is the next action of a task's lifecycle and when to take it.
type Step struct {
	Kind StepKind
	At   time.Time
}

// Violation is an observed status change that R14 forbids: hard-gate evidence.
type Violation struct {
	From, To mcp.Status
}

// Lifecycle is the client side of one task as a pure state machine: the virtual client
// feeds it what happened (with the time it happened) and asks Next for what to do. It does
// no I/O and reads no clock, so it is table-tested without a network.
//
//	state (derived)                          Next
//	done (expired, lost, unknown included)   StepDone
//	deadline passed                          StepDone (outcome unknown)
//	terminal seen, payload wanted            StepResult now (cancelled: no payload, StepDone);
//	                                         Inline: StepPoll as below (E50)
//	terminal seen, payload in hand           StepDone, but a cancel planned before the next
//	                                         poll and not sent: StepCancel at the cancel
//	                                         time (a late cancel, which must change nothing:
//	                                         R26, R14; LateCancelDue)
//	input_required seen (not Inline)         StepResult now (R37)
//	block strategy, no result call failed    StepResult now, bounded by cancel time / deadline
//	(not Inline)
//	cancel due before next poll              StepCancel at cancel time
//	otherwise                                StepPoll at last reply + policy wait (R15, R16)
type Lifecycle struct {
	Policy   *PollPolicy
	Strategy ResultStrategy
	Rand     *rand.Rand // for jitter; may be nil without jitter
	// Inline is the lifecycle of 2026-07-28 (docs/RULES.md#e50): tasks/get carries the payload
	// with the terminal status and the input requests with input_required, so there is no
	// StepResult: the client polls, answers input with tasks/update between polls, and calls
	// ResultReceived when a poll brings the payload. Strategy is not used.
	Inline bool

	Outcome      Outcome
	Status       mcp.Status // last observed; 0 before creation
	Created      time.Time  // CreateTaskResult in hand (client clock)
	Deadline     time.Time  // zero: none
	CancelAt     time.Time  // zero: the client does not cancel
	CancelSentAt time.Time
	Polls        int           // tasks/get sent
	Advertised   time.Duration // latest pollInterval advertised (0 none)
	FirstAdvised time.Duration // first pollInterval seen, for poll amplification
	Raises       int           // replies advertising a longer pollInterval than the one before
	TerminalSeen time.Time     // first observation of a terminal status
	Violations   []Violation
	// Expires is when the task's granted ttl runs out, on the client clock (Granted); zero:
	// no ttl was granted (null: unlimited), so any vanishing is a loss.
	Expires time.Time

	lastReply   time.Time // latest status reply, from which the next poll is timed
	payload     bool      // tasks/result payload in hand
	blockFailed bool      // a blocking tasks/result was cut or abandoned: poll instead (R16)
	inputSeen   bool      // input_required seen since the last result call
}

// Start records the CreateTaskResult (R11, R13): the task must start working.
func (l *Lifecycle) Start(now time.Time, t *mcp.Task, cancelAfter time.Duration) {
	l.Created, l.lastReply = now, now
	if l.Policy.Deadline > 0 {
		l.Deadline = now.Add(l.Policy.Deadline)
	}
	if cancelAfter > 0 {
		l.CancelAt = now.Add(cancelAfter)
	}
	if t.Status != mcp.InitialStatus {
		l.Violations = append(l.Violations, Violation{To: t.Status})
	}
	l.observe(now, t)
}

// ResumePoint is what a client that lost its memory of a task (a crash) or never had it (a
// create found by reconciliation) knows when it resumes observing it.
type ResumePoint struct {
	Status                   mcp.Status // last status known; 0 = none
	Created                  time.Time  // when the client learned of the task (client clock)
	Deadline, CancelAt       time.Time  // zero: none
	CancelSent               bool
	CancelSentAt             time.Time // when the cancel went out, if CancelSent
	Polls                    int
	Advertised, FirstAdvised time.Duration
	NextPoll                 time.Time // the next poll is not sent before it
}

// Resume restarts the state machine at p instead of at a CreateTaskResult: no R13 check
// (the status may have moved on), the poll count goes on, and the next poll is due at
// p.NextPoll. A terminal p.Status counts as seen at the time of the resume.
func (l *Lifecycle) Resume(p ResumePoint) {
	l.Created, l.Deadline, l.CancelAt = p.Created, p.Deadline, p.CancelAt
	if p.CancelSent {
		l.CancelSentAt = p.CancelSentAt
		if l.CancelSentAt.IsZero() {
			l.CancelSentAt = p.Created // sent, but the record does not say when
		}
	}
	l.Polls, l.Advertised, l.FirstAdvised = p.Polls, p.Advertised, p.FirstAdvised
	l.lastReply = p.NextPoll.Add(-l.Policy.Wait(l.Polls, l.Advertised, nil))
	if p.Status != 0 {
		l.observe(p.NextPoll, &mcp.Task{Status: p.Status})
	}
}

// Observed records a task seen in a tasks/get or tasks/cancel reply. It reports whether the
// change from the previous status broke R14.
func (l *Lifecycle) Observed(now time.Time, t *mcp.Task) (violation bool) {
	l.lastReply = now
	return l.observe(now, t)
}

func (l *Lifecycle) observe(now time.Time, t *mcp.Task) bool {
	bad := false
	if l.Status != 0 && !mcp.CanTransition(l.Status, t.Status) {
		l.Violations = append(l.Violations, Violation{From: l.Status, To: t.Status})
		bad = true
	}
	if !bad || !l.Status.Terminal() {
		l.Status = t.Status // a terminal status never changes (R14), so keep the first
	}
	if t.PollInterval != nil && *t.PollInterval > 0 {
		if d := t.PollInterval.Duration(); l.Advertised > 0 && d > l.Advertised {
			l.Raises++ // the server asks for slower polling: a backpressure signal
		}
		l.Advertised = t.PollInterval.Duration()
		if l.FirstAdvised == 0 {
			l.FirstAdvised = l.Advertised
		}
	}
	if l.Status == mcp.StatusInputRequired {
		l.inputSeen = true
	}
	if l.Status.Terminal() && l.TerminalSeen.IsZero() {
		l.TerminalSeen = now
		switch l.Status {
		case mcp.StatusCompleted:
			l.Outcome = OutcomeCompleted
		case mcp.StatusFailed:
			l.Outcome = OutcomeFailed
		case mcp.StatusCancelled:
			l.Outcome = OutcomeCancelled
		}
	}
	return bad
}

// PollSent counts one tasks/get.
func (l *Lifecycle) PollSent() { l.Polls++ }

// CancelSent records that tasks/cancel went out.
func (l *Lifecycle) CancelSent(now time.Time) { l.CancelSentAt = now }

// ResultReceived records the tasks/result payload: isError or a JSON-RPC error mean the
// task failed (R17, R51). A payload is terminal even when no tasks/get said so.
func (l *Lifecycle) ResultReceived(now time.Time, failed bool) {
	l.payload = true
	l.inputSeen = false
	if l.TerminalSeen.IsZero() {
		l.TerminalSeen = now
		st := mcp.StatusCompleted
		if failed {
			st = mcp.StatusFailed
		}
		if l.Status != 0 && !mcp.CanTransition(l.Status, st) {
			l.Violations = append(l.Violations, Violation{From: l.Status, To: st})
		}
		l.Status = st
		l.Outcome = OutcomeCompleted
		if failed {
			l.Outcome = OutcomeFailed
		}
	}
}

// ToolFailed records that the payload of a completed task is a tool's failure (an isError
// result, which 2026-07-28 carries in a completed task, E49): the outcome is failed, as the
// same tool's result makes it in 2025-11-25.
func (l *Lifecycle) ToolFailed() {
	if l.Outcome == OutcomeCompleted {
		l.Outcome = OutcomeFailed
	}
}

// ResultFailed records a tasks/result call that ended without a payload (stream cut,
// timeout, abandoned for a cancel): the client goes back to polling (R16, R62).
func (l *Lifecycle) ResultFailed(now time.Time) {
	l.blockFailed = true
	l.inputSeen = false
	l.lastReply = now
}

// ResultLost records that the payload of a terminal task will not be fetched (the result
// budget is spent, the task was purged first, access was revoked): a completed or failed
// task ends result_lost; a cancelled one, which has no payload (R29), stays cancelled.
func (l *Lifecycle) ResultLost() {
	l.payload = true
	if l.Outcome == OutcomeCompleted || l.Outcome == OutcomeFailed {
		l.Outcome = OutcomeResultLost
	}
}

// Replied records a reply that taught nothing about the status (an error, a throttle): the
// next poll is timed from at, which may lie ahead to honour Retry-After.
func (l *Lifecycle) Replied(at time.Time) { l.lastReply = at }

// Granted records the retention the server granted the task (R44, E45; ttlMs may change
// over the task's life): ttl from created, which the caller takes no later than the server's
// createdAt so that a clock skew never makes an expiry look early. nil ttl is unlimited.
func (l *Lifecycle) Granted(created time.Time, ttl *mcp.Ms) {
	l.Expires = time.Time{}
	if ttl != nil && !created.IsZero() {
		l.Expires = created.Add(ttl.Duration())
	}
}

// Gone records that the server no longer knows the task (-32602, R46) at now, before a
// terminal status was seen. It is expired when now is no earlier than Expires - LostGrace
// (the ttl ran out, R45), and lost otherwise: gone before its ttl, or with none granted.
func (l *Lifecycle) Gone(now time.Time) {
	if l.Outcome != OutcomePending {
		return
	}
	l.Outcome = OutcomeLost
	if !l.Expires.IsZero() && !now.Before(l.Expires.Add(-LostGrace)) {
		l.Outcome = OutcomeExpired
	}
}

// Abandon ends the task without an established outcome (deadline, run stopped).
func (l *Lifecycle) Abandon() {
	if l.Outcome == OutcomePending {
		l.Outcome = OutcomeUnknown
	}
}

// Next returns the next step at time now.
func (l *Lifecycle) Next(now time.Time) Step {
	switch {
	case l.Outcome == OutcomeExpired || l.Outcome == OutcomeLost || l.Outcome == OutcomeUnknown:
		return Step{Kind: StepDone, At: now}
	case l.Status.Terminal() && l.payload && l.LateCancelDue():
		return Step{Kind: StepCancel, At: maxTime(l.CancelAt, now)}
	case l.Status.Terminal() && (l.payload || l.Status == mcp.StatusCancelled):
		return Step{Kind: StepDone, At: now} // R29: a cancelled task has no defined payload
	case l.Status.Terminal() && !l.Inline:
		return Step{Kind: StepResult, At: l.bound(time.Time{})}
	case !l.Deadline.IsZero() && !now.Before(l.Deadline):
		l.Abandon()
		return Step{Kind: StepDone, At: now}
	}
	cancelDue := !l.CancelAt.IsZero() && l.CancelSentAt.IsZero() && !l.Status.Terminal()
	if !l.Inline && (l.inputSeen || (l.Strategy == ResultBlock && !l.blockFailed)) {
		// R37 / block strategy: wait on tasks/result, but no longer than the cancel time.
		limit := time.Time{}
		if cancelDue {
			if !now.Before(l.CancelAt) {
				return Step{Kind: StepCancel, At: now}
			}
			limit = l.CancelAt
		}
		return Step{Kind: StepResult, At: l.bound(limit)}
	}
	next := l.lastReply.Add(l.Policy.Wait(l.Polls, l.Advertised, l.Rand))
	if cancelDue && !l.CancelAt.After(next) {
		return Step{Kind: StepCancel, At: maxTime(l.CancelAt, now)}
	}
	if !l.Deadline.IsZero() && l.Deadline.Before(next) {
		return Step{Kind: StepPoll, At: l.Deadline} // the last look before giving up
	}
	return Step{Kind: StepPoll, At: next}
}

// LateCancelDue reports whether the client still sends its planned cancel to a task it has
// seen completed or failed: the cancel, not sent yet, was due before the poll that would
// have followed the terminal one, so the client's decision crossed the task's end. The
// cancel is then late for sure, and the server must leave the task as it is (R26 refuses
// it in 2025-11-25; 2026-07-28 acknowledges it, E60): a server that turns it cancelled is
// seen doing so.
func (l *Lifecycle) LateCancelDue() bool {
	if l.CancelAt.IsZero() || !l.CancelSentAt.IsZero() || l.TerminalSeen.IsZero() ||
		(l.Status != mcp.StatusCompleted && l.Status != mcp.StatusFailed) ||
		(l.Outcome != OutcomeCompleted && l.Outcome != OutcomeFailed) {
		return false
	}
	return l.CancelAt.Before(l.TerminalSeen.Add(l.Policy.Wait(l.Polls, l.Advertised, nil)))
}

// bound returns the earlier of limit and the deadline (zero = unbounded).
func (l *Lifecycle) bound(limit time.Time) time.Time {
	if l.Deadline.IsZero() || (!limit.IsZero() && limit.Before(l.Deadline)) {
		return limit
	}
	return l.Deadline
}

// Advised is the number of polls the server's advice implies for this task: max(1, ceil(time to
// terminal / advertised pollInterval)) (docs/METRICS.md#poll_amplification). It is 0 when unknown
// (no terminal instant or no interval).
func Advised(timeToTerminal, interval time.Duration) int {
	if interval <= 0 || timeToTerminal < 0 {
		return 0
	}
	n := int((timeToTerminal + interval - 1) / interval)
	return max(1, n)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
