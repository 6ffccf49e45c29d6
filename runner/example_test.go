package runner_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// Example runs the built-in smoke scenario, shortened to two seconds of load, against the
// embedded mock server (on 127.0.0.1), without the command line, and prints its verdict.
func Example() {
	sc, err := scenarios.Load("smoke")
	if err != nil {
		fmt.Println(err)
		return
	}
	for path, value := range map[string]string{"duration": "2s", "grace": "3s", "workload.clients": "5"} {
		if err := sc.Set(path, value); err != nil {
			fmt.Println(err)
			return
		}
	}
	dir, err := os.MkdirTemp("", "tasksim-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	sum, err := runner.Run(context.Background(), sc, runner.Options{Dir: dir})
	if err != nil { // a *runner.GateError, *InterruptedError, *UsageError, ... (see Run)
		fmt.Println("run:", err)
		return
	}
	fmt.Println("verdict:", sum.Verdict)
	fmt.Println("tasks completed:", sum.Tasks.Completed > 0)
	// Output:
	// verdict: pass
	// tasks completed: true
}
