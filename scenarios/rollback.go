package scenarios

// Rollback is the canary's kill switch, rehearsed (docs/ARCHITECTURE.md#rollback): from the
// switch on, no new task-augmented call is sent (new work takes the scenario's Fallback: a
// plain tools/call where the tool allows one, else a refusal the client counts), the tasks
// created before it are watched until they end, and the run's rollback gate judges what
// happened to them. Off unless At or OnAbort is set.
type Rollback struct {
	// At flips the switch this long after the load phase starts; in (0, duration). Default 0s
	// (not at a time).
	At Duration `yaml:"at"`
	// OnAbort flips it when an abort_on_fail threshold fails, as a canary controller rolls
	// back on a failed analysis; needs such a threshold. The load then goes on, through the
	// fallback, instead of stopping (the threshold still fails the run). Default false.
	OnAbort bool `yaml:"on_abort"`
	// Cancel sends tasks/cancel for every task created before the switch; without it the
	// watcher only polls them to their end, and the scenario's planned cancels of those tasks
	// are not sent. Default false.
	Cancel bool `yaml:"cancel"`
	// Restart restarts the embedded server at the switch, as a redeploy of the previous build
	// does: with faults.server.restart_loses_tasks it forgets its tasks, as a build without
	// Tasks would. Ignored against a target. Default false.
	Restart bool `yaml:"restart"`
}

// On reports whether the scenario rehearses a rollback.
func (r Rollback) On() bool { return r.At > 0 || r.OnAbort }

// rollback checks the rollback section.
func (v *validator) rollback() {
	r := v.s.Rollback
	switch {
	case r.At < 0:
		v.add("rollback.at", "must be > 0, got %v", r.At)
	case r.At > 0 && r.At >= v.s.Duration:
		v.add("rollback.at", "must be within the load phase (duration %v), got %v: no new work would meet the switch", v.s.Duration, r.At)
	}
	if r.OnAbort {
		aborts := false
		for _, t := range v.s.Thresholds {
			aborts = aborts || t.AbortOnFail
		}
		if !aborts {
			v.add("rollback.on_abort", "needs a threshold with abort_on_fail: true, which flips the switch")
		}
	}
	if !r.On() && (r.Cancel || r.Restart) {
		v.add("rollback", "cancel or restart without a switch: set rollback.at or rollback.on_abort")
	}
	if r.Restart && v.s.Target != "" {
		v.add("rollback.restart", "restarts the embedded server, and the run has a target")
	}
}
