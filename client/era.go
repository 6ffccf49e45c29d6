package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The protocol versions a Target's Protocol may pin ("" detects the era).
const (
	ProtocolAuto   = ""
	ProtocolLegacy = mcp.Version20251125 // initialize and sessions
	ProtocolModern = mcp.Version20260728 // stateless, with the Tasks extension
)

// Era is what tasksim found a target to speak, by the rule of docs/RULES.md#e32 (or by
// Target.Protocol, which pins it without a request).
type Era struct {
	// Version is the era's protocol version tasksim speaks with the target: 2026-07-28 when
	// the target is modern, 2025-11-25 when it is legacy (initialize then negotiates the
	// version of the session, which may be older).
	Version string
	// Supported are the versions server/discover listed (supportedVersions); nil when it
	// did not answer (a legacy target, a modern one that refused it, or a pin).
	Supported []string
	// Discover is server/discover's result; nil when it did not answer.
	Discover *mcp.DiscoverResult
	// ServerInfo is the server named in server/discover's _meta (E6); zero when none.
	ServerInfo mcp.Implementation
	// How says what told the era: "server/discover answered", the modern error that did, the
	// legacy-looking answer that made the client fall back to initialize, or the pin.
	How string
	// Pinned: Target.Protocol chose the era; nothing was sent.
	Pinned bool
	// FellBack: the modern request was answered as a legacy server answers, and the client
	// fell back to initialize (E32).
	FellBack bool
}

// Modern reports whether the era is 2026-07-28 (or later).
func (e Era) Modern() bool { return mcp.IsModern(e.Version) }

// Eras lists the eras the target is known to serve, by their versions, the modern one first:
// what server/discover listed (2025-11-25 standing for every session version listed), else
// the era found.
func (e Era) Eras() []string {
	if e.Supported == nil {
		return []string{e.Version}
	}
	var eras []string
	if slices.ContainsFunc(e.Supported, mcp.IsModern) {
		eras = append(eras, ProtocolModern)
	}
	if slices.ContainsFunc(e.Supported, mcp.SessionVersion) {
		eras = append(eras, ProtocolLegacy)
	}
	return eras
}

// ServesLegacy reports whether the target can be spoken to with initialize and sessions, as
// far as is known: a legacy verdict, or a modern one whose server/discover lists a session
// version. A modern verdict without a list (a modern error answered server/discover) leaves
// it to initialize to tell.
func (e Era) ServesLegacy() bool {
	switch {
	case !e.Modern():
		return true
	case e.Supported == nil:
		return !e.Pinned
	}
	return slices.ContainsFunc(e.Supported, mcp.SessionVersion)
}

// eraCache is a Target's verdict (E34): the URL it was found for, so that a Target whose URL
// changes (a chaos proxy put in front) detects again. mu is held through a detection, so
// that clients sharing the Target send one server/discover between them.
type eraCache struct {
	mu  sync.Mutex
	url string
	era *Era
}

// eraCacheInit guards the allocation of a Target's cache (Targets are copied by value, e.g.
// per tenant: a copy made after the first detection shares the verdict).
var eraCacheInit sync.Mutex

func (t *Target) eraCache() *eraCache {
	eraCacheInit.Lock()
	defer eraCacheInit.Unlock()
	if t.era == nil {
		t.era = &eraCache{}
	}
	return t.era
}

// Era returns the era of the target, detecting it once and caching the verdict in t (E34;
// ForgetEra drops it). Target.Protocol pins it without a request. Detection follows E32 for
// HTTP: a modern request first, server/discover with the _meta envelope and the headers of
// mcp.HeadersFor; then
//
//   - a DiscoverResult, or a recognised modern error (-32020 or -32021 with HTTP 400, -32601
//     with 404, the draft numbers -32001 and -32003 read as those, docs/RULES.md#ext-gap-8),
//     means modern. After -32020 or -32021 the client fixes its request and does not fall
//     back; Era.Discover is then nil.
//   - -32022 with 400 (the version is not served, E9) is retried once with 2026-07-28 when
//     data.supported lists it; when it lists only session versions the client falls back to
//     initialize; when it lists neither, the error says so (E10).
//   - anything else that is an HTTP answer (an empty or unrecognised 400 body, a 404 without
//     -32601, a 200 with a JSON-RPC error or a result that is no DiscoverResult, an HTML
//     page) means legacy: the client falls back to initialize, which says what is wrong if
//     anything is.
//
// An error is returned, and nothing cached, when the target cannot be reached or refuses
// the credentials (401, 403): in the words of the probe (ProbeWith).
func (t *Target) Era(ctx context.Context) (Era, error) {
	switch t.Protocol {
	case ProtocolAuto:
	case ProtocolLegacy, ProtocolModern:
		return Era{Version: t.Protocol, Pinned: true, How: "pinned to " + t.Protocol + ": not detected"}, nil
	default:
		return Era{}, fmt.Errorf("protocol %q: tasksim speaks %s or %s (or detects the era when none is given)", t.Protocol, ProtocolLegacy, ProtocolModern)
	}
	c := t.eraCache()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.era != nil && c.url == t.URL {
		return *c.era, nil
	}
	era, err := t.detectEra(ctx)
	if err != nil {
		return Era{}, err
	}
	c.url, c.era = t.URL, &era
	return era, nil
}

