package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/gcpolicy"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

func summaryTarget(sc *scenarios.Scenario) string {
	if sc.Target == "" {
		return "embedded"
	}
	return sc.Target
}

// advisedInterval is the poll interval the trust check compares schedule lag with.
func advisedInterval(m *client.Manifest, cfg *loadgen.Config) time.Duration {
	if cfg.Poll.Kind == loadgen.PollServer {
		if d := m.FirstPollInterval(); d > 0 {
			return d
		}
	}
	if cfg.Poll.Interval > 0 {
		return cfg.Poll.Interval
	}
	return time.Second
}

// serverStats is the summary's "server" object: the embedded server's figures at the end,
// with the highest levels the collector sampled (peaks); nil for an external target.
// Requests holds every request method (zeros included; "unknown", bodies the server could
// not decode, only when there were some); Rejections and Faults only what was seen, {} when
// nothing was.
func serverStats(srv *mockserver.Server, peaks *serverPeaks) *results.ServerStats {
	if srv == nil {
		return nil
	}
	st := srv.Stats()
	requests := serverRequests(st.Requests)
	faults := map[string]uint64{}
	st.Faults.Each(func(kind string, n uint64) {
		if n > 0 {
			faults[kind] = n
		}
	})
	rejections := map[string]uint64{}
	st.Rejections.Each(func(code int, n uint64) {
		if n == 0 {
			return
		}
		k := "other"
		if code != 0 {
			k = strconv.Itoa(code)
		}
		rejections[k] = n
	})
	return &results.ServerStats{
		TasksCreated:     st.TasksCreated,
		RetainedTasks:    st.TasksLive,
		ExpiredTasks:     st.TasksExpired,
		OrphanedTasks:    st.OrphanedTasks,
		MaxCleanupLagMS:  float64(st.MaxCleanupLag.Microseconds()) / 1000,
		DomainEffects:    st.Effects,
		DuplicateEffects: st.DuplicateEffects,
		Sessions:         st.Sessions,

		// Backpressure: the executor (levels at the end and the highest sampled), creates
		// refused because the server was full, rate-limit 429s.
		TasksActive:    st.TasksActive,
		TasksActiveMax: max(peaks.tasksActive.Load(), st.TasksActive),
		QueueDepth:     st.QueueDepth,
		QueueDepthMax:  max(peaks.queueDepth.Load(), st.QueueDepth),
		Overloaded:     st.Overloaded,
		Refusals:       st.Refusals.Total(),
		RefusalsByCause: results.ServerRefusals{MaxTasks: st.Refusals.MaxTasks,
			MaxTasksPerTenant: st.Refusals.MaxTasksPerTenant, Executor: st.Refusals.Executor},
		RateLimited: st.RateLimited,

		// The downstream system of record: levels at the end (their per-second samples are
		// the downstream_* gauges), rejections and failures.
		DownstreamInFlight: st.DownstreamInFlight,
		DownstreamQueue:    st.DownstreamQueueDepth,
		DownstreamRejected: st.DownstreamRejections,
		DownstreamFailures: st.DownstreamFailures,
		EffectsAfterCancel: st.EffectsAfterCancel,
		Ledger: results.ServerLedger{Operations: st.Ledger.Operations, Applied: st.Ledger.Applied,
			Failed: st.Ledger.Failed, Rejected: st.Ledger.Rejected, Duplicates: st.Ledger.Duplicates,
			AfterCancel: st.Ledger.AfterCancel},

		Requests:   requests,
		Rejections: rejections,

		// Idempotent creates and the faults that took effect.
		IdempotentReplays: st.IdempotentReplays,
		IdempotentExpired: st.IdempotentExpired,
		Faults:            faults,
	}
}

// serverRequests is the server object's "requests": the counts by request method and outcome
// (every outcome, zeros included), for every method a client sends the MCP endpoint;
// "unknown" (bodies the server could not decode) only when there were some.
func serverRequests(counts mockserver.RequestCounts) map[string]map[string]uint64 {
	requests := map[string]map[string]uint64{}
	for op := range mcp.NumOps {
		switch op {
		case mcp.OpInitialized, mcp.OpTaskStatus, mcp.OpElicit, mcp.OpCancelled,
			mcp.OpSubscriptionsAcknowledged, mcp.OpDelete:
			continue // notifications, server-to-client requests, DELETE: never counted here
		case mcp.OpUnknown:
			if counts.Total(op) == 0 {
				continue
			}
		}
		byOutcome := make(map[string]uint64, mockserver.NumOutcomes)
		for o := range mockserver.NumOutcomes {
			byOutcome[o.String()] = counts[op][o]
		}
		requests[op.MetricName()] = byOutcome
	}
	return requests
}

func duplicateEffects(srv *mockserver.Server) int64 {
	if srv == nil {
		return -1
	}
	return int64(srv.Stats().DuplicateEffects)
}

