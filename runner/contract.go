package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/results"
)

// contractPhase runs the contract suite before the load (scenario contract: true). A stop
// during the suite stops it (its cases end skipped, what it created is cancelled,
// conform.json is written) and the load never starts: an *InterruptedError.
func (r *runRequest) contractPhase(ctx context.Context) error {
	r.phase(PhaseContract)
	ctx, cancel := context.WithCancel(ctx)
	var interrupted atomic.Bool
	watch, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-r.opts.Stop:
			interrupted.Store(true)
			cancel()
		case <-ctx.Done():
			interrupted.Store(true)
		case <-watch:
		}
	}()
	err := r.runContract(ctx)
	close(watch)
	<-watched // a stop that came as the suite ended is seen here, not lost
	cancel()
	if interrupted.Load() && r.contract == nil {
		return &InterruptedError{"the contract suite, before its first case; no load was run"}
	}
	if err != nil {
		return err
	}
	if interrupted.Load() {
		return &InterruptedError{"the contract suite's cases that ran before the signal, in conform.json; no load was run"}
	}
	return nil
}

// runContract runs the contract suite against the target, or, on the embedded server,
// against a server of its own with the run's configuration, so that the suite's tasks do
// not count in the run's figures. With two or more tenants the first two are the suite's
// two identities. The result is kept for the contract gate and written as conform.json
// into the run's directory.
func (r *runRequest) runContract(ctx context.Context) error {
	sc := r.sc
	t, srv, err := startTarget(sc, 2, nil, nil, nil, r.opts.InProcess)
	if err != nil {
		return err
	}
	if srv != nil {
		defer srv.Close()
	}
	// The suite of the era the run pins (on the embedded server, the one it serves), else of
	// every era the target serves, as `tasksim conform` runs it.
	o := conform.Options{Target: t, Version: Version, Protocol: runProtocol(sc, srv != nil),
		OtherHint: "give the scenario two tenants or more (server.tokens; security.tenants for a target)"}
	if tenants := runTenants(sc); len(tenants) > 0 {
		t.Header.Set("Authorization", "Bearer "+tenants[0].Token.Reveal())
		if len(tenants) > 1 {
			o.Other = http.Header{"Authorization": {"Bearer " + tenants[1].Token.Reveal()}}
		}
	}
	if srv == nil {
		o.Fallback = true // the scenario's tool and arguments, unless the suite knows better
		o.Tool = sc.Tool
		if sc.Args != nil {
			b, err := json.Marshal(sc.Args)
			if err != nil {
				return &UsageError{fmt.Errorf("args: %v", err)}
			}
			o.Args = b
		}
	}
	r.note("contract suite against %s", TargetName(sc))
	o.Progress = func(c results.ContractCase) { // the suite may take minutes on a real target
		r.note("contract: %-4s %s", c.Verdict, c.ID)
	}
	res, err := conform.Run(ctx, o)
	var oe *conform.OptionError
	if errors.As(err, &oe) {
		return &UsageError{fmt.Errorf("contract suite: tool: %s", r.secrets.String(oe.Msg))}
	}
	if err != nil {
		return errors.New(r.secrets.String(err.Error()))
	}
	r.contract = res
	r.note("contract: %s (%d pass, %d fail, %d skip)", res.Verdict, res.Counts.Pass, res.Counts.Fail, res.Counts.Skip)
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	return results.WriteContract(r.dir, res)
}
