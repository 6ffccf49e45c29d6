package loadgen

import "github.com/tasksim/tasksim/internal/mcp"

// StatelessSession is the requester of a run's virtual clients in 2026-07-28 on t, for the
// external tests: the envelope declares the Tasks extension and form elicitation, as a run
// that creates tasks does (Engine.speakModern).
func StatelessSession(t *Target) (*Session, error) {
	caps := mcp.ModernClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: mcp.On()}}
	caps.DeclareTasks()
	env, err := t.newModernEnv(ProtocolModern, caps)
	if err != nil {
		return nil, err
	}
	return t.stateless(env), nil
}
