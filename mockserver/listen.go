package mockserver

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/internal/mcp"
)

// subscriptions/listen with notifications.taskIds: the modern era's push channel for tasks
// (docs/RULES.md#e17 to #e20, #e61 to #e63). A listen is one POST whose reply is an SSE
// stream that stays open:
//
//	1. the acknowledgement, notifications/subscriptions/acknowledged, first (E17): its
//	   notifications.taskIds are the ids the server agreed to report, those of the request
//	   that name a task the caller may see (the caller's tenant's, as tasks/get finds them;
//	   insecure.go); an unknown or foreign id is left out, as silently as tasks/get denies it
//	   (E67). Nothing else of the filter is agreed (the tools never change): E19.
//	2. a notifications/tasks for each agreed task as it is now, then one at every change of
//	   its status: the task exactly as tasks/get would return it at that moment, payload
//	   included, with _meta io.modelcontextprotocol/subscriptionId = the listen request's id
//	   (E18, E62). No progress or log notification ever (E63).
//	3. the end. Graceful, with the listen result {resultType: "complete", _meta:
//	   {subscriptionId}} (E20): when every agreed task is terminal (or deleted: a task that
//	   vanished, by its ttl or early_expiry, is reported no more) or when the server shuts
//	   down. Abrupt, without it: when the client disconnects (its request context ends, or a
//	   write fails), at an injected restart (faults.go), or when the tenant loses the right to
//	   fetch results while a result is due (Config.Revocations).
//
// A listen that asks for taskIds without declaring the Tasks extension gets -32021 (E61);
// one without notifications, or with taskIds that are not an array of at most
// maxListenTasks strings, -32602. With Config.StatusNotifications off, or without Tasks,
// the server agrees to report nothing (an empty taskIds, which the spec allows), and the
// stream ends at once, gracefully.
//
// Bounded: at most Config.MaxSubscriptions listens are open at once; one more is answered
// HTTP 429 with Retry-After and a JSON-RPC error (-32603), as a full server answers a
// create with refuse_429. A listen costs its handler goroutine and a wake channel
// registered with each agreed task; both are released when it ends, however it ends.

// maxListenTasks bounds the taskIds of one listen.
const maxListenTasks = 256

// listens is the server's set of open subscriptions/listen streams.
type listens struct {
	open    atomic.Int64  // open streams (Stats.Subscriptions)
	refused atomic.Uint64 // listens answered 429: Config.MaxSubscriptions were open

	mu   sync.Mutex
	drop chan struct{} // closed and replaced by a restart: every open stream ends abruptly
}

// dropped returns a channel closed at the next restart.
func (l *listens) dropped() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drop == nil {
		l.drop = make(chan struct{})
	}
	return l.drop
}

// dropAll ends every open stream without its result (restart, faults.go).
func (l *listens) dropAll() {
	l.mu.Lock()
	if l.drop != nil {
		close(l.drop)
		l.drop = nil
	}
	l.mu.Unlock()
}

// listenParams are the params of subscriptions/listen that the server reads.
type listenParams struct {
	Notifications *struct {
		TaskIDs json.RawMessage `json:"taskIds"`
	} `json:"notifications"`
}

// listened is one agreed task of a listen.
type listened struct {
	t    *task
	last mcp.Status // the status last sent
	done bool       // terminal or deleted: nothing more is sent for it
}

// subscriptionsListen serves a subscriptions/listen (see the top of the file).
func (m *statelessFront) subscriptionsListen(c *call) {
	s := m.srv
	ids, e := m.readListen(c)
	if e != nil {
		c.reply(nil, e)
		return
	}
	if ids != nil && s.resultDenied(c) {
		return // 403: its notifications would carry results (insecure.go)
	}
	if n := m.listens.open.Add(1); n > int64(s.cfg.MaxSubscriptions) {
		m.listens.open.Add(-1)
		m.listens.refused.Add(1)
		c.tooMany(s.cfg.Backpressure.RetryAfter, mcp.Errorf(mcp.CodeInternalError,
			"server at capacity: %d subscriptions/listen streams open (max_subscriptions %d)", n-1, s.cfg.MaxSubscriptions))
		return
	}
	defer m.listens.open.Add(-1)
	tasks := m.agree(c, ids)
	wake := make(chan struct{}, 1)
	for _, l := range tasks {
		l.t.subscribe(wake)
	}
	defer func() {
		for _, l := range tasks {
			l.t.unsubscribe(wake)
		}
	}()
	if !c.replyLatency() {
		return
	}
	m.runListen(c, tasks, ids != nil, wake)
}

