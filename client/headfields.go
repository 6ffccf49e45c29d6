package client

import (
	"bufio"
	"bytes"
	"net/http"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The header fields of a session's POSTs, rendered once. Every POST of a run's virtual
// clients carries the same fields but for a few values: the Target's header, Accept,
// Content-Type and MCP-Protocol-Version are the same for all of them; a session adds its
// id; a request of 2026-07-28 its Mcp-Method and Mcp-Name (E24, E64). The lean transport
// (h1.go) rendered the header map of each request anew, validating every value, and a
// request of 2026-07-28 built a map of its own for its two fields after every wait
// (modernHeader): about 3,000 instructions a request in 2025-11-25, more in 2026-07-28.
// Now the shared fields are rendered once per target and version (headBase), looked up
// once per session (Session.fields), and each request appends its own lines to them
// (headFields). Requests through any other transport keep their header maps.

// renderedBase is the rendered shared fields of a target's POSTs for one version.
type renderedBase struct {
	version string
	fields  []byte // nil: a value does not render; the POSTs take the header map's path
}

// headBase returns the shared header fields of t's POSTs for version, rendered as the lean
// transport writes a header (writeFields): those of Session.postHeader without a session
// id, rendered once per Target (CacheEndpoint's cache) and version. It is nil when there is
// no cache, or when they do not render (an invalid value), so that requests take the header
// map's path and fail as writeFields fails them. Like CacheEndpoint, it takes t as it is
// when its requests begin: a Target is not changed once in use.
func (t *Target) headBase(version string) []byte {
	if t.base == nil {
		return nil
	}
	if v, ok := t.base.Load(t); ok {
		if b := v.(*renderedBase); b.version == version {
			return b.fields
		}
	}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	b := &renderedBase{version: version}
	if !overridden(t.Header) && writeFields(bw, (&Session{t: t, version: version}).postHeader()) == nil && bw.Flush() == nil {
		b.fields = buf.Bytes()
	}
	t.base.Store(t, b) // a run speaks one version: one entry per Target serves it
	return b.fields
}

// overridden reports whether h, a Target's header, has a field that a session's own
// replaces in its header map (Session.header, modernHeader): rendered beside the shared
// ones, both would be sent. Such a Target's POSTs take the header map's path.
func overridden(h http.Header) bool {
	for _, k := range [...]string{"Mcp-Session-Id", mcp.HeaderMethod, mcp.HeaderName} {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}

// leanTransport returns the lean transport when s's POSTs go straight through it: a plain
// client (Target.send's direct path) and an http:// endpoint. nil otherwise.
func (s *Session) leanTransport() *h1Transport {
	c := s.t.Client
	if c.Jar != nil || c.Timeout != 0 || c.CheckRedirect != nil {
		return nil
	}
	var t *h1Transport
	switch rt := c.Transport.(type) {
	case *h1Transport:
		t = rt
	case *schemeTransport:
		t = rt.plain
	default:
		return nil
	}
	if u, err := s.t.endpoint(); err != nil || u.Scheme != "http" {
		return nil
	}
	return t
}

// headFields appends to dst the rendered header fields of a POST on s, the open session or
// requester: the shared ones (s.fields, headBase's), then the session id, and for a request
// of 2026-07-28 Mcp-Method (method) and Mcp-Name (name, "" for none). It reports false when
// s has no rendered fields or one of its own does not render: the POST then takes the
// header map's path, where it fails as before.
func (s *Session) headFields(dst []byte, method, name string) ([]byte, bool) {
	if s.fields == nil {
		return dst, false
	}
	dst = append(dst, s.fields...)
	for _, f := range [...]struct{ k, v string }{{"Mcp-Session-Id", s.id}, {mcp.HeaderMethod, method}, {mcp.HeaderName, name}} {
		if f.v == "" {
			continue
		}
		if !validValue(f.v) {
			return dst, false
		}
		dst = append(append(append(append(dst, f.k...), ": "...), f.v...), "\r\n"...)
	}
	return dst, true
}

// leanPost is a POST of a session as the lean transport takes it: the request, its header
// the session's shared one (Session.postHdr), and its fields rendered (headFields).
type leanPost struct {
	t      *h1Transport
	fields []byte
}

// send sends req through p's transport with p's fields, and reports errors as Target.send
// does on its direct path.
func (p leanPost) send(req *http.Request) (*http.Response, error) {
	resp, err := p.t.roundTripFields(req, p.fields)
	if err != nil {
		if cerr := requestErr(req.Context()); cerr != nil {
			err = cerr
		}
	}
	return resp, err
}
