package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
)

// A third era, as a test double: Tasks folded into core, spelled jobs/*, served by an
// in-memory server. The engine runs it through the seam a real era uses (client.Target's
// Dialer, read by client.DialerFor), unchanged: nothing in loadgen knows it is a test.

// coreVersion is the third era's protocol version.
const coreVersion = "2027-03-01"

// coreDialect spells the third era: tools/call makes a job, jobs/status reads it (the
// payload inline), jobs/stop cancels it and answers with the job.
type coreDialect struct{}

var coreMethods = map[mcp.Op]string{mcp.OpToolsCall: "tools/call", mcp.OpTasksGet: "jobs/status",
	mcp.OpTasksCancel: "jobs/stop", mcp.OpElicit: "elicitation/create"}

func (coreDialect) Version() string { return coreVersion }

func (coreDialect) Method(op mcp.Op) string { return coreMethods[op] }

func (coreDialect) Op(method string) mcp.Op {
	for op, m := range coreMethods {
		if m == method {
			return op
		}
	}
	return mcp.OpUnknown
}

// AppendTask, AppendCreateResult and ParseCallReply are the wire forms of a server
// speaking JSON-RPC: the in-memory era has none.
func (coreDialect) AppendTask(dst []byte, _ *mcp.Task) []byte         { return dst }
func (coreDialect) AppendCreateResult(dst []byte, _ *mcp.Task) []byte { return dst }
func (coreDialect) ParseCallReply([]byte) (*mcp.Task, *mcp.CallToolResult, error) {
	return nil, nil, errors.New("core: no wire form")
}

var _ mcp.Dialect = coreDialect{}

// coreServer is the in-memory server: a job works for work, then completes with a payload.
type coreServer struct {
	work time.Duration

	mu      sync.Mutex
	next    int
	jobs    map[string]*coreJob
	calls   map[string]int // requests by method
	stopped int            // jobs stopped while working
}

type coreJob struct {
	created   time.Time
	cancelled time.Time // zero: not
}

// task is the job as a task at now.
func (s *coreServer) task(id string, j *coreJob, now time.Time) mcp.Task {
	status, updated := mcp.StatusWorking, j.created
	switch done := j.created.Add(s.work); {
	case !j.cancelled.IsZero():
		status, updated = mcp.StatusCancelled, j.cancelled
	case !now.Before(done):
		status, updated = mcp.StatusCompleted, done
	}
	poll := mcp.Ms(500)
	return mcp.Task{TaskID: id, Status: status, CreatedAt: mcp.FormatTime(j.created), LastUpdatedAt: mcp.FormatTime(updated), PollInterval: &poll}
}

func (s *coreServer) count(method string) {
	s.calls[method]++
}

// coreDialer is the third era's client.Dialer: Dial sends nothing (no sessions).
type coreDialer struct{ srv *coreServer }

func (d coreDialer) Dial(context.Context, *client.Target) (client.Conn, error) {
	return coreConn{d.srv}, nil
}

func (d coreDialer) Traits() client.Traits {
	return client.Traits{Dialect: coreDialect{}, Inline: true, AsksTasks: true}
}

// coreConn is the third era's client.Conn.
type coreConn struct{ srv *coreServer }

var _ client.Conn = coreConn{}

func (c coreConn) Create(_ context.Context, _ []byte, answers *client.InputAnswers, _ client.Cut) (client.Created, client.Reply, error) {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count("tools/call")
	if answers != nil {
		return client.Created{}, client.Reply{}, errors.New("core: no input rounds")
	}
	s.next++
	id := fmt.Sprintf("job-%d", s.next)
	j := &coreJob{created: time.Now()}
	s.jobs[id] = j
	tk := s.task(id, j, j.created)
	return client.Created{Task: &tk}, client.Reply{}, nil
}

func (c coreConn) Get(_ context.Context, ref client.TaskRef) (client.TaskRead, client.Reply, error) {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count("jobs/status")
	j, ok := s.jobs[ref.ID]
	if !ok {
		return client.TaskRead{}, client.Reply{Err: mcp.Errorf(mcp.CodeInvalidParams, "no job %s", ref.ID)}, nil
	}
	r := client.TaskRead{Task: s.task(ref.ID, j, time.Now())}
	if r.Task.Status == mcp.StatusCompleted {
		r.Payload = []byte(`{"content":[{"type":"text","text":"done"}]}`)
	}
	return r, client.Reply{}, nil
}

