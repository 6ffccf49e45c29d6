package results

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// plantedExcerpt is markup planted in a contract case's message and exchange: the report
// and the JUnit file must carry it as text.
const plantedExcerpt = `</script><script>alert("excerpt")</script>&<![CDATA[]]>`

// fixtureContract is a contract suite against a real target: three cases passed, two
// failed (one naming two rules, with a second identity and a long reply), two skipped
// (one with what would let it run), a task left behind, and a note.
func fixtureContract() *Contract {
	c := &Contract{
		TasksimVersion: "0.1.0",
		Target:         "https://mcp.example.com/mcp",
		Protocol:       "2025-11-25",
		Server:         "example-server 1.4.2",
		StartedAt:      t0,
		DurationS:      4.25,
		Cases: []ContractCase{
			{ID: "create.working", Title: "a task is created working", Rules: []string{"R13"}, Verdict: CasePass,
				Message: "created 0123ab...cdef, status working", Evidence: []Exchange{}, DurationMs: 41.5},
			{ID: "get.unknown", Title: "tasks/get of an unknown id is refused", Rules: []string{"R15"}, Verdict: CasePass,
				Message: "", Evidence: []Exchange{}, DurationMs: 12},
			{ID: "cancel.terminal", Title: "tasks/cancel of a terminal task is refused -32602", Rules: []string{"R26"}, Verdict: CaseFail, Broken: []string{"R26"},
				Message: "R26: expected error -32602 for a cancel of a completed task; the server answered a result with status cancelled",
				Evidence: []Exchange{
					{Method: "tools/call", Request: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","task":{}}}`,
						HTTPStatus: 200, Reply: `{"result":{"task":{"taskId":"0123ab...cdef","status":"working"}}}`},
					{Method: "tasks/cancel", Request: `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"0123ab...cdef"}}`,
						HTTPStatus: 200, Reply: `{"result":{"taskId":"0123ab...cdef","status":"cancelled"}}`},
				}, DurationMs: 1520.25},
			{ID: "cancel.working", Title: "a cancelled task stays cancelled", Rules: []string{"R14", "R28"}, Verdict: CasePass,
				Message: "cancelled, read cancelled twice", Evidence: []Exchange{}, DurationMs: 230},
			{ID: "isolation.get", Title: "another identity cannot read a task", Rules: []string{"R53", "R54"}, Verdict: CaseFail, Broken: []string{"R53"},
				Message: "R53: the second identity read the task: " + plantedExcerpt + "\nsecond line of the message, which goes on long enough to wrap in a terminal of a hundred columns and then some more words",
				Evidence: []Exchange{
					{Method: "tasks/get", Identity: "second", Request: `{"method":"tasks/get","params":{"taskId":"4567ef...0123"}}`,
						HTTPStatus: 200, Reply: `{"result":{"taskId":"4567ef...0123","status":"working","statusMessage":"` + plantedExcerpt + `"}}`},
				}, DurationMs: 310},
			{ID: "isolation.list", Title: "tasks/list shows only one's own tasks", Rules: []string{"R53"}, Verdict: CaseSkip,
				Message: "no second identity", Enable: "give --other-header with a second identity's token", DurationMs: 0},
			{ID: "list.pagination", Title: "tasks/list pages", Rules: []string{"R20"}, Verdict: CaseSkip,
				Message: "the server does not declare tasks.list", DurationMs: 0},
		},
		Created:    []string{"0123ab...cdef", "4567ef...0123", "89abcd...4567"},
		LeftBehind: []string{"4567ef...0123"},
		Notes:      []string{"--tool slow: the target has no such tool; the suite used work"},
	}
	c.Count()
	return c
}

