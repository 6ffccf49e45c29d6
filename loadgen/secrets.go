package loadgen

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
)

// Secret and prompt-injection canaries (docs/ARCHITECTURE.md#hard-gate).
//
// With Security.Canaries each tenant gets two unique markers, SecretPrefix and 24 random hex
// digits: one planted in the tool's `note` argument of every create (only when the tool
// declares the argument: a strict inputSchema would refuse it), one in the content of every
// elicitation answer. The detector scans every reply a client sees and every server message
// on its streams, and run scans the files it writes. A planted secret may show in one place
// only: a result (tasks/result, or a synchronous tools/call) seen by the tenant that planted
// it, since a tool may echo its own caller's arguments. Anywhere else it is a leak that fails
// the hard gate:
//
//	seen in                                      where (evidence)
//	a reply to a client of another tenant        "<part> of <method> (another tenant's secret)"
//	a statusMessage (tasks/get, cancel, list,    "statusMessage of tasks/get", ...
//	  a CreateTaskResult)
//	a JSON-RPC error message or HTTP error body  "error message of <method>"
//	a server request or notification             "elicitation/create request", "notification"
//	an output file or stdout                     the file name: "summary.json", "stdout"
//
// Bearer tokens are watched the same way in error messages and output files. The evidence
// names where a secret was seen, which tenant planted it and where (tool_argument,
// elicitation_answer, token): never the secret.
//
// Injection canaries are planted by the server (the embedded one with security.inject):
// text starting with an instruction and ending in InjectionMarker and hex digits. One that
// reaches a client is a finding, counted by where it was seen; it fails nothing, since what
// the model does with a result is beyond the protocol.

// SecretPrefix starts every secret canary tasksim plants; InjectionMarker ends the
// injection canaries a server plants (mockserver.InjectionPrefix).
const (
	SecretPrefix    = "tsk-secret-"
	InjectionMarker = "tsk-inject-"
)

// Where a planted secret came from (SecretEvidence.PlantedIn).
const (
	PlantedArg    = "tool_argument"
	PlantedAnswer = "elicitation_answer"
	PlantedToken  = "token"
)

// SecretEvidence is one planted secret seen where it must not be. It never holds the secret.
type SecretEvidence struct {
	Where     string `json:"where"`
	PlantedIn string `json:"planted_in"`
	Tenant    string `json:"tenant,omitempty"` // the tenant whose secret it was
}

// canary is where a marker was planted.
type canary struct {
	tenant    int
	plantedIn string
}

// detector watches replies, server messages and output files for planted secrets and
// injection canaries. Its maps are written once, before the run; scanning takes the lock
// only on a hit.
type detector struct {
	canaries map[string]canary // the marker text -> where it was planted
	tokens   []string          // bearer tokens by tenant index ("" = none)
	names    []string          // tenant names by index

	mu     sync.Mutex
	seen   map[string]int64 // planted secrets by where
	sample []SecretEvidence
	inject map[string]int64 // injection canaries by where (findings)
}

func newDetector(names, tokens []string) *detector {
	return &detector{canaries: map[string]canary{}, names: names, tokens: tokens,
		seen: map[string]int64{}, inject: map[string]int64{}}
}

// plant makes a new marker for tenant, planted in plantedIn.
func (d *detector) plant(tenant int, plantedIn string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails (Go 1.24+)
	m := SecretPrefix + hex.EncodeToString(b[:])
	d.canaries[m] = canary{tenant: tenant, plantedIn: plantedIn}
	return m
}

// part is the part of a message a scan looks at.
type part uint8

const (
	partResult        part = iota // a result payload: the viewer's own secrets are allowed
	partTask                      // a task object or list: statusMessage is its only free text
	partError                     // a JSON-RPC error message or an HTTP error body
	partServerRequest             // a server request met on a stream (elicitation/create)
	partNotification              // a notification met on a stream
)

func (p part) where(method string) string {
	switch p {
	case partResult:
		return "result of " + method
	case partTask:
		if method == mcp.OpTasksList.Name() {
			return "statusMessage in tasks/list"
		}
		return "statusMessage of " + method
	case partError:
		return "error message of " + method
	case partServerRequest:
		return method + " request"
	}
	return "notification " + method
}

var (
	tskMark    = []byte("tsk-")
	secretMark = []byte(SecretPrefix)
	injectMark = []byte(InjectionMarker)
)

