package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Manifest is what the target declared before the first call, and the pollInterval and ttl
// it first advertised: it goes into summary.json as "manifest", and `tasksim probe` prints it.
// The JSON names below are a contract (docs/OUTPUTS.md#summary-json, "manifest"): fields may be added, none renamed.
type Manifest struct {
	Target          string             `json:"target"`
	TakenAt         time.Time          `json:"taken_at"`
	ProtocolVersion string             `json:"protocol_version"`
	Server          mcp.Implementation `json:"server"`
	SessionID       bool               `json:"session_id"` // the server issued Mcp-Session-Id (H2)
	Tasks           TasksManifest      `json:"tasks"`
	Tools           []ToolManifest     `json:"tools"`
	Tool            string             `json:"tool"`                        // the tool this run calls
	TaskSupport     string             `json:"tool_task_support,omitempty"` // its taskSupport; omitted in 2026-07-28
	AsTask          bool               `json:"as_task"`                     // whether calls carry a task parameter (2026-07-28: declare the extension)
	Fallback        string             `json:"fallback,omitempty"`

	// Era is the era the manifest describes, by its version: 2025-11-25 (initialize and
	// sessions; ProtocolVersion is then the version negotiated) or 2026-07-28 (stateless,
	// server/discover). Eras lists the eras the target serves as far as the probe learned
	// (server/discover's supportedVersions, 2025-11-25 standing for every session version),
	// the modern one first; EraDetection says how the era was told (docs/RULES.md#e32).
	Era          string   `json:"era"`
	Eras         []string `json:"eras"`
	EraDetection string   `json:"era_detection,omitempty"`
	// EraFallback says why the manifest describes 2025-11-25 although 2026-07-28 was tried
	// first: the target answered as a legacy server (E32), or it serves both eras and has
	// tasks only in 2025-11-25. "" when no fallback was taken.
	EraFallback       string   `json:"era_fallback,omitempty"`
	SupportedVersions []string `json:"supported_versions,omitempty"` // server/discover's, as listed
	// Instructions are the server's instructions (initialize's, or server/discover's).
	Instructions string `json:"instructions,omitempty"`

	mu                sync.Mutex
	PollIntervalMs    *int64 `json:"poll_interval_ms"`     // first pollInterval seen; null if none
	TTLMs             *int64 `json:"ttl_ms"`               // first ttl seen; null if unlimited or none
	PollIntervalFound bool   `json:"poll_interval_found"`  // false: the server advertised none
	FallbackInterval  int64  `json:"fallback_interval_ms"` // what clients use when none is advertised
	seen              bool

	// Session is the evidence of the Streamable HTTP session rules (H2, H6, H9) the probe
	// gathered on its own session.
	Session SessionManifest `json:"session"`
	// Notes say what the probe did not observe, and why (e.g. no task was created, so
	// poll_interval_ms and ttl_ms are null); absent when there is nothing to say.
	Notes []string `json:"notes,omitempty"`
}

// SessionManifest is the evidence of the probe's own session. A status of 0 means the
// request was not made or got no HTTP reply (the note says which).
type SessionManifest struct {
	// Stateless: the manifest is of 2026-07-28, which has no sessions (no initialize, no
	// Mcp-Session-Id): the GET and DELETE checks do not apply (E30), and their fields stay 0.
	Stateless bool `json:"stateless,omitempty"`
	// IDIssued: initialize was answered with an Mcp-Session-Id (H2).
	IDIssued bool `json:"id_issued"`
	// DeleteStatus is the HTTP status of the DELETE that ended the probe's session (H9):
	// 200/202/204 accepted, 405 the server does not let clients end sessions, 404 gone.
	DeleteStatus   int  `json:"delete_status"`
	DeleteAccepted bool `json:"delete_accepted"`
	// GetStatus is the status of a GET with Accept: text/event-stream on the session (H6);
	// GetStreamOffered is true when it was 200 with Content-Type text/event-stream (405 =
	// no stream offered).
	GetStatus        int    `json:"get_status"`
	GetStreamOffered bool   `json:"get_stream_offered"`
	Note             string `json:"note,omitempty"`
}

// TasksManifest is capabilities.tasks as declared (2025-11-25), and whether server/discover
// advertises the Tasks extension (2026-07-28, where the legacy leaves are never declared,
// E37).
type TasksManifest struct {
	Declared  bool `json:"declared"`
	List      bool `json:"list"`
	Cancel    bool `json:"cancel"`
	ToolsCall bool `json:"tools_call"`
	// Extension: server/discover advertises io.modelcontextprotocol/tasks; false in a
	// manifest of 2025-11-25.
	Extension bool `json:"extension"`
}

