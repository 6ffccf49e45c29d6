package loadgen_test

// Tenant isolation probes and secret canaries against the mock server's handler in
// virtual time: every probe kind and every insecure mode gives both verdicts, a clean report
// on the default server and a leak on the broken one.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

var secTenants = []loadgen.Tenant{{Name: "acme", Token: "tok-a"}, {Name: "globex", Token: "tok-b"}, {Name: "initech", Token: "tok-c"}}

func secServer() mockserver.Config {
	return mockserver.Config{PollInterval: 250 * time.Millisecond,
		Tokens: map[string]string{"tok-a": "acme", "tok-b": "globex", "tok-c": "initech"}}
}

// secConfig: 12 clients over three tenants, a quarter of them probes (clients 3, 7 and 11:
// one per tenant), canaries on, 1 s tasks for 8 s.
func secConfig() loadgen.Config {
	return loadgen.Config{
		Tool: "work_task", Args: map[string]any{"duration_ms": 1000},
		Clients: 12, Duration: 8 * time.Second, Grace: 10 * time.Second,
		Poll:     loadgen.PollPolicy{Kind: loadgen.PollServer},
		Seed:     3,
		Security: loadgen.Security{Tenants: secTenants, ProbeShare: 0.25, Canaries: true},
	}
}

type secRun struct {
	rep  loadgen.SecurityReport
	snap *metrics.Snapshot
	eng  *loadgen.Engine
}

// runSecure runs cfg against the mock server (wrapped by wrap, when not nil) inside the
// caller's synctest bubble; the target's own header carries tenant acme's token.
func runSecure(t *testing.T, srvCfg mockserver.Config, cfg loadgen.Config, wrap func(http.Handler) http.Handler) *secRun {
	t.Helper()
	r := runIn(t, srvCfg, cfg, harness{wrap: wrap, header: http.Header{"Authorization": {"Bearer tok-a"}}})
	return &secRun{rep: r.eng.Security(), snap: r.snap, eng: r.eng}
}

// checkNoLeaks asserts a clean report in which every kind in kinds was sent.
func checkNoLeaks(t *testing.T, r *secRun, kinds ...string) {
	t.Helper()
	if !r.rep.Probes {
		t.Fatal("no probe ran")
	}
	for _, k := range kinds {
		if r.rep.ProbesSent[k] == 0 {
			t.Errorf("no %s probe sent (%v)", k, r.rep.ProbesSent)
		}
	}
	if len(r.rep.Leaks) != 0 || len(r.rep.Touched) != 0 {
		t.Errorf("leaks %v %+v, touched %v; want none", r.rep.Leaks, r.rep.LeakSample, r.rep.Touched)
	}
	if len(r.rep.Secrets) != 0 {
		t.Errorf("secrets seen %v %+v; want none", r.rep.Secrets, r.rep.SecretSample)
	}
	if r.snap.Counters[metrics.TasksCompleted] == 0 {
		t.Error("no task completed")
	}
}

func TestProbesDefaultServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runSecure(t, secServer(), secConfig(), nil)
		checkNoLeaks(t, r, loadgen.ProbeGet, loadgen.ProbeResult, loadgen.ProbeCancel, loadgen.ProbeList,
			loadgen.ProbeGuess, loadgen.ProbeMeta, loadgen.ProbeSession)
		if n := r.snap.Counters[metrics.CancelledUnrequested]; n != 0 {
			t.Errorf("%d tasks cancelled by someone else on a server that denies foreign cancels", n)
		}
		if !r.rep.CanaryArg || !r.rep.Canaries {
			t.Errorf("canaries %v, in the note argument %v", r.rep.Canaries, r.rep.CanaryArg)
		}
		if n := r.snap.Counters[metrics.TasksUnknown]; n != 0 {
			t.Errorf("%d tasks unknown", n)
		}
	})
}

// leaks asserts that every kind in want leaked, with evidence that names a shortened id.
func leaks(t *testing.T, r *secRun, want ...string) {
	t.Helper()
	for _, k := range want {
		if r.rep.Leaks[k] == 0 {
			t.Errorf("no %s leak found: leaks %v, sent %v, inconclusive %v", k, r.rep.Leaks, r.rep.ProbesSent, r.rep.Inconclusive)
		}
	}
	for _, ev := range r.rep.LeakSample {
		if len(ev.Task) > 13 || ev.Kind == "" || ev.Detail == "" {
			t.Errorf("evidence %+v: want a kind, a detail and a shortened id", ev)
		}
	}
}

func TestProbesNoTenantCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := secServer()
		srv.Insecure.NoTenantCheck = true
		// Clients start at distinct instants, so that at a probe round other tenants' tasks
		// are mid-flight: a cancel of a live foreign task is the leak to find. (All at once,
		// every task ends at the instant the probes run, and the order of same-instant
		// events decides whether any cancel finds a live one.)
		cfg := secConfig()
		cfg.Ramp = time.Second
		r := runSecure(t, srv, cfg, nil)
		leaks(t, r, loadgen.ProbeGet, loadgen.ProbeResult, loadgen.ProbeCancel, loadgen.ProbeList)
		if len(r.rep.Touched) == 0 {
			t.Error("a foreign task was cancelled, but no touched task is reported")
		}
		// The owners of the tasks the probes cancelled sent no cancel of their own.
		if n := r.snap.Counters[metrics.CancelledUnrequested]; n == 0 || r.snap.Counters[metrics.CancelsSent] != 0 {
			t.Errorf("%d tasks cancelled unrequested, %d cancels sent; want > 0 and 0", n, r.snap.Counters[metrics.CancelsSent])
		}
		if r.rep.Leaks[loadgen.ProbeGuess] != 0 || r.rep.Leaks[loadgen.ProbeMeta] != 0 {
			t.Errorf("leaks %v: random ids are not guessable and _meta is ignored", r.rep.Leaks)
		}
	})
}

func TestProbesPredictableIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := secServer()
		srv.Insecure.PredictableIDs = true
		r := runSecure(t, srv, secConfig(), nil)
		leaks(t, r, loadgen.ProbeGuess)
		for _, k := range []string{loadgen.ProbeGet, loadgen.ProbeResult, loadgen.ProbeCancel, loadgen.ProbeList} {
			if r.rep.Leaks[k] != 0 {
				t.Errorf("%s leaked on a server that checks the tenant: %v", k, r.rep.LeakSample)
			}
		}
	})
}

func TestProbesSessionBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := secServer()
		srv.Insecure.SessionBound = true
		r := runSecure(t, srv, secConfig(), nil)
		leaks(t, r, loadgen.ProbeSession)
		if r.rep.Leaks[loadgen.ProbeGet] != 0 {
			t.Errorf("get leaked: %v", r.rep.LeakSample)
		}
	})
}

// followMeta plays a server that breaks R32: on tasks/get and tasks/result it takes the
// task id from related-task _meta when there is one.
func followMeta(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg map[string]json.RawMessage
			if json.Unmarshal(body, &msg) == nil {
				var p struct {
					Meta json.RawMessage `json:"_meta"`
				}
				_ = json.Unmarshal(msg["params"], &p)
				if id := mcp.RelatedTaskID(p.Meta); id != "" && bytes.Contains(msg["method"], []byte("tasks/")) {
					msg["params"] = taskParams(id)
					body, _ = json.Marshal(msg)
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		h.ServeHTTP(w, r)
	})
}

func taskParams(id string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"taskId": id})
	return b
}

func TestProbesMeta(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runSecure(t, secServer(), secConfig(), followMeta)
		leaks(t, r, loadgen.ProbeMeta)
	})
}

func TestProbesRevoked(t *testing.T) {
	for _, scope := range []string{"all", "results"} {
		t.Run(scope+" revoked", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := secServer()
				srv.Revocations = []mockserver.Revocation{{Tenant: "globex", At: 4 * time.Second, Scope: mockserver.RevokeScope(scope)}}
				cfg := secConfig()
				cfg.Security.Revoked = []loadgen.Revocation{{Tenant: "globex", At: 4 * time.Second, Scope: scope}}
				r := runSecure(t, srv, cfg, nil)
				checkNoLeaks(t, r, loadgen.ProbeRevoked)
			})
		})
		t.Run(scope+" not revoked by the server", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := secConfig()
				cfg.Security.Revoked = []loadgen.Revocation{{Tenant: "globex", At: 4 * time.Second, Scope: scope}}
				r := runSecure(t, secServer(), cfg, nil)
				leaks(t, r, loadgen.ProbeRevoked)
			})
		})
	}
}

