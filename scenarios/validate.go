package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Upper bounds that catch typos before they spawn a million goroutines.
const (
	maxClients = 1_000_000 // workload.clients and workload.max_in_flight
	maxRate    = 1_000_000 // arrivals per second
)

// reservedHeaders are set by the client itself; a scenario must not override them (H1-H11).
var reservedHeaders = []string{
	"accept", "content-length", "content-type", "host", "mcp-protocol-version", "mcp-session-id",
	"transfer-encoding",
}

// Validate reports every problem with s at once, as an errors.Join of *Error located at the
// SOURCE:LINE:COL the value came from (see Where). It does not change s.
func (s *Scenario) Validate() error {
	v := &validator{s: s}
	v.top()
	v.workload()
	v.client()
	v.server()
	v.faults()
	v.security()
	v.rollback()
	v.slo()
	for i, t := range s.Thresholds {
		if strings.TrimSpace(t.Expr) == "" {
			v.add(indexPath("thresholds", i), "must not be empty")
		}
	}
	if b := float64(s.ErrorBudget); !(b >= 0 && b <= 100) {
		v.add("error_budget", "must be in [0%%, 100%%], got %v", s.ErrorBudget)
	}
	return errors.Join(v.errs...)
}

// validator collects problems with their locations.
type validator struct {
	s    *Scenario
	errs []error
}

// add records a problem with the field at path.
func (v *validator) add(path, format string, args ...any) {
	e := &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
	e.Source, e.Line, e.Column = v.s.locate(path)
	v.errs = append(v.errs, e)
}

// positive, nonNegative and ratio are the common numeric rules.
func (v *validator) positive(path string, d Duration) {
	if d <= 0 {
		v.add(path, "must be > 0, got %v", d)
	}
}

func (v *validator) nonNegative(path string, d Duration) {
	if d < 0 {
		v.add(path, "must be >= 0, got %v", d)
	}
}

func (v *validator) ratio(path string, f float64) {
	if !(f >= 0 && f <= 1) {
		v.add(path, "must be in [0, 1], got %v", f)
	}
}

// oneOf checks an enumerated string.
func oneOf[T ~string](v *validator, path string, got T, valid ...T) {
	for _, x := range valid {
		if got == x {
			return
		}
	}
	list := make([]string, len(valid))
	for i, x := range valid {
		list[i] = string(x)
	}
	v.add(path, "must be one of %s, got %q", strings.Join(list, ", "), got)
}

func (v *validator) top() {
	s := v.s
	switch {
	case s.Name == "":
		v.add("name", "required")
	case !validName(s.Name):
		v.add("name", "must match [a-z0-9-]+, got %q", s.Name)
	}
	v.positive("duration", s.Duration)
	v.nonNegative("grace", s.Grace)
	if s.Target != "" {
		u, err := url.Parse(s.Target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.add("target", `must be "" (the embedded server) or an http(s) URL, got %q`, s.Target)
		}
	}
	lower := map[string]string{}
	for _, name := range sortedKeys(s.Headers) {
		path := "headers." + name
		l := strings.ToLower(name)
		switch {
		case !validHeaderName(name):
			v.add(path, "not a valid HTTP header name")
		case slices.Contains(reservedHeaders, l):
			v.add(path, "is set by the client itself and cannot be overridden")
		case lower[l] != "":
			v.add(path, "repeats header %s (header names ignore case)", lower[l])
		}
		lower[l] = name
		if strings.ContainsAny(s.Headers[name].Reveal(), "\r\n\x00") {
			v.add(path, "value must not contain CR, LF or NUL")
		}
	}
	if strings.TrimSpace(s.Tool) == "" {
		v.add("tool", "required")
	}
	if _, err := json.Marshal(s.Args); err != nil {
		v.add("args", "cannot be sent as JSON: %v", err)
	}
	v.nonNegative("task_ttl", s.TaskTTL)
	oneOf(v, "fallback", s.Fallback, FallbackRefuse, FallbackSync)
	if s.Protocol != "" {
		oneOf(v, "protocol", s.Protocol, ClientProtocols...)
	}
	// On the embedded server, an era pinned that the server is told not to serve.
	switch {
	case s.Target != "":
	case s.Protocol == "2026-07-28" && s.Server.Protocols == "legacy":
		v.add("protocol", "2026-07-28 pinned, but the embedded server serves 2025-11-25 only (server.protocols legacy): leave one out")
	case s.Protocol == "2025-11-25" && s.Server.Protocols == "modern":
		v.add("protocol", "2025-11-25 pinned, but the embedded server serves 2026-07-28 only (server.protocols modern): leave one out")
	}
}

