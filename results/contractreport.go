package results

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"os"
	"strconv"
	"strings"
)

// The contract suite in report.html: the section a run's report shows when the run ran
// the suite (Summary.Contract), and the page of `tasksim conform --out DIR`, which is that
// section under the suite's verdict. Both come from the same template (assets/
// report.html.tmpl: "contract" and "contract-page").

// contractView is the contract suite as the page shows it.
type contractView struct {
	Lead  string // "7 cases: 3 passed, 2 failed, 2 skipped"
	Facts []fact // where and when it ran; the tasks created and left behind
	Rows  []contractRow
	Notes []string
}

// contractRow is one case. Class is "pass", "fail" or "na" (skipped), as the other
// tables of the page mark rows.
type contractRow struct {
	Status, Class, ID, Title, Rules, Message, Enable, Duration string
	// Evidence is shown for failed cases only: the exchanges the failure rests on.
	Evidence []exchangeView
}

// exchangeView is one exchange of a failed case, the N-th (from 1).
type exchangeView struct {
	N                    int
	Head, Request, Reply string
}

// contractViewOf lays out c (normalized) for the page.
func contractViewOf(c *Contract) *contractView {
	n := c.Counts
	v := &contractView{
		Lead: fmt.Sprintf("%d cases: %d passed, %d failed, %d skipped. A failed case names the rules of docs/RULES.md it found broken, with the exchanges it rests on; a skipped one says why, and what would let it run.",
			len(c.Cases), n.Pass, n.Fail, n.Skip),
		Notes: c.Notes,
	}
	v.Facts = []fact{
		{K: "target", V: orDash(c.Target)}, {K: "server", V: orDash(c.Server)}, {K: "protocol", V: orDash(c.Protocol)},
		{K: "started at", V: c.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z")},
		{K: "duration", V: num(round3(c.DurationS)) + " s"},
		{K: "tasks created", V: idsText(c.Created)},
	}
	left := fact{K: "tasks left behind", V: "none"}
	if len(c.LeftBehind) > 0 {
		left.V, left.Class = idsText(c.LeftBehind)+" ("+leftBehindAdvice+")", "warn"
	}
	v.Facts = append(v.Facts, left)
	for _, k := range c.Cases {
		row := contractRow{Status: "SKIP", Class: "na", ID: k.ID, Title: k.Title, Rules: strings.Join(k.Rules, " "),
			Message: k.Message, Enable: k.Enable, Duration: num(round3(k.DurationMs))}
		switch k.Verdict {
		case CasePass:
			row.Status, row.Class = "PASS", "pass"
		case CaseFail:
			row.Status, row.Class = "FAIL", "fail"
			for i, e := range k.Evidence {
				row.Evidence = append(row.Evidence, exchangeView{N: i + 1, Head: exchangeHead(e), Request: e.Request, Reply: e.Reply})
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// idsText is "3: a, b, c", or "none".
func idsText(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strconv.Itoa(len(ids)) + ": " + strings.Join(ids, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// contractPage is the page of the contract suite alone: assets/report.html.tmpl,
// "contract-page".
type contractPage struct {
	C        *Contract
	File     string // the file the page is rendered from: conform.json
	Verdict  verdictView
	Contract *contractView
	CSS      template.CSS
}

// contractVerdict is the suite's verdict as the page leads with it: the first failed case
// as the reason, the others under it; the tasks left behind as a note.
func contractVerdict(c *Contract) verdictView {
	n := c.Counts
	v := verdictView{Tally: fmt.Sprintf("cases: %d passed, %d failed, %d skipped; tasks: %d created, %d left behind",
		n.Pass, n.Fail, n.Skip, len(c.Created), len(c.LeftBehind))}
	var fails []string
	for _, k := range c.Cases {
		if k.Verdict == CaseFail {
			fails = append(fails, k.ID+" failed: "+oneLine(k.Message)) // the message starts with the rule broken
		}
	}
	switch {
	case c.Verdict == VerdictPass && c.Interrupted:
		v.Word, v.Class = "INTERRUPTED", "warn"
		v.Reason = fmt.Sprintf("no case failed of those that ran (%d passed, %d skipped), but the suite was interrupted: the cases after it did not run", n.Pass, n.Skip)
	case c.Verdict == VerdictPass:
		v.Word, v.Class = "PASS", "pass"
		v.Reason = fmt.Sprintf("no case failed: %d passed, %d skipped", n.Pass, n.Skip)
	case c.Verdict != VerdictFail:
		v.Word, v.Class = "NO VERDICT", "warn"
		v.Reason = fmt.Sprintf("the suite's verdict is %q, neither pass nor fail", c.Verdict)
	case len(fails) > 0:
		v.Word, v.Class, v.Reason, v.More = "FAIL", "fail", fails[0], fails[1:]
	default:
		v.Word, v.Class = "FAIL", "fail"
		v.Reason = "no case ran: every case was skipped, and a suite that ran nothing shows nothing"
	}
	if len(c.LeftBehind) > 0 {
		what := "tasks"
		if len(c.LeftBehind) == 1 {
			what = "task"
		}
		v.Notes = append(v.Notes, fmt.Sprintf("%d %s left behind on the target (%s): %s",
			len(c.LeftBehind), what, strings.Join(c.LeftBehind, ", "), leftBehindAdvice))
	}
	return v
}

// renderContractPage returns the report.html of the contract suite alone.
func renderContractPage(c *Contract) ([]byte, error) {
	c = c.normalized()
	p := &contractPage{C: c, File: ContractFile, Verdict: contractVerdict(c), Contract: contractViewOf(c), CSS: template.CSS(asset("report.css"))}
	tmpl, err := reportTemplate()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "contract-page", p); err != nil {
		return nil, fmt.Errorf("results: rendering %s: %w", ReportFile, err)
	}
	return buf.Bytes(), nil
}

// WriteContractReport writes dir/report.html for the contract suite alone (`tasksim
// conform --out DIR`): where it ran, its verdict and the reason, and the table of cases
// of a run's report, the evidence of each failed case folded under it. The page is
// self-contained and deterministic; `tasksim report DIR` renders the same bytes from
// dir/conform.json (RenderReport).
func WriteContractReport(dir string, c *Contract) error {
	if c == nil {
		return errors.New("results: no contract result to write")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	b, err := renderContractPage(c)
	if err != nil {
		return err
	}
	return writeAtomic(dir, ReportFile, b)
}
