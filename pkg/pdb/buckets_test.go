package pdb

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// The bucket index gives the same answer as a search of the whole table,
// for tables of every density and addresses before, inside, between and
// after the symbols.
func TestLookupBucketsMatchFullSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, n := range []int{1, 2, 3, 17, 1000, 50000} {
		var syms []Symbol
		rva := uint32(0x1000 + r.IntN(64))
		for range n {
			size := uint32(r.IntN(300))
			syms = append(syms, Symbol{Name: "f", RVA: rva, Size: size})
			rva += size + uint32(r.IntN(5000))
		}
		tab := &Table{syms: syms, names: make([]atomic.Pointer[string], n)}
		flat := &Table{syms: syms, names: make([]atomic.Pointer[string], n)}
		for _, s := range syms {
			tab.rvas = append(tab.rvas, s.RVA)
		}
		flat.rvas = tab.rvas
		tab.buildBuckets()
		for range 20000 {
			a := uint32(r.IntN(int(rva) + 10000))
			got, ok := tab.Lookup(a)
			want, wok := flat.Lookup(a)
			if ok != wok || got.Index != want.Index || got.Displacement != want.Displacement {
				t.Fatalf("n=%d rva %#x: buckets %v %+v, full %v %+v", n, a, ok, got, wok, want)
			}
		}
	}
}