// ledgerWindow is the embedded server's ledger window; 0 without one.
func ledgerWindow(srv *mockserver.Server) time.Duration {
	if srv == nil {
		return 0
	}
	return srv.Stats().Ledger.Window
}

// clientFindings is the summary's "client" object: creates refused, by JSON-RPC code
// (negative keys) or HTTP status, and the cleanup_lag probes that measured nothing; nil
// when there is neither.
func clientFindings(eng *loadgen.Engine) *results.Client {
	var out results.Client
	if ref := eng.Refusals(); len(ref) > 0 {
		out.CreatesRefused = make(map[string]int64, len(ref))
		for k, n := range ref {
			out.CreatesRefused[strconv.Itoa(k)] = n
		}
	}
	if cp := eng.CleanupProbes(); cp != (loadgen.CleanupProbeStats{}) {
		// cleanup_lag probes that measured nothing, and why: cut by the run's end (the ttl
		// outlasts the grace period), or blind (tasks bound to the session that made them).
		out.CleanupProbesUnmeasured = &results.CleanupProbes{Cut: cp.Cut, Blind: cp.Blind, Failed: cp.Failed, TimedOut: cp.TimedOut}
	}
	if out.CreatesRefused == nil && out.CleanupProbesUnmeasured == nil {
		return nil
	}
	return &out
}

// summarize builds the run's summary from what the engine, the recorder, the collector and
// the embedded server (nil for a real target) measured.
func summarize(r *runRequest, srv *mockserver.Server, eng *loadgen.Engine, rec *metrics.Recorder, col *collector,
	interrupted bool, events *metrics.Events) *results.Summary {
	sc, manifest := r.sc, r.manifest
	unknown, sample := eng.Unknown()
	lost, lostIDs := eng.LostAfterReconnect()
	var unknownSample any
	if sample = append(append(sample, eng.TasksLost()...), eng.ResultsLost()...); len(sample) > 0 {
		unknownSample = sample // the reconciliation list: unknown outcomes, lost tasks, then lost results
	}
	second, afterCancel := int64(-1), int64(-1)
	if srv != nil {
		st := srv.Stats()
		second = int64(st.IdempotentReplays + st.IdempotentExpired + st.Faults.NonIdempotent)
		afterCancel = int64(st.EffectsAfterCancel)
	}
	violations := eng.Violations()
	if violations == nil {
		violations = []loadgen.ViolationEvidence{} // a sample of none is [], not null
	}
	var lostSample any
	if len(lostIDs) > 0 {
		lostSample = lostIDs
	}
	return results.Build(results.RunInfo{
		FaultsOn:                 sc.Faults.On(),
		Faults:                   events.Counts(),
		SecondCreates:            second,
		EffectsAfterCancel:       afterCancel,
		Unknown:                  unknown,
		UnknownSample:            unknownSample,
		LostAfterReconnect:       lost,
		UnknownCreated:           eng.UnknownCreated(),
		Security:                 securityInfo(eng),
		Version:                  Version,
		Scenario:                 sc.Name,
		Config:                   results.NewRunConfig(sc, r.opts.Shard),
		Seed:                     sc.Seed,
		Protocol:                 manifest.ProtocolVersion,
		Target:                   summaryTarget(sc),
		TLSUnverified:            tlsUnverified(sc),
		StartedAt:                r.start.UTC(),
		Duration:                 time.Since(r.start),
		Manifest:                 manifest.Snapshot(),
		Runtime:                  r.runtimeInfo(),
		Server:                   results.Server{Run: serverStats(srv, &col.peaks)},
		PollInterval:             advisedInterval(manifest, r.cfg),
		Interrupted:              interrupted,
		InvalidTransitionSample:  violations,
		LostAfterReconnectSample: lostSample,
		Client:                   clientFindings(eng),
		DuplicateEffects:         duplicateEffects(srv),
		DuplicateWindow:          ledgerWindow(srv),
		Thresholds:               sc.Thresholds,
		ErrorBudget:              errorBudget(sc),
		SLOs:                     defaultSLOs(sc, manifest.FirstPollInterval()),
		Errors:                   errorKinds(eng, r.secrets.String),
		Compat:                   compatInfo(sc, manifest, srv),
		Rollback:                 r.rollbackInfo(eng, srv),
		Windows:                  col.tally,
		Contract:                 r.contract,
	}, rec.Total(), nil)
}

// runtimeInfo is the process's runtime as summary.json records it: the settings in effect,
// and who chose them (Options.GCSetBy).
func (r *runRequest) runtimeInfo() results.Runtimes {
	p := gcpolicy.Current()
	if p.SetBy = r.opts.GCSetBy; p.SetBy == "" {
		p.SetBy = "embedding process"
	}
	return results.Runtimes{Run: &results.Runtime{Go: p.Go, GOMAXPROCS: p.GOMAXPROCS, GOGC: p.GOGC,
		MemoryLimit: p.MemoryLimit, SetBy: p.SetBy, MaxHeadroom: r.opts.GCMaxHeadroom,
		MaxConns: r.conns.MaxConns, SourceAddresses: r.conns.SourceAddresses, SourceAddressesAuto: r.conns.SourceAddressesAuto}}
}

