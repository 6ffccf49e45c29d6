package metrics

import (
	"math/rand/v2"
	"testing"
)

// TestEncodeMatchesEncodeV2 holds the encoder to hdrhistogram-go's EncodeV2, byte for byte,
// for histograms of every geometry: empty, one value, spread values, runs of empty
// buckets, the highest trackable value, and counts that need every length of ZigZag
// number.
func TestEncodeMatchesEncodeV2(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var e v2Encoder
	for h := range NumHists {
		for c := range 6 {
			hh := NewHistogram(h)
			switch c {
			case 1:
				_ = hh.RecordValue(1)
			case 2:
				for range 5000 {
					_ = hh.RecordValue(rng.Int64N(h.Highest()))
				}
			case 3:
				_ = hh.RecordValues(h.Highest(), 1<<62)
			case 4:
				for i := range 20 {
					_ = hh.RecordValues(int64(i*977+3), int64(1)<<(3*i))
				}
			case 5:
				_ = hh.RecordValues(0, 3)
				_ = hh.RecordValue(h.Highest() / 2)
			}
			want, err := hh.EncodeV2()
			if err != nil {
				t.Fatal(err)
			}
			if got := e.encode([]byte("x"), hh); string(got) != "x"+string(want) {
				t.Fatalf("%s case %d:\n got %.80s\nwant %.80s", h.Name(), c, got[1:], want)
			}
		}
	}
}

// BenchmarkEncode encodes a window's latency histogram for the interval log, with the
// encoder and with hdrhistogram-go's EncodeV2.
func BenchmarkEncode(b *testing.B) {
	hh := NewHistogram(LatencyInitialize)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		_ = hh.RecordValue(200 + rng.Int64N(5000))
	}
	b.Run("encoder", func(b *testing.B) {
		var e v2Encoder
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = e.encode(buf[:0], hh)
		}
	})
	b.Run("EncodeV2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = hh.EncodeV2()
		}
	})
}
