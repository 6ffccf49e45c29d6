package sweep

import (
	"math"
	"strings"
	"testing"
)

// withNoise sets each cell's request-rate noise as a run of d seconds would have it
// (sqrt(rate*d)/d) and ranks r again.
func withNoise(r *Result, d float64) *Result {
	for i := range r.Cells {
		if f := r.Cells[i].Figures; f != nil {
			f.RequestRateNoise = math.Sqrt(f.RequestRate*d) / d
		}
	}
	rank(r)
	return r
}

// TestSweepRecommendsNothingOnNoise: the sweep, three cells at 207.84, 207.92 and
// 207.88 req/s over 30 s runs, differ by less than their noise (±7.4 req/s at 2 sigma): no
// cell is recommended, the three are indistinguishable, the sweep says so and exits 0 (any
// of them will do). Cells that differ by more than the noise still get a recommendation.
func TestSweepRecommendsNothingOnNoise(t *testing.T) {
	r := withNoise(handMade(t, []Vary{vary("poll_interval", "250ms", "500ms", "1s")}, pass(207.84), pass(207.92), pass(207.88)), 30)
	if len(r.Recommended) != 0 {
		t.Errorf("recommended %+v on cells within the noise", r.Recommended)
	}
	if !strings.HasPrefix(r.NoRecommendation, "no recommendation: cells indistinguishable (cell-00, cell-02, cell-01 at 207.84..207.92 req/s") {
		t.Errorf("no_recommendation %q", r.NoRecommendation)
	}
	for _, c := range r.Cells {
		if c.Role != RoleIndistinguishable || !strings.Contains(c.Why, "within the noise of the runs") {
			t.Errorf("%s: role %q why %q, want indistinguishable", c.Cell, c.Role, c.Why)
		}
	}
	if r.ExitCode != exitOK {
		t.Errorf("exit code %d, want 0", r.ExitCode)
	}
	var text strings.Builder
	WriteText(&text, r, "out")
	if !strings.Contains(text.String(), "recommended none: cells indistinguishable: cell-00, cell-02, cell-01") {
		t.Errorf("sweep text does not say the cells are indistinguishable:\n%s", text.String())
	}

	r = withNoise(handMade(t, []Vary{vary("poll_interval", "250ms", "1s")}, pass(830), pass(207.9)), 30)
	if len(r.Recommended) != 1 || r.Recommended[0].Cell != "cell-01" || r.NoRecommendation != "" {
		t.Errorf("recommended %+v (%q), want cell-01: 207.9 vs 830 req/s is far above the noise", r.Recommended, r.NoRecommendation)
	}
}

// TestSweepCapacityThroughIndistinguishableCells: a client count whose cells tie still
// carried its clients: the capacity counts it, through its cheapest cell.
func TestSweepCapacityThroughIndistinguishableCells(t *testing.T) {
	r := withNoise(handMade(t, []Vary{vary("clients", "10", "20"), vary("poll_interval", "250ms", "1s")},
		pass(100), pass(100.5), fail(200, "gate hard"), fail(200, "gate hard")), 30)
	if r.Capacity == nil || r.Capacity.Clients != 10 || r.Capacity.Cell != "cell-00" {
		t.Errorf("capacity %+v (%q), want 10 clients through cell-00", r.Capacity, r.NoCapacity)
	}
	if len(r.Indistinguishable) != 1 || !strings.HasPrefix(r.Indistinguishable[0], "clients=10: cell-00, cell-01") {
		t.Errorf("indistinguishable %q", r.Indistinguishable)
	}
}
