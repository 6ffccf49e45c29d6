package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
)

// A rollback drill (scenario `rollback:`, docs/ARCHITECTURE.md#rollback): the engine's kill
// switch (loadgen.Engine.RollBack), flipped at rollback.at into the load phase by armRollback,
// or by the collector when an abort_on_fail threshold fails with rollback.on_abort; on the
// embedded server the switch first calls mockserver.Server.RollBack, whose reconciliation
// goes into the rollback gate's evidence.

// rollbackPolicy is the engine's side of the scenario's drill; srv, when the run has the
// embedded server, hears of the switch first.
func (r *runRequest) rollbackPolicy(srv *mockserver.Server) {
	rb := r.sc.Rollback
	if !rb.On() {
		return
	}
	r.cfg.Rollback = loadgen.RollbackPolicy{On: true, Cancel: rb.Cancel}
	if srv != nil {
		r.cfg.Rollback.OnSwitch = func(at time.Time) { srv.RollBack(at, rb.Restart) }
	}
}

// armRollback flips eng's switch at rollback.at into the load phase, which starts now; stop
// disarms it.
func (r *runRequest) armRollback(eng *loadgen.Engine) (stop func()) {
	at := time.Duration(r.sc.Rollback.At)
	if at <= 0 {
		return func() {}
	}
	t := time.AfterFunc(at, func() { eng.RollBack(fmt.Sprintf("at %s", at)) })
	return func() { t.Stop() }
}

// rollbackInfo is what the drill showed, for the rollback gate; nil without a drill.
func (r *runRequest) rollbackInfo(eng *loadgen.Engine, srv *mockserver.Server) *results.Rollback {
	st := eng.Rollback()
	if st == nil {
		return nil
	}
	out := &results.Rollback{Planned: r.plannedSwitch(), Trigger: st.Trigger, CreatesAfter: st.CreatesAfter, TasksAfter: st.TasksAfter,
		ServerCreatesAfter: -1, PreSwitch: st.PreSwitch, Settled: st.Settled, Listed: st.Listed,
		Unlisted: st.Unlisted, UnlistedSample: st.UnlistedSample, Cancelled: st.Cancelled, DrainS: -1,
		FallbackCalls: st.FallbackCalls, FallbackErrors: st.FallbackErrors, Refused: st.Refused}
	if st.Trigger == "" {
		return out
	}
	out.AtS = st.At.Sub(r.start).Seconds()
	if st.Drain >= 0 {
		out.DrainS = st.Drain.Seconds()
	}
	if srv == nil {
		return out
	}
	rc := srv.Reconcile()
	if rc == nil {
		return out
	}
	out.ServerCreatesAfter = int64(rc.CreatesAfter)
	out.Reconciliation = &results.Reconciliation{InFlight: rc.InFlight, TasksLost: int64(rc.TasksLost),
		Applied: reconciled(rc.Applied), NotApplied: reconciled(rc.NotApplied), Unknown: reconciled(rc.Unknown)}
	return out
}

func reconciled(ops []mockserver.ReconciledOp) []results.ReconciledOp {
	out := make([]results.ReconciledOp, len(ops))
	for i, o := range ops {
		out[i] = results.ReconciledOp{TaskID: o.TaskID, Key: o.Key, Tenant: o.Tenant, Status: o.Status}
	}
	return out
}

// plannedSwitch says when the scenario means the switch to flip.
func (r *runRequest) plannedSwitch() string {
	rb := r.sc.Rollback
	var when []string
	if rb.At > 0 {
		when = append(when, fmt.Sprintf("at %s", time.Duration(rb.At)))
	}
	if rb.OnAbort {
		when = append(when, "on an abort_on_fail threshold's failure")
	}
	return strings.Join(when, ", or ")
}
