package sim_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/sim"
)

// handlerTarget is a sim.Target over the mock server's handler on the loop (loopServer):
// every request is the 2026-07-28 JSON-RPC the live clients send, so the server decides
// exactly as it does live.
type handlerTarget struct{ s *loopServer }

func (h handlerTarget) Create(tool string, args json.RawMessage) (*mcp.Task, error) {
	msg := h.s.send("tools/call", map[string]any{"name": tool, "arguments": args})
	if msg.Error != nil {
		return nil, msg.Error
	}
	r, _, err := mcp.ParseTaskResult(msg.Result)
	if err != nil {
		return nil, err
	}
	return taskOf(r.DetailedTask), nil
}

func (h handlerTarget) Get(id string) (*mcp.Task, bool, error) {
	msg := h.s.send("tasks/get", map[string]any{"taskId": id})
	switch {
	case msg.Error != nil && msg.Error.Code == mcp.CodeInvalidParams:
		return nil, true, nil
	case msg.Error != nil:
		return nil, false, msg.Error
	}
	r, _, err := mcp.ParseGetTaskResult(msg.Result)
	if err != nil {
		return nil, false, err
	}
	return taskOf(r.DetailedTask), false, nil
}

// taskOf is the era-neutral task of a 2026-07-28 one.
func taskOf(d mcp.DetailedTask) *mcp.Task {
	return &mcp.Task{TaskID: d.TaskID, Status: d.Status, CreatedAt: d.CreatedAt, LastUpdatedAt: d.LastUpdatedAt,
		TTL: d.TTLMs, PollInterval: d.PollIntervalMs}
}

// fleetRun runs a fleet of 40 clients for 30 s of virtual time against a fresh mock
// server on a fresh loop, with seed: 5 s tasks, polled as the server advises (1 s), 1 s of
// think time, a 2 ms round trip.
func fleetRun(t *testing.T, seed uint64) (*sim.FleetResult, mockserver.Stats) {
	t.Helper()
	l := sim.New(t0)
	srv, err := mockserver.NewHandlerServer(mockserver.Config{Clock: l, Protocols: mockserver.ProtocolsModern, PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res, err := sim.RunFleet(l, handlerTarget{&loopServer{t: t, srv: srv}}, sim.FleetConfig{
		Clients: 40, Duration: 30 * time.Second, Tool: "work_task", Args: json.RawMessage(`{"duration_ms":5000}`),
		Policy: loadgen.PollPolicy{Kind: loadgen.PollServer}, Think: time.Second, RTT: 2 * time.Millisecond, Seed: seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, srv.Stats()
}

// TestFleetOnTheServer: a closed-model fleet of loadgen.Lifecycle clients against the mock
// server's core, both in virtual time on one loop: every task created ends completed, each
// after the polls its duration and the advised interval call for (5 s at 1 s: the fifth
// poll, 5 s and a round trip after the create, finds it done, or a sixth when the jitter of
// the start puts the fifth just before the end), the server created what the clients saw,
// and the same seed gives the same run.
func TestFleetOnTheServer(t *testing.T) {
	res, st := fleetRun(t, 1)
	t.Logf("%+v", *res)
	if res.Created == 0 || res.Completed != res.Created || res.Errors != 0 || res.Unknown+res.Lost+res.Expired+res.Failed != 0 {
		t.Errorf("created %d, completed %d, errors %d, other outcomes %d: want every task completed", res.Created, res.Completed, res.Errors,
			res.Unknown+res.Lost+res.Expired+res.Failed)
	}
	// a client's cycle is a 5 s task, its last poll's reply and 1 s of thought: about 6 s, so
	// 40 clients start about 5 tasks each in 30 s
	if res.Created < 40*4 || res.Created > 40*6 {
		t.Errorf("created %d tasks, want 160 to 240", res.Created)
	}
	for polls, n := range res.PollsPerTask {
		if polls != 5 && polls != 6 {
			t.Errorf("%d tasks took %d polls, want 5 or 6", n, polls)
		}
	}
	if int64(st.TasksCreated) != res.Created {
		t.Errorf("the server created %d tasks, the clients saw %d", st.TasksCreated, res.Created)
	}
	again, _ := fleetRun(t, 1)
	if !reflect.DeepEqual(res, again) {
		t.Errorf("the same seed gave another run:\n%+v\n%+v", *res, *again)
	}
}

// TestFleetRefusesAZeroRoundTrip: a fleet without a round trip would hold a client whose
// creates are refused at one instant for ever: it is refused before it runs.
func TestFleetRefusesAZeroRoundTrip(t *testing.T) {
	_, err := sim.RunFleet(sim.New(t0), nil, sim.FleetConfig{Clients: 1, Duration: time.Second, Tool: "work_task"})
	if !errors.Is(err, sim.ErrBadFleet) {
		t.Errorf("RTT 0: %v, want ErrBadFleet", err)
	}
}
