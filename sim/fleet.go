package sim

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
)

// A closed-model fleet in virtual time (issue 28's simulated clients, a first cut): each
// client creates a task, follows it with the load generator's own state machine
// (loadgen.Lifecycle, in the 2026-07-28 form where a poll brings the payload, with its
// poll policy, jitter and deadline) until it ends, thinks, and creates the next, until the
// fleet's duration has passed. Each request is two events, its arrival at the target half
// a round trip after it is sent and its reply back half a round trip after that, so a
// client holds one pending event at a time, and waits without allocating. Not simulated
// yet: cancels, input, the open arrival model, client faults.

// Target answers a simulated client's requests, at the loop's instant of their arrival: a
// create, and a poll of a task. Gone reports a task the target no longer knows (-32602).
type Target interface {
	Create(tool string, args json.RawMessage) (*mcp.Task, error)
	Get(id string) (t *mcp.Task, gone bool, err error)
}

// FleetConfig is a closed-model fleet.
type FleetConfig struct {
	Clients  int
	Duration time.Duration // creates start within it; the tasks they create are followed to their end
	Tool     string
	Args     json.RawMessage
	Policy   loadgen.PollPolicy // how the clients space their polls (loadgen.PollPolicy.Wait)
	Think    time.Duration      // between a task's end and the client's next create
	RTT      time.Duration      // the network's round trip, a model parameter
	Seed     uint64             // the clients' jitter and start offsets
}

// FleetResult is what the fleet saw.
type FleetResult struct {
	Created, Completed, Failed, Lost, Expired, Unknown int64
	Polls, Errors                                      int64
	// PollsPerTask counts the tasks that ended by their number of polls.
	PollsPerTask map[int]int64
}

// ErrBadFleet says a FleetConfig cannot run. A round trip of zero is refused too: every
// request would then take no virtual time, and a target that refuses every create would
// hold a client at one instant for ever.
var ErrBadFleet = errors.New("sim: a fleet needs clients, a duration, a tool and a round trip above zero")

// RunFleet runs the fleet on l against target until every task created within the
// duration has ended (events of the target's own, such as a reaper, may remain), and
// returns what it saw. The clients start spread over their first
// think time (or a second), each from its own seeded random stream.
func RunFleet(l *Loop, target Target, cfg FleetConfig) (*FleetResult, error) {
	if cfg.Clients <= 0 || cfg.Duration <= 0 || cfg.Tool == "" || cfg.RTT <= 0 {
		return nil, ErrBadFleet
	}
	f := &fleet{l: l, target: target, cfg: cfg, res: &FleetResult{PollsPerTask: map[int]int64{}}}
	f.end = l.Now().Add(cfg.Duration)
	spread := max(cfg.Think, time.Second)
	for i := range cfg.Clients {
		c := &client{f: f, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)))}
		c.ev = l.NewEvent(c.step)
		c.after(time.Duration(c.rng.Int64N(int64(spread))), sendCreate)
	}
	f.active = cfg.Clients
	for f.active > 0 && l.Run(l.Now().Add(time.Minute)) { // the target's own events (a reaper) never run dry
	}
	return f.res, nil
}

// fleet is one run of a FleetConfig.
type fleet struct {
	l      *Loop
	target Target
	cfg    FleetConfig
	res    *FleetResult
	end    time.Time // no create starts after it
	active int       // clients not done yet
}

// client is one simulated client: its event, what the event does next (state), the task
// it follows and the last reply it has in flight.
type client struct {
	f     *fleet
	ev    *Event
	state state
	rng   *rand.Rand
	lc    loadgen.Lifecycle
	id    string

	reply *mcp.Task // the reply travelling back: its task, gone, or its error
	gone  bool
	err   error
}

// state is what a client's event does when it runs.
type state uint8

const (
	sendCreate   state = iota // send a create, unless the fleet's duration has passed
	createArrive              // the create arrives at the target
	createReply               // its reply arrives back
	pollArrive                // a tasks/get arrives at the target
	pollReply                 // its reply arrives back
)

// step runs what the client's event was scheduled for.
func (c *client) step() {
	rtt := c.f.cfg.RTT
	switch c.state {
	case sendCreate:
		if !c.f.l.Now().Before(c.f.end) {
			c.f.active-- // done: its last task ended after the fleet's duration
			return
		}
		c.after(rtt/2, createArrive)
	case createArrive:
		c.reply, c.err = c.f.target.Create(c.f.cfg.Tool, c.f.cfg.Args)
		c.after(rtt-rtt/2, createReply)
	case createReply:
		c.created()
	case pollArrive:
		c.lc.PollSent()
		c.f.res.Polls++
		c.reply, c.gone, c.err = c.f.target.Get(c.id)
		c.after(rtt-rtt/2, pollReply)
	case pollReply:
		c.polled()
	}
}

// after schedules state s in d.
func (c *client) after(d time.Duration, s state) {
	c.state = s
	c.ev.After(d)
}

// created reads the create's reply and follows its task.
func (c *client) created() {
	now := c.f.l.Now()
	if c.err != nil || c.reply == nil {
		c.f.res.Errors++
		c.after(c.f.cfg.Think, sendCreate)
		return
	}
	c.f.res.Created++
	c.id = c.reply.TaskID
	c.lc = loadgen.Lifecycle{Policy: &c.f.cfg.Policy, Rand: c.rng, Inline: true}
	c.lc.Start(now, c.reply, 0)
	c.follow()
}

// follow takes the lifecycle's next step.
func (c *client) follow() {
	now := c.f.l.Now()
	switch s := c.lc.Next(now); s.Kind {
	case loadgen.StepPoll:
		c.after(s.At.Sub(now)+c.f.cfg.RTT/2, pollArrive)
	case loadgen.StepDone:
		c.ended()
	default: // cancels and blocking results are not simulated yet: the task is left
		c.lc.Abandon()
		c.ended()
	}
}

// polled reads a tasks/get reply.
func (c *client) polled() {
	now := c.f.l.Now()
	switch {
	case c.err != nil:
		c.f.res.Errors++
		c.lc.Replied(now)
	case c.gone:
		c.lc.Gone(now)
	default:
		c.lc.Observed(now, c.reply)
		if st := c.reply.Status; st.Terminal() && st != mcp.StatusCancelled {
			c.lc.ResultReceived(now, st == mcp.StatusFailed) // the payload is inline (E50)
		}
	}
	c.follow()
}

// ended counts the task's outcome and thinks before the next create.
func (c *client) ended() {
	r := c.f.res
	switch c.lc.Outcome {
	case loadgen.OutcomeCompleted:
		r.Completed++
	case loadgen.OutcomeFailed:
		r.Failed++
	case loadgen.OutcomeLost:
		r.Lost++
	case loadgen.OutcomeExpired:
		r.Expired++
	default:
		r.Unknown++
	}
	r.PollsPerTask[c.lc.Polls]++
	c.after(c.f.cfg.Think, sendCreate)
}