// ToolManifest is one tool, its taskSupport and the arguments its inputSchema declares.
type ToolManifest struct {
	Name        string   `json:"name"`
	TaskSupport string   `json:"task_support,omitempty"` // "" (omitted) in 2026-07-28, where tools declare none
	Args        []string `json:"args,omitempty"`         // inputSchema.properties, sorted

	schema json.RawMessage // inputSchema as listed, for MinimalArgs
}

// DeclaresArg reports whether the run's tool declares argument name in its inputSchema.
func (m *Manifest) DeclaresArg(name string) bool {
	for _, t := range m.Tools {
		if t.Name == m.Tool {
			return slices.Contains(t.Args, name)
		}
	}
	return false
}

// SawTask records the pollInterval and ttl of the first task created, by the probe or, when
// the probe created none, by the run: loadgen's virtual clients report each task they
// create, and the first one fills the manifest.
func (m *Manifest) SawTask(t *mcp.Task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen {
		return
	}
	m.seen = true
	if t.PollInterval != nil {
		v := int64(*t.PollInterval)
		m.PollIntervalMs, m.PollIntervalFound = &v, true
	}
	if t.TTL != nil {
		v := int64(*t.TTL)
		m.TTLMs = &v
	}
}

// Note adds a note to the manifest (Notes) while a run may be reading it: loadgen says
// there, at the end of a run, how leniently the target's replies were read.
func (m *Manifest) Note(note string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Notes = append(m.Notes, note)
}

// SetFallbackInterval records d as the wait clients use when the server advertises no
// pollInterval (FallbackInterval). The manifest cannot compute it, the poll policy being
// the load engine's: loadgen sets it before a run from its policy's first wait.
func (m *Manifest) SetFallbackInterval(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.FallbackInterval = d.Milliseconds()
}

// FirstPollInterval is the pollInterval of the first task created; 0 if none was advertised
// (or no task was created yet).
func (m *Manifest) FirstPollInterval() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.PollIntervalMs == nil {
		return 0
	}
	return time.Duration(*m.PollIntervalMs) * time.Millisecond
}

// MarshalJSON takes the lock, since tasks may still be updating the first-seen fields.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	type plain Manifest
	return json.Marshal((*plain)(m))
}

// Snapshot is a copy of m taken under its lock, sharing no slice or pointer with it; nil for
// nil. A run's summary holds one (results.Summary.Manifest): the first-seen fields and the
// notes may still change while the run's last tasks end, and the summary must not.
func (m *Manifest) Snapshot() *Manifest {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tools := slices.Clone(m.Tools)
	for i := range tools {
		tools[i].Args = slices.Clone(tools[i].Args)
	}
	return &Manifest{
		Target: m.Target, TakenAt: m.TakenAt, ProtocolVersion: m.ProtocolVersion, Server: m.Server,
		SessionID: m.SessionID, Tasks: m.Tasks, Tools: tools, Tool: m.Tool, TaskSupport: m.TaskSupport,
		AsTask: m.AsTask, Fallback: m.Fallback,
		Era: m.Era, Eras: slices.Clone(m.Eras), EraDetection: m.EraDetection, EraFallback: m.EraFallback,
		SupportedVersions: slices.Clone(m.SupportedVersions), Instructions: m.Instructions,
		PollIntervalMs: clonePtr(m.PollIntervalMs), TTLMs: clonePtr(m.TTLMs), PollIntervalFound: m.PollIntervalFound,
		FallbackInterval: m.FallbackInterval, seen: m.seen,
		Session: m.Session, Notes: slices.Clone(m.Notes),
	}
}

