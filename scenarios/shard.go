package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Shard is slice Index of Count of a scenario's work (`tasksim run --shard I/N`), so that N
// processes, on any machines, run the whole scenario between them. The zero value, and any
// Shard with Count 1, is the whole scenario.
//
// The split is striped, as k6's execution segments stripe iterations over equal segments:
// work item i (a client's global index, or an open-model arrival's number from 0) belongs to
// shard i mod Count. So:
//
//   - the shards' items partition 0..n-1 for every n, and shard I's items do not depend on
//     the machine, the process or the other shards (only on I and N);
//   - shard I holds Size(n) = ceil((n-I)/N) of n items: any two shards differ by at most one;
//   - a client keeps its global index in its shard, so its random streams (seeded by the
//     index), its tenant (round-robin by the index), whether it is an isolation probe, its
//     start on the ramp (i * ramp / clients) and its per-client faults are those it has in
//     the whole scenario;
//   - arrival k of the open model is due when it is due in the whole scenario, and is taken
//     by shard k mod N alone: the union of the shards' arrivals is the whole scenario's, each
//     shard arrives at Share() of its rate, stages included.
//
// Time windows (fault windows, restarts, revocations, stalls) are offsets from the load's
// start and stay whole in every shard: with a common start (--start-at) they fall at the
// same instants everywhere.
type Shard struct {
	Index int // 0..Count-1
	Count int // number of shards; 0 or 1 = the whole scenario
}

// ParseShard reads "I/N": 0 <= I < N, N >= 1.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT, e.g. 0/4", s)
	}
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT, two whole numbers, e.g. 0/4", s)
	}
	if cnt < 1 { // Count 0 is the zero value, the whole scenario: not something to write
		return Shard{}, fmt.Errorf("shard count %d: want 1..%d", cnt, MaxShards)
	}
	sh := Shard{Index: idx, Count: cnt}
	return sh, sh.Validate()
}

// MaxShards bounds the number of shards: far more than any fleet of load generators.
const MaxShards = 100000

// Validate checks 1 <= Count <= MaxShards and 0 <= Index < Count; the zero value is valid.
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Count > MaxShards {
		return fmt.Errorf("shard count %d: want 1..%d", s.Count, MaxShards)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard index %d of %d: want 0..%d", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// Whole reports whether the shard is the whole scenario (Count 0 or 1).
func (s Shard) Whole() bool { return s.Count <= 1 }

// Owns reports whether work item i (a client's global index, an arrival's number from 0)
// belongs to the shard: i mod Count == Index.
func (s Shard) Owns(i int) bool { return s.Whole() || i%s.Count == s.Index }

// Size is how many of the items 0..n-1 the shard owns: ceil((n-Index)/Count), 0 when n <= Index.
func (s Shard) Size(n int) int {
	if s.Whole() {
		return n
	}
	if n <= s.Index {
		return 0
	}
	return (n - s.Index + s.Count - 1) / s.Count
}

// Share is the part of an arrival rate the shard takes: 1/Count.
func (s Shard) Share() float64 {
	if s.Whole() {
		return 1
	}
	return 1 / float64(s.Count)
}

// String is "I/N", "0/1" for the whole scenario.
func (s Shard) String() string {
	if s.Whole() {
		return "0/1"
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Hash is a stable hash of the resolved scenario: "sha256:" and the hex SHA-256 of its YAML
// form (the fields in schema order, map keys sorted; header values redacted, Source and
// client.source_addresses left out), so that shards started from the same scenario and
// overrides, on any machine (each dialing from addresses of its own), show
// the same hash, and shards of different scenarios do not. No shard field is part of a
// Scenario: the hash is the same in every shard.
func (s *Scenario) Hash() string {
	c := *s
	// The source addresses are the machine's, not the scenario's: the shards of one run on
	// several machines dial from addresses of their own.
	c.Client.SourceAddresses = nil
	b, err := yaml.Marshal(&c)
	if err != nil { // every field of a Scenario encodes; Validate checked Args
		b = []byte("unencodable: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
