package mockserver

// The server's memory over a long soak is bounded by what it retains (tasks within their
// ttl, idempotency keys within the ledger window), not by every task it ever created. In
// virtual time (testing/synctest) hours of constant load take seconds: the reaper ticks, the
// tasks' work timers fire and the ttls run out as they would, with no sleeping.

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// soakCase is one era's create request, cut around the idempotency key.
type soakCase struct {
	era            string
	prefix, suffix string
	headers        map[string]string
	session        bool // the request needs a 2025-11-25 session
}

var soakCases = []soakCase{
	{era: "2025-11-25", session: true,
		prefix: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":200,"idempotency_key":"`,
		suffix: `"},"task":{}}}`},
	{era: "2026-07-28",
		prefix: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work_task","arguments":{"duration_ms":200,"idempotency_key":"`,
		suffix: `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
		headers: map[string]string{mcp.HeaderProtocolVersion: mcp.Version20260728,
			mcp.HeaderMethod: mcp.MethodToolsCall, mcp.HeaderName: "work_task"}},
}

// TestHeapFlatOverHours drives the server, in each era, through hours of constant load:
// soakRate creates a second, each with a key of its own (as `tasksim run --target` sends
// them), 200 ms of work, a 20 s ttl and so a 20 s ledger window. After the warm-up the
// retained structures hold a constant count (tasks within their ttl, keys within ttl plus
// window) and the live heap stops growing: at the end it is within 10% (plus 1 MiB of
// slack for the runtime's own) of the heap at the end of the warm-up. Without the window
// the ledger alone grew by some 300 bytes per create: hundreds of MB here.
//
// Under -race or -short it runs an hour at a tenth of the rate: the race detector slows
// each create about sevenfold, and the bound does not depend on the rate.
func TestHeapFlatOverHours(t *testing.T) {
	rate, hours := 100, 3 // 1.08M creates per era
	if raceEnabled() || testing.Short() {
		rate, hours = 10, 1
	}
	for _, sc := range soakCases {
		t.Run(sc.era, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { soak(t, sc, rate, hours) })
		})
	}
}

// soak runs sc at rate creates a second for hours of virtual time; see TestHeapFlatOverHours.
func soak(t *testing.T, sc soakCase, rate, hours int) {
	const ttl = 20 * time.Second
	srv, err := NewHandlerServer(Config{Protocols: ProtocolsBoth, DefaultTTL: ttl, MaxTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	var sess *session
	if sc.session {
		sess = initSession(t, srv, h)
	}
	w, req := newReusedRequest("", sess)
	for k, v := range sc.headers {
		req.Header.Set(k, v)
	}
	create := func(n int) {
		req.body = append(strconv.AppendInt(append(req.body[:0], sc.prefix...), int64(n), 36), sc.suffix...)
		req.ContentLength = int64(len(req.body))
		h.ServeHTTP(w.reset(), req.rewind())
		if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"taskId"`)) {
			t.Fatalf("create %d: HTTP %d %s", n, w.code, w.body)
		}
	}
	n := 0
	second := func() {
		for range rate {
			create(n)
			n++
		}
		time.Sleep(time.Second)
	}

	const warmUp = 10 * time.Minute // many windows: the retained counts are level
	for range int(warmUp / time.Second) {
		second()
	}
	synctest.Wait()
	warm := liveHeap()
	for range hours*3600 - int(warmUp/time.Second) {
		second()
	}
	synctest.Wait()
	end, st := liveHeap(), srv.Stats()

	t.Logf("%s: %d creates in %dh (virtual): live heap %.2f MiB after %v, %.2f MiB at the end; "+
		"retained tasks %d, ledger keys %d (peak %d), keys forgotten %d, window %v",
		sc.era, n, hours, mib(warm), warmUp, mib(end), st.TasksLive, st.Ledger.Keys,
		st.Ledger.PeakKeys, st.Ledger.Forgotten, st.Ledger.Window)
	if st.TasksCreated != uint64(n) || st.Ledger.Window != ttl {
		t.Fatalf("created %d of %d tasks, window %v (want %v)", st.TasksCreated, n, st.Ledger.Window, ttl)
	}
	// A task lives its ttl plus at most a reaper tick; a key while its task does, then a
	// window after it leaves the store, plus a tick.
	maxTasks, maxKeys := rate*(int(ttl/time.Second)+2), rate*(2*int(ttl/time.Second)+3)
	if st.TasksLive > int64(maxTasks) || st.Ledger.PeakKeys > maxKeys {
		t.Errorf("retained %d tasks (at most %d), peak %d keys (at most %d)",
			st.TasksLive, maxTasks, st.Ledger.PeakKeys, maxKeys)
	}
	if got := st.Ledger.Forgotten + uint64(st.Ledger.Keys); got != uint64(n) {
		t.Errorf("keys forgotten %d + held %d = %d, want every create's key (%d)", st.Ledger.Forgotten, st.Ledger.Keys, got, n)
	}
	if limit := warm + warm/10 + 1<<20; end > limit {
		t.Errorf("live heap grew from %.2f MiB to %.2f MiB over %dh (limit %.2f MiB): memory follows the tasks ever created",
			mib(warm), mib(end), hours, mib(limit))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