// clonePtr is a pointer to a copy of *p; nil for nil.
func clonePtr(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// CapabilityError says why the target cannot run the tool as a task; a run stops on it
// with exit code 2 unless the scenario declares the sync fallback.
type CapabilityError struct{ Msg string }

func (e *CapabilityError) Error() string { return e.Msg }

// ProbeOptions say what Probe does beyond initialize and tools/list.
type ProbeOptions struct {
	// Tool is the tool the run will call (Manifest.Tool); "" for a probe alone.
	Tool string
	// CreateTask creates one task, to observe the pollInterval and ttl the server grants,
	// then cancels it where tasks/cancel is declared: with Tool when given (none when it is
	// not listed or forbids tasks), else with the first tool that supports tasks; with Args, else the minimal arguments its inputSchema
	// requires (MinimalArgs). Creating work on a real server has effects: off unless asked
	// for. Default false.
	CreateTask bool
	// Args are the arguments of the task CreateTask creates; nil = MinimalArgs.
	Args map[string]any
	// NoGetStream skips the GET stream check (H6). Default false: checked.
	NoGetStream bool
	// Legacy describes the target in 2025-11-25 whatever era it was found to speak (the
	// era found is still recorded: Eras, EraDetection): what a run pinned to 2025-11-25
	// needs. Default false: the era found is described (ProbeWith).
	Legacy bool
}

// sessionCheckTimeout bounds each session check (GET, DELETE): a target that does not
// answer them is reported, not waited for.
const sessionCheckTimeout = 5 * time.Second

// Probe reads the target's capability manifest for tool, the tool a run calls, in
// 2025-11-25 (ProbeOptions.Legacy), as a run pinned to that era needs: see ProbeWith.
// Against a modern-only target it fails as initialize does, with a *ModernOnlyError that
// says why.
func Probe(ctx context.Context, t *Target, tool string) (*Manifest, error) {
	return ProbeWith(ctx, t, ProbeOptions{Tool: tool, Legacy: true})
}

// ProbeWith reads the target's capability manifest. It first tells the target's era
// (Target.Era: server/discover, docs/RULES.md#e32, unless Target.Protocol pins it), then
// describes the era run and sweep will speak (speakModern): 2026-07-28 when the target
// answers it, unless it also serves 2025-11-25 and only there has tasks (a server/discover
// without the Tasks extension and an initialize with capabilities.tasks: mcp-go v1.2.1 is
// one; a target with tasks in neither era is described in 2026-07-28 after that
// initialize); 2025-11-25 otherwise, or whatever the era with ProbeOptions.Legacy.
// Manifest.Eras lists every era found.
//
// In 2025-11-25, on a session of its own: initialize (protocol version, serverInfo,
// capabilities.tasks), every page of tools/list (each tool's taskSupport and declared
// arguments), a GET stream check (H6), optionally one task (ProbeOptions.CreateTask), and
// the DELETE that ends the session (H9). Only a failed detection, initialize or tools/list
// is an error; the session checks and the task are evidence, and their failures are noted
// in the manifest.
func ProbeWith(ctx context.Context, t *Target, o ProbeOptions) (*Manifest, error) {
	era, err := t.Era(ctx)
	if err != nil {
		return nil, err
	}
	if speakModern(era) && !o.Legacy {
		return probeModern(ctx, t, o, era)
	}
	m, err := probeLegacy(ctx, t, o)
	if err != nil {
		return nil, err
	}
	m.Era, m.Eras, m.EraDetection, m.SupportedVersions = ProtocolLegacy, era.Eras(), era.How, era.Supported
	switch {
	case o.Legacy:
	case era.FellBack:
		m.EraFallback = "2026-07-28 was tried first and answered as a legacy server answers (" + era.How + ")"
	case era.Modern() && !m.Tasks.ToolsCall:
		// Tasks in neither era (the go-sdk v1.8.0 stateless is one): nothing is gained in
		// 2025-11-25, so the era found is spoken, with plain calls (decideModern).
		mm, err := probeModern(ctx, t, o, era)
		if err != nil {
			return nil, err
		}
		mm.Notes = append(mm.Notes, fmt.Sprintf("the target serves both eras and has tasks in neither (no %s in server/discover, no capabilities.tasks.requests.tools.call in initialize at %s): spoken in %s",
			mcp.ExtTasks, m.ProtocolVersion, ProtocolModern))
		return mm, nil
	case era.Modern():
		m.EraFallback = fmt.Sprintf("the target serves both eras, and has tasks only in %s: its server/discover does not advertise %s", ProtocolLegacy, mcp.ExtTasks)
	}
	return m, nil
}

// speakModern reports whether a target of era is spoken to in 2026-07-28: pinned to it, or
// found modern and not also serving 2025-11-25 with tasks that the modern era lacks.
func speakModern(era Era) bool {
	switch {
	case !era.Modern():
		return false
	case era.Pinned, era.Discover == nil, !era.ServesLegacy():
		return true
	}
	return era.Discover.Capabilities.DeclaresTasks()
}

// probeLegacy is ProbeWith in 2025-11-25.
func probeLegacy(ctx context.Context, t *Target, o ProbeOptions) (*Manifest, error) {
	s, err := t.Connect(ctx, clientCaps)
	if err != nil {
		return nil, t.connectError(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close(context.WithoutCancel(ctx))
		}
	}()
	init := s.Init()
	m := &Manifest{
		Target:          t.URL,
		TakenAt:         time.Now().UTC(),
		ProtocolVersion: init.ProtocolVersion,
		Server:          init.ServerInfo,
		Instructions:    init.Instructions,
		SessionID:       s.ID() != "",
		Tool:            o.Tool,
		Session:         SessionManifest{IDIssued: s.ID() != ""},
	}
	if tc := init.Capabilities.Tasks; tc != nil {
		m.Tasks = TasksManifest{Declared: true, List: tc.List != nil, Cancel: tc.Cancel != nil, ToolsCall: tc.ToolCallTasks()}
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.URL, err)
	}
	for i := range tools {
		m.Tools = append(m.Tools, toolManifest(&tools[i], string(tools[i].TaskSupport())))
	}
	if o.CreateTask {
		m.observeTask(ctx, s, o)
	}
	var notes []string
	if !o.NoGetStream {
		if n := m.checkGetStream(ctx, s); n != "" {
			notes = append(notes, n)
		}
	}
	closed = true
	if n := m.checkDelete(ctx, s); n != "" {
		notes = append(notes, n)
	}
	m.Session.Note = strings.Join(notes, "; ")
	return m, nil
}

