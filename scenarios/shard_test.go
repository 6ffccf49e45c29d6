package scenarios

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"2/4", Shard{2, 4}, ""},
		{" 3 / 7 ", Shard{3, 7}, ""},
		{"4/4", Shard{}, "index 4 of 4"},
		{"-1/4", Shard{}, "index -1"},
		{"0/0", Shard{}, "count 0"},
		{"0/100001", Shard{}, "count 100001"},
		{"1", Shard{}, "want INDEX/COUNT"},
		{"a/b", Shard{}, "two whole numbers"},
		{"", Shard{}, "want INDEX/COUNT"},
	} {
		got, err := ParseShard(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseShard(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseShard(%q): error %v, want one containing %q", tc.in, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("ParseShard(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestShardsPartition proves the split's contract: for every N and item count, the N shards'
// items are disjoint and cover 0..n-1, Size counts them, sizes differ by at most one, and
// the shares add up to the whole.
func TestShardsPartition(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for _, items := range []int{0, 1, 2, 3, 5, 6, 7, 10, 13, 100, 1001} {
			owner := make([]int, items)
			for i := range owner {
				owner[i] = -1
			}
			share, lo, hi := 0.0, items, 0
			for idx := range n {
				s := Shard{Index: idx, Count: n}
				got := 0
				for i := range items {
					if s.Owns(i) {
						if owner[i] != -1 {
							t.Fatalf("N=%d items=%d: item %d in shards %d and %d", n, items, i, owner[i], idx)
						}
						owner[i] = idx
						got++
					}
				}
				if s.Size(items) != got {
					t.Errorf("N=%d items=%d shard %d: Size %d, owns %d", n, items, idx, s.Size(items), got)
				}
				lo, hi = min(lo, got), max(hi, got)
				share += s.Share()
			}
			for i, o := range owner {
				if o == -1 {
					t.Fatalf("N=%d items=%d: item %d in no shard", n, items, i)
				}
			}
			if hi-lo > 1 {
				t.Errorf("N=%d items=%d: shard sizes from %d to %d", n, items, lo, hi)
			}
			if share < 1-1e-12 || share > 1+1e-12 {
				t.Errorf("N=%d: shares add up to %v", n, share)
			}
		}
	}
}

// TestWholeShard: the zero Shard and 0/1 own everything, like no shard at all.
func TestWholeShard(t *testing.T) {
	for _, s := range []Shard{{}, {0, 1}} {
		if !s.Whole() || s.Share() != 1 || s.Size(17) != 17 || s.String() != "0/1" {
			t.Errorf("%+v: Whole %v Share %v Size(17) %d String %q", s, s.Whole(), s.Share(), s.Size(17), s.String())
		}
		for i := range 17 {
			if !s.Owns(i) {
				t.Errorf("%+v does not own %d", s, i)
			}
		}
	}
}

// TestScenarioHash: the hash is stable for one resolved scenario, changes with any field
// that changes the work, and ignores where the scenario was read from.
func TestScenarioHash(t *testing.T) {
	a, err := Load("baseline")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Load("baseline")
	if a.Hash() != b.Hash() || !strings.HasPrefix(a.Hash(), "sha256:") || len(a.Hash()) != len("sha256:")+64 {
		t.Fatalf("hash not stable: %s vs %s", a.Hash(), b.Hash())
	}
	b.Source = "/elsewhere/baseline.yaml"
	if a.Hash() != b.Hash() {
		t.Error("the hash depends on Source")
	}
	if err := b.Set("client.source_addresses", "[127.0.0.3]"); err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() || len(b.Client.SourceAddresses) != 1 {
		t.Error("the hash depends on the source addresses, which are each machine's own")
	}
	for _, set := range []string{"seed=2", "workload.clients=201", "args.duration_ms=1", "target=http://127.0.0.1:1/mcp"} {
		c, _ := Load("baseline")
		path, value, _ := strings.Cut(set, "=")
		if err := c.Set(path, value); err != nil {
			t.Fatal(err)
		}
		if c.Hash() == a.Hash() {
			t.Errorf("--set %s leaves the hash unchanged", set)
		}
	}
}
