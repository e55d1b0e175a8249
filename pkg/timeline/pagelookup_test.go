package timeline

import (
	"math/rand/v2"
	"testing"
)

// TestPageLookupAgreesWithCatalog: the dense index answers every page
// (by its ids or by its packed key) exactly as Catalog.page does — dense files, sparse files, the database-0
// fallback, pages outside a file's range, ids too wide to pack.
func TestPageLookupAgreesWithCatalog(t *testing.T) {
	c := NewCatalog()
	a := ObjectName{Schema: "dbo", Table: "A", Index: "PK_A"}
	bName := ObjectName{Schema: "dbo", Table: "B"}
	any0 := ObjectName{Schema: "dbo", Table: "AnyDB", Index: "IX"}
	for p := uint64(100); p < 400; p++ {
		if p%7 != 0 { // holes inside a dense file
			c.AddPage(5, 1, p, a)
		}
	}
	for _, p := range []uint64{3, 1 << 20, 1 << 30} { // sparse file
		c.AddPage(5, 3, p, bName)
	}
	for p := uint64(350); p < 500; p++ { // database 0 answers for any database
		c.AddPage(0, 1, p, any0)
	}
	c.AddPage(1<<20, 1, 9, bName) // does not pack
	c.AddPage(5, 1, 1<<33, a)     // does not pack
	lk := newPageLookup(c, 1<<20)
	if lk.files == nil {
		t.Fatal("the lookup did not index the catalog")
	}
	check := func(db, file, page uint64) {
		t.Helper()
		if got, want := lk.page(db, file, page), c.page(db, file, page); got != want {
			t.Fatalf("page(%d,%d,%d) = %v, want %v", db, file, page, got, want)
		}
		if k, ok := packPage(db, file, page); ok {
			if got, want := lk.packed(k), c.page(db, file, page); got != want {
				t.Fatalf("packed(%d,%d,%d) = %v, want %v", db, file, page, got, want)
			}
		}
	}
	for _, db := range []uint64{0, 5, 6, 1 << 20} {
		for _, file := range []uint64{0, 1, 2, 3} {
			for p := uint64(0); p < 600; p++ {
				check(db, file, p)
			}
			for _, p := range []uint64{1 << 20, 1 << 30, 1 << 32, 1 << 33, 1<<64 - 1} {
				check(db, file, p)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		check(r.Uint64N(8), r.Uint64N(4), r.Uint64N(1000))
	}
	if lk.page(5, 1, 101) == nil || lk.page(5, 1, 105) != nil && c.page(5, 1, 105) == nil {
		t.Fatal("a catalogued page is missing")
	}
	// Few page events: the lookup asks the catalog itself.
	k, _ := packPage(5, 1, 101)
	if small := newPageLookup(c, 1); small.files != nil || small.page(5, 1, 101) != c.page(5, 1, 101) || small.packed(k) != c.page(5, 1, 101) {
		t.Fatal("a small trace should use the catalog directly")
	}
}