// errorKinds are the kinds of failed request the run met, the most frequent first, their
// messages redacted: a target may echo a token back in an error.
func errorKinds(eng *loadgen.Engine, redact func(string) string) []results.ErrorKind {
	samples := eng.ErrorSamples()
	out := make([]results.ErrorKind, 0, min(len(samples), results.MaxErrorKinds))
	for _, e := range samples[:min(len(samples), results.MaxErrorKinds)] {
		out = append(out, results.ErrorKind{Method: e.Method, Outcome: e.Outcome, Code: e.Code, Status: e.Status,
			Count: e.Count, Message: redact(e.Message)})
	}
	return out
}

// scanOutputs scans the run's outputs for its planted secrets and tokens
// (loadgen.Engine.ScanOutput): the text report, the files out is about to write, and every
// other file of the run directory. It returns how many it found.
func scanOutputs(eng *loadgen.Engine, dir string, text []byte, out *results.Rendered) int {
	n := eng.ScanOutput("stdout", text)
	rendered := []struct {
		name string
		b    []byte
	}{{results.SummaryJSONFile, out.JSON}, {results.SummaryCSVFile, out.CSV}, {results.ReportFile, out.Report}}
	for _, f := range rendered {
		n += eng.ScanOutput(f.name, f.b)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return n
	}
	for _, de := range entries {
		switch de.Name() {
		case results.SummaryJSONFile, results.SummaryCSVFile, results.ReportFile:
			continue // about to be written: scanned as rendered
		}
		if !de.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			continue
		}
		n += eng.ScanOutput(de.Name(), b)
	}
	return n
}

// securityInfo is the hard gate's view of the probes and the detector; nil when neither
// ran.
func securityInfo(eng *loadgen.Engine) *results.Security {
	r := eng.Security()
	if !r.Probes && !r.Canaries && len(r.Secrets) == 0 && len(r.Injections) == 0 && len(r.Leaks) == 0 {
		return nil
	}
	s := &results.Security{Probes: r.Probes, ProbesSent: r.ProbesSent, Inconclusive: r.Inconclusive,
		Leaks: r.Leaks, Touched: r.Touched, Canaries: r.Canaries, Secrets: r.Secrets, Injections: r.Injections}
	if len(r.LeakSample) > 0 {
		s.LeakSample = r.LeakSample
	}
	if len(r.SecretSample) > 0 {
		s.SecretSample = r.SecretSample
	}
	return s
}

// compatInfo is the input of the compatibility gate: the manifest's tasks leaves
// for the run's tool, what the client decided (Decide), and, on the embedded server, how
// many task parameters it received on sessions without the capability (-1 elsewhere).
func compatInfo(sc *scenarios.Scenario, m *client.Manifest, srv *mockserver.Server) *results.Compat {
	if m == nil {
		return nil
	}
	supported, why := m.TasksSupported()
	c := &results.Compat{
		Protocol:          m.ProtocolVersion,
		Era:               m.Era,
		EraFallback:       m.EraFallback,
		TasksDeclared:     m.Tasks.Declared || m.Tasks.Extension,
		List:              m.Tasks.List,
		Cancel:            m.Tasks.Cancel,
		ToolsCall:         m.Tasks.ToolsCall,
		Tool:              m.Tool,
		TaskSupport:       m.TaskSupport,
		Supported:         supported,
		Why:               why,
		AsTask:            m.AsTask,
		Fallback:          string(sc.Fallback),
		Taken:             m.Fallback,
		TaskParamsIgnored: -1,
	}
	if srv != nil {
		c.TaskParamsIgnored = int64(srv.TaskParamsIgnored())
	}
	if sc.ExpectManifest != "" {
		c.Pin = PinPath(sc)
		if pin, err := client.ReadPin(c.Pin); err == nil { // Validate read it before the run
			if sc.TaskTTL > 0 {
				// The run asks for a ttl, and is granted one for that request: not what the
				// pin saw granted to a call that asked for none (probe --create-task).
				pin.Allow["ttl_ms"] = client.Allowance{Any: true}
			}
			for _, d := range pin.Check(m) {
				c.Drift = append(c.Drift, results.ManifestDrift{Field: d.Field, Pinned: d.Pinned, Now: d.Now})
			}
		} else {
			c.Drift = []results.ManifestDrift{{Field: "pin", Pinned: c.Pin, Now: err.Error()}}
		}
	}
	return c
}

// PinPath is the pin file sc's expect_manifest names: as written when absolute, else from
// the scenario file's directory (the working directory for a built-in scenario).
func PinPath(sc *scenarios.Scenario) string {
	p := sc.ExpectManifest
	if p == "" || filepath.IsAbs(p) || sc.Source == "" || strings.HasPrefix(sc.Source, "builtin:") {
		return p
	}
	return filepath.Join(filepath.Dir(sc.Source), p)
}
