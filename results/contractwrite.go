package results

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// The writers of the contract suite's result (Contract): conform.json, JUnit XML for CI
// test reporters, and the table printed on stdout. Its report.html is contractreport.go.

// ContractFile is the contract suite's result, written by `tasksim conform --out DIR`.
const ContractFile = "conform.json"

// WriteContract writes c as dir/conform.json (indented, keys in the order of the Contract
// fields, lists never null, trailing newline), creating dir if needed, through a
// temporary file and a rename: the file is whole or absent.
func WriteContract(dir string, c *Contract) error {
	if c == nil {
		return errors.New("results: no contract result to write")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	b, err := contractJSON(c)
	if err != nil {
		return err
	}
	return writeAtomic(dir, ContractFile, b)
}

// ReadContract reads dir/conform.json. The error wraps fs.ErrNotExist when there is none.
func ReadContract(dir string) (*Contract, error) {
	path := filepath.Join(dir, ContractFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	c := new(Contract)
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	return c, nil
}

// contractJSON encodes c as conform.json holds it; HTML escaping is off, so excerpts keep
// their < and >.
func contractJSON(c *Contract) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c.normalized()); err != nil {
		return nil, fmt.Errorf("results: encoding the contract result: %w", err)
	}
	return buf.Bytes(), nil
}

