package results

import (
	"strings"
	"testing"
)

// TestInterruptedExitCode: a run a signal stopped early is never a pass: 130 when nothing
// failed in what it measured, 99 when something did; the verdict line says which.
func TestInterruptedExitCode(t *testing.T) {
	for _, tc := range []struct {
		verdict     string
		interrupted bool
		code        int
		line        string
	}{
		{VerdictPass, false, 0, "verdict     PASS (exit code 0)"},
		{VerdictPass, true, ExitInterrupted, "verdict     PASS so far, but the run was interrupted (exit code 130)"},
		{VerdictFail, true, ExitGateFailed, "verdict     FAIL (exit code 99)"},
	} {
		s := &Summary{Verdict: tc.verdict, Interrupted: tc.interrupted}
		if got := s.ExitCode(); got != tc.code {
			t.Errorf("verdict %s, interrupted %v: exit code %d, want %d", tc.verdict, tc.interrupted, got, tc.code)
		}
		var b strings.Builder
		if err := WriteText(&b, s, ""); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.line+"\n") {
			t.Errorf("verdict %s, interrupted %v: text lacks %q:\n%s", tc.verdict, tc.interrupted, tc.line, b.String())
		}
	}
}

// TestTextCompared: a run a comparison judges next says its own verdict without an exit
// code, and a side of an A/B run says which side and clients it is, not a --shard it was
// never given.
func TestTextCompared(t *testing.T) {
	s := &Summary{Verdict: VerdictPass, Shard: &ShardInfo{Index: 1, Count: 2, ABSide: ABBaseline}}
	var b strings.Builder
	if err := WriteTextCompared(&b, s, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"A/B side    baseline: the odd clients (shard 1 of 2 for tasksim merge)",
		"verdict     PASS on its own; the comparison below gives the exit code\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "--shard") || strings.Contains(b.String(), "exit code 0") {
		t.Errorf("text names a --shard or exit code 0:\n%s", b.String())
	}
}
