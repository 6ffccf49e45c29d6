package mockserver

import "time"

// Tool profiles (Config.Tools): the default behaviour of each tool, drawn per call from the
// server's seeded random source (stream streamWork). A call's own arguments override the
// profile field by field, and an overridden field draws nothing:
//
//	duration:  duration_ms, else a sample of Duration (clamped to 24h), else DefaultDuration
//	outcome:   outcome, else drawn with weights
//	             failed    = Failed     (CallToolResult isError -> failed)
//	             error     = Error      (JSON-RPC error -> failed)
//	             completed = Completed, or 1 - Failed - Error (at least 0) when Completed is 0
//	           so {failed: 0.1} alone means 10% failed and 90% completed
//	input:     input_required / input_rounds, else with InputProbability the call needs
//	           max(InputRounds, 1) rounds of input. A synchronous call cannot take input, so
//	           it ignores a drawn input need (an explicit one is still an error).
//
// Draws happen in that order, one per field that is not overridden.

// applyProfile fills the fields of p that a's arguments leave unset from tool's profile.
func (s *core) applyProfile(tool string, a *workArgs, p *workPlan) {
	tp, ok := s.cfg.Tools[tool]
	if !ok {
		return
	}
	if a.DurationMs == nil && tp.Duration.Kind != "" {
		p.duration = min(s.rand.sample(streamWork, tp.Duration), maxDurationMs*time.Millisecond)
	}
	if a.Outcome == "" {
		p.ending = s.drawEnding(&tp)
	}
	if a.InputRequired == nil && a.InputRounds == nil && s.rand.chance(streamWork, tp.InputProbability) {
		p.rounds = max(tp.InputRounds, 1)
		p.inputDrawn = true
	}
}

// drawEnding draws an outcome by the profile's weights; a profile without failures draws
// nothing and completes.
func (s *core) drawEnding(tp *ToolProfile) ending {
	if tp.Failed <= 0 && tp.Error <= 0 {
		return endCompleted
	}
	failed, rpcErr := max(tp.Failed, 0), max(tp.Error, 0)
	completed := tp.Completed
	if completed <= 0 {
		completed = max(1-failed-rpcErr, 0)
	}
	x := s.rand.float64(streamWork) * (completed + failed + rpcErr)
	switch {
	case x < failed:
		return endToolError
	case x < failed+rpcErr:
		return endRPCError
	}
	return endCompleted
}
