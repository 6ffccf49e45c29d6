package mockserver

import (
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// coreModes are the seams of the task core that the known-bad and insecure modes wrap, as
// Toxiproxy's toxics wrap a pipe: each is chosen once by initModes, and a server with every
// mode off has the honest ones, so that the request path tests no mode. The modes of a
// front end's replies are its own (front.go: replyFilter).
type coreModes struct {
	// scope is who may see a stored task: its tenant (R53), or as session_bound and
	// no_tenant_check break isolation (insecure.go).
	scope scope
	// newID returns a new task's id: 128 random bits (R54), or with predictable_ids the
	// next sequence number (insecure.go).
	newID func() string
	// echo copies b, labelled, into t's statusMessage with echo_secrets; honest, it does
	// nothing (insecure.go). t.mu is held, or t is not yet visible.
	echo func(t *task, label string, b []byte)
	// cancel is tasks/cancel of t, in either era: (*task).cancel, or as the known-bad
	// cancel modes break it (knownbadcancel.go).
	cancel func(t *task, dst []byte) ([]byte, *mcp.Error)
	// writeTask appends the 2025-11-25 task object of t, whose mu is held:
	// appendTaskLocked, or appendBadLocked with no_poll_interval or missing_fields
	// (knownbad.go).
	writeTask func(t *task, dst []byte) []byte
	// expiry is when a task created at now with a granted ttl of d expires: now+d (R44,
	// R56), or never (the zero time) with never_expire (knownbad.go).
	expiry func(now time.Time, d time.Duration) time.Time
	// outcome is how a task whose work ended with work ends: its ending, status and
	// statusMessage (R50, R51), as is_error_completed and self_cancel change them
	// (knownbad.go).
	outcome func(work ending) (end ending, to mcp.Status, msg string)
	// resultMeta and inputMeta name the task in the related-task _meta of a tasks/result
	// payload (R19) and of an elicitation/create (R36): the task's id, or "" for none with
	// no_related_meta and input_no_meta (knownbad.go).
	resultMeta, inputMeta func(taskID string) string
}

// initModes chooses the core's seams from s.cfg.
func (s *Server) initModes() {
	in, kb := &s.cfg.Insecure, &s.cfg.KnownBad
	s.modes = coreModes{
		scope:     in.scopeOf(s),
		newID:     in.idSource(),
		echo:      in.echoer(),
		cancel:    kb.canceller(),
		writeTask: kb.taskWriter(),
		expiry:    kb.expiry(),
		outcome:   kb.outcome(),
	}
	s.modes.resultMeta, s.modes.inputMeta = kb.relatedMeta()
}
