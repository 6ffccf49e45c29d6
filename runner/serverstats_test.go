package runner

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// TestServerStatsKeys: the summary's "server" object carries the backpressure, downstream,
// ledger and request figures under stable snake_case keys, every request method present
// even at zero.
func TestServerStatsKeys(t *testing.T) {
	srv, err := mockserver.NewHandlerServer(mockserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b, err := json.Marshal(serverStats(srv, &serverPeaks{}))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tasks_created", "retained_tasks", "orphaned_tasks", "max_cleanup_lag_ms",
		"queue_depth", "queue_depth_max", "tasks_active_max", "refusals", "refusals_by_cause", "rate_limited",
		"downstream_in_flight", "downstream_queue_depth", "downstream_rejections", "downstream_failures",
		"effects_after_cancel", "ledger", "requests", "rejections"} {
		if _, ok := got[k]; !ok {
			t.Errorf("server object lacks %q; keys %v", k, slices.Sorted(maps.Keys(got)))
		}
	}
	for k := range got {
		if strings.ToLower(k) != k || strings.ContainsAny(k, " -.") {
			t.Errorf("key %q is not snake_case", k)
		}
	}
	var req map[string]map[string]uint64
	if err := json.Unmarshal(got["requests"], &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"initialize", "tools_call", "tasks_get", "tasks_result", "tasks_list", "tasks_cancel"} {
		o, ok := req[m]
		if !ok || len(o) != 3 {
			t.Errorf("requests[%q] = %v, want ok, rpc_error and http_error", m, o)
		}
	}
	if _, ok := req["unknown"]; ok {
		t.Errorf("requests has \"unknown\" without any undecodable request")
	}
}

// TestAbortRulesAgainstATarget: against a real target an abort_on_fail threshold over a
// metric only the embedded server records reads 0 in every window, and would stop the load
// on a figure nobody measured: it is no abort rule there; on the embedded server it is.
func TestAbortRulesAgainstATarget(t *testing.T) {
	sc := scenarios.Default()
	sc.Thresholds = []scenarios.Threshold{{Expr: "retained_tasks.max < 1", AbortOnFail: true},
		{Expr: "latency_tasks_get.p99 < 1s", AbortOnFail: true}, {Expr: "task_e2e.p99 < 1s"}}
	for external, want := range map[bool]string{false: "retained_tasks.max < 1,latency_tasks_get.p99 < 1s", true: "latency_tasks_get.p99 < 1s"} {
		var got []string
		for _, r := range abortRules(sc, external) {
			got = append(got, r.expr)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("external %v: abort rules %v, want %s", external, got, want)
		}
	}
}