func TestCanariesEchoSecrets(t *testing.T) {
	for _, echo := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			srv := secServer()
			srv.Insecure.EchoSecrets = echo
			cfg := secConfig()
			cfg.Security.ProbeShare = 0 // canaries alone
			cfg.Args = map[string]any{"duration_ms": 1000, "input_required": true}
			r := runSecure(t, srv, cfg, nil)
			if r.rep.Probes {
				t.Error("probes ran with probe share 0")
			}
			got := map[string]bool{}
			for _, ev := range r.rep.SecretSample {
				got[ev.Where+" "+ev.PlantedIn] = true
				if strings.Contains(ev.Where, loadgen.SecretPrefix) || ev.Tenant == "" {
					t.Errorf("evidence %+v", ev)
				}
			}
			if got["statusMessage of tasks/get "+loadgen.PlantedArg] != echo || len(r.rep.Secrets) > 0 != echo {
				t.Errorf("echo_secrets=%v: secrets seen %v (%v)", echo, r.rep.Secrets, got)
			}
		})
	}
}

// TestCanaryAnswerSeenByAnotherTenant: an elicitation answer's canary, echoed into the
// statusMessage, reaches a probe of another tenant through a server without tenant check.
// (Its own client no longer polls once it blocks on tasks/result after answering.)
func TestCanaryAnswerSeenByAnotherTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := secServer()
		srv.Insecure.EchoSecrets, srv.Insecure.NoTenantCheck = true, true
		cfg := secConfig()
		cfg.Args = map[string]any{"duration_ms": 1000, "input_required": true}
		r := runSecure(t, srv, cfg, nil)
		found := false
		for _, ev := range r.rep.SecretSample {
			found = found || ev.PlantedIn == loadgen.PlantedAnswer && strings.HasSuffix(ev.Where, "(another tenant's secret)")
		}
		if !found {
			t.Errorf("no answer canary seen by another tenant: %v %+v", r.rep.Secrets, r.rep.SecretSample)
		}
	})
}

func TestInjectionFindings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := secServer()
		srv.Inject = true
		cfg := secConfig()
		cfg.Security = loadgen.Security{Tenants: secTenants, WatchInjection: true}
		r := runSecure(t, srv, cfg, nil)
		if r.rep.Injections["result of tasks/result"] == 0 || r.rep.Injections["statusMessage of tasks/get"] == 0 {
			t.Errorf("injection findings %v: want results and statusMessages", r.rep.Injections)
		}
		if len(r.rep.Secrets) != 0 {
			t.Errorf("secrets %v", r.rep.Secrets)
		}
	})
}

// TestScanOutput: the output scan finds the run's canaries and tokens, and says where
// without the secret.
func TestScanOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := secConfig()
		cfg.Duration = time.Second
		r := runSecure(t, secServer(), cfg, nil)
		if n := r.eng.ScanOutput("summary.json", []byte(`{"note":"clean","id":"tsk-secret-0123"}`)); n != 0 {
			t.Errorf("a foreign marker counted: %d", n)
		}
		if n := r.eng.ScanOutput("stdout", []byte("Authorization: Bearer tok-b")); n != 1 {
			t.Errorf("token found %d times, want 1", n)
		}
		rep := r.eng.Security()
		if rep.Secrets["stdout"] != 1 || rep.SecretSample[len(rep.SecretSample)-1].PlantedIn != loadgen.PlantedToken {
			t.Errorf("secrets %v %+v", rep.Secrets, rep.SecretSample)
		}
		b, _ := json.Marshal(rep)
		if bytes.Contains(b, []byte("tok-")) || bytes.Contains(b, []byte(loadgen.SecretPrefix)) {
			t.Errorf("the report holds a secret: %s", b)
		}
	})
}

func TestSecurityValidate(t *testing.T) {
	cfg := secConfig()
	cfg.Security = loadgen.Security{ProbeShare: 2, Tenants: secTenants[:1], Revoked: []loadgen.Revocation{{Tenant: "nobody"}}}
	err := cfg.Validate()
	for _, want := range []string{"probe share", "two tenants", `"nobody"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q", err, want)
		}
	}
	_ = scenarios.Secret("")
}