// The JUnit XML elements, as Jenkins, GitLab and the GitHub test reporters read them.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
		SystemOut  *junitText      `xml:"system-out"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure"`
		Skipped   *junitSkipped `xml:"skipped"`
		SystemOut *junitText    `xml:"system-out"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",cdata"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
	// junitText is the text of <system-out>, as CDATA so that its lines read as lines.
	junitText struct {
		Text string `xml:",cdata"`
	}
)

// junitName is the name of the JUnit suite and of the file's root.
const junitName = "tasksim conform"

// WriteJUnit writes c as JUnit XML: one <testsuite> "tasksim conform" whose properties
// are the target, protocol, server and tasksim version (and the tasks left behind, if
// any), and one <testcase> per case, classname "conform.<group>" (the part of the id
// before the first dot), name the id, time in seconds. A failed case has
//
//	<failure message="R26: <message on one line>" type="R26">
//
// whose text is the case's title, rules, message and the exchanges of its evidence; a
// skipped case <skipped message="<why>; <what would let it run>"/>; a passed case its
// message as <system-out>. The suite's <system-out> lists the tasks created and left
// behind, and the suite's notes. Every string goes through encoding/xml: nothing in a
// message or an excerpt can break the document (characters XML cannot carry become
// U+FFFD). The timestamp is the suite's start, in UTC without a zone suffix, as the JUnit
// schema has it.
func WriteJUnit(w io.Writer, c *Contract) error {
	if c == nil {
		return errors.New("results: no contract result to write")
	}
	n := c.Counts
	suite := junitSuite{
		Name: junitName, Tests: len(c.Cases), Failures: n.Fail, Skipped: n.Skip,
		Time: seconds(c.DurationS), Timestamp: c.StartedAt.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{
			{"target", xmlSafe(c.Target)}, {"protocol", xmlSafe(c.Protocol)},
			{"server", xmlSafe(c.Server)}, {"tasksim_version", xmlSafe(c.TasksimVersion)},
			{"verdict", xmlSafe(c.Verdict)}, {"tasks_created", strconv.Itoa(len(c.Created))},
		},
		SystemOut: &junitText{xmlSafe(contractFooter(c))},
	}
	if len(c.LeftBehind) > 0 {
		suite.Properties = append(suite.Properties, junitProperty{"tasks_left_behind", xmlSafe(strings.Join(c.LeftBehind, " "))})
	}
	for _, k := range c.Cases {
		group, _, _ := strings.Cut(k.ID, ".")
		tc := junitCase{Classname: xmlSafe("conform." + group), Name: xmlSafe(k.ID), Time: seconds(k.DurationMs / 1000)}
		switch k.Verdict {
		case CaseFail:
			kind := strings.Join(k.Broken, " ")
			if kind == "" {
				kind = "contract"
			}
			tc.Failure = &junitFailure{Message: xmlSafe(oneLine(k.Message)), Type: xmlSafe(kind),
				Body: xmlSafe(failureText(k))}
		case CasePass:
			msg := k.Message
			if msg == "" {
				msg = k.Title
			}
			if msg != "" {
				tc.SystemOut = &junitText{xmlSafe(msg)}
			}
		default:
			tc.Skipped = &junitSkipped{Message: xmlSafe(oneLine(skipText(k, "; ")))}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	doc := junitSuites{Name: junitName, Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("results: writing JUnit XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("results: writing JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("results: writing JUnit XML: %w", err)
	}
	return nil
}

// skipText is why a case was skipped and, after sep, what would let it run.
func skipText(k ContractCase, sep string) string {
	switch {
	case k.Enable == "":
		return k.Message
	case k.Message == "":
		return k.Enable
	}
	return k.Message + sep + k.Enable
}

// failureText is the text of a failed case in JUnit XML: what it checks, the rules, the
// message, and the exchanges the verdict rests on.
func failureText(k ContractCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", k.ID, k.Title)
	if len(k.Rules) > 0 {
		fmt.Fprintf(&b, "rules checked: %s (docs/RULES.md)\n", strings.Join(k.Rules, ", "))
	}
	if len(k.Broken) > 0 {
		fmt.Fprintf(&b, "rules broken: %s\n", strings.Join(k.Broken, ", "))
	}
	b.WriteString(k.Message + "\n")
	if len(k.Evidence) > 0 {
		b.WriteString("\nevidence:\n")
	}
	for i, e := range k.Evidence {
		fmt.Fprintf(&b, "[%d] %s\n    request: %s\n    reply:   %s\n", i+1, exchangeHead(e), e.Request, e.Reply)
	}
	return b.String()
}

// exchangeHead is "tasks/get (identity second), HTTP 200".
func exchangeHead(e Exchange) string {
	s := e.Method
	if e.Identity != "" {
		s += " (identity " + e.Identity + ")"
	}
	if e.HTTPStatus != 0 {
		s += ", HTTP " + strconv.Itoa(e.HTTPStatus)
	}
	return s
}

// contractFooter lists the tasks the suite created and left behind, and its notes.
func contractFooter(c *Contract) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tasks created: %d", len(c.Created))
	if len(c.Created) > 0 {
		b.WriteString(" (" + strings.Join(c.Created, ", ") + ")")
	}
	b.WriteString("\n")
	if len(c.LeftBehind) > 0 {
		fmt.Fprintf(&b, "tasks left behind: %d (%s): %s\n", len(c.LeftBehind), strings.Join(c.LeftBehind, ", "), leftBehindAdvice)
	} else {
		b.WriteString("tasks left behind: none\n")
	}
	for _, n := range c.Notes {
		b.WriteString("note: " + n + "\n")
	}
	return b.String()
}

// leftBehindAdvice says what a task left behind means for the operator.
const leftBehindAdvice = "not ended when the suite ended: such a task may still run, and hold resources, on the target; clean it up there"

// seconds is a duration in seconds as JUnit writes it: "1.520".
func seconds(s float64) string { return strconv.FormatFloat(max(s, 0), 'f', 3, 64) }

// oneLine folds every run of white space (newlines included) into one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// xmlSafe replaces what an XML 1.0 document cannot hold (invalid UTF-8, control
// characters other than tab, newline and carriage return, U+FFFE and U+FFFF) with U+FFFD:
// a CDATA section would carry them as they are and break the document.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF:
			return unicode.ReplacementChar
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// contractTextWidth is the width of the terminal the table is laid out for.
const contractTextWidth = 100

// The lines a message may take in the table, by verdict; the rest is cut ("…"). The whole
// text is in conform.json and report.html.
const (
	passLines = 1
	failLines = 4
	skipLines = 3
)

// WriteContractText writes the table of the contract suite for stdout: where it ran, one
// row per case (verdict, id, rules, and the message: for a failure the rule broken and
// what came back, for a skip why, then "→ enable:" what would let it run), aligned with
// text/tabwriter and wrapped to 100 columns; then the counts, the tasks created and those
// left behind (by id: the suite creates real tasks on a real server), the suite's notes,
// and the verdict.
func WriteContractText(w io.Writer, c *Contract) error {
	if c == nil {
		return errors.New("results: no contract result to write")
	}
	p := &printer{w: w}
	p.f("tasksim conform %s: target %s\n", c.TasksimVersion, c.Target)
	server := c.Server
	if server == "" {
		server = "unknown"
	}
	protocol := c.Protocol
	if protocol == "" {
		protocol = "none negotiated"
	}
	p.f("server %s, protocol %s, started %s, ran %s s\n\n", server, protocol,
		c.StartedAt.UTC().Format("2006-01-02T15:04:05Z"), num(round3(c.DurationS)))

	idW, rulesW := utf8.RuneCountInString("CASE"), utf8.RuneCountInString("RULES")
	for _, k := range c.Cases {
		idW = max(idW, utf8.RuneCountInString(k.ID))
		rulesW = max(rulesW, utf8.RuneCountInString(strings.Join(k.Rules, " ")))
	}
	const pad = 2
	msgW := max(contractTextWidth-(len("VERDICT")+pad)-(idW+pad)-(rulesW+pad), 30)
	tw := tabwriter.NewWriter(w, 0, 0, pad, ' ', 0)
	tp := &printer{w: tw}
	tp.f("VERDICT\tCASE\tRULES\tMESSAGE\n")
	for _, k := range c.Cases {
		word, text, lines := "SKIP", skipText(k, " → enable: "), skipLines
		switch k.Verdict {
		case CasePass:
			word, text, lines = "PASS", k.Message, passLines
			if text == "" {
				text = k.Title
			}
		case CaseFail:
			word, text, lines = "FAIL", k.Message, failLines
		}
		for i, line := range wrap(text, msgW, lines) {
			if i == 0 {
				tp.f("%s\t%s\t%s\t%s\n", word, cell(k.ID), cell(strings.Join(k.Rules, " ")), line)
			} else {
				tp.f("\t\t\t%s\n", line)
			}
		}
	}
	if tp.err == nil {
		tp.err = tw.Flush()
	}
	if p.err == nil {
		p.err = tp.err
	}

	n := c.Counts
	p.f("\ncases    %d: %d passed, %d failed, %d skipped\n", len(c.Cases), n.Pass, n.Fail, n.Skip)
	p.list("tasks    ", fmt.Sprintf("created %d", len(c.Created)), c.Created, "")
	if len(c.LeftBehind) > 0 {
		p.list("         ", fmt.Sprintf("LEFT BEHIND %d", len(c.LeftBehind)), c.LeftBehind, leftBehindAdvice)
	} else {
		p.f("         left behind: none\n")
	}
	for i, note := range c.Notes {
		head := "notes    "
		if i > 0 {
			head = "         "
		}
		for j, line := range wrap(note, contractTextWidth-len(head), 0) {
			if j > 0 {
				head = "         "
			}
			p.f("%s%s\n", head, line)
		}
	}
	p.list("verdict  ", contractVerdictText(c), nil, "")
	return p.err
}

// contractVerdictText is the verdict line: "FAIL: 2 of 7 cases failed: a.b, c.d".
func contractVerdictText(c *Contract) string {
	word := strings.ToUpper(c.Verdict)
	n := c.Counts
	switch {
	case n.Fail > 0:
		var ids []string
		for _, k := range c.Cases {
			if k.Verdict == CaseFail {
				ids = append(ids, k.ID)
			}
		}
		return fmt.Sprintf("%s: %d of %d cases failed: %s", word, n.Fail, len(c.Cases), strings.Join(ids, ", "))
	case c.Verdict == VerdictPass && c.Interrupted:
		return fmt.Sprintf("%s so far, but the suite was interrupted (exit code 130): no case failed of those that ran (%d passed, %d skipped); the cases after the interruption did not run",
			word, n.Pass, n.Skip)
	case c.Verdict == VerdictPass:
		return fmt.Sprintf("%s: no case failed (%d passed, %d skipped)", word, n.Pass, n.Skip)
	case n.Pass == 0:
		return word + ": no case ran (every case was skipped): the suite showed nothing"
	}
	return word
}

// list writes head, then what, then the ids comma separated and advice, wrapped to the
// table's width under the head's indent.
func (p *printer) list(head, what string, ids []string, advice string) {
	text := what
	if len(ids) > 0 {
		text += ": " + strings.Join(ids, ", ")
	}
	if advice != "" {
		text += " (" + advice + ")"
	}
	indent := strings.Repeat(" ", utf8.RuneCountInString(head))
	for i, line := range wrap(text, contractTextWidth-len(indent), 0) {
		if i > 0 {
			head = indent
		}
		p.f("%s%s\n", head, line)
	}
}

// cell is s as one tabwriter cell: on one line, without tabs.
func cell(s string) string { return oneLine(s) }

// wrap folds s onto lines of at most width runes, breaking at spaces (a word longer than
// a line is split); with maxLines > 0, at most that many lines, the last one ending in "…"
// when text was cut. An empty s is one empty line.
func wrap(s string, width, maxLines int) []string {
	words := strings.Fields(s)
	var lines []string
	var cur []rune
	for _, w := range words {
		r := []rune(w)
		if len(cur) > 0 && len(cur)+1+len(r) <= width {
			cur = append(append(cur, ' '), r...)
			continue
		}
		if len(cur) > 0 {
			lines = append(lines, string(cur))
		}
		for len(r) > width {
			lines = append(lines, string(r[:width]))
			r = r[width:]
		}
		cur = r
	}
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, string(cur))
	}
	if maxLines > 0 && len(lines) > maxLines {
		lines = lines[:maxLines]
		last := []rune(lines[maxLines-1])
		if len(last) >= width {
			last = last[:width-1]
		}
		lines[maxLines-1] = string(last) + "…"
	}
	return lines
}
