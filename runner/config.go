package runner

import (
	"cmp"
	"maps"
	"runtime"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// ServerConfig maps the scenario's server section onto the mock server, knob for knob: the
// embedded server of a run, and `tasksim serve`. Seed is server.seed, or the scenario's seed when that is 0.
func ServerConfig(sc *scenarios.Scenario) mockserver.Config {
	s := sc.Server
	cfg := mockserver.Config{
		PollInterval:        time.Duration(s.PollInterval),
		DefaultTTL:          time.Duration(s.TTL),
		MaxTTL:              time.Duration(s.MaxTTL),
		UnlimitedTTL:        s.NullTTL,
		ReaperInterval:      time.Duration(s.ReaperInterval),
		LedgerWindow:        time.Duration(s.Ledger.Window),
		ListPageSize:        s.ListPageSize,
		StatusNotifications: s.StatusNotifications,
		SSERetry:            time.Duration(s.SSERetry),
		ServerVersion:       Version,
		Seed:                cmp.Or(s.Seed, sc.Seed),
		Latency:             maps.Clone(s.Latency),
		Stalls: mockserver.Stalls{
			Probability: s.Stalls.Probability,
			Duration:    time.Duration(s.Stalls.Duration),
			Every:       time.Duration(s.Stalls.Every),
			Window:      time.Duration(s.Stalls.Window),
		},
		Poll: mockserver.PollPolicy{
			Kind:    string(s.PollPolicy.Kind),
			Signal:  string(s.PollPolicy.Signal),
			Base:    time.Duration(s.PollPolicy.Base),
			PerUnit: time.Duration(s.PollPolicy.PerUnit),
			Max:     time.Duration(s.PollPolicy.Max),
		},
		Backpressure: backpressureConfig(s.Backpressure),
		Downstream:   downstreamConfig(s.Downstream),
		Faults:       sc.Faults.Server,
		NoTasks:      !s.Tasks,
		Protocol:     s.Protocol,
		Protocols:    mockserver.Protocols(s.Protocols),
	}
	if s.Protocols == "" && sc.Protocol == client.ProtocolModern {
		cfg.Protocols = mockserver.ProtocolsBoth // clients pinned to 2026-07-28 need it served
	}
	sec := sc.Security
	cfg.Inject = sec.Inject
	cfg.Insecure = insecure(sec)
	cfg.KnownBad = knownBad(s)
	for _, r := range sec.Revoke {
		cfg.Revocations = append(cfg.Revocations, mockserver.Revocation{Tenant: r.Tenant,
			At: time.Duration(r.At), Scope: mockserver.RevokeScope(r.Scope)})
	}
	if len(s.Tokens) > 0 {
		cfg.Tokens = map[string]string{}
		for tenant, tok := range s.Tokens {
			cfg.Tokens[tok.Reveal()] = tenant
		}
	}
	if len(s.Tools) > 0 {
		cfg.Tools = map[string]mockserver.ToolProfile{}
		for name, t := range s.Tools {
			cfg.Tools[name] = mockserver.ToolProfile{
				Duration:         t.Duration,
				Completed:        t.Outcomes.Completed,
				Failed:           t.Outcomes.Failed,
				Error:            t.Outcomes.Error,
				InputProbability: t.Input.Probability,
				InputRounds:      t.Input.Rounds,
			}
		}
	}
	if len(s.PollPolicy.PerTool) > 0 {
		cfg.Poll.PerTool = map[string]time.Duration{}
		for name, d := range s.PollPolicy.PerTool {
			cfg.Poll.PerTool[name] = time.Duration(d)
		}
	}
	for _, w := range s.Downstream.Stall.Windows {
		cfg.Downstream.StallWindows = append(cfg.Downstream.StallWindows,
			mockserver.Window{Start: time.Duration(w.Start), Duration: time.Duration(w.Duration)})
	}
	return cfg
}

// backpressureConfig maps server.backpressure onto the mock server's executor and rate limits.
func backpressureConfig(bp scenarios.Backpressure) mockserver.Backpressure {
	return mockserver.Backpressure{
		MaxTasks:            bp.MaxTasks,
		MaxTasksPerTenant:   bp.MaxTasksPerTenant,
		Workers:             bp.Workers,
		Queue:               bp.Queue,
		WhenFull:            string(bp.WhenFull),
		RetryAfter:          time.Duration(bp.RetryAfter),
		RaisedPollInterval:  time.Duration(bp.RaisedPollInterval),
		GetRatePerClient:    bp.RateLimits.GetPerClient.PerSecond(),
		GetRatePerTenant:    bp.RateLimits.GetPerTenant.PerSecond(),
		CreateRatePerClient: bp.RateLimits.CreatePerClient.PerSecond(),
		CreateRatePerTenant: bp.RateLimits.CreatePerTenant.PerSecond(),
		Burst:               bp.RateLimits.Burst,
	}
}

// downstreamConfig maps server.downstream onto the mock server's system of record (its
// stall windows are added by ServerConfig).
func downstreamConfig(ds scenarios.Downstream) mockserver.Downstream {
	return mockserver.Downstream{
		Capacity:         ds.Capacity,
		ServiceTime:      ds.ServiceTime,
		QueueLimit:       ds.QueueLimit,
		FailureRate:      ds.FailureRate,
		StallProbability: ds.Stall.Probability,
		StallDuration:    time.Duration(ds.Stall.Duration),
	}
}

// knownBad maps the 2025-11-25 modes of server.known_bad onto the mock server
// (mockserver/knownbad.go), and the 2026-07-28 ones through knownBad2026.
func knownBad(s scenarios.Server) mockserver.KnownBad {
	return mockserver.KnownBad{
		BlockingGet:        s.KnownBadOn(scenarios.KnownBadBlockingGet),
		NoPollInterval:     s.KnownBadOn(scenarios.KnownBadNoPollInterval),
		MissingFields:      s.KnownBadOn(scenarios.KnownBadMissingFields),
		CancelTerminalOK:   s.KnownBadOn(scenarios.KnownBadCancelTerminalOK),
		CancelNotFinal:     s.KnownBadOn(scenarios.KnownBadCancelNotFinal),
		EarlyResult:        s.KnownBadOn(scenarios.KnownBadEarlyResult),
		NoRelatedMeta:      s.KnownBadOn(scenarios.KnownBadNoRelatedMeta),
		IsErrorCompleted:   s.KnownBadOn(scenarios.KnownBadIsErrorCompleted),
		ListWithoutAuth:    s.KnownBadOn(scenarios.KnownBadListWithoutAuth),
		ListTruncated:      s.KnownBadOn(scenarios.KnownBadListTruncated),
		WrongErrorCodes:    s.KnownBadOn(scenarios.KnownBadWrongErrorCodes),
		NoTaskSupportCheck: s.KnownBadOn(scenarios.KnownBadNoTaskSupportCheck),
		NeverExpire:        s.KnownBadOn(scenarios.KnownBadNeverExpire),
		LostSession400:     s.KnownBadOn(scenarios.KnownBadLostSession400),
		Sessionless:        s.KnownBadOn(scenarios.KnownBadSessionless),
		AnyVersion:         s.KnownBadOn(scenarios.KnownBadAnyVersion),
		InputNoMeta:        s.KnownBadOn(scenarios.KnownBadInputNoMeta),
		IgnoreTaskParam:    s.KnownBadOn(scenarios.KnownBadIgnoreTaskParam),
		RefuseTaskParam:    s.KnownBadOn(scenarios.KnownBadRefuseTaskParam),
		SelfCancel:         s.KnownBadOn(scenarios.KnownBadSelfCancel),
		MissingSession404:  s.KnownBadOn(scenarios.KnownBadMissingSession404),
		BooleanLeaves:      s.KnownBadOn(scenarios.KnownBadBooleanLeaves),
		CancelIgnored:      s.KnownBadOn(scenarios.KnownBadCancelIgnored),
		CancelTerminal:     s.KnownBadOn(scenarios.KnownBadCancelTerminal),
		KnownBad2026:       knownBad2026(s),
	}
}

// insecure maps security.insecure onto the mock server's insecure modes
// (mockserver/insecure.go).
func insecure(sec scenarios.Security) mockserver.Insecure {
	return mockserver.Insecure{
		SessionBound:   sec.Has(scenarios.InsecureSessionBound),
		NoTenantCheck:  sec.Has(scenarios.InsecureNoTenantCheck),
		PredictableIDs: sec.Has(scenarios.InsecurePredictableIDs),
		EchoSecrets:    sec.Has(scenarios.InsecureEchoSecrets),
	}
}

// EngineConfig maps the scenario onto the load generator, for the whole scenario (set Shard
// for a slice); Run uses it, and `tasksim run --dry-run` prints the plan from it.
func EngineConfig(sc *scenarios.Scenario) loadgen.Config {
	c := sc.Client
	kind, _ := loadgen.ParsePollKind(string(c.Poll.Policy)) // validated already
	cfg := loadgen.Config{
		Tool:     sc.Tool,
		Args:     sc.Args,
		TaskTTL:  time.Duration(sc.TaskTTL),
		Clients:  sc.Workload.PoolSize(),
		Duration: time.Duration(sc.Duration),
		Grace:    time.Duration(sc.Grace),
		Poll: loadgen.PollPolicy{
			Kind: kind, Interval: time.Duration(c.Poll.Interval), Multiplier: c.Poll.Multiplier,
			MaxInterval: time.Duration(c.Poll.MaxInterval), Jitter: c.Poll.Jitter,
			Min: time.Duration(c.Poll.Min), Max: time.Duration(c.Poll.Max), Deadline: time.Duration(c.Poll.Deadline),
		},
		Input:    loadgen.InputPolicy{Accept: c.Input.Accept, Decline: c.Input.Decline, Cancel: c.Input.Cancel},
		Timeout:  time.Duration(c.RequestTimeout),
		Seed:     sc.Seed,
		Shards:   max(8, 2*runtime.GOMAXPROCS(0)),
		Faults:   sc.Faults.Client,
		Recovery: sc.Recovery,
		Security: securityConfig(sc), // tenants, probes, canaries
	}
	if sc.Target == "" {
		// Both ends of every connection live in this process and share its processors:
		// requests beyond what they can serve only queue, at two file descriptors each.
		// Against a real target a bound would cap the load a slow target sees, so none.
		cfg.MaxConns = loadgen.DefaultMaxConns
		if !sc.Faults.On() && !sc.Rollback.On() {
			// Nothing can lose a create here, so nothing needs reconciling: send no
			// idempotency key, and the server's ledger keeps no entry per task (a long soak
			// would otherwise grow it by one key per task for the whole run). A rollback
			// drill keeps them: its reconciliation names each operation by its key.
			cfg.Recovery.IdempotencyArg = ""
		}
	} else {
		// The store of a real target is out of sight: sample cleanup_lag by probing one
		// finished task in ten after its expiry (docs/METRICS.md#cleanup_lag).
		cfg.CleanupProbes = 10
	}
	if c.MaxConns > 0 {
		cfg.MaxConns = c.MaxConns
	}
	if sc.Fallback == scenarios.FallbackSync {
		cfg.Fallback = client.FallbackSync
	}
	if c.Result == scenarios.ResultBlock {
		cfg.Result = loadgen.ResultBlock
	}
	if c.Cancel.Probability > 0 {
		d := c.Cancel.Delay
		cfg.Cancel = loadgen.CancelPolicy{Probability: c.Cancel.Probability, Delay: d.Sample}
	}
	if sc.Workload.Model == scenarios.ModelOpen {
		cfg.Model = loadgen.Open
		cfg.Rate = sc.Workload.Rate.PerSecond()
		cfg.MaxInFlight = sc.Workload.MaxInFlight
		for _, st := range sc.Workload.Stages {
			cfg.Stages = append(cfg.Stages, loadgen.Stage{Duration: time.Duration(st.Duration), Target: st.Target.PerSecond()})
		}
	} else {
		cfg.ThinkTime = time.Duration(sc.Workload.ThinkTime)
		cfg.Ramp = loadgen.DefaultRamp(cfg.Clients, cfg.Duration)
	}
	return cfg
}

// knownBad2026 maps the modern era's modes of server.known_bad onto the embedded server's
// configuration (mockserver/knownbad2026.go). ServerConfig maps it like any other mode.
func knownBad2026(s scenarios.Server) mockserver.KnownBad2026 {
	return mockserver.KnownBad2026{
		NoResultType:        s.KnownBadOn(scenarios.KnownBadNoResultType),
		LenientEnvelope:     s.KnownBadOn(scenarios.KnownBadLenientEnvelope),
		NoHeaderCheck:       s.KnownBadOn(scenarios.KnownBadNoHeaderCheck),
		UnknownMethod200:    s.KnownBadOn(scenarios.KnownBadUnknownMethod200),
		LegacyMethods:       s.KnownBadOn(scenarios.KnownBadLegacyMethods),
		TasksUndeclared:     s.KnownBadOn(scenarios.KnownBadTasksUndeclared),
		ModernMissingFields: s.KnownBadOn(scenarios.KnownBadModernMissingFields),
		GetNotReady:         s.KnownBadOn(scenarios.KnownBadGetNotReady),
		IsErrorFailed:       s.KnownBadOn(scenarios.KnownBadIsErrorFailed),
		NoInlinePayload:     s.KnownBadOn(scenarios.KnownBadNoInlinePayload),
		ReuseInputKeys:      s.KnownBadOn(scenarios.KnownBadReuseInputKeys),
		AckWithTask:         s.KnownBadOn(scenarios.KnownBadAckWithTask),

		CancelTerminalFlip: s.KnownBadOn(scenarios.KnownBadCancelTerminalFlip),
		NoInlineResultType: s.KnownBadOn(scenarios.KnownBadNoInlineResultType),
	}
}