// scan looks at b, seen by a client of tenant viewer as part p of a message of method.
// It allocates nothing unless it finds a marker.
func (d *detector) scan(b []byte, viewer int, method string, p part) {
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], tskMark)
		if j < 0 {
			return
		}
		k := i + j
		rest := b[k:]
		switch {
		case bytes.HasPrefix(rest, secretMark):
			end := k + len(secretMark)
			for end < len(b) && isHex(b[end]) {
				end++
			}
			if c, ok := d.canaries[string(b[k:end])]; ok && (p != partResult || c.tenant != viewer) {
				w := p.where(method)
				if c.tenant != viewer {
					w += " (another tenant's secret)"
				}
				d.record(w, c.plantedIn, c.tenant)
			}
			i = end
			continue
		case bytes.HasPrefix(rest, injectMark):
			d.mu.Lock()
			d.inject[p.where(method)]++
			d.mu.Unlock()
		}
		i = k + len(tskMark)
	}
}

// scanTokens looks for bearer tokens in text that must never hold one (error messages).
func (d *detector) scanTokens(s string, where string) {
	for i, tok := range d.tokens {
		if tok != "" && strings.Contains(s, tok) {
			d.record(where, PlantedToken, i)
		}
	}
}

func (d *detector) record(where, plantedIn string, tenant int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen[where]++
	ev := SecretEvidence{Where: where, PlantedIn: plantedIn}
	if tenant >= 0 && tenant < len(d.names) {
		ev.Tenant = d.names[tenant]
	}
	if len(d.sample) < maxEvidence && !slices.Contains(d.sample, ev) { // one of each kind
		d.sample = append(d.sample, ev)
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// inspect scans one reply (or failure) a client of tenant viewer got for a request of op.
func (d *detector) inspect(viewer int, op mcp.Op, rep client.Reply, err error) {
	method := op.Name()
	if err != nil {
		var he *client.HTTPError
		if errors.As(err, &he) && he.Body != "" {
			d.scan([]byte(he.Body), viewer, method, partError)
			d.scanTokens(he.Body, partError.where(method))
		}
		return
	}
	if rep.Err != nil {
		d.scan([]byte(rep.Err.Message), viewer, method, partError)
		d.scan(rep.Err.Data, viewer, method, partError)
		d.scanTokens(rep.Err.Message, partError.where(method))
		return
	}
	p := partTask
	if op == mcp.OpTasksResult || op == mcp.OpToolsCall && !bytes.Contains(rep.Result, []byte(`"task"`)) {
		p = partResult
	}
	d.scan(rep.Result, viewer, method, p)
}

// ScanOutput scans one output of the run (a file it wrote, or stdout), named name, for
// the run's planted secrets and tokens, records each under where = name, and returns how
// many it found. Without canaries and tenants it finds nothing.
func (e *Engine) ScanOutput(name string, b []byte) int {
	d := e.det
	if d == nil {
		return 0
	}
	n := 0
	for m, c := range d.canaries {
		if k := bytes.Count(b, []byte(m)); k > 0 {
			n += k
			d.record(name, c.plantedIn, c.tenant)
		}
	}
	for i, tok := range d.tokens {
		if tok != "" && bytes.Contains(b, []byte(tok)) {
			n++
			d.record(name, PlantedToken, i)
		}
	}
	return n
}

// SecretsSeen returns the planted secrets seen where they must not be, by where, and a
// sample; and the injection canaries that reached clients, by where (findings).
func (d *detector) report() (seen map[string]int64, sample []SecretEvidence, inject map[string]int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen = make(map[string]int64, len(d.seen))
	for k, v := range d.seen {
		seen[k] = v
	}
	inject = make(map[string]int64, len(d.inject))
	for k, v := range d.inject {
		inject[k] = v
	}
	return seen, append([]SecretEvidence(nil), d.sample...), inject
}

// shortID shortens a task id for evidence: its first 6 and last 4 characters.
func shortID(id string) string {
	if len(id) <= 12 {
		return id
	}
	return id[:6] + "..." + id[len(id)-4:]
}

// answerContent is the content of an accepted elicitation answer: the canary when one is
// planted.
func answerContent(canary string) []byte {
	if canary == "" {
		return []byte(`{"answer":"tasksim"}`)
	}
	return []byte(`{"answer":"tasksim ` + canary + `"}`)
}
