package runner

import (
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// SLOInterval is the P the default SLOs of sc are judged by (results.DefaultSLOs): the
// pollInterval the target advertised on the run's first task (advertised; 0 = none seen)
// when the clients follow the advice (client.poll.policy server), else the interval the
// clients wait. Before the run (observed false) P is known only where the embedded server
// fixes it; a real target's is "from the advertised interval".
func SLOInterval(sc *scenarios.Scenario, advertised time.Duration, observed bool) results.SLOInterval {
	poll := sc.Client.Poll
	own := time.Duration(poll.Interval)
	switch poll.Policy {
	case scenarios.PollFixed:
		return results.SLOInterval{P: own, Known: true,
			From: "the clients' fixed client.poll.interval (client.poll.policy fixed)"}
	case scenarios.PollBackoff:
		return results.SLOInterval{P: own, Known: true,
			From:    "the clients' first wait client.poll.interval (client.poll.policy backoff)",
			LagSkip: "not judged: the clients back off (client.poll.policy backoff), they do not poll every P"}
	}
	if observed {
		if advertised > 0 {
			return results.SLOInterval{P: advertised, Known: true, From: "the pollInterval the target advertised"}
		}
		return results.SLOInterval{P: own, Known: true,
			From: "none advertised: the clients' fallback client.poll.interval"}
	}
	if sc.Target == "" && !sc.Server.KnownBadOn(scenarios.KnownBadNoPollInterval) {
		srv := sc.Server
		switch srv.PollPolicy.Kind {
		case scenarios.IntervalFixed, "":
			return results.SLOInterval{P: time.Duration(srv.PollInterval), Known: true,
				From: "the embedded server's server.poll_interval"}
		case scenarios.IntervalPerTool:
			if d, ok := srv.PollPolicy.PerTool[sc.Tool]; ok {
				return results.SLOInterval{P: time.Duration(d), Known: true,
					From: "the embedded server's server.poll_policy.per_tool." + sc.Tool}
			}
			return results.SLOInterval{P: time.Duration(srv.PollInterval), Known: true,
				From: "the embedded server's server.poll_interval"}
		}
	}
	return results.SLOInterval{From: "from the advertised interval, learned from the run's first task (" +
		"--poll-interval " + own.String() + " if it advertises none)"}
}

// defaultSLOs resolves sc's default SLOs for the run's end, the manifest's first
// pollInterval (advertised) in hand.
func defaultSLOs(sc *scenarios.Scenario, advertised time.Duration) []results.SLO {
	return results.DefaultSLOs(sc.SLO, SLOInterval(sc, advertised, true), sc.Thresholds)
}