func (c coreConn) Result(context.Context, client.TaskRef, client.ServerHandler, client.Cut) (client.Reply, error) {
	return client.Reply{}, errors.New("core: the payload comes with jobs/status")
}

func (c coreConn) Answer(context.Context, client.TaskRef, mcp.InputResponses, client.Cut) (client.Reply, error) {
	return client.Reply{}, errors.New("core: no input")
}

func (c coreConn) Cancel(_ context.Context, ref client.TaskRef, _ client.Cut) (client.Cancelled, client.Reply, error) {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count("jobs/stop")
	j, ok := s.jobs[ref.ID]
	if !ok {
		return client.Cancelled{}, client.Reply{Err: mcp.Errorf(mcp.CodeInvalidParams, "no job %s", ref.ID)}, nil
	}
	now := time.Now()
	if tk := s.task(ref.ID, j, now); tk.Status.Terminal() {
		return client.Cancelled{}, client.Reply{Err: mcp.Errorf(mcp.CodeInvalidParams, "job %s is %s", ref.ID, tk.Status)}, nil
	}
	j.cancelled = now
	s.stopped++
	return client.Cancelled{Task: s.task(ref.ID, j, now)}, client.Reply{}, nil
}

func (c coreConn) List(context.Context, []byte) (client.Reply, error) {
	return client.Reply{}, errors.New("core: no list")
}

func (c coreConn) Close(context.Context) error { return nil }

// TestThirdEraThroughTheEngine runs a closed-model load through the engine against the
// in-memory third era: tasks are created, polled to completion with their payload inline,
// and the cancelled share is cancelled by jobs/stop and confirmed by a read.
func TestThirdEraThroughTheEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &coreServer{work: 3 * time.Second, jobs: map[string]*coreJob{}, calls: map[string]int{}}
		target := &client.Target{URL: "http://core.test/mcp", Dialer: coreDialer{srv}}
		m := &client.Manifest{Era: coreVersion, ProtocolVersion: coreVersion, Tool: "work", AsTask: true}
		cfg := loadgen.Config{Tool: "work", Clients: 4, Duration: 20 * time.Second, Grace: 10 * time.Second,
			Cancel: loadgen.CancelPolicy{Probability: 0.3, Delay: func(*rand.Rand) time.Duration { return time.Second }}}
		rec := metrics.NewRecorder(1, time.Now())
		eng, err := loadgen.New(cfg, target, m, rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		rec.Flush(time.Now())
		snap := rec.Total()
		c := snap.Counters
		created, completed, cancelled := c[metrics.TasksCreated], c[metrics.TasksCompleted], c[metrics.TasksCancelled]
		srv.mu.Lock()
		defer srv.mu.Unlock()
		t.Logf("created %d, completed %d, cancelled %d, polls %d; server calls %v", created, completed, cancelled, c[metrics.Polls], srv.calls)
		switch {
		case created < 12 || int(created) != srv.next:
			t.Errorf("%d tasks created, the server made %d; want the same, at least 12", created, srv.next)
		case completed == 0 || cancelled == 0 || completed+cancelled != created:
			t.Errorf("created %d, completed %d, cancelled %d: want every task completed or cancelled, some of each", created, completed, cancelled)
		case c[metrics.CancelsSent] != cancelled || c[metrics.CancelsAcked] != cancelled || int(cancelled) != srv.stopped:
			t.Errorf("cancels sent %d, acked %d, tasks cancelled %d, jobs stopped %d: want all equal",
				c[metrics.CancelsSent], c[metrics.CancelsAcked], cancelled, srv.stopped)
		case c[metrics.Polls] == 0 || int(c[metrics.Polls]) != srv.calls["jobs/status"]:
			t.Errorf("%d polls, the server read %d jobs: want the same, and some", c[metrics.Polls], srv.calls["jobs/status"])
		}
		if n := snap.ErrorCount(mcp.OpTasksGet) + snap.ErrorCount(mcp.OpToolsCall) + snap.ErrorCount(mcp.OpTasksCancel); n != 0 {
			t.Errorf("%d requests failed, want none", n)
		}
		if n := c[metrics.TasksUnknown]; n != 0 {
			t.Errorf("%d tasks unknown, want 0", n)
		}
	})
}
