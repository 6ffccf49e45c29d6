package main

import (
	"net/netip"

	"github.com/tasksim/tasksim/internal/gcpolicy"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/scenarios"
)

// clientNet is how a run's clients reach the target, as summary.json records it under
// runtime: the requests in flight at once, and the local addresses their connections are
// dialed from (loadgen.RunSources).
type clientNet struct {
	MaxConns int `json:"max_conns"` // 0 = no bound
	// SourceAddresses are the addresses, in the order dials take them; none = the system's
	// choice. SourceAddressesAuto says tasksim chose them (loadgen.AutoSourceAddrs).
	SourceAddresses     []string `json:"source_addresses,omitempty"`
	SourceAddressesAuto bool     `json:"source_addresses_auto,omitempty"`

	addrs []netip.Addr
}

// runNet decides how the clients of sc, run as cfg says, reach its target. The connections
// a run may open at once are its MaxConns, else two per client of its pool (a poll beside a
// blocking tasks/result).
func runNet(sc *scenarios.Scenario, cfg *loadgen.Config) (clientNet, error) {
	target := sc.Target
	if target == "" {
		target = "http://127.0.0.1/mcp" // the embedded server listens there
	}
	conns := cfg.MaxConns
	if conns == 0 {
		conns = 2 * cfg.Shard.Size(sc.Workload.PoolSize())
	}
	addrs, auto, err := loadgen.RunSources(target, sc.Client.SourceAddresses, conns)
	if err != nil {
		return clientNet{}, usageError{err}
	}
	n := clientNet{MaxConns: cfg.MaxConns, SourceAddressesAuto: auto && len(addrs) > 0, addrs: addrs}
	for _, a := range addrs {
		n.SourceAddresses = append(n.SourceAddresses, a.String())
	}
	return n, nil
}

// runRuntime is summary.json's runtime of a run: the collector and how the clients reach
// the target.
type runRuntime struct {
	gcpolicy.Policy
	clientNet
}