// readListen reads the taskIds of a listen: nil when the filter does not ask for them.
func (m *statelessFront) readListen(c *call) ([]string, *mcp.Error) {
	var p listenParams
	if err := json.Unmarshal(c.msg.Params, &p); err != nil || p.Notifications == nil {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid subscriptions/listen params: notifications (a SubscriptionFilter) is required")
	}
	raw := p.Notifications.TaskIDs
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if e := c.modern.requireTasks("subscriptions/listen with notifications.taskIds"); e != nil {
		return nil, e // E61
	}
	ids := []string{}
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid subscriptions/listen params: notifications.taskIds must be an array of task ids")
	}
	if len(ids) > maxListenTasks {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid subscriptions/listen params: %d taskIds, at most %d per listen", len(ids), maxListenTasks)
	}
	return ids, nil
}

// agree returns the tasks of ids the server agrees to report to c: each distinct id that
// names a task c may see, in the order asked; none without status notifications.
func (m *statelessFront) agree(c *call, ids []string) []*listened {
	s := m.srv
	if !s.cfg.StatusNotifications || !s.tasksOn() {
		return nil
	}
	var out []*listened
	seen := make(map[*task]bool, len(ids))
	for _, id := range ids {
		t := s.modes.scope.find(s.store.lookup([]byte(id)), c.tenant, c.sess)
		if t != nil && !seen[t] {
			seen[t] = true
			out = append(out, &listened{t: t})
		}
	}
	return out
}

// runListen writes the stream of a listen whose agreed tasks are registered with wake:
// the acknowledgement, the tasks as they are, then every change, until the end.
func (m *statelessFront) runListen(c *call, tasks []*listened, askedTasks bool, wake <-chan struct{}) {
	s := m.srv
	sw := newEventStream(c.w)
	if sw.start() != nil {
		return
	}
	sub := c.msg.ID
	// Counted before it is written: a client that has read it sees it on /metrics.
	s.notes.count(eraModern, noteAcknowledged)
	if sw.event(m.acknowledgement(sub, tasks, askedTasks)) != nil {
		return
	}
	drop := m.listens.dropped()
	for {
		switch m.sendChanges(c, sw, tasks) {
		case listenGone:
			return
		case listenDone:
			m.endListen(c, sw)
			return
		}
		select {
		case <-wake:
		case <-c.r.Context().Done():
			return // E21: the client closed the stream
		case <-drop:
			return // restart: dropped without the result (E20)
		case <-s.closing:
			m.endListen(c, sw)
			return
		}
	}
}

// listenState is what sendChanges found.
type listenState uint8

const (
	listenOn   listenState = iota // tasks left to report
	listenDone                    // every task terminal or deleted: end gracefully
	listenGone                    // the stream broke, or must break: end abruptly
)

// sendChanges sends a notification for each agreed task whose status changed since the last
// one sent (every task, the first time).
func (m *statelessFront) sendChanges(c *call, sw *eventStream, tasks []*listened) listenState {
	s := m.srv
	left := 0
	for _, l := range tasks {
		if l.done {
			continue
		}
		msg, st := l.change(c.msg.ID)
		if st == listenGone {
			return listenGone // not encodable: as the strict writer would refuse a tasks/get
		}
		if msg != nil {
			if l.done && s.revoked(c.tenant, true) {
				return listenGone // the result is due, the right to fetch it is gone
			}
			s.notes.count(eraModern, noteTaskStatus) // before it is written, as above
			if sw.event(msg) != nil {
				return listenGone
			}
		}
		if !l.done {
			left++
		}
	}
	if left == 0 {
		return listenDone
	}
	return listenOn
}

// change returns the notification of l's task when its status differs from the last one
// sent, nil otherwise, and marks l done when the task is terminal or deleted.
func (l *listened) change(sub mcp.ID) ([]byte, listenState) {
	t := l.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		l.done = true
		return nil, listenOn
	}
	d := t.detailedLocked(true)
	if d.Status == l.last {
		return nil, listenOn
	}
	b, err := mcp.AppendTaskNotification(nil, &d, sub)
	if err != nil {
		return nil, listenGone
	}
	l.last = d.Status
	if d.Status.Terminal() {
		l.done = true
		t.fetched = true // the payload went out inline (orphaned tasks)
	}
	return b, listenOn
}