// ForgetEra drops the cached verdict, so that the next Era detects again: what a client does
// when requests in the era it found fail (E34).
func (t *Target) ForgetEra() {
	c := t.eraCache()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.era = nil
}

// detectEra sends server/discover and reads the answer (Era): a result (discovered), or a
// refusal (discoverRefused), after which a -32022 listing 2026-07-28 is retried once.
func (t *Target) detectEra(ctx context.Context) (Era, error) {
	s := &modernSession{t: t, version: ProtocolModern}
	retried := false
	for {
		rep, err := s.call(ctx, mcp.OpServerDiscover, nil, mcp.ModernClientCapabilities{})
		if err == nil {
			return t.discovered(rep, s.version, retried)
		}
		era, again, err := t.discoverRefused(ctx, err, s.version, retried)
		if !again {
			return era, err
		}
		retried, s.version = true, ProtocolModern
	}
}

// fellBack is the legacy verdict of an answer that is no modern one: the client falls back
// to initialize (E32); format and args say what the answer was.
func fellBack(format string, args ...any) (Era, error) {
	return Era{Version: ProtocolLegacy, How: fmt.Sprintf(format, args...) + ": falling back to initialize", FellBack: true}, nil
}

// discovered reads the reply (HTTP 200) to server/discover sent in version (retried: after a
// -32022): a DiscoverResult that lists version is modern; a JSON-RPC error or another result
// is legacy.
func (t *Target) discovered(rep Reply, version string, retried bool) (Era, error) {
	if rep.Err != nil {
		return fellBack("server/discover answered HTTP 200 with JSON-RPC error %d (a modern error has its own status, E27)", rep.Err.Code)
	}
	era, derr := readDiscover(rep.Result)
	if derr != nil {
		return fellBack("server/discover answered HTTP 200 with no DiscoverResult (%v)", derr)
	}
	if !slices.Contains(era.Supported, version) {
		// Answered, yet not in the version asked: a server that should have refused
		// with -32022 (E9), read as if it had (the go-sdk's stateful HTTP handler
		// answers so: it serves 2026-07-28 only when stateless).
		said := fmt.Sprintf("server/discover answered in %s, but its supportedVersions %s do not list it (E9 wants -32022)", version, quoteList(era.Supported))
		if slices.ContainsFunc(era.Supported, mcp.SessionVersion) {
			era.Version, era.How, era.FellBack = ProtocolLegacy, said+": falling back to initialize", true
			return era, nil
		}
		return Era{}, &UnsupportedError{URL: t.URL, Supported: era.Supported, How: said}
	}
	era.Version, era.How = version, "server/discover answered"
	if retried {
		era.How += " (after -32022, again with " + version + ")"
	}
	return era, nil
}

// discoverRefused reads a server/discover (sent in version) that got no result (err): an
// outage or a denial is an error, a modern error a modern verdict, any other answer legacy.
// again says to send it once more, in 2026-07-28 (a -32022 that lists it, not yet retried).
func (t *Target) discoverRefused(ctx context.Context, err error, version string, retried bool) (era Era, again bool, _ error) {
	var he *HTTPError
	var pe *ProtocolError
	var te *TransportError
	switch {
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		return Era{}, false, t.connectError(err)
	case errors.As(err, &pe):
		era, err = fellBack("server/discover: %v", err)
		return era, false, err
	case errors.As(err, &te) && te.Answered && ctx.Err() == nil:
		// HTTP 200 and a stream that ended without the reply: an answer, not an outage
		// (E32 falls back on any answer that is not a modern one).
		era, err = fellBack("server/discover: %v", err)
		return era, false, err
	case he == nil:
		return Era{}, false, t.connectError(err)
	}
	e := replyError(he)
	if e == nil {
		what := "an empty body"
		if he.Body != "" {
			what = "a body that is no JSON-RPC error"
		}
		era, err = fellBack("server/discover answered HTTP %d with %s", he.Status, what)
		return era, false, err
	}
	return t.discoverError(he, e, version, retried)
}

