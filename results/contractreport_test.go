package results

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestContractReport checks the page of the contract suite alone: its outline, that
// `tasksim report DIR` (RenderReport over conform.json) renders the bytes
// WriteContractReport wrote, that it fetches nothing and that planted markup stays text.
func TestContractReport(t *testing.T) {
	c := fixtureContract()
	dir := filepath.Join(t.TempDir(), "conform")
	if err := WriteContract(dir, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteContractReport(dir, c); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("report", "contract-outline.golden"), []byte(outline(written)))
	rendered, err := RenderReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, rendered) {
		t.Error("RenderReport of conform.json differs from the page WriteContractReport wrote")
	}
	if err := WriteReport(dir); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, ReportFile)); !bytes.Equal(written, again) {
		t.Error("WriteReport of a conform directory wrote other bytes")
	}

	page := string(written)
	for _, re := range []string{`(?i)<[a-z]+[^>]*\s(src|href|srcset|poster|action)\s*=`, `(?i)url\(`, `(?i)@import`, `(?i)<link\b`, `(?i)<iframe\b`, `(?i)<script`} {
		if m := regexp.MustCompile(re).FindAllString(page, 3); len(m) > 0 {
			t.Errorf("%s in the page: %q", re, m)
		}
	}
	if strings.Contains(page, plantedExcerpt) || !strings.Contains(html.UnescapeString(page), plantedExcerpt) {
		t.Error("the planted excerpt is not shown as text")
	}
	for _, want := range []string{
		`<title>FAIL: tasksim conform https://mcp.example.com/mcp</title>`,
		`<p class="note">1 task left behind on the target (4567ef...0123): `,
		`<li>isolation.get failed: R53: the second identity read the task: `,
		`<div class="enable">→ enable: give --other-header with a second identity&#39;s token</div>`,
		"<pre class=\"excerpt\">request: {&#34;method&#34;:&#34;tasks/get&#34;,",
		`<p class="exchange">[1] tasks/get (identity second), HTTP 200</p>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Evidence is folded under failed cases only.
	if n := strings.Count(page, `<details class="exchanges">`); n != 2 {
		t.Errorf("%d folded evidence blocks, want one per failed case (2)", n)
	}

	// A directory with a conform.json that does not parse says which file.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, ContractFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderReport(bad); err == nil || !strings.Contains(err.Error(), ContractFile) {
		t.Errorf("a broken conform.json: %v, want an error naming it", err)
	}
	if err := WriteContractReport(t.TempDir(), nil); err == nil {
		t.Error("WriteContractReport(nil) succeeded")
	}
}

func TestContractReportVerdict(t *testing.T) {
	pass := fixtureContract()
	pass.Cases = slices.DeleteFunc(pass.Cases, func(k ContractCase) bool { return k.Verdict == CaseFail })
	pass.LeftBehind = nil
	pass.Count()
	none := fixtureContract()
	for i := range none.Cases {
		none.Cases[i].Verdict = CaseSkip
	}
	none.Count()
	cut := fixtureContract()
	cut.Cases, cut.LeftBehind, cut.Interrupted = slices.Clone(pass.Cases), nil, true
	cut.Count()
	for _, c := range []struct {
		name         string
		c            *Contract
		word, reason string
		more, notes  int
	}{
		{"fail", fixtureContract(), "FAIL", "cancel.terminal failed: R26: expected error -32602", 1, 1},
		{"pass", pass, "PASS", "no case failed: 3 passed, 2 skipped", 0, 0},
		{"nothing ran", none, "FAIL", "no case ran: every case was skipped", 0, 1},
		{"interrupted", cut, "INTERRUPTED", "no case failed of those that ran (3 passed, 2 skipped), but the suite was interrupted", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := contractVerdict(c.c)
			if v.Word != c.word || !strings.HasPrefix(v.Reason, c.reason) || len(v.More) != c.more || len(v.Notes) != c.notes {
				t.Errorf("%s: %q, more %q, notes %q", v.Word, v.Reason, v.More, v.Notes)
			}
			var text strings.Builder
			if err := WriteContractText(&text, c.c); err != nil {
				t.Fatal(err)
			}
			if interrupted := strings.Contains(text.String(), "but the suite was interrupted (exit code 130)"); interrupted != c.c.Interrupted {
				t.Errorf("the text's verdict says interrupted %v, want %v:\n%s", interrupted, c.c.Interrupted, text.String())
			}
		})
	}
}