// acknowledgement is the first message of a listen (E17): the taskIds agreed, only when
// taskIds were asked for (E19).
func (m *statelessFront) acknowledgement(sub mcp.ID, tasks []*listened, askedTasks bool) []byte {
	b := []byte(`{"jsonrpc":"2.0","method":"` + mcp.V20260728{}.Method(mcp.OpSubscriptionsAcknowledged) + `","params":{"notifications":{`)
	if askedTasks {
		b = append(b, `"taskIds":[`...)
		for i, l := range tasks {
			if i > 0 {
				b = append(b, ',')
			}
			b = mcp.AppendString(b, l.t.id)
		}
		b = append(b, ']')
	}
	b = append(b, `},"_meta":`...)
	b = append(b, mcp.SubscriptionMeta(sub)...)
	return append(b, "}}"...)
}

// endListen ends a listen gracefully (E20): the result, naming the subscription and the
// server, as the last event.
func (m *statelessFront) endListen(c *call, sw *eventStream) {
	s := m.srv
	res := []byte(`{"resultType":"complete","_meta":{"` + mcp.MetaSubscriptionID + `":`)
	res = append(res, c.msg.ID.String()...)
	res = append(res, `,"`+mcp.MetaServerInfo+`":`...)
	res = append(res, m.impl...)
	res = append(res, "}}"...)
	if sw.event(mcp.AppendResult(nil, c.msg.ID, res)) == nil {
		s.requests.answered(eraModern, c.op, false)
	}
}

// subscribe registers wake to be signalled at every change of t (signalLocked).
func (t *task) subscribe(wake chan struct{}) {
	t.mu.Lock()
	t.subs = append(t.subs, wake)
	t.mu.Unlock()
}

// unsubscribe removes wake from t.
func (t *task) unsubscribe(wake chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, w := range t.subs {
		if w == wake {
			t.subs = append(t.subs[:i], t.subs[i+1:]...)
			break
		}
	}
	if len(t.subs) == 0 {
		t.subs = nil
	}
}

// eventStream writes an SSE reply of the modern era: "data:" events and nothing else, no
// priming event and no event ids, since nothing resumes (E29, E30), and X-Accel-Buffering:
// no (E28). Only the handler goroutine that owns w uses it.
type eventStream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

func newEventStream(w http.ResponseWriter) *eventStream {
	return &eventStream{w: w, rc: http.NewResponseController(w)}
}

// start sends the headers.
func (es *eventStream) start() error {
	h := es.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	es.w.WriteHeader(http.StatusOK)
	return es.rc.Flush()
}

// event sends one message.
func (es *eventStream) event(msg []byte) error {
	var err error
	es.buf, err = writeEvent(es.w, es.rc, es.buf[:0], msg) // http.go
	return err
}

// noteKind is a notification the server sends, counted by era (Stats.Notifications).
type noteKind uint8

const (
	noteTaskStatus   noteKind = iota // notifications/tasks/status (legacy), notifications/tasks (modern)
	noteAcknowledged                 // notifications/subscriptions/acknowledged (modern)
	numNoteKinds
)

// metricName is the kind's method label on /metrics: its op's metric name (tasks_status for
// the task notification of either era).
func (k noteKind) metricName() string {
	if k == noteAcknowledged {
		return mcp.OpSubscriptionsAcknowledged.MetricName()
	}
	return mcp.OpTaskStatus.MetricName()
}

// noteCounters count the notifications sent, by era and kind.
type noteCounters [numEras][numNoteKinds]atomic.Uint64

func (n *noteCounters) count(e era, k noteKind) { n[e%numEras][k%numNoteKinds].Add(1) }

// Notifications counts the notifications the server sent, by era and kind: [era][kind],
// era 0 legacy and 1 modern, kind 0 the task status notification and 1 the subscription
// acknowledgement (modern only). Each reads its stable names from Each.
type Notifications [numEras][numNoteKinds]uint64

// Each calls f with the era, the method label and the count of every slot, in a fixed
// order, skipping the acknowledgement of the legacy era (it has none).
func (n *Notifications) Each(f func(era, method string, count uint64)) {
	for e := range n {
		for k := range n[e] {
			if era(e) == eraLegacy && noteKind(k) == noteAcknowledged {
				continue
			}
			f(era(e).String(), noteKind(k).metricName(), n[e][k])
		}
	}
}

func (n *noteCounters) snapshot() Notifications {
	var out Notifications
	for e := range n {
		for k := range n[e] {
			out[e][k] = n[e][k].Load()
		}
	}
	return out
}