func TestContractGate(t *testing.T) {
	info, total, windows := fixture()
	info.Thresholds = info.Thresholds[:1] // a run that passes but for its contract gate

	s := Build(info, total, windows)
	g := s.Gates.Contract
	if !g.Pass || g.Evaluated || g.Evidence.Reason != contractNotRun || s.Contract != nil {
		t.Errorf("without a contract: %+v, contract %v; want not evaluated, with the reason", g, s.Contract)
	}
	if s.Verdict != VerdictPass {
		t.Fatalf("verdict %s without a contract, want pass", s.Verdict)
	}

	info.Contract = fixtureContract()
	s = Build(info, total, windows)
	g = s.Gates.Contract
	if g.Pass || !g.Evaluated || s.Verdict != VerdictFail || s.ExitCode() != ExitGateFailed {
		t.Errorf("a failing suite: gate pass %v evaluated %v, verdict %s exit %d; want a failure, 99", g.Pass, g.Evaluated, s.Verdict, s.ExitCode())
	}
	ev := g.Evidence
	if ev.CasesPassed != 3 || ev.CasesFailed != 2 || ev.CasesSkipped != 2 || ev.TasksCreated != 3 {
		t.Errorf("counts: %+v", ev)
	}
	if !slices.Equal(ev.RulesBroken, []string{"R26", "R53"}) ||
		!slices.Equal(ev.LeftBehind, []string{"4567ef...0123"}) {
		t.Errorf("rules_broken %v, left_behind %v", ev.RulesBroken, ev.LeftBehind)
	}
	failed := ev.Failed
	if len(failed) != 2 || failed[0].ID != "cancel.terminal" || !slices.Equal(failed[1].Rules, []string{"R53"}) ||
		!strings.HasPrefix(failed[0].Message, "R26: expected error -32602") {
		t.Errorf("failed: %+v", failed)
	}
	skipped := ev.Skipped
	if len(skipped) != 2 || skipped[0].ID != "isolation.list" || skipped[0].Reason != "no second identity" ||
		skipped[0].Enable != "give --other-header with a second identity's token" || skipped[1].Enable != "" {
		t.Errorf("skipped: %+v", skipped)
	}
	if ev.Failure != "" {
		t.Errorf("failure %q beside failed cases", ev.Failure)
	}
	if s.Contract == nil || len(s.Contract.Cases) != 7 || s.Contract.Cases[5].Evidence == nil {
		t.Errorf("summary contract: %+v; want every case, evidence never null", s.Contract)
	}

	// The gate is the suite's verdict: all cases passed, and none ran.
	pass := fixtureContract()
	pass.Cases = slices.DeleteFunc(pass.Cases, func(k ContractCase) bool { return k.Verdict == CaseFail })
	pass.Count()
	info.Contract = pass
	if s := Build(info, total, windows); !s.Gates.Contract.Pass || !s.Gates.Contract.Evaluated || s.Verdict != VerdictPass {
		t.Errorf("a passing suite: %+v, verdict %s", s.Gates.Contract, s.Verdict)
	}
	none := fixtureContract()
	for i := range none.Cases {
		none.Cases[i].Verdict = CaseSkip
	}
	none.Count()
	info.Contract = none
	s = Build(info, total, windows)
	if g := s.Gates.Contract; g.Pass || s.Verdict != VerdictFail || !strings.HasPrefix(g.Evidence.Failure, "no case ran") {
		t.Errorf("a suite that skipped everything: %+v, verdict %s", g, s.Verdict)
	}
	page := pageOf(t, s)
	if v := page.Verdict; v.Word != "FAIL" || !strings.HasPrefix(v.Reason, "contract gate failed: failure no case ran") {
		t.Errorf("report verdict %s: %q", v.Word, v.Reason)
	}

	// A run that ended in an error judges nothing: the gate is not evaluated, nor passed.
	info.Error = "engine: boom"
	if e := ErrorSummary(info); e.Gates.Contract.Pass || e.Gates.Contract.Evaluated {
		t.Errorf("error summary: contract gate %+v", e.Gates.Contract)
	}
}

// TestContractInSummary checks where the suite's result sits in summary.json (after the
// gates), that it reads back as written, and the contract gate's line in the text summary
// and its row in the report.
func TestContractInSummary(t *testing.T) {
	info, total, windows := fixture()
	info.Contract = fixtureContract()
	s := Build(info, total, windows)
	b, err := summaryJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	keys := objectKeys(t, b)
	if i := slices.Index(keys, "contract"); i < 0 || keys[i-1] != "gates" || keys[i+1] != "thresholds" {
		t.Errorf("top-level keys %v: want contract after gates", keys)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, err := summaryJSON(&back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Error("summary.json with a contract read back and written again differs")
	}
	if back.Contract.Cases[2].Evidence[1].Method != "tasks/cancel" || back.Contract.Counts != (ContractCount{3, 2, 2}) {
		t.Errorf("read back: %+v", back.Contract)
	}

	var text bytes.Buffer
	if err := WriteText(&text, s, ""); err != nil {
		t.Fatal(err)
	}
	want := "            contract       FAIL cases_failed=2 cases_passed=3 cases_skipped=2 tasks_created=3\n" +
		"                           failed: cancel.terminal (R26), isolation.get (R53)\n" +
		"                           LEFT BEHIND on the target: 4567ef...0123\n" +
		"            rollback       not evaluated"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}

	p := pageOf(t, s)
	var row gateRow
	for _, g := range p.Gates {
		if g.Name == GateContract {
			row = g
		}
	}
	if row.Class != "fail" || row.Why != "cases_failed 2, rules_broken R26 (and 1 more)" {
		t.Errorf("report row: %s %q", row.Class, row.Why)
	}
	var tables []string
	for _, g := range row.Evidence.Tables {
		tables = append(tables, g.Title+"["+strings.Join(g.Cols, ",")+"]")
	}
	if got := strings.Join(tables, " "); got != "failed[id,rules,message] skipped[id,reason,enable]" {
		t.Errorf("evidence tables %s", got)
	}
}
