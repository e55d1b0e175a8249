package timeline

import (
	"testing"
)

// linesCatalog maps the synthetic nested-loops plan's pages.
func linesCatalog() *Catalog {
	cat := NewCatalog()
	for p := uint64(10); p < 12; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Orders", Index: "PK_Orders"})
	}
	for p := uint64(20); p < 30; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Lines", Index: "IX_Lines_OrderId"})
	}
	return cat
}

// Issue 13, timeline item 1: a Top N Sort on the inner side of a nested
// loops runs 10 times (10 rebinds). It is not one consume phase over the
// whole run: without per-execution evidence it gets one "reexecuted" phase
// and its first rows leave after the first of its 10 cycles, so the join
// above emits early too.
func TestScenarioReexecutedSortWithoutCycleEvidence(t *testing.T) {
	plan := loadSynthetic(t, "nested_loops_inner_sort.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 10)
	st.read(1, 1, 11)
	for i := 0; i < 10; i++ {
		st.read(2+2*i, 1, uint64(20+i)) // the seek, once per outer row: 2, 4, … 20 ms
	}
	st.batchEnd(25, 25000)
	tr := build(t, plan, linesCatalog(), nil, st.events)

	sort, nl := op(tr, 2), op(tr, 0)
	if sort.Executions != 10 || sort.Rebinds != 10 {
		t.Fatalf("sort executions %d rebinds %d, want 10 and 10", sort.Executions, sort.Rebinds)
	}
	if len(sort.Phases) != 1 || sort.Phases[0].Kind != PhaseReexecuted || sort.Phases[0].Executions != 10 ||
		sort.Phases[0].Start != 2000 || sort.Phases[0].End != 20000 {
		t.Fatalf("sort phases %+v, want one reexecuted phase 2000–20000 for 10 executions", sort.Phases)
	}
	// The first of 10 equal cycles over 2–20 ms ends at 3.8 ms.
	if sort.FirstEmit != 3800 {
		t.Errorf("sort first emit %d, want 3800 (after the first of its 10 cycles)", sort.FirstEmit)
	}
	if nl.FirstEmit != 3800 || nl.FirstEmit >= tr.End/2 {
		t.Errorf("nested loops first emit %d: it waits for the sort's first cycle (3800), not for the end of the run", nl.FirstEmit)
	}
	js := traceJSON(t, tr)
	ph := jsonOperator(t, js, 2)["phases"].([]any)[0].(map[string]any)
	if ph["kind"] != "reexecuted" || ph["executions"] != 10.0 {
		t.Errorf("JSON phase %v", ph)
	}
	if o := jsonOperator(t, js, 2); o["executions"] != 10.0 || o["rebinds"] != 10.0 {
		t.Errorf("JSON operator %v", o)
	}
}

// Item 1 with evidence: query_thread_profile fires once per execution (10
// windows of thread 0 for the seek and the sort): one consume→emit cycle
// per execution, each consume phase ending with the seek's matching cycle.
func TestScenarioReexecutedSortWithCycles(t *testing.T) {
	plan := loadSynthetic(t, "nested_loops_inner_sort.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 10)
	for i := 0; i < 10; i++ {
		ms := 2 + 2*i
		st.read(ms, 1, uint64(20+i))
		st.profile(ms+1, 3, 0, 1000) // the seek: [ms, ms+1]
		st.at(int64(ms+1)*1000 - 400)
		st.profile(ms+1, 2, 0, 1000) // the sort: [ms+0.1, ms+1], emitting after the seek closes
		st.at(int64(ms+1)*1000 + 100)
	}
	st.batchEnd(25, 25000)
	tr := build(t, plan, linesCatalog(), nil, st.events)

	sort, seek := op(tr, 2), op(tr, 3)
	if len(sort.Cycles) != 10 || len(seek.Cycles) != 10 {
		t.Fatalf("cycles: sort %d, seek %d, want 10 each", len(sort.Cycles), len(seek.Cycles))
	}
	if len(sort.Phases) != 20 {
		t.Fatalf("sort phases %d, want consume+emit for each of 10 executions", len(sort.Phases))
	}
	for i, c := range sort.Cycles {
		consume, emit := sort.Phases[2*i], sort.Phases[2*i+1]
		if c.Execution != i+1 || consume.Kind != PhaseConsume || emit.Kind != PhaseEmit || consume.Execution != i+1 || emit.Execution != i+1 {
			t.Fatalf("cycle %d: %+v phases %+v %+v", i, c, consume, emit)
		}
		if consume.End != seek.Cycles[i].End || consume.Start != c.Start || emit.End != c.End {
			t.Errorf("cycle %d consumes %d–%d, emits to %d; the seek's execution %d ends at %d", i+1, consume.Start, consume.End, emit.End, i+1, seek.Cycles[i].End)
		}
	}
	if sort.FirstEmit != sort.Cycles[0].FirstEmit || op(tr, 0).FirstEmit > sort.Cycles[0].End {
		t.Errorf("first emits: sort %d (cycle 1 %+v), join %d", sort.FirstEmit, sort.Cycles[0], op(tr, 0).FirstEmit)
	}
	js := traceJSON(t, tr)
	cyc := jsonOperator(t, js, 2)["cycles"].([]any)
	if len(cyc) != 10 || cyc[9].(map[string]any)["execution"] != 10.0 {
		t.Errorf("JSON cycles %v", cyc)
	}
}

// Item 1 on a real plan: a Top N Sort rebound 1,087,409 times under a lazy
// spool on the inner side of a nested loops, above an eager index spool
// built once (1 rebind) and seeked 1,087,408 times (rewinds).
func TestScenarioReexecutedRealPlan(t *testing.T) {
	plan := loadPlan(t, "lazy_spool_plan.sqlplan")
	cat := NewCatalog()
	for p := uint64(100); p < 140; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Posts", Index: "LastEditorUserId_OwnerUserId_PostTypeId"})
	}
	for p := uint64(500); p < 505; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Badges", Index: "PK_Badges_Id"})
	}
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 100)
	for p := 0; p < 5; p++ {
		st.read(2+p, 1, uint64(500+p)) // the eager spool reads Badges once: 2–6 ms
	}
	for p := 1; p < 40; p++ {
		st.read(6+p, 1, uint64(100+p)) // the outer scan goes on to 45 ms
	}
	st.batchEnd(50, 50000)
	tr := build(t, plan, cat, nil, st.events)

	sort, spool, eager, nl := op(tr, 3), op(tr, 2), op(tr, 4), op(tr, 0)
	if sort.Phases[0].Kind != PhaseReexecuted || sort.Executions != 1087409 {
		t.Errorf("top n sort %+v", sort.Phases)
	}
	if spool.Phases[0].Kind != PhaseReexecuted || spool.Executions != 6000223 {
		t.Errorf("lazy spool %+v", spool.Phases)
	}
	// Read once, then replayed: consume until Badges is read, then one
	// emit phase that stands for every execution.
	if len(eager.Phases) != 2 || eager.Phases[0].Kind != PhaseConsume || eager.Phases[0].End != op(tr, 5).End ||
		eager.Phases[1].Kind != PhaseEmit || eager.Phases[1].Executions != 1087409 {
		t.Errorf("eager spool phases %+v, scan ends %d", eager.Phases, op(tr, 5).End)
	}
	if nl.FirstEmit > 10000 {
		t.Errorf("nested loops first emit %d: the inner side's first cycle is early, not at the end (%d)", nl.FirstEmit, tr.End)
	}
}

