package results

import (
	"fmt"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Compat is what the compatibility gate compares: what the
// target declared for the run's tool, what the client decided, and what the embedded
// server saw. The caller fills it from the capability manifest.
type Compat struct {
	Protocol string // the negotiated protocol version
	Era      string // the era the run spoke: 2025-11-25 or 2026-07-28
	// EraFallback says why the run spoke 2025-11-25 after trying 2026-07-28 first
	// (client.Manifest.EraFallback); "" = no fallback was taken.
	EraFallback   string
	TasksDeclared bool   // capabilities.tasks is present
	List          bool   // capabilities.tasks.list
	Cancel        bool   // capabilities.tasks.cancel
	ToolsCall     bool   // capabilities.tasks.requests.tools.call (R6)
	Tool          string // the run's tool
	TaskSupport   string // its taskSupport ("forbidden" when absent, R7)
	// Supported says the target can take a task for Tool: a protocol with Tasks, ToolsCall
	// and a taskSupport other than forbidden (client.Manifest.TasksSupported); Why says
	// what is missing when it cannot.
	Supported bool
	Why       string
	AsTask    bool   // the client task-augmented its tools/call (client.Manifest.AsTask)
	Fallback  string // the scenario's declared fallback: "sync" or "refuse"
	Taken     string // the fallback taken and why (client.Manifest.Fallback); "" = none
	// TaskParamsIgnored counts the tools/call that reached the embedded server with a task
	// parameter on a session without the tasks capability (it ignored them, R4); -1 =
	// unknown (an external target).
	TaskParamsIgnored int64
	// Pin names the pin file the manifest was expected to match (scenario expect_manifest,
	// docs/ARCHITECTURE.md#pin); "" = none. Drift is how the manifest differed from it, at
	// the run's end (with the pollInterval and ttl its first task was granted).
	Pin   string
	Drift []ManifestDrift
}

// ManifestDrift is one field of the manifest that differs from its pin: the value pinned
// and the value now ("absent" where either has none, "not observed" where the run could
// not see it).
type ManifestDrift struct {
	Field  string `json:"field"`
	Pinned string `json:"pinned"`
	Now    string `json:"now"`
}

// compatibilityGate is the compatibility gate:
//
//	not evaluated  without Compat, or when the target supports tasks for the run's tool
//	               in the era spoken to it first (no fallback needed; the manifest leaves
//	               are the evidence)
//	evaluated      when the era fell back from 2026-07-28 to 2025-11-25 (said in
//	               era_fallback) and the target supports tasks there: a pass when the
//	               run spoke 2025-11-25 and sent tools/call in it (era_calls > 0);
//	               when the target cannot take a task for the tool (a protocol without
//	               Tasks, no tasks.requests.tools.call (R6), taskSupport forbidden (R7), in
//	               2026-07-28 a server/discover without the Tasks extension (E39)):
//	               task_params_sent  = tools/call sent when the client task-augmented
//	                                   them (as_task), else 0
//	               pass = task_params_sent == 0 && task_params_ignored <= 0
//	                      && fallback == "sync" && sync_calls > 0 && tasks_created == 0
//	               (sync_calls = tools/call sent; refuse stops the run before it starts);
//	               when a rollback drill's switch flipped on a target that supports tasks:
//	               the drill's fallback calls (drillFallbackGate)
//
// With a pin (expect_manifest), the gate is evaluated in any case and also fails on drift:
// expected_manifest names the pin, manifest_drift lists each field that changed.
func compatibilityGate(info RunInfo, s *Summary) Gate[CompatibilityEvidence] {
	g := fallbackGate(info, s)
	c := info.Compat
	if c == nil || c.Pin == "" {
		return g
	}
	if !g.Evaluated {
		g.Evidence.Reason = ""
		g.Evaluated = true
	}
	g.Evidence.ExpectedManifest = c.Pin
	g.Evidence.ManifestDrift = nonNilDrift(c.Drift)
	if len(c.Drift) > 0 {
		g.Evidence.Failures = append(g.Evidence.Failures, fmt.Sprintf("the manifest drifted from the pin %s: %d field(s) changed (manifest_drift)", c.Pin, len(c.Drift)))
		g.Pass = false
	}
	return g
}

func nonNilDrift(d []ManifestDrift) []ManifestDrift {
	if d == nil {
		return []ManifestDrift{}
	}
	return d
}

// drillFallbackGate is the compatibility gate of a target that supports tasks, when a
// rollback drill's switch made the fleet fall back (rollbackGate): the same evidence as
// the rollback gate's, read as a fallback, so that the two gates agree:
//
//	task_params_sent = creates_after (task-augmented calls after the switch)
//	sync_calls       = fallback_calls; tasks_created = tasks_after_plain_call
//	pass = task_params_sent == 0 && tasks_created == 0
//	not evaluated when sync_calls == refused == 0 and nothing failed: no work came after the switch
func drillFallbackGate(ev CompatibilityEvidence, c *Compat, r *Rollback) Gate[CompatibilityEvidence] {
	taken := fmt.Sprintf("rollback drill: the switch flipped %s (%ss into the run); %d plain calls, %d refused",
		r.Trigger, num(round3(r.AtS)), r.FallbackCalls, r.Refused)
	sent, calls, created := r.CreatesAfter, r.FallbackCalls, r.TasksAfter
	ev.FallbackTaken, ev.TaskParamsSent, ev.SyncCalls, ev.TasksCreated = &taken, &sent, &calls, &created
	if sent > 0 {
		ev.Failures = append(ev.Failures, fmt.Sprintf("%d tools/call after the switch still carried a task (creates_after of the rollback gate)", sent))
	}
	if created > 0 {
		ev.Failures = append(ev.Failures, fmt.Sprintf("the target answered %d plain calls after the switch with a task", created))
	}
	if calls == 0 && r.Refused == 0 && len(ev.Failures) == 0 {
		ev.FallbackTaken, ev.TaskParamsSent, ev.SyncCalls, ev.TasksCreated = nil, nil, nil, nil
		ev.Reason = "the rollback drill's switch flipped, but no new work started after it: nothing to judge the fallback by (the rollback gate judges the drill)"
		return Gate[CompatibilityEvidence]{Pass: true, Evidence: ev}
	}
	return Gate[CompatibilityEvidence]{Pass: len(ev.Failures) == 0, Evaluated: true, Evidence: ev}
}

// fallbackGate is the compatibility gate without a pin (see compatibilityGate).
func fallbackGate(info RunInfo, s *Summary) Gate[CompatibilityEvidence] {
	c := info.Compat
	if c == nil {
		return Gate[CompatibilityEvidence]{Pass: true, Evidence: CompatibilityEvidence{
			Reason: "no capability manifest: the target's tasks capability was not compared"}}
	}
	ev := CompatibilityEvidence{
		ProtocolVersion:   c.Protocol,
		Era:               c.Era,
		EraFallback:       c.EraFallback,
		TasksDeclared:     c.TasksDeclared,
		TasksList:         c.List,
		TasksCancel:       c.Cancel,
		TasksToolsCall:    c.ToolsCall,
		Tool:              c.Tool,
		ToolTaskSupport:   c.TaskSupport,
		AsTask:            c.AsTask,
		DeclaredFallback:  c.Fallback,
		TaskParamsIgnored: knownCount(c.TaskParamsIgnored),
	}
	if c.TaskParamsIgnored < 0 {
		note(&ev.Notes, "task_params_ignored", "not observable on an external target: only the embedded server counts the task parameters it ignored")
	}
	calls := s.Requests[mcp.OpToolsCall.Name()].Count
	if r := info.Rollback; c.Supported && c.EraFallback == "" && r != nil && r.Trigger != "" {
		return drillFallbackGate(ev, c, r)
	}
	if c.Supported && c.EraFallback == "" {
		ev.Reason = "the target supports tasks for this tool: no fallback needed"
		return Gate[CompatibilityEvidence]{Pass: true, Evidence: ev}
	}
	if c.Supported { // the era fell back: the run must have spoken the era it fell back to
		ev.EraCalls = &calls
		if c.Era != "2025-11-25" {
			ev.Failures = append(ev.Failures, "the era fell back, yet the run spoke "+c.Era)
		}
		if calls == 0 {
			ev.Failures = append(ev.Failures, "the era fell back, and no tools/call was sent in it")
		}
		return Gate[CompatibilityEvidence]{Pass: len(ev.Failures) == 0, Evaluated: true, Evidence: ev}
	}
	var sent int64
	if c.AsTask {
		sent = calls
	}
	why, taken := c.Why, c.Taken
	created, completed, failed := s.Tasks.Created, s.Tasks.Completed, s.Tasks.Failed
	ev.Missing, ev.FallbackTaken = &why, &taken
	ev.TaskParamsSent, ev.SyncCalls = &sent, &calls
	ev.SyncCompleted, ev.SyncFailed, ev.TasksCreated = &completed, &failed, &created
	var failures []string
	if sent > 0 {
		failures = append(failures, "the client sent tools/call with a task parameter to a target without the capability (R6, R7; in 2026-07-28 a call declaring the Tasks extension, E39)")
	}
	if c.TaskParamsIgnored > 0 {
		failures = append(failures, "the embedded server received tools/call with a task parameter on a session without the tasks capability (it ignored them, R4)")
	}
	switch {
	case c.Fallback != "sync":
		failures = append(failures, "the declared fallback is "+c.Fallback+", which must stop the run before its first call")
	case calls == 0:
		failures = append(failures, "the sync fallback made no synchronous call")
	case created > 0:
		failures = append(failures, "tasks were created although the fallback is synchronous")
	}
	if c.Taken == "" {
		failures = append(failures, "the fallback was taken silently: the manifest does not say so")
	}
	ev.Failures = failures
	return Gate[CompatibilityEvidence]{Pass: len(failures) == 0, Evaluated: true, Evidence: ev}
}
