package mockserver

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Rate limits (Backpressure.*Rate*): token buckets of golang.org/x/time/rate, refilled at
// the configured rate per second and holding Burst tokens (0 = 1), one bucket per client
// (MCP session; in the modern era, which has no sessions, its bearer token, and one client
// for all without tokens: modernfaults.go) and one per tenant, separately for tasks/get and
// for creates (task-augmented tools/call, or a tools/call the modern era makes a task).
// Buckets are made on first use. A request takes one token from its client's
// bucket and one from its tenant's; when either is empty it is answered HTTP 429 with
//
//	Retry-After = max(1, ceil(delay / 1s)), delay = when the emptier bucket holds a token again
//
// (the delay of a reservation, which is then cancelled: a refused request takes no token)
// and a JSON-RPC error -32603 body. Without a configured rate the server holds no limiter
// and the request path tests one nil pointer.

// limitKind is what a limiter meters.
type limitKind uint8

const (
	limitGet limitKind = iota
	limitCreate
	numLimitKinds
)

func (k limitKind) String() string {
	if k == limitGet {
		return mcp.OpTasksGet.Name()
	}
	return "task creation"
}

// limits is the server's rate limit state; nil when no rate is set.
type limits struct {
	perClient [numLimitKinds]rate.Limit // 0 = no per-client limit
	perTenant [numLimitKinds]rate.Limit // 0 = no per-tenant limit
	burst     int

	mu      sync.Mutex
	tenants map[string]*[numLimitKinds]*rate.Limiter
	tokens  map[string]*[numLimitKinds]*rate.Limiter // per-client buckets of the modern era

	limited atomic.Uint64 // requests answered 429 by a rate limit
}

// sessionLimits are one session's limiters, made on first use.
type sessionLimits [numLimitKinds]atomic.Pointer[rate.Limiter]

func newLimits(b Backpressure) *limits {
	if b.GetRatePerClient == 0 && b.GetRatePerTenant == 0 && b.CreateRatePerClient == 0 && b.CreateRatePerTenant == 0 {
		return nil
	}
	l := &limits{burst: max(b.Burst, 1), tenants: make(map[string]*[numLimitKinds]*rate.Limiter),
		tokens: make(map[string]*[numLimitKinds]*rate.Limiter)}
	l.perClient[limitGet], l.perTenant[limitGet] = rate.Limit(b.GetRatePerClient), rate.Limit(b.GetRatePerTenant)
	l.perClient[limitCreate], l.perTenant[limitCreate] = rate.Limit(b.CreateRatePerClient), rate.Limit(b.CreateRatePerTenant)
	return l
}

// clientLimiter returns sess's limiter of kind k, or nil when k has no per-client rate.
func (l *limits) clientLimiter(sess *session, k limitKind) *rate.Limiter {
	if l.perClient[k] == 0 || sess == nil {
		return nil
	}
	p := &sess.limits[k]
	if lim := p.Load(); lim != nil {
		return lim
	}
	p.CompareAndSwap(nil, rate.NewLimiter(l.perClient[k], l.burst))
	return p.Load()
}

// tenantLimiter returns tenant's limiter of kind k, or nil when k has no per-tenant rate.
func (l *limits) tenantLimiter(tenant string, k limitKind) *rate.Limiter {
	return l.keyed(l.tenants, tenant, l.perTenant[k], k)
}

// callerLimiter returns the per-client limiter of kind k of c, as c's front end names the
// client (frontEnd.limiter); nil when k has no per-client rate.
func (l *limits) callerLimiter(c *call, k limitKind) *rate.Limiter {
	return c.fe.limiter(l, c.sess, c.r, k)
}

// tokenLimiter returns the per-client limiter of kind k of a modern request r: its bearer
// token's when bound (every modern caller's one without tokens: an unchecked header must
// not grow the table); nil when k has no per-client rate.
func (l *limits) tokenLimiter(bound bool, r *http.Request, k limitKind) *rate.Limiter {
	key := ""
	if bound { // authenticate checked the token: the table holds at most the configured ones
		key = r.Header.Get("Authorization")
	}
	return l.keyed(l.tokens, key, l.perClient[k], k)
}

// keyed returns the limiter of kind k with rate r kept in m under key, made on first use;
// nil when r is 0.
func (l *limits) keyed(m map[string]*[numLimitKinds]*rate.Limiter, key string, r rate.Limit, k limitKind) *rate.Limiter {
	if r == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := m[key]
	if ls == nil {
		ls = new([numLimitKinds]*rate.Limiter)
		m[key] = ls
	}
	if ls[k] == nil {
		ls[k] = rate.NewLimiter(r, l.burst)
	}
	return ls[k]
}

// allow takes a token of kind k for c from its client's and its tenant's buckets. When
// either is empty it takes none, answers c with 429 + Retry-After and reports false.
func (s *core) allow(c *call, k limitKind) bool {
	l := s.limits
	now := s.clock.Now()
	var delay time.Duration
	var rs [2]*rate.Reservation
	for i, lim := range [2]*rate.Limiter{l.callerLimiter(c, k), l.tenantLimiter(c.tenant, k)} {
		if lim == nil {
			continue
		}
		rs[i] = lim.ReserveN(now, 1)
		delay = max(delay, rs[i].DelayFrom(now))
	}
	if delay == 0 {
		return true
	}
	for _, r := range rs {
		if r != nil {
			r.CancelAt(now)
		}
	}
	l.limited.Add(1)
	secs := retryAfterSeconds(delay)
	c.tooMany(delay, &mcp.Error{Code: mcp.CodeInternalError,
		Message: "rate limited: too many " + k.String() + " requests; retry after " + strconv.FormatInt(secs, 10) + " s"})
	return false
}

// rateLimited is the number of requests answered 429 by a rate limit.
func (l *limits) rateLimited() uint64 {
	if l == nil {
		return 0
	}
	return l.limited.Load()
}