func (v *validator) workload() {
	w := v.s.Workload
	switch w.Model {
	case ModelClosed:
		if w.Clients <= 0 || w.Clients > maxClients {
			v.add("workload.clients", "must be > 0 and <= %d, got %d", maxClients, w.Clients)
		}
		v.nonNegative("workload.think_time", w.ThinkTime)
		if !w.Rate.IsZero() {
			v.add("workload.rate", "applies to the open model only (workload.model is closed)")
		}
		if len(w.Stages) > 0 {
			v.add("workload.stages", "apply to the open model only (workload.model is closed)")
		}
	case ModelOpen:
		if w.Clients < 0 || w.Clients > maxClients {
			v.add("workload.clients", "must be >= 0 (0 = max_in_flight) and <= %d, got %d", maxClients, w.Clients)
		}
		if w.ThinkTime != 0 {
			v.add("workload.think_time", "applies to the closed model only (workload.model is open)")
		}
		if w.MaxInFlight <= 0 || w.MaxInFlight > maxClients {
			v.add("workload.max_in_flight", "must be > 0 and <= %d, got %d", maxClients, w.MaxInFlight)
		}
		v.rate("workload.rate", w.Rate)
		if len(w.Stages) == 0 && w.Rate.PerSecond() <= 0 {
			v.add("workload.rate", "must be > 0 for the open model without stages, got %v", w.Rate)
		}
		for i, st := range w.Stages {
			p := indexPath("workload.stages", i)
			v.nonNegative(p+".duration", st.Duration)
			v.rate(p+".target", st.Target)
		}
		if len(w.Stages) > 0 {
			total := w.StagesDuration()
			peak := w.Rate.PerSecond()
			for _, st := range w.Stages {
				peak = max(peak, st.Target.PerSecond())
			}
			switch {
			case peak <= 0:
				v.add("workload.stages", "every target is 0/s: no task would ever start")
			case total > time.Duration(v.s.Duration) && v.s.Duration > 0:
				v.add("workload.stages", "last %v in total, longer than duration (%v)", total, v.s.Duration)
			}
		}
	default:
		oneOf(v, "workload.model", w.Model, ModelClosed, ModelOpen)
		if w.Clients < 0 || w.Clients > maxClients { // wrong in either model
			v.add("workload.clients", "must be >= 0 and <= %d, got %d", maxClients, w.Clients)
		}
	}
}

// rate checks an arrival rate: finite, >= 0 and at most maxRate per second.
func (v *validator) rate(path string, r Rate) {
	ps := r.PerSecond()
	if r.Count < 0 || r.Per < 0 || math.IsNaN(ps) || math.IsInf(ps, 0) || ps > maxRate {
		v.add(path, "must be in [0/s, %d/s], got %v", maxRate, r)
	}
}

