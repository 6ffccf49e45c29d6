package conform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tasksim/tasksim/internal/mcp"
)

// caseModernCancelTerminal cancels tasks that have ended (one completed, one failed where
// the suite knows a call that fails) and reads them back: a terminal status is final (E48),
// so neither the status nor the inlined result or error may change. The cancel itself may
// be acknowledged or refused with -32602: no rule covers it (E60's gap, ext-gap-8).
func caseModernCancelTerminal(r *run) {
	p := r.needPlan()
	var checked, untried []string
	judge := func(k *known, f fields, g reply) {
		if saw, why := r.cancelEnded(k, f, g); why != "" {
			untried = append(untried, why)
		} else if saw != "" {
			checked = append(checked, saw)
		}
	}
	k, f, g := r.mdone()
	judge(k, f, g)
	if p.errors != nil {
		k := r.mcreate(*p.errors)
		g, f := r.mwait(k)
		judge(k, f, g)
	} else {
		untried = append(untried, "a failed task ("+errorArgsHint+")")
	}
	if len(checked) == 0 && len(r.failed) == 0 {
		r.skip("no terminal task could be read back after its cancel: "+strings.Join(untried, "; "), errorArgsHint)
	}
	if len(untried) > 0 {
		checked = append(checked, "not tried: "+strings.Join(untried, "; "))
	}
	r.pass("%s", strings.Join(checked, "; "))
}

// cancelEnded sends tasks/cancel for k, seen terminal as f in the tasks/get reply g, and
// reads it back: a changed status or payload fails E48. It returns what it saw when the
// task passed, or why there is no evidence (the task was gone when read back), or neither
// when the case failed.
func (r *run) cancelEnded(k *known, f fields, g reply) (saw, why string) {
	if !f.status.Terminal() {
		return "", fmt.Sprintf("task %s was not seen terminal (%s)", short(k.id), f.status)
	}
	k.cancel = true
	c := r.mcall("", taskReq(mcp.OpTasksCancel, k.id))
	r.relabel(fmt.Sprintf("tasks/cancel of a %s task", f.status))
	ack := "acknowledged"
	switch {
	case c.code() == mcp.CodeInvalidParams:
		ack = "refused -32602"
	case c.err != nil || c.rpc != nil:
		r.fail("E60", "tasks/cancel of %s task %s should be acknowledged (or refused with -32602, ext-gap-8); got %s", f.status, short(k.id), c)
		return "", ""
	}
	after, now := r.mread(k)
	switch {
	case after.code() == mcp.CodeInvalidParams:
		k.gone = true
		return "", fmt.Sprintf("%s task %s was gone (-32602) when read back after its cancel", f.status, short(k.id))
	case after.err != nil || after.rpc != nil:
		r.fail("E65", "tasks/get of %s task %s after its cancel should answer it; got %s", f.status, short(k.id), after)
		return "", ""
	case now.status != f.status:
		r.fail("E48", "task %s was %s; after a tasks/cancel (%s) it is %s: a terminal status is final", short(k.id), f.status, ack, orAbsent(now.statusRaw))
		return "", ""
	}
	for _, m := range []string{"result", "error"} {
		was, is := compact(rawMember(g.result, m)), compact(rawMember(after.result, m))
		if !bytes.Equal(was, is) {
			r.fail("E48", "%s task %s inlined %s %s; after a tasks/cancel (%s) it inlines %s: a terminal task's outcome is final", f.status, short(k.id), m, orAbsent(was), ack, orAbsent(is))
			return "", ""
		}
	}
	return fmt.Sprintf("%s task %s: cancel %s, then still %s, its payload unchanged", f.status, short(k.id), ack, f.status), ""
}

// compact returns raw JSON without insignificant space; raw itself when it does not parse.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
