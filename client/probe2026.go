package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// statelessNote is the session note of a manifest of 2026-07-28.
const statelessNote = "protocol 2026-07-28 has no sessions: no session id is issued, and the GET stream and DELETE checks do not apply (E30)"

// probeModern is ProbeWith in 2026-07-28: server/discover (supported versions, the Tasks
// extension, serverInfo, instructions; the answer of the era detection when there was one),
// every page of tools/list, and optionally one task (ProbeOptions.CreateTask). No session
// is opened: each request carries its own envelope (E1, E4).
func probeModern(ctx context.Context, t *Target, o ProbeOptions, era Era) (*Manifest, error) {
	s := &modernSession{t: t, version: era.Version}
	var notes []string
	if era.Discover == nil && !era.Pinned {
		// Found modern by a modern error to server/discover (E32): asking again would get
		// the same. The extension is then unknown, and taken as not advertised.
		era.Discover = &mcp.DiscoverResult{}
		notes = append(notes, fmt.Sprintf("server/discover gave no DiscoverResult (%s): the Tasks extension %s is not known to be served (E8, E39)", era.How, mcp.ExtTasks))
	}
	if era.Discover == nil {
		rep, err := s.call(ctx, mcp.OpServerDiscover, nil, mcp.ModernClientCapabilities{})
		if err == nil && rep.Err != nil {
			err = rep.Err
		}
		if err != nil {
			if errors.As(err, new(*TransportError)) {
				return nil, t.connectError(err)
			}
			if era.Pinned { // pinned to an era the target may not serve: say which
				return nil, fmt.Errorf("target %s does not answer %s (server/discover: %w); the protocol was pinned: leave it to detection, or pin %s",
					t.URL, ProtocolModern, err, ProtocolLegacy)
			}
			return nil, fmt.Errorf("target %s: server/discover: %w", t.URL, err)
		}
		d, err := readDiscover(rep.Result)
		if err != nil {
			return nil, fmt.Errorf("target %s: server/discover: %w", t.URL, &ProtocolError{Msg: "no DiscoverResult: " + err.Error()})
		}
		era.Supported, era.Discover, era.ServerInfo = d.Supported, d.Discover, d.ServerInfo
	}
	m := &Manifest{
		Target:            t.URL,
		TakenAt:           time.Now().UTC(),
		ProtocolVersion:   era.Version,
		Era:               ProtocolModern,
		Eras:              era.Eras(),
		EraDetection:      era.How,
		SupportedVersions: era.Supported,
		Instructions:      era.Discover.Instructions,
		Server:            era.ServerInfo,
		Tool:              o.Tool,
		Tasks:             TasksManifest{Extension: era.Discover.Capabilities.DeclaresTasks()},
		Session:           SessionManifest{Stateless: true, Note: statelessNote},
		Notes:             notes,
	}
	tools, err := s.listTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.URL, err)
	}
	for i := range tools {
		ts := "" // the era's tools carry none: the server decides (E40)
		if tools[i].Execution != nil {
			ts = string(tools[i].Execution.TaskSupport)
		}
		m.Tools = append(m.Tools, toolManifest(&tools[i], ts))
	}
	if o.CreateTask {
		m.observeModernTask(ctx, s, o)
	}
	return m, nil
}

// listTools lists every tool in the modern era, following nextCursor page by page as in
// 2025-11-25 (EachPage). Each page must be a complete result (E11-E13).
func (s *modernSession) listTools(ctx context.Context) ([]mcp.Tool, error) {
	return listTools(func(params []byte) (Reply, error) {
		return s.call(ctx, mcp.OpToolsList, params, mcp.ModernClientCapabilities{})
	}, true)
}

// observeModernTask makes one tools/call that declares the Tasks extension (E39): the
// server decides whether it becomes a task (E40). A task's ttlMs and pollIntervalMs are
// recorded (as poll_interval_ms and ttl_ms) and it is cancelled with tasks/cancel, which
// the extension always has (an acknowledgement, not a rollback: E60); a synchronous or an
// input_required answer is noted. Nothing is sent when the server does not advertise the
// extension.
func (m *Manifest) observeModernTask(ctx context.Context, s *modernSession, o ProbeOptions) {
	note := func(format string, args ...any) { m.Notes = append(m.Notes, fmt.Sprintf(format, args...)) }
	if !m.Tasks.Extension {
		note("no task created: server/discover does not advertise the Tasks extension %s (E39)", mcp.ExtTasks)
		return
	}
	var tool *ToolManifest
	for i := range m.Tools {
		tl := &m.Tools[i]
		if (o.Tool != "" && tl.Name == o.Tool) || (o.Tool == "" && tl.TaskSupport != string(mcp.TaskForbidden)) {
			tool = tl
			break
		}
	}
	if tool == nil {
		if o.Tool != "" {
			note("no task created: the target lists no tool %q (tools: %s)", o.Tool, m.toolNames())
		} else {
			note("no task created: the target lists no tool")
		}
		return
	}
	params, why := probeCallParams(o, tool, nil)
	if why != "" {
		note("no task created: %s", why)
		return
	}
	var caps mcp.ModernClientCapabilities
	caps.DeclareTasks()
	rep, err := s.call(ctx, mcp.OpToolsCall, params, caps)
	switch {
	case err != nil:
		note("tools/call of %q declaring %s failed: %v", tool.Name, mcp.ExtTasks, err)
		return
	case rep.Err != nil:
		note("tools/call of %q declaring %s was refused: %s", tool.Name, mcp.ExtTasks, OneLine(rep.Err.Error(), 300))
		return
	}
	r, q, err := mcp.ParseCallToolReply(rep.Result, true)
	if err != nil {
		note("tools/call of %q: %v", tool.Name, &ProtocolError{Msg: err.Error()})
		return
	}
	if q != 0 {
		note("the tools/call reply was read leniently: %s (docs/RULES.md#ext-gaps)", q)
	}
	switch {
	case r.Call != nil:
		note("tools/call of %q declaring %s was answered synchronously (resultType complete): no task created; the server decides (E40)", tool.Name, mcp.ExtTasks)
		return
	case r.Input != nil:
		note("tools/call of %q was answered with input_required (MRTR, E15): no task created; the probe answers no input", tool.Name)
		return
	}
	task := r.Task.Task()
	m.SawTask(&task)
	note("one task of %q was created to observe pollIntervalMs and ttlMs (task %s)", tool.Name, task.TaskID)
	cparams, _ := json.Marshal(map[string]string{"taskId": task.TaskID})
	crep, err := s.call(ctx, mcp.OpTasksCancel, cparams, caps)
	m.noteCancel(err, crep.Err, "the task was cancelled (tasks/cancel is acknowledged, not a rollback: E60)")
}