func (v *validator) client() {
	c := v.s.Client
	p := c.Poll
	oneOf(v, "client.poll.policy", p.Policy, PollServer, PollFixed, PollBackoff)
	v.positive("client.poll.interval", p.Interval)
	if p.Policy == PollBackoff {
		if !(p.Multiplier >= 1) || math.IsInf(p.Multiplier, 0) {
			v.add("client.poll.multiplier", "must be >= 1, got %v", p.Multiplier)
		}
		if p.MaxInterval < p.Interval {
			v.add("client.poll.max_interval", "must be >= interval (%v), got %v", p.Interval, p.MaxInterval)
		}
	}
	if !(p.Jitter >= 0 && p.Jitter < 1) {
		v.add("client.poll.jitter", "must be in [0, 1), got %v", p.Jitter)
	}
	v.nonNegative("client.poll.min", p.Min)
	v.nonNegative("client.poll.max", p.Max)
	if p.Max > 0 && p.Min > p.Max {
		v.add("client.poll.min", "must be <= max (%v), got %v", p.Max, p.Min)
	}
	v.positive("client.poll.deadline", p.Deadline)
	oneOf(v, "client.result", c.Result, ResultPoll, ResultBlock)
	v.ratio("client.cancel.probability", c.Cancel.Probability)
	c.Cancel.Delay.problems(v, "client.cancel.delay")
	in := c.Input
	v.ratio("client.input.accept", in.Accept)
	v.ratio("client.input.decline", in.Decline)
	v.ratio("client.input.cancel", in.Cancel)
	if sum := in.Accept + in.Decline + in.Cancel; math.Abs(sum-1) > 1e-9 {
		v.add("client.input", "accept + decline + cancel must be 1, got %v", sum)
	}
	v.positive("client.request_timeout", c.RequestTimeout)
	if c.MaxConns < 0 {
		v.add("client.max_conns", "must be >= 0, got %d", c.MaxConns)
	}
	v.sources()
}

// sources checks client.source_addresses: each entry parses, and the addresses can reach the
// target (SourceProblems).
func (v *validator) sources() {
	var addrs []netip.Addr
	for i, e := range v.s.Client.SourceAddresses {
		a, err := parseSourceEntry(strings.TrimSpace(e), maxSourceAddrs-len(addrs))
		if err != nil {
			v.add(indexPath("client.source_addresses", i), "%q: %v", e, err)
			continue
		}
		for _, p := range SourceProblems(v.s.Target, a) {
			v.add(indexPath("client.source_addresses", i), "%s", p)
		}
		addrs = append(addrs, a...)
	}
}

func (v *validator) server() {
	sv := v.s.Server
	v.nonNegative("server.poll_interval", sv.PollInterval)
	v.positive("server.ttl", sv.TTL)
	v.positive("server.max_ttl", sv.MaxTTL)
	if sv.TTL > 0 && sv.MaxTTL > 0 && sv.TTL > sv.MaxTTL {
		v.add("server.ttl", "must be <= max_ttl (%v), got %v", sv.MaxTTL, sv.TTL)
	}
	v.positive("server.reaper_interval", sv.ReaperInterval)
	v.nonNegative("server.ledger.window", sv.Ledger.Window)
	if sv.ListPageSize <= 0 {
		v.add("server.list_page_size", "must be > 0, got %d", sv.ListPageSize)
	}
	v.tokens("server.tokens", sv.Tokens)
	v.serverKnobs()
}

// validName reports whether s matches [a-z0-9-]+.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return s != ""
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// validToken reports whether s is visible ASCII without spaces.
func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// tokens checks a tenant -> bearer token map at prefix: names non-empty, tokens non-empty
// visible ASCII without spaces (they go in an Authorization header) and distinct.
func (v *validator) tokens(prefix string, m map[string]Secret) {
	owner := map[Secret]string{}
	for _, tenant := range sortedKeys(m) {
		path := prefix + "." + tenant
		tok := m[tenant]
		switch {
		case strings.TrimSpace(tenant) == "":
			v.add(path, "tenant name must not be empty")
		case tok == "":
			v.add(path, "token must not be empty")
		case !validToken(tok.Reveal()):
			v.add(path, "token must be visible ASCII without spaces (it goes in an Authorization header)")
		case owner[tok] != "":
			v.add(path, "token is the same as tenant %s's: tokens must be distinct", owner[tok])
		}
		owner[tok] = tenant
	}
}
