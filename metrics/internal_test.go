package metrics

import (
	"math/rand/v2"
	"testing"
)

// The memory figures in the doc comments (histogramBytes, ShardBytes, doc.go) must stay
// true to what hdrhistogram-go allocates.
func TestMemoryFigures(t *testing.T) {
	for h := range NumHists {
		// ByteSize is the counts plus a 68-byte estimate of the fields.
		if got, want := NewHistogram(h).ByteSize()-68, histogramBytes(h); got != want {
			t.Errorf("%s: counts hold %d bytes, histogramBytes says %d", h, got, want)
		}
	}
	if got := ShardBytes(); got != 5_697_088 {
		t.Errorf("ShardBytes() = %d, the doc comments say 5,697,088", got)
	}
}

// histMax and histMin give what Max and Min give, over each Hist's whole range: one value,
// a spread, values at 0 and at the highest trackable value.
func TestHistMaxMinAsMaxMin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for h := range NumHists {
		for trial := range 200 {
			hh := NewHistogram(h)
			for range 1 + rng.IntN(50) {
				v := rng.Int64N(h.Highest() + 1)
				switch trial % 4 {
				case 1:
					v = rng.Int64N(2048) // the first bucket
				case 2:
					v = h.Highest() - rng.Int64N(3)
				case 3:
					v = rng.Int64N(1 + rng.Int64N(h.Highest()))
				}
				if rng.IntN(10) == 0 {
					v = 0
				}
				hh.RecordValue(v)
			}
			if got, want := histMax(hh), hh.Max(); got != want {
				t.Fatalf("%s trial %d: histMax %d, Max %d", h, trial, got, want)
			}
			if got, want := histMin(hh), hh.Min(); got != want {
				t.Fatalf("%s trial %d: histMin %d, Min %d", h, trial, got, want)
			}
		}
	}
}
