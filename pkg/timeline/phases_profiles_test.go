package timeline

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// hashJoinEvents is the stand-in's hash_join scenario in small: the build
// scan (node 1, TestTableB) reads at 3.0–3.5 ms, the probe scan (node 2,
// TestTableA) at 3.6–7.8 ms; profiles(...) adds the query_thread_profile
// events.
func hashJoinEvents(profiles func(st *stream)) (*stream, *Catalog) {
	cat := hashJoinCatalog(10)
	st := newStream()
	st.batchStart(0)
	st.read(3, 1, 100)
	st.at(3000)
	st.read(3, 1, 101)
	st.at(3500)
	for i := 0; i < 10; i++ {
		st.read(3, 1, uint64(200+i))
		st.at(3600 + int64(i)*466) // 3.6 … 7.8 ms
	}
	profiles(st)
	st.batchEnd(9, 9000)
	return st, cat
}

// hashJoinCatalog knows columns_with_no_statistics.sqlplan's pages: the
// build input's (TestTableB) 100–101 and the probe input's (TestTableA)
// 200 onwards, probePages of them.
func hashJoinCatalog(probePages uint64) *Catalog {
	cat := NewCatalog()
	for p := uint64(100); p < 102; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "myschema", Table: "TestTableB", Index: "UK_myschema_TestTableA_MyName"})
	}
	for p := uint64(200); p < 200+probePages; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "myschema", Table: "TestTableA", Index: "PK_TestTableA"})
	}
	return cat
}

// checkHashJoin asserts what a hash join's semantics require of the
// timeline, whichever way the profiles fired.
func checkHashJoin(t *testing.T, tr *Trace, buildStart int64, buildSource string) {
	t.Helper()
	join, build, probe := op(tr, 0), op(tr, 1), op(tr, 2)
	b, p := phase(join, PhaseBuild), phase(join, PhaseProbe)
	if b == nil || p == nil {
		t.Fatalf("join phases %+v", join.Phases)
	}
	if b.End < 3500 || b.End > 3600 {
		t.Errorf("build phase %+v: want it to end between the build input's last read (3500) and the probe input's first (3600)", b)
	}
	if b.Source != buildSource {
		t.Errorf("build phase source %q, want %s", b.Source, buildSource)
	}
	if build.End > b.End || build.Start != buildStart || build.TimeSource != "events" {
		t.Errorf("build scan %d–%d (%s): want %d to no later than the build's end %d, from its reads", build.Start, build.End, build.TimeSource, buildStart, b.End)
	}
	if probe.Start < b.End || probe.Start > 3600 || probe.End < 7800 {
		t.Errorf("probe scan %d–%d: want it to start after the build (%d) with its first read, and run to its last (7800)", probe.Start, probe.End, b.End)
	}
	if join.FirstEmit < b.End || join.FirstEmit < probe.FirstEmit || p.Start != b.End || p.End <= p.Start {
		t.Errorf("join first emit %d, probe phase %+v", join.FirstEmit, p)
	}
}

// The lead's hash_join report: every query_thread_profile fired when the
// query ended (8 ms), each carrying its operator's active time. The build
// phase ends with the build scan's last read, not at the build scan's
// window end (8 ms), and the probe does not run during the build.
func TestHashJoinProfilesAtQueryEnd(t *testing.T) {
	st, cat := hashJoinEvents(func(st *stream) {
		st.profile(8, 1, 0, 600)  // the build scan's active time
		st.profile(8, 2, 0, 4300) // the probe scan's
		st.profile(8, 0, 0, 5000) // the join's, its inputs' included
	})
	tr := build(t, loadPlan(t, "columns_with_no_statistics.sqlplan"), cat, nil, st.events)
	// the build scan started with its first read; the build ended when
	// the probe scan's first read came (the build scan's 600 µs of active
	// time end there too)
	checkHashJoin(t, tr, 3000, "events")
	if w := op(tr, 1).Window; w == nil || w.End < 7900 {
		t.Errorf("build scan window %+v: the raw window stays in the JSON", w)
	}
	if !strings.Contains(strings.Join(tr.Summary.Notes, ";"), "fired within") {
		t.Errorf("notes %v: want the note that the profiles all fired at the end", tr.Summary.Notes)
	}
}

