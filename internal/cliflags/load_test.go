package cliflags

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// TestLoadScenario: a load flag that was given sets its scenario field, one that was not
// leaves the scenario's own value, --set comes last, and auto is the scenario's empty
// protocol.
func TestLoadScenario(t *testing.T) {
	own, err := scenarios.Load("smoke")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLoad([]string{"--clients", "7", "--duration", "3s", "--poll-interval", "750ms", "--tool", "work_task",
		"--protocol", "auto", "--args", `{"duration_ms":10}`, "--header", "X-A: 1", "--seed", "9",
		"--source-addrs", "127.0.0.1, 127.0.0.2", "--set", "workload.clients=8", "--target", "http://127.0.0.1:9/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := l.Scenario("smoke")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Workload.Clients != 8 || time.Duration(sc.Duration) != 3*time.Second || sc.Tool != "work_task" || sc.Seed != 9 ||
		time.Duration(sc.Server.PollInterval) != 750*time.Millisecond || time.Duration(sc.Client.Poll.Interval) != 750*time.Millisecond ||
		sc.Protocol != "" || sc.Args["duration_ms"] != float64(10) || sc.Headers["X-A"] != "1" ||
		strings.Join(sc.Client.SourceAddresses, " ") != "127.0.0.1 127.0.0.2" || sc.Target != "http://127.0.0.1:9/mcp" {
		t.Errorf("scenario = %+v", sc)
	}

	l, _ = ParseLoad(nil)
	sc, err = l.Scenario("smoke")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Workload.Clients != own.Workload.Clients || sc.Duration != own.Duration || sc.Seed != own.Seed || sc.Target != "" {
		t.Errorf("no flags: %+v, want smoke's own %+v", sc, own)
	}

	l, _ = ParseLoad([]string{"--rate", "20/s"})
	if sc, err = l.Scenario("smoke"); err != nil || sc.Workload.Model != "open" {
		t.Errorf("--rate 20/s: model %q, %v; want the open model", sc.Workload.Model, err)
	}
}

// TestLoadProblems: every problem of a command line at once, in a *runner.UsageError, each
// naming its flag, and a header's value never shown.
func TestLoadProblems(t *testing.T) {
	l, err := ParseLoad([]string{"--protocol", "2024-01-01", "--args", "[1]", "--header", "Bearer s3cret",
		"--header", ": s3cret", "--set", "nonsense", "--set", "workload.nope=1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Scenario("smoke")
	var ue *runner.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want a *runner.UsageError", err)
	}
	for _, want := range []string{`--protocol "2024-01-01": want auto`, "--args: not a JSON object",
		"--header: want 'Key: Value', got 13 characters", `--header: want 'Key: Value', got ": ***"`, `--set "nonsense": want path=value`, `"nope"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err shows a header's value:\n%v", err)
	}
	if _, err := ParseLoad([]string{"--clients", "x"}); !errors.As(err, &ue) || !strings.HasSuffix(err.Error(), "(see 'tasksim sweep --help')") {
		t.Errorf("--clients x: %v, want a usage error pointing to sweep's help", err)
	}
	l, _ = ParseLoad([]string{"--clients", "0"})
	if _, err := l.Scenario("smoke"); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--clients: workload.clients: must be") {
		t.Errorf("--clients 0: %v, want the validation's problem naming the flag", err)
	}
	if _, err := l.Scenario("no-such-scenario"); !errors.As(err, &ue) {
		t.Errorf("unknown scenario: %v, want a usage error", err)
	}
}

// TestCellRunArgs: the sweep's cell flags become run's load flags, in order, the zero ones
// left out, and run's parser reads them back.
func TestCellRunArgs(t *testing.T) {
	c := &Cell{Duration: 2 * time.Second, Target: "http://127.0.0.1:9/mcp", Headers: []string{"A: 1", "B: 2"}, Protocol: "auto",
		Sets: []string{"grace=1s"}}
	want := "--duration 2s --target http://127.0.0.1:9/mcp --header A: 1 --header B: 2 --protocol auto --set grace=1s"
	if got := strings.Join(c.RunArgs(), " "); got != want {
		t.Errorf("RunArgs = %q, want %q", got, want)
	}
	if args := (&Cell{}).RunArgs(); len(args) != 0 {
		t.Errorf("zero cell flags: %q, want none", args)
	}
	l, err := ParseLoad(c.RunArgs())
	if err != nil || l.Duration != c.Duration || l.Target != c.Target || len(l.Headers) != 2 || l.Sets[0] != "grace=1s" {
		t.Errorf("ParseLoad(RunArgs) = %+v, %v", l, err)
	}
}