// toolManifest is tool as the manifest lists it, with taskSupport ts: its declared
// arguments (inputSchema.properties, sorted; none without properties) and the schema kept
// for MinimalArgs.
func toolManifest(tool *mcp.Tool, ts string) ToolManifest {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(tool.InputSchema, &schema)
	return ToolManifest{Name: tool.Name, TaskSupport: ts, Args: slices.Sorted(maps.Keys(schema.Properties)), schema: tool.InputSchema}
}

// noteCancel notes how the tasks/cancel of the probe's task went; done says what an
// accepted cancel means in the era.
func (m *Manifest) noteCancel(err error, rpcErr *mcp.Error, done string) {
	switch {
	case err != nil:
		m.Notes = append(m.Notes, fmt.Sprintf("tasks/cancel of the probe's task failed: %v", err))
	case rpcErr != nil:
		m.Notes = append(m.Notes, fmt.Sprintf("tasks/cancel of the probe's task was refused: %v", rpcErr))
	default:
		m.Notes = append(m.Notes, done)
	}
}

// connectError says why initialize failed, in the words an operator needs: the target
// could not be reached; it answered but is no MCP endpoint (a 404, 405 or 501, an HTML
// page, a reply that is not JSON-RPC); it refused the credentials (401, 403: the names of
// the headers sent are given, never their values); or it answered initialize with an error.
func (t *Target) connectError(err error) error {
	var he *HTTPError
	var pe *ProtocolError
	var rpc *mcp.Error
	var ve *VersionError
	if me := t.modernOnlyInit(err); me != nil {
		return me
	}
	switch {
	case errors.As(err, &ve):
		return fmt.Errorf("target %s: %w", t.URL, err)
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		names := slices.Sorted(maps.Keys(t.Header))
		sent := "no extra header was sent"
		if len(names) > 0 {
			sent = "headers sent: " + strings.Join(names, ", ")
		}
		return fmt.Errorf("target %s refused the client's credentials: %w (%s)", t.URL, err, sent)
	case errors.As(err, &he) && notMCPStatus(he.Status), errors.As(err, &pe):
		return fmt.Errorf("target %s is not an MCP endpoint: %w", t.URL, err)
	case errors.As(err, &he):
		return fmt.Errorf("target %s refused initialize: %w", t.URL, err)
	case errors.As(err, &rpc):
		return fmt.Errorf("target %s answered initialize with an error: %w", t.URL, err)
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return fmt.Errorf("cannot reach target %s: %w (the target answered plain HTTP: is it http://?)", t.URL, err)
	}
	return fmt.Errorf("cannot reach target %s: %w", t.URL, err)
}

