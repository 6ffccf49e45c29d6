package results

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWriteContract(t *testing.T) {
	c := fixtureContract()
	dir := filepath.Join(t.TempDir(), "out") // WriteContract creates it
	for range 2 {                            // the second write replaces the file
		if err := WriteContract(dir, c); err != nil {
			t.Fatal(err)
		}
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{ContractFile}) {
		t.Errorf("files: %v, want conform.json alone (no temporary file left)", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, ContractFile))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, ContractFile+".golden", b)
	if got, want := objectKeys(t, b), []string{"tasksim_version", "target", "protocol", "server", "started_at", "duration_s",
		"cases", "created", "left_behind", "notes", "interrupted", "counts", "verdict"}; !slices.Equal(got, want) {
		t.Errorf("keys\n got %v\nwant %v", got, want)
	}
	if !bytes.Contains(b, []byte(`</script><script>alert(\"excerpt\")</script>&<![CDATA[]]>`)) {
		t.Error("excerpts are HTML-escaped in conform.json")
	}
	back, err := ReadContract(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := contractJSON(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Error("conform.json read back and written again differs")
	}

	// Lists are never null, even when the caller left them nil.
	empty := &Contract{Target: "embedded", StartedAt: t0, Cases: []ContractCase{{ID: "a.b", Verdict: CaseSkip}}}
	empty.Count()
	b, err = contractJSON(empty)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("null")) {
		t.Errorf("null in conform.json:\n%s", b)
	}
	if err := WriteContract(t.TempDir(), nil); err == nil {
		t.Error("WriteContract(nil) succeeded")
	}
	if _, err := ReadContract(t.TempDir()); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("ReadContract of an empty directory: %v, want not exist", err)
	}
}

// TestWriteJUnit checks the JUnit file against its golden copy, that it parses back with
// the counts of the suite, and that planted markup stays text.
func TestWriteJUnit(t *testing.T) {
	c := fixtureContract()
	c.Cases[0].Message += "\x01\xff" // what XML cannot carry
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "conform.xml.golden", buf.Bytes())
	if !strings.HasPrefix(buf.String(), `<?xml version="1.0" encoding="UTF-8"?>`+"\n<testsuites ") {
		t.Errorf("starts %.60q", buf.String())
	}

	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit file does not parse: %v", err)
	}
	if doc.Name != "tasksim conform" || doc.Tests != 7 || doc.Failures != 2 || doc.Skipped != 2 || doc.Errors != 0 || len(doc.Suites) != 1 {
		t.Fatalf("testsuites: %+v", doc)
	}
	s := doc.Suites[0]
	if s.Tests != len(s.Cases) || s.Time != "4.250" || s.Timestamp != "2026-01-05T09:00:00" {
		t.Errorf("testsuite: tests %d, %d cases, time %s, timestamp %s", s.Tests, len(s.Cases), s.Time, s.Timestamp)
	}
	var failures, skipped int
	for _, tc := range s.Cases {
		if tc.Failure != nil {
			failures++
		}
		if tc.Skipped != nil {
			skipped++
		}
	}
	if failures != s.Failures || skipped != s.Skipped {
		t.Errorf("%d failure and %d skipped elements, the suite counts %d and %d", failures, skipped, s.Failures, s.Skipped)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props["target"] != c.Target || props["protocol"] != "2025-11-25" || props["server"] != c.Server || props["tasks_left_behind"] != "4567ef...0123" {
		t.Errorf("properties %v", props)
	}

	byName := map[string]junitCase{}
	for _, tc := range s.Cases {
		byName[tc.Name] = tc
	}
	cancel := byName["cancel.terminal"]
	if cancel.Classname != "conform.cancel" || cancel.Time != "1.520" || cancel.Failure == nil ||
		cancel.Failure.Type != "R26" || !strings.HasPrefix(cancel.Failure.Message, "R26: expected error -32602") {
		t.Errorf("cancel.terminal: %+v %+v", cancel, cancel.Failure)
	}
	iso := byName["isolation.get"]
	if iso.Failure == nil || iso.Failure.Type != "R53" || strings.Contains(iso.Failure.Message, "\n") ||
		!strings.Contains(iso.Failure.Message, plantedExcerpt) {
		t.Errorf("isolation.get failure: %+v", iso.Failure)
	}
	for _, want := range []string{"rules checked: R53, R54", "rules broken: R53", "[1] tasks/get (identity second), HTTP 200", `"statusMessage":"` + plantedExcerpt} {
		if !strings.Contains(iso.Failure.Body, want) {
			t.Errorf("isolation.get failure text lacks %q:\n%s", want, iso.Failure.Body)
		}
	}
	if sk := byName["isolation.list"].Skipped; sk == nil || sk.Message != "no second identity; give --other-header with a second identity's token" {
		t.Errorf("isolation.list skipped: %+v", sk)
	}
	if sk := byName["list.pagination"].Skipped; sk == nil || sk.Message != "the server does not declare tasks.list" {
		t.Errorf("list.pagination skipped: %+v", sk)
	}
	if out := byName["create.working"].SystemOut; out == nil || out.Text != "created 0123ab...cdef, status working\uFFFD\uFFFD" {
		t.Errorf("create.working system-out %q", out)
	}
	if out := byName["get.unknown"].SystemOut; out == nil || out.Text != "tasks/get of an unknown id is refused" {
		t.Errorf("get.unknown system-out %q: want the title when there is no message", out)
	}
	if !strings.Contains(s.SystemOut.Text, "tasks left behind: 1 (4567ef...0123)") {
		t.Errorf("suite system-out:\n%+v", s.SystemOut)
	}
	if err := WriteJUnit(&buf, nil); err == nil {
		t.Error("WriteJUnit(nil) succeeded")
	}
}

