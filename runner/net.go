package runner

import (
	"net/netip"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/scenarios"
)

// Connections is how a run's clients reach the target, as summary.json records it under
// runtime and --dry-run shows it: the requests in flight at once, and the local addresses
// their connections are dialed from (loadgen.RunSources).
type Connections struct {
	MaxConns int // 0 = no bound
	// SourceAddresses are the addresses, in the order dials take them; none = the system's
	// choice. SourceAddressesAuto says tasksim chose them (loadgen.AutoSourceAddrs).
	SourceAddresses     []string
	SourceAddressesAuto bool

	addrs []netip.Addr
}

// RunConnections decides how the clients of sc, run as the slice shard, reach its target.
// The connections a run may open at once are its MaxConns, else two per client of its
// slice of the pool (a poll beside a blocking tasks/result). Bad source addresses are a
// *UsageError.
func RunConnections(sc *scenarios.Scenario, shard scenarios.Shard) (Connections, error) {
	cfg := EngineConfig(sc)
	target := sc.Target
	if target == "" {
		target = "http://127.0.0.1/mcp" // the embedded server listens there
	}
	conns := cfg.MaxConns
	if conns == 0 {
		conns = 2 * shard.Size(sc.Workload.PoolSize())
	}
	addrs, auto, err := loadgen.RunSources(target, sc.Client.SourceAddresses, conns)
	if err != nil {
		return Connections{}, &UsageError{err}
	}
	c := Connections{MaxConns: cfg.MaxConns, SourceAddressesAuto: auto && len(addrs) > 0, addrs: addrs}
	for _, a := range addrs {
		c.SourceAddresses = append(c.SourceAddresses, a.String())
	}
	return c, nil
}