// One of my own: an eager index spool read once (1 rebind) and rewound 149
// times, under a scalar stream aggregate that ran 150 times, under a lazy
// spool on the inner side of a nested loops (a correlated AVG subquery).
func TestScenarioRewoundEagerSpool(t *testing.T) {
	plan := loadPlan(t, "index_spool.sqlplan")
	cat := NewCatalog()
	cat.AddPage(5, 1, 50, ObjectName{Schema: "dbo", Table: "Pedido", Index: "ix"})
	st := newStream()
	st.batchStart(0)
	st.profile(3, 2, 0, 2000) // outer scan: 1–3 ms
	st.profile(6, 7, 0, 2000) // inner scan, read once for the eager spool: 4–6 ms
	st.batchEnd(40, 40000)
	tr := build(t, plan, cat, nil, st.events)

	eager, agg, lazy := op(tr, 6), op(tr, 5), op(tr, 3)
	if len(eager.Phases) != 2 || eager.Phases[0].Kind != PhaseConsume || eager.Phases[0].End != 6000 || eager.Phases[1].Executions != 150 {
		t.Errorf("eager spool %+v: one consume phase up to the scan's end (6000), then 150 replays", eager.Phases)
	}
	if agg.Phases[0].Kind != PhaseReexecuted || agg.Executions != 150 {
		t.Errorf("stream aggregate %+v", agg.Phases)
	}
	if lazy.Phases[0].Kind != PhaseReexecuted || lazy.Executions != 600 || lazy.Rebinds != 600 {
		t.Errorf("lazy spool %+v", lazy)
	}
	if nl := op(tr, 1); nl.FirstEmit >= 20000 {
		t.Errorf("nested loops first emit %d", nl.FirstEmit)
	}
}