// discoverError reads the JSON-RPC error e a server/discover (sent in version) was refused
// with, with the HTTP status of he (E27).
func (t *Target) discoverError(he *HTTPError, e *mcp.Error, version string, retried bool) (era Era, again bool, err error) {
	code, draft := e.Code, false
	if he.Status == http.StatusBadRequest {
		code, draft = mcp.CanonicalCode(e.Code)
	}
	said := fmt.Sprintf("server/discover answered %d (HTTP %d)", e.Code, he.Status)
	if draft {
		said += fmt.Sprintf(", the draft number of %d", code)
	}
	switch {
	case he.Status == http.StatusNotFound && code == mcp.CodeMethodNotFound:
		return Era{Version: version, How: said + ": a modern server without server/discover (E8)"}, false, nil
	case he.Status == http.StatusBadRequest && (code == mcp.CodeHeaderMismatch || code == mcp.CodeMissingRequiredClientCapability):
		return Era{Version: version, How: said + ": a modern server refused tasksim's request: " + OneLine(e.Message, 200)}, false, nil
	case he.Status != http.StatusBadRequest || code != mcp.CodeUnsupportedProtocolVersion:
		era, err = fellBack("server/discover answered HTTP %d with JSON-RPC error %d, no modern error", he.Status, e.Code)
		return era, false, err
	}
	var data mcp.UnsupportedProtocolVersionData
	_ = json.Unmarshal(e.Data, &data)
	switch {
	case slices.Contains(data.Supported, ProtocolModern) && !retried:
		return Era{}, true, nil
	case slices.Contains(data.Supported, ProtocolModern):
		return Era{}, false, fmt.Errorf("target %s: %s again, though it lists %s among data.supported %s (E9)", t.URL, said, ProtocolModern, quoteList(data.Supported))
	case slices.ContainsFunc(data.Supported, mcp.SessionVersion):
		era, err = fellBack("%s, supported %s: no modern version tasksim speaks", said, quoteList(data.Supported))
		return era, false, err
	}
	return Era{}, false, &UnsupportedError{URL: t.URL, Supported: data.Supported, How: said}
}

// readDiscover reads a DiscoverResult (E8): resultType "complete" (or none, E12), at least
// one supported version; serverInfo from its _meta (E6).
func readDiscover(raw json.RawMessage) (Era, error) {
	rt, _, err := mcp.ReadResultType(raw)
	if err != nil {
		return Era{}, err
	}
	if rt != mcp.ResultComplete {
		return Era{}, fmt.Errorf("resultType %q", rt)
	}
	var r struct {
		mcp.DiscoverResult
		Meta struct {
			ServerInfo mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Era{}, err
	}
	if len(r.SupportedVersions) == 0 {
		return Era{}, errors.New("no supportedVersions")
	}
	d := r.DiscoverResult
	d.Meta = nil
	return Era{Supported: d.SupportedVersions, Discover: &d, ServerInfo: r.Meta.ServerInfo}, nil
}

// UnsupportedError is a target that serves no protocol version tasksim speaks: it refused
// server/discover with -32022 and named only others (E10).
type UnsupportedError struct {
	URL       string
	Supported []string
	How       string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("target %s serves protocol versions %s (%s); tasksim speaks %s and %s", e.URL, quoteList(e.Supported), e.How, ProtocolModern, ProtocolLegacy)
}

// ModernOnlyError is a target that speaks only 2026-07-28, met by a command asked to speak
// 2025-11-25 with it (Target.Protocol pins it): its initialize was refused (E35).
type ModernOnlyError struct {
	URL string
	// Evidence says how it was told: "initialize was refused with -32022, supported ...".
	Evidence string
}

func (e *ModernOnlyError) Error() string {
	return fmt.Sprintf("target %s speaks only %s (%s), and %s was asked for: leave the protocol to detection, or pin %s",
		e.URL, ProtocolModern, e.Evidence, ProtocolLegacy, ProtocolModern)
}

// quoteList writes versions as ["a","b"].
func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return "[" + strings.Join(q, ",") + "]"
}