// ProbeTimedOut says that err ended a probe at its time limit, when it did: "no reply within
// LIMIT (SETBY): err", SETBY naming what sets the limit (a flag); ctx is the probe's context.
// Any other err is returned as it is.
func ProbeTimedOut(ctx context.Context, err error, limit time.Duration, setBy string) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != context.DeadlineExceeded {
		return err
	}
	return fmt.Errorf("no reply within %v, the probe's limit (%s): %w", limit, setBy, err)
}

// modernOnlyInit returns a *ModernOnlyError when err is an initialize refused with -32022
// whose data.supported lists only modern versions: a modern-only server saying so (E35).
func (t *Target) modernOnlyInit(err error) error {
	var he *HTTPError
	var e *mcp.Error
	switch {
	case errors.As(err, &he):
		e = replyError(he)
	case errors.As(err, &e):
	}
	if e == nil {
		return nil
	}
	if code, _ := mcp.CanonicalCode(e.Code); code != mcp.CodeUnsupportedProtocolVersion {
		return nil
	}
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(e.Data, &data) != nil || len(data.Supported) == 0 || !slices.ContainsFunc(data.Supported, mcp.IsModern) ||
		slices.ContainsFunc(data.Supported, mcp.SessionVersion) {
		return nil
	}
	return &ModernOnlyError{URL: t.URL, Evidence: "initialize was refused with -32022, supported " + quoteList(data.Supported)}
}

// notMCPStatus reports whether an HTTP status to an initialize POST says there is no MCP
// endpoint at the URL: nothing there (404, 410), POST not allowed (405), not implemented
// (501).
func notMCPStatus(status int) bool {
	switch status {
	case http.StatusNotFound, http.StatusGone, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	}
	return false
}

// ListTools lists every tool of the server, following nextCursor page by page (EachPage:
// a loop of cursors or more than maxPages pages is an error).
func (s *Session) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	return listTools(func(params []byte) (Reply, error) {
		return s.CallOp(ctx, mcp.OpToolsList, params, nil)
	}, false)
}

// listTools lists every tool through call, page by page (EachPage); in 2026-07-28 (modern)
// each page must be a complete result (E11-E13).
func listTools(call func(params []byte) (Reply, error), modern bool) ([]mcp.Tool, error) {
	var tools []mcp.Tool
	err := EachPage(mcp.OpToolsList, call, func(result json.RawMessage) (bool, error) {
		if modern {
			rt, _, err := mcp.ReadResultType(result)
			switch {
			case err != nil:
				return false, &ProtocolError{Msg: err.Error()}
			case rt != mcp.ResultComplete:
				return false, &ProtocolError{Msg: fmt.Sprintf("tools/list result has resultType %q, want \"complete\" (docs/RULES.md#e13)", rt)}
			}
		}
		var res mcp.ListToolsResult
		if err := json.Unmarshal(result, &res); err != nil {
			return false, &ProtocolError{Msg: err.Error()}
		}
		tools = append(tools, res.Tools...)
		return true, nil
	})
	return tools, err
}

// checkGetStream opens the session's GET stream (H6) and ends it as soon as its headers
// arrive. It returns a note when the check got no HTTP reply.
func (m *Manifest) checkGetStream(ctx context.Context, s *Session) string {
	if s.id == "" {
		return "no GET stream check: the server issued no session id"
	}
	ctx, cancel := context.WithTimeout(ctx, sessionCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.t.URL, nil)
	if err != nil {
		return "GET stream check: " + err.Error()
	}
	s.header(req)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.t.Client.Do(req)
	if err != nil {
		return "GET stream check got no reply: " + (&TransportError{Op: "GET", Err: err}).Error()
	}
	cancel() // a stream stays open: end it before reading anything
	resp.Body.Close()
	m.Session.GetStatus = resp.StatusCode
	m.Session.GetStreamOffered = resp.StatusCode == http.StatusOK &&
		strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	return ""
}

// checkDelete ends the probe's session with DELETE (H9) and records the status.
func (m *Manifest) checkDelete(ctx context.Context, s *Session) string {
	if s.id == "" {
		return "no DELETE: the server issued no session id"
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sessionCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.t.URL, nil)
	if err != nil {
		return "DELETE: " + err.Error()
	}
	s.header(req)
	resp, err := s.t.Client.Do(req)
	if err != nil {
		return "DELETE got no reply: " + (&TransportError{Op: "DELETE", Err: err}).Error()
	}
	drain(resp.Body)
	m.Session.DeleteStatus = resp.StatusCode
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		m.Session.DeleteAccepted = true
	}
	return ""
}

