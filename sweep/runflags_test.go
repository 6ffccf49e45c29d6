package sweep

import (
	"errors"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/runner"
)

// TestRunFlagsCells: a cell is run's command line of the shared flags, then each dimension
// as its alias's flag or as --set, and its scenario is the one those flags make.
func TestRunFlagsCells(t *testing.T) {
	b := RunFlags{Name: "smoke", Args: []string{"--duration", "2s"},
		Vary: []Vary{{Name: "clients", Values: []string{"3"}}, {Name: "client.poll.interval", Values: []string{"300ms"}}}}
	values := map[string]string{"clients": "3", "client.poll.interval": "300ms"}
	if got, want := strings.Join(b.CellArgs(values), " "), "--duration 2s --clients 3 --set client.poll.interval=300ms"; got != want {
		t.Errorf("CellArgs = %q, want %q", got, want)
	}
	sc, err := b.Scenario(values)
	if err != nil || sc.Workload.Clients != 3 || sc.Duration.String() != "2s" || sc.Client.Poll.Interval.String() != "300ms" {
		t.Errorf("Scenario = %+v, %v", sc, err)
	}
	if err := b.CheckValues(b.Vary); err != nil {
		t.Errorf("CheckValues of sound values: %v", err)
	}
}

// TestRunFlagsCheckValues: each value wrong in itself is one problem naming it, however
// many cells have it, all in one *runner.UsageError.
func TestRunFlagsCheckValues(t *testing.T) {
	vars := []Vary{{Name: "poll_interval", Values: []string{"1x", "1s"}}, {Name: "bogus", Values: []string{"1", "2"}}}
	err := RunFlags{Name: "smoke", Vary: vars}.CheckValues(vars)
	var ue *runner.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `--vary poll_interval=1x: invalid argument "1x"`) ||
		strings.Count(err.Error(), `unknown field "bogus"`) != 1 {
		t.Errorf("CheckValues = %v", err)
	}
	if err := (RunFlags{Name: "no-such-scenario"}).CheckValues(vars[1:]); !errors.As(err, &ue) {
		t.Errorf("unknown scenario: %v, want a usage error", err)
	}
}

// TestResultErr: the result's exit code as a command's error.
func TestResultErr(t *testing.T) {
	var gate *runner.GateError
	var intr *runner.InterruptedError
	for code, ok := range map[int]func(error) bool{
		exitOK:      func(err error) bool { return err == nil },
		exitGate:    func(err error) bool { return errors.As(err, &gate) },
		exitSignal:  func(err error) bool { return errors.As(err, &intr) && strings.Contains(err.Error(), "cell-01") },
		exitRuntime: func(err error) bool { return err != nil && !errors.As(err, &gate) && !errors.As(err, &intr) },
	} {
		if err := (&Result{ExitCode: code, InterruptedIn: "cell-01"}).Err(); !ok(err) {
			t.Errorf("exit code %d: %v", code, err)
		}
	}
}
