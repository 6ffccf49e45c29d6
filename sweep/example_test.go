package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tasksim/tasksim/scenarios"
	"github.com/tasksim/tasksim/sweep"
)

// pathBuilder makes a cell's scenario as --set would: every dimension is a scenario path,
// set over the scenario name and the fixed overrides.
type pathBuilder struct {
	name  string
	fixed map[string]string
}

var _ sweep.Builder = pathBuilder{}

// CheckValues sets each value on the scenario alone, so that an unknown path is one problem.
func (b pathBuilder) CheckValues(vars []sweep.Vary) error {
	sc, err := scenarios.Load(b.name)
	if err != nil {
		return err
	}
	var errs []error
	for _, v := range vars {
		for _, val := range v.Values {
			errs = append(errs, sc.Set(v.Name, val))
		}
	}
	return errors.Join(errs...)
}

// Scenario is the scenario with the fixed overrides and the cell's values, validated.
func (b pathBuilder) Scenario(values map[string]string) (*scenarios.Scenario, error) {
	sc, err := scenarios.Load(b.name)
	if err != nil {
		return nil, err
	}
	for _, m := range []map[string]string{b.fixed, values} {
		for path, value := range m {
			if err := sc.Set(path, value); err != nil {
				return nil, err
			}
		}
	}
	return sc, sc.Validate()
}

// Example sweeps the built-in smoke scenario over two client counts, one second of load
// each, against the embedded mock server (on 127.0.0.1), without the command line, and
// writes sweep.json, sweep.csv and sweep.html beside the cells' run directories.
func Example() {
	plan := &sweep.Plan{Scenario: "smoke",
		Vary:  []sweep.Vary{{Name: "workload.clients", Values: []string{"1", "2"}}},
		Build: pathBuilder{name: "smoke", fixed: map[string]string{"duration": "1s", "grace": "3s"}}}
	r, err := plan.Check() // every problem of the grid at once, before anything runs
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "tasksim-sweep-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	if err := sweep.Run(context.Background(), plan, r, sweep.Options{Dir: dir}); err != nil {
		fmt.Println("sweep:", err)
		return
	}
	if err := sweep.WriteFiles(dir, r); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Cells {
		_, err := os.Stat(filepath.Join(dir, c.Cell, "summary.json"))
		fmt.Println(c.Cell, "clients", c.Clients, "run", c.Run, "summary", err == nil)
	}
	_, err = sweep.ReadJSON(dir)
	fmt.Println("sweep.json read back:", err == nil)
	// Output:
	// cell-00 clients 1 run true summary true
	// cell-01 clients 2 run true summary true
	// sweep.json read back: true
}