// probeCallParams are the params of the probe's tools/call of tool: o.Args, else the minimal
// arguments of its inputSchema, with the members of extra (the era's task request) added.
// why says, when there are none, why no task can be created.
func probeCallParams(o ProbeOptions, tool *ToolManifest, extra map[string]any) (params []byte, why string) {
	args := o.Args
	if args == nil {
		var err error
		if args, err = MinimalArgs(tool.schema); err != nil {
			return nil, fmt.Sprintf("cannot build arguments for %q from its inputSchema: %v (give the tool and its arguments)", tool.Name, err)
		}
	}
	call := map[string]any{"name": tool.Name, "arguments": args}
	maps.Copy(call, extra)
	params, err := json.Marshal(call)
	if err != nil {
		return nil, fmt.Sprintf("arguments for %q: %v", tool.Name, err)
	}
	return params, ""
}

// observeTask creates one task with the first tool whose taskSupport allows it, records
// the pollInterval and ttl it was granted, and cancels it where tasks/cancel is declared.
// Nothing is sent when the target cannot take a task-augmented call (R6, R7, and a
// protocol without Tasks); every outcome is noted.
func (m *Manifest) observeTask(ctx context.Context, s *Session, o ProbeOptions) {
	note := func(format string, args ...any) { m.Notes = append(m.Notes, fmt.Sprintf(format, args...)) }
	if !mcp.HasTasks(m.ProtocolVersion) || !m.Tasks.ToolsCall {
		note("no task created: the target does not declare capabilities.tasks.requests.tools.call at protocol %s (R6)", m.ProtocolVersion)
		return
	}
	tool, why := m.taskTool(o.Tool)
	if tool == nil {
		note("no task created: %s", why)
		return
	}
	params, why := probeCallParams(o, tool, map[string]any{"task": map[string]any{}})
	if why != "" {
		note("no task created: %s", why)
		return
	}
	rep, err := s.CallOp(ctx, mcp.OpToolsCall, params, nil)
	switch {
	case err != nil:
		note("task-augmented tools/call of %q failed: %v", tool.Name, err)
		return
	case rep.Err != nil:
		note("task-augmented tools/call of %q was refused: %s", tool.Name, OneLine(rep.Err.Error(), 300))
		return
	}
	task, plain, err := s.t.dialect().ParseCallReply(rep.Result)
	switch {
	case err != nil:
		note("task-augmented tools/call of %q: %v", tool.Name, &ProtocolError{Msg: err.Error()})
		return
	case plain != nil:
		note("task-augmented tools/call of %q was answered synchronously: no task created (the server ignored task, R4)", tool.Name)
		return
	}
	m.SawTask(task)
	note("one task of %q was created to observe pollInterval and ttl (task %s)", tool.Name, task.TaskID)
	if !m.Tasks.Cancel {
		note("the task was left to run: the target does not declare tasks.cancel")
		return
	}
	crep, err := s.CallOp(ctx, mcp.OpTasksCancel, TaskIDParams(task.TaskID), nil)
	m.noteCancel(err, crep.Err, "the task was cancelled (a cancel is a request, not a rollback)")
}

// taskTool is the tool a probe's task is created with: name when given (nil, with why, when
// it is not listed or forbids tasks: the operator asked for that tool, so no other runs in
// its place), else the first tool that supports tasks.
func (m *Manifest) taskTool(name string) (*ToolManifest, string) {
	supports := func(t *ToolManifest) bool {
		return t.TaskSupport == string(mcp.TaskOptional) || t.TaskSupport == string(mcp.TaskRequired)
	}
	for i := range m.Tools {
		t := &m.Tools[i]
		switch {
		case name != "" && t.Name == name && supports(t):
			return t, ""
		case name != "" && t.Name == name:
			return nil, fmt.Sprintf("tool %q does not support tasks (taskSupport %q, R7)", name, t.TaskSupport)
		case name == "" && supports(t):
			return t, ""
		}
	}
	if name != "" {
		return nil, fmt.Sprintf("the target lists no tool %q (tools: %s)", name, m.toolNames())
	}
	return nil, "no tool supports tasks (taskSupport optional or required, R7)"
}

// Fallback is what a run does when the target cannot run the tool as a task (R6, R7): the
// choice Decide applies to the manifest.
type Fallback uint8

