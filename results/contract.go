package results

import "time"

// Contract is the result of the contract suite (`tasksim conform`) against one target: one
// verdict per case, with its evidence. It is written as conform.json, as JUnit XML, as a
// table, as a section of report.html, and, inside a run (`contract: true`), it is the
// contract gate.
type Contract struct {
	TasksimVersion string    `json:"tasksim_version"`
	Target         string    `json:"target"`   // the target URL, or "embedded"
	Protocol       string    `json:"protocol"` // the protocol version the server negotiated; "" when none
	Server         string    `json:"server"`   // serverInfo name and version, as the server gave them
	StartedAt      time.Time `json:"started_at"`
	DurationS      float64   `json:"duration_s"`
	// Cases are in suite order; every case of the suite is here, skipped ones included.
	Cases []ContractCase `json:"cases"`
	// Created lists the ids of the tasks the suite created on the target (shortened when
	// long); LeftBehind those of them it could not bring to an end (not terminal when the
	// suite ended, and its cancel refused or not possible). Tasks have effects on a real
	// server: an operator may have to clean these up.
	Created    []string `json:"created"`
	LeftBehind []string `json:"left_behind"`
	// Notes say what the suite could not do as asked (a flag naming a tool the target
	// lacks, say); never null.
	Notes []string `json:"notes"`
	// Interrupted says a signal stopped the suite: the cases it did not finish are skipped,
	// and Verdict judges only what ran (a consumer checks both, as for a run).
	Interrupted bool          `json:"interrupted"`
	Counts      ContractCount `json:"counts"`
	Verdict     string        `json:"verdict"` // VerdictPass when no case failed and at least one ran, else VerdictFail
}

// ContractCount counts cases by verdict.
type ContractCount struct {
	Pass int `json:"pass"`
	Fail int `json:"fail"`
	Skip int `json:"skip"`
}

// CaseVerdict is the verdict of one contract case.
type CaseVerdict string

// Case verdicts.
const (
	CasePass CaseVerdict = "pass"
	CaseFail CaseVerdict = "fail"
	CaseSkip CaseVerdict = "skip"
)

// ContractCase is one case of the contract suite.
type ContractCase struct {
	ID    string   `json:"id"`    // stable, e.g. "cancel.terminal"
	Title string   `json:"title"` // one line, what is checked
	Rules []string `json:"rules"` // rule ids of docs/RULES.md it checks, e.g. ["R26"]
	// Broken are the rules a failure found broken, a subset of Rules (or a rule the case
	// met on its way, such as R16 for a tasks/get that never answered), in the order found;
	// empty unless the verdict is fail.
	Broken []string `json:"broken"`
	// Verdict is pass, fail or skip.
	Verdict CaseVerdict `json:"verdict"`
	// Message says, for a failure, the rule broken, what was expected and what came back;
	// for a skip, why; for a pass, what was seen (may be "").
	Message string `json:"message"`
	// Enable says, for a skip, what would let the case run ("give --other-header with a
	// second identity's token"); "" otherwise.
	Enable string `json:"enable,omitempty"`
	// Evidence holds the exchanges the verdict rests on, excerpts with credentials and
	// planted secrets redacted; never null.
	Evidence   []Exchange `json:"evidence"`
	DurationMs float64    `json:"duration_ms"`
}

// Exchange is one request of a contract case and what came back, as excerpts.
type Exchange struct {
	// Method is the JSON-RPC method, or the HTTP method and what was special about the
	// request ("POST without Mcp-Session-Id").
	Method     string `json:"method"`
	Identity   string `json:"identity,omitempty"` // "second" for requests with --other-header
	Request    string `json:"request"`            // the JSON-RPC request, shortened
	HTTPStatus int    `json:"http_status,omitempty"`
	Reply      string `json:"reply"` // the reply or the error, shortened
}

// Count fills c.Counts and c.Verdict from the cases: pass when no case failed and at least
// one case ran (a suite that skipped everything shows nothing: it fails).
func (c *Contract) Count() {
	c.Counts = ContractCount{}
	for _, k := range c.Cases {
		switch k.Verdict {
		case CasePass:
			c.Counts.Pass++
		case CaseFail:
			c.Counts.Fail++
		default:
			c.Counts.Skip++
		}
	}
	c.Verdict = VerdictPass
	if c.Counts.Fail > 0 || c.Counts.Pass == 0 {
		c.Verdict = VerdictFail
	}
}