// The same join with the profiles fired as each operator closed: the
// build scan's at the end of the build. The phases are the same; the build
// scan started by 2950 (its 600 µs of active time before it closed at
// 3550), before its first read, and the build ended when it closed (its
// window: thread_profile).
func TestHashJoinProfilesAtClose(t *testing.T) {
	st, cat := hashJoinEvents(func(st *stream) {
		st.profile(3, 1, 0, 600)
		st.at(3550)
		st.profile(7, 2, 0, 4300)
		st.at(7900)
		st.profile(8, 0, 0, 5000)
	})
	tr := build(t, loadPlan(t, "columns_with_no_statistics.sqlplan"), cat, nil, st.events)
	checkHashJoin(t, tr, 2950, "thread_profile")
	if strings.Contains(strings.Join(tr.Summary.Notes, ";"), "fired within") {
		t.Errorf("notes %v: the profiles did not fire together", tr.Summary.Notes)
	}
}

// sortChainReads starts a stream for
// stack_overflow-my_comment_score_distribution.sqlplan: the scan of
// dbo.Comments (node 4) reads pages 500–509 at 1–4 ms.
func sortChainReads() (*stream, *Catalog) {
	cat := NewCatalog()
	for p := uint64(500); p < 510; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Comments", Index: "idxId"})
	}
	st := newStream()
	st.batchStart(0)
	for i := 0; i < 10; i++ {
		st.read(1+i/3, 1, uint64(500+i)) // spread within each millisecond
	}
	return st, cat
}

// The lead's sort_spill report: Compute Scalar ← Stream Aggregate ← Sort ←
// Gather Streams ← scan, the scan reading at 1–5 ms, every profile fired
// at 9 ms. The sort consumes until its input's last read, then emits until
// the chain above it is done — not a zero-length emit at the window's end.
func TestSortProfilesAtQueryEnd(t *testing.T) {
	plan := loadPlan(t, "stack_overflow-my_comment_score_distribution.sqlplan")
	st, cat := sortChainReads()
	st.spill(5, "sort_warning", 2) // the sort spills as it finishes reading
	for _, p := range []struct{ node, us uint64 }{{4, 3900}, {3, 4000}, {2, 6500}, {1, 6600}, {0, 6700}} {
		st.profile(9, p.node, 0, p.us)
	}
	st.batchEnd(9, 9000)
	tr := build(t, plan, cat, nil, st.events)
	sort, scan, root := op(tr, 2), op(tr, 4), op(tr, 0)
	consume, emit := phase(sort, PhaseConsume), phase(sort, PhaseEmit)
	if consume == nil || emit == nil {
		t.Fatalf("sort phases %+v", sort.Phases)
	}
	if scan.End >= 9000 || scan.End > consume.End {
		t.Errorf("scan ends at %d: want it done before the sort emits (%d), not at its window's end", scan.End, consume.End)
	}
	if consume.End < 5000 || consume.Source != "events" {
		t.Errorf("sort consume phase %+v: want it to last until its spill warning at 5000 (events)", consume)
	}
	if emit.End-emit.Start < 1000 {
		t.Errorf("sort emit phase %+v: the rows went up the chain until the statement's end (%d)", emit, root.End)
	}
	if root.End < 8900 {
		t.Errorf("root ends at %d: it returned rows until its profile (9000)", root.End)
	}
}

// A sort that spills writes worktable pages to tempdb, which no catalog
// knows. They are not its input scan's (an operator on a user table
// never touches tempdb), even when the scan's span — here placed for its
// active time inside the sort's consume phase — holds them; a page of
// the scan's own database the catalog does not know still goes to the
// scan by timing.
func TestTempdbPagesNotGivenToUserTableScan(t *testing.T) {
	plan := loadPlan(t, "stack_overflow-my_comment_score_distribution.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.read(2, 1, 700) // user database, unknown page: the scan reads it
	for i := 0; i < 3; i++ {
		st.add(3, "sqlserver", "physical_page_write", u("file_id", 1), u("page_id", uint64(800+i)))
		st.events[len(st.events)-1].Actions[1].Value = xe.UintValue(2) // database_id: tempdb
	}
	st.spill(4, "sort_warning", 2)
	for _, p := range []struct{ node, us uint64 }{{4, 3500}, {3, 3600}, {2, 6500}, {1, 6600}, {0, 6700}} {
		st.profile(9, p.node, 0, p.us)
	}
	st.batchEnd(9, 9000)
	tr := build(t, plan, nil, nil, st.events)
	if r := tr.Lanes.Read[0]; r.NodeID != 4 || r.Rule != RuleTiming {
		t.Errorf("unknown user-database page %+v: want the scan (node 4) by timing", r.Match)
	}
	for _, w := range tr.Lanes.Write {
		if w.DatabaseID != 2 || w.NodeID == 4 {
			t.Errorf("tempdb write %+v (db %d): a scan of dbo.Comments never writes tempdb", w.Match, w.DatabaseID)
		}
	}
	if len(tr.Lanes.Write) != 3 {
		t.Fatalf("%d writes, want 3", len(tr.Lanes.Write))
	}
}