func TestWriteContractText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteContractText(&buf, fixtureContract()); err != nil {
		t.Fatal(err)
	}
	golden(t, "conform.txt.golden", buf.Bytes())
	for i, line := range strings.Split(buf.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > contractTextWidth {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
		}
	}
	for _, want := range []string{
		"SKIP     isolation.list   R53      no second identity → enable: give --other-header with a second",
		"         LEFT BEHIND 1: 4567ef...0123",
		"verdict  FAIL: 2 of 7 cases failed: cancel.terminal, isolation.get\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}

	// A suite that passed, and one that skipped everything.
	c := fixtureContract()
	c.Cases = slices.DeleteFunc(c.Cases, func(k ContractCase) bool { return k.Verdict == CaseFail })
	c.LeftBehind = nil
	c.Count()
	buf.Reset()
	if err := WriteContractText(&buf, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"         left behind: none\n", "verdict  PASS: no case failed (3 passed, 2 skipped)\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("passing suite: text lacks %q:\n%s", want, buf.String())
		}
	}
	for i := range c.Cases {
		c.Cases[i].Verdict = CaseSkip
	}
	c.Count()
	buf.Reset()
	if err := WriteContractText(&buf, c); err != nil {
		t.Fatal(err)
	}
	if want := "verdict  FAIL: no case ran (every case was skipped): the suite showed nothing\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, buf.String())
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		max   int
		want  []string
	}{
		{"", 10, 0, []string{""}},
		{"a b  c\nd", 10, 0, []string{"a b c d"}},
		{"one two three four", 9, 0, []string{"one two", "three", "four"}},
		{"abcdefghijkl", 5, 0, []string{"abcde", "fghij", "kl"}},
		{"one two three four", 9, 2, []string{"one two", "three…"}},
		{"one two three four", 7, 1, []string{"one tw…"}},
		{"→ é ü", 3, 0, []string{"→ é", "ü"}},
	} {
		if got := wrap(c.s, c.width, c.max); !slices.Equal(got, c.want) {
			t.Errorf("wrap(%q, %d, %d) = %q, want %q", c.s, c.width, c.max, got, c.want)
		}
	}
}
