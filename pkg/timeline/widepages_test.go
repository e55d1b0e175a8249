package timeline

import (
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// TestPageIDsThatDoNotPack: a page event keeps its database, file and
// page ids whether they fit the packed record (16, 16 and 32 bits) or
// not, finds its object either way, and a repeat of a wide one is still
// told from an event that differs only in its page.
func TestPageIDsThatDoNotPack(t *testing.T) {
	type ids struct{ db, file, page uint64 }
	cases := []ids{
		{5, 1, 100},                       // packs
		{1<<16 - 1, 1<<16 - 1, 1<<32 - 1}, // the widest that packs
		{5, 1, 1 << 32},                   // page too wide
		{5, 1 << 16, 7},                   // file too wide
		{1 << 16, 1, 7},                   // database too wide
		{1<<64 - 1, 1<<64 - 1, 1<<64 - 1},
		{0, 0, 0},
	}
	cat := NewCatalog()
	obj := ObjectName{Schema: "dbo", Table: "Wide", Index: "PK"}
	for _, c := range cases {
		cat.AddPage(c.db, c.file, c.page, obj)
	}
	st := newStream()
	for i, c := range cases {
		st.add(i, "sqlserver", "physical_page_read", u("file_id", c.file), u("page_id", c.page))
		st.events[len(st.events)-1].Actions[1].Value = xe.UintValue(c.db)
	}
	// The last wide event again (a duplicate), then one with its sequence
	// but another page (a clash, kept).
	dup := st.events[len(st.events)-2]
	clash := dup
	clash.Fields = []xe.Field{{Name: "file_id", Value: xe.UintValue(1<<64 - 1)}, {Name: "page_id", Value: xe.UintValue(1<<64 - 2)}}
	st.events = append(st.events, dup, clash)

	tr := build(t, nil, cat, nil, st.events)
	if tr.Summary.Duplicates != 1 || tr.Summary.SequenceClashes != 1 {
		t.Fatalf("duplicates %d, clashes %d; want 1 and 1", tr.Summary.Duplicates, tr.Summary.SequenceClashes)
	}
	// In sequence order: the clash right after the event whose sequence
	// it shares.
	clashAt := len(cases) - 1
	want := append(append(cases[:clashAt:clashAt], ids{1<<64 - 1, 1<<64 - 1, 1<<64 - 2}), cases[clashAt])
	if len(tr.Lanes.Read) != len(want) {
		t.Fatalf("%d reads, want %d", len(tr.Lanes.Read), len(want))
	}
	for i, w := range want {
		e := tr.Lanes.Read[i]
		if got := (ids{e.DatabaseID, e.FileID, e.PageID}); got != w {
			t.Errorf("read %d: ids %v, want %v", i, got, w)
		}
		if catalogued := i != clashAt; catalogued != (tr.ObjectOf(e.Object) != nil) {
			t.Errorf("read %d %v: object %v", i, w, tr.ObjectOf(e.Object))
		}
	}
}

// TestExtraStoreAcrossChunks: extra fields read back as stored, across
// chunk boundaries, and index 0 stays "none".
func TestExtraStoreAcrossChunks(t *testing.T) {
	var s extraStore
	const n = 3*extraChunk + 5
	for i := range uint64(n) {
		if x := s.add(&recExtra{b: i, f: i * 7, s3: uint32(i)}); x != uint32(i)+1 {
			t.Fatalf("entry %d got index %d", i, x)
		}
	}
	for i := range uint64(n) {
		if got := *s.at(uint32(i) + 1); got != (recExtra{b: i, f: i * 7, s3: uint32(i)}) {
			t.Fatalf("entry %d reads %+v", i, got)
		}
	}
}
