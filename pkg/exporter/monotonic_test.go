package exporter

import (
	"math/rand/v2"
	"testing"
)

// Under any sequence of events past the label limit, every published series
// only grows while it exists, and a label set folded into other never comes
// back as a series of its own (it would start lower, and rate() and
// increase() would see a reset); the totals stay exact.
func TestFoldingKeepsEverySeriesMonotonic(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 31))
		g := newGroupStore(groupByName(mgWaits), 1+r.IntN(5))
		prev := map[string]float64{}
		gone := map[string]bool{}
		var total float64
		for step := range 400 {
			wt := []string{"A", "B", "C", "D", "E", "F", "G", "H"}[r.IntN(8)]
			n := float64(1 + r.IntN(3))
			total += n
			g.add([]string{"db", wt, "Lock"}, []float64{n, 0, 0}, exemplar{})
			if r.IntN(4) == 0 {
				g.ensure([]string{"db", []string{"A", "B", "C"}[r.IntN(3)], "Lock"})
			}
			now := map[string]float64{}
			var sum float64
			for k, v := range collectGroup(t, g) {
				now[k] = v[0]
				sum += v[0]
			}
			for k, v := range now {
				if gone[k] {
					t.Fatalf("seed %d step %d: %s came back at %v after it was folded", seed, step, k, v)
				}
				if p, ok := prev[k]; ok && v < p {
					t.Fatalf("seed %d step %d: %s went down %v -> %v", seed, step, k, p, v)
				}
			}
			for k := range prev {
				if _, ok := now[k]; !ok {
					gone[k] = true
				}
			}
			if sum != total {
				t.Fatalf("seed %d step %d: the series add up to %v, %v were added", seed, step, sum, total)
			}
			prev = now
		}
	}
}
