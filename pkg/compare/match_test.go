package compare

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/findings"
)

var kinds = [][2]string{{"Nested Loops", "Inner Join"}, {"Hash Match", "Inner Join"}, {"Hash Match", "Aggregate"}, {"Merge Join", "Inner Join"},
	{"Sort", "Sort"}, {"Compute Scalar", "Compute Scalar"}, {"Clustered Index Scan", "Clustered Index Scan"}, {"Index Seek", "Index Seek"},
	{"Clustered Index Seek", "Clustered Index Seek"}, {"Parallelism", "Gather Streams"}, {"Stream Aggregate", "Aggregate"}}
var tables = []string{"", "Orders", "Customers", "OrderLines"}
var indexes = []string{"", "PK", "IX_A"}

// randomOps builds an arbitrary operator list: random parents (cycles,
// self-parents, unknown parents and duplicate ids included when wild).
func randomOps(rng *rand.Rand, n int, wild bool) []findings.OperatorStats {
	ops := make([]findings.OperatorStats, n)
	for i := range ops {
		k := kinds[rng.IntN(len(kinds))]
		ops[i] = findings.OperatorStats{NodeID: i, PhysicalOp: k[0], LogicalOp: k[1]}
		if tb := tables[rng.IntN(len(tables))]; tb != "" {
			ops[i].Schema, ops[i].Table, ops[i].Index = "dbo", tb, indexes[rng.IntN(len(indexes))]
		}
		if i > 0 {
			p := rng.IntN(i)
			if wild {
				p = rng.IntN(n+2) - 1
				if rng.IntN(8) == 0 {
					ops[i].NodeID = rng.IntN(n)
				}
			}
			ops[i].Parent = &p
		}
	}
	return ops
}

// mutate changes a tree the way an index or a hint does: replaces kinds
// and objects, drops or adds leaves, renumbers the nodes.
func mutate(rng *rand.Rand, ops []findings.OperatorStats) []findings.OperatorStats {
	out := slices.Clone(ops)
	for i := range out {
		if rng.IntN(4) == 0 {
			k := kinds[rng.IntN(len(kinds))]
			out[i].PhysicalOp, out[i].LogicalOp = k[0], k[1]
		}
		if rng.IntN(5) == 0 {
			out[i].Index = indexes[rng.IntN(len(indexes))]
		}
	}
	if rng.IntN(2) == 0 && len(out) > 1 {
		k := kinds[rng.IntN(len(kinds))]
		p := rng.IntN(len(out))
		out = append(out, findings.OperatorStats{NodeID: len(out), PhysicalOp: k[0], LogicalOp: k[1], Parent: &p})
	}
	return renumber(out, 100)
}

// renumber shifts every node id (and parent link) by d.
func renumber(ops []findings.OperatorStats, d int) []findings.OperatorStats {
	out := slices.Clone(ops)
	for i := range out {
		out[i].NodeID += d
		if out[i].Parent != nil {
			p := *out[i].Parent + d
			out[i].Parent = &p
		}
	}
	return out
}

func checkMatching(t *testing.T, a, b []findings.OperatorStats, ms []OpMatch) {
	t.Helper()
	seenA, seenB := map[int]bool{}, map[int]bool{}
	for _, m := range ms {
		if m.A < 0 || m.A >= len(a) || m.B < 0 || m.B >= len(b) || seenA[m.A] || seenB[m.B] || m.How == "" {
			t.Fatalf("bad match %+v (len %d, %d)", m, len(a), len(b))
		}
		seenA[m.A], seenB[m.B] = true, true
	}
}

// Matching never panics on arbitrary trees, pairs each operator at most
// once, and is symmetric: Match(B, A) is Match(A, B) swapped.
func TestMatchProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		n := rng.IntN(14)
		wild := iter%3 == 0
		a := randomOps(rng, n, wild)
		b := mutate(rng, a)
		if iter%5 == 0 {
			b = randomOps(rng, rng.IntN(14), wild)
		}
		ab, ba := Match(a, b), Match(b, a)
		checkMatching(t, a, b, ab)
		checkMatching(t, b, a, ba)
		swapped := make([]OpMatch, len(ba))
		for i, m := range ba {
			swapped[i] = OpMatch{A: m.B, B: m.A, How: m.How}
		}
		slices.SortFunc(swapped, func(p, q OpMatch) int { return p.A - q.A })
		if !slices.Equal(ab, swapped) {
			t.Fatalf("iteration %d: not symmetric\nA %+v\nB %+v\nAB %v\nBA %v", iter, a, b, ab, swapped)
		}
	}
}

// A tree matched with itself, or with itself renumbered, is the identity
// (node ids play no part), all of it "identical".
func TestMatchIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a := randomOps(rng, 1+rng.IntN(20), false)
		for _, b := range [][]findings.OperatorStats{a, renumber(a, 37)} {
			ms := Match(a, b)
			if len(ms) != len(a) {
				t.Fatalf("%d of %d matched", len(ms), len(a))
			}
			for _, m := range ms {
				// Identical sibling subtrees may trade places; what they
				// are may not.
				if a[m.A].PhysicalOp != b[m.B].PhysicalOp || a[m.A].Table != b[m.B].Table || a[m.A].Index != b[m.B].Index || m.How != HowIdentical {
					t.Fatalf("identity broken: %+v", m)
				}
			}
		}
	}
}

// Fuzz: arbitrary trees from arbitrary seeds.
func FuzzMatch(f *testing.F) {
	f.Add(uint64(1), uint8(6), uint8(6), true)
	f.Add(uint64(2), uint8(0), uint8(3), false)
	f.Fuzz(func(t *testing.T, seed uint64, na, nb uint8, wild bool) {
		rng := rand.New(rand.NewPCG(seed, ^seed))
		a, b := randomOps(rng, int(na%40), wild), randomOps(rng, int(nb%40), wild)
		ab, ba := Match(a, b), Match(b, a)
		checkMatching(t, a, b, ab)
		if len(ab) != len(ba) {
			t.Fatalf("asymmetric: %d vs %d pairs", len(ab), len(ba))
		}
	})
}

func TestCycleAndDuplicateIDs(t *testing.T) {
	p := func(i int) *int { return &i }
	ops := []findings.OperatorStats{
		{NodeID: 0, PhysicalOp: "Sort", Parent: p(2)}, {NodeID: 1, PhysicalOp: "Sort", Parent: p(0)}, {NodeID: 2, PhysicalOp: "Sort", Parent: p(1)},
		{NodeID: 3, PhysicalOp: "Top", Parent: p(3)}, {NodeID: 3, PhysicalOp: "Top", Parent: p(9)},
	}
	tr := newTree(ops)
	if len(tr.order) != len(ops) || len(tr.roots) != 3 {
		t.Fatalf("order %v roots %v", tr.order, tr.roots)
	}
	if ms := Match(ops, ops); len(ms) != len(ops) {
		t.Errorf("self match %v", ms)
	}
}
