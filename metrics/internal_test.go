package metrics

import "testing"

// The memory figures in the doc comments (histogramBytes, ShardBytes, doc.go) must stay
// true to what hdrhistogram-go allocates.
func TestMemoryFigures(t *testing.T) {
	for h := range NumHists {
		// ByteSize is the counts plus a 68-byte estimate of the fields.
		if got, want := NewHistogram(h).ByteSize()-68, histogramBytes(h); got != want {
			t.Errorf("%s: counts hold %d bytes, histogramBytes says %d", h, got, want)
		}
	}
	if got := ShardBytes(); got != 5_645_824 {
		t.Errorf("ShardBytes() = %d, the doc comments say 5,645,824", got)
	}
}
