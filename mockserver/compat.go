package mockserver

import (
	"fmt"
	"sync/atomic"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Compatibility modes: the server plays a peer without Tasks, so that a run can
// prove its client falls back without sending a task parameter.
//
//	Config.NoTasks        protocol 2025-11-25 without the tasks capability: initialize
//	                      declares no capabilities.tasks, tools/list declares no
//	                      execution.taskSupport, tasks/* are unknown methods (-32601).
//	Config.Protocol       the newest version the server speaks, e.g. 2025-06-18: a client
//	                      asking for a newer one gets it instead (H1); a version without
//	                      Tasks has no tasks capability either (mcp.HasTasks).
//
// In both modes a tools/call that carries a task parameter is run synchronously and its
// task ignored (R4: a receiver processes a request of a type whose task capability it did
// not declare normally); each such call is counted (Server.TaskParamsIgnored), since a
// client that sends one breaks R6.

// compatCounters count what a compatibility mode saw.
type compatCounters struct {
	ignoredTasks atomic.Uint64 // tools/call with a task parameter on a session without Tasks
}

// compatProblems reports a Protocol the server cannot speak.
func (c Config) compatProblems() []error {
	if c.Protocol != "" && !mcp.SessionVersion(c.Protocol) {
		return []error{fmt.Errorf("protocol %q is not a version the server speaks (%s, %s, %s, %s)", c.Protocol,
			mcp.Version20251125, mcp.Version20250618, mcp.Version20250326, mcp.Version20241105)}
	}
	return nil
}

// newestVersion is the newest protocol version the server speaks.
func (s *core) newestVersion() string {
	if s.cfg.Protocol != "" {
		return s.cfg.Protocol
	}
	return mcp.Version20251125
}

// negotiate returns the protocol version initialize answers with (H1): the version the
// client asked for when the server speaks it (a known version no newer than the server's
// newest), else the server's newest. Versions are dates, so they order as strings.
func (f *sessionFront) negotiate(requested string) string {
	newest := f.srv.newestVersion()
	if mcp.SessionVersion(requested) && requested <= newest {
		return mcp.InternVersion(requested) // not the copy decoded from the request
	}
	return newest
}

// tasksOn reports whether the server declares the tasks capability at all (on sessions of
// a version with Tasks).
func (s *core) tasksOn() bool { return !s.cfg.NoTasks && mcp.HasTasks(s.newestVersion()) }

// TaskParamsIgnored is the number of tools/call requests that carried a task parameter on
// a session without the tasks capability: the server ran them synchronously (R4), and the
// client that sent them broke R6.
func (s *Server) TaskParamsIgnored() uint64 { return s.compat.ignoredTasks.Load() }

// toolsWithoutTasks returns tools without execution.taskSupport, as a server without the
// tasks capability (or one that predates it) lists them.
func toolsWithoutTasks(tools []mcp.Tool) []mcp.Tool {
	for i := range tools {
		tools[i].Execution = nil
	}
	return tools
}