const (
	// FallbackRefuse stops the run with a usage error naming the missing capability.
	FallbackRefuse Fallback = iota
	// FallbackSync calls the tool without task augmentation.
	FallbackSync
)

// Decide sets AsTask from the manifest, the tool's taskSupport and the fallback: a task
// parameter is sent only when TasksSupported. Otherwise the fallback decides; with
// FallbackRefuse the result is a *CapabilityError naming what is missing. A required tool
// is never called synchronously (R9: it must be task-augmented, and R10 lets the server
// refuse it without).
func (m *Manifest) Decide(fb Fallback) error {
	m.AsTask, m.Fallback = false, ""
	ok, why := m.TasksSupported()
	if m.Era == ProtocolModern {
		return m.decideModern(fb, ok, why)
	}
	if m.TaskSupport == "" {
		return &CapabilityError{Msg: fmt.Sprintf("the target has no tool %q (tools: %s)", m.Tool, m.toolNames())}
	}
	if ok {
		m.AsTask = true
		return nil
	}
	if fb == FallbackSync && m.TaskSupport != string(mcp.TaskRequired) {
		m.Fallback = "sync: " + why
		return nil
	}
	if m.TaskSupport == string(mcp.TaskRequired) {
		return &CapabilityError{Msg: fmt.Sprintf("%s; tool %q requires a task (taskSupport required, R9) and is never turned into a synchronous call", why, m.Tool)}
	}
	return &CapabilityError{Msg: why + "; no task parameter will be sent. Declare fallback: sync to call it synchronously"}
}

// TasksSupported reports whether the target can take a task-augmented call of the run's
// tool, and when it cannot, what is missing: the session must have negotiated a protocol
// with Tasks (2025-11-25; a 2025-06-18 peer has none), the server must declare
// tasks.requests.tools.call (R6), and the tool's taskSupport must not be forbidden or
// absent (R7). It sets TaskSupport from Tools ("" when the target has no such tool).
func (m *Manifest) TasksSupported() (bool, string) {
	m.TaskSupport = ""
	listed := false
	for _, t := range m.Tools {
		if t.Name == m.Tool {
			m.TaskSupport, listed = t.TaskSupport, true
		}
	}
	if m.Era == ProtocolModern {
		// 2026-07-28: the server decides per call (E40); what the client can do is declare
		// the extension, which the server must advertise (E39).
		switch {
		case !listed:
			return false, fmt.Sprintf("the target has no tool %q", m.Tool)
		case !m.Tasks.Extension:
			return false, fmt.Sprintf("server/discover does not advertise the Tasks extension %s (E39)", mcp.ExtTasks)
		}
		return true, ""
	}
	switch {
	case m.TaskSupport == "":
		return false, fmt.Sprintf("the target has no tool %q", m.Tool)
	case !mcp.HasTasks(m.ProtocolVersion):
		return false, fmt.Sprintf("the target negotiated protocol %s, which has no Tasks: no capabilities.tasks.requests.tools.call (R6)", m.ProtocolVersion)
	case !m.Tasks.ToolsCall:
		return false, "the target does not declare capabilities.tasks.requests.tools.call (R6)"
	case m.TaskSupport == string(mcp.TaskForbidden):
		return false, fmt.Sprintf("tool %q forbids task-augmented calls (taskSupport forbidden, R7)", m.Tool)
	}
	return true, ""
}

// decideModern is Decide in 2026-07-28, given TasksSupported's answer: the extension is
// declared on every call when the server advertises it (AsTask: the server then decides,
// E40); otherwise the calls are plain with FallbackSync, and refused before the run without.
func (m *Manifest) decideModern(fb Fallback, ok bool, why string) error {
	switch {
	case !slices.ContainsFunc(m.Tools, func(t ToolManifest) bool { return t.Name == m.Tool }):
		return &CapabilityError{Msg: fmt.Sprintf("the target has no tool %q (tools: %s)", m.Tool, m.toolNames())}
	case ok:
		m.AsTask = true
	case fb == FallbackSync:
		m.Fallback = "sync: " + why
	default:
		return &CapabilityError{Msg: why + "; the extension will not be declared. Declare fallback: sync to call the tool with plain tools/call"}
	}
	return nil
}

func (m *Manifest) toolNames() string {
	s := ""
	for i, t := range m.Tools {
		if i > 0 {
			s += ", "
		}
		s += t.Name
	}
	if s == "" {
		return "none"
	}
	return s
}
