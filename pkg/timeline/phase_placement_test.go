package timeline

import (
	"strings"
	"testing"
)

// Issue 13, timeline item 4: a probe-side scan with no evidence of its own
// cannot run before its hash join's build ends: it is placed in the probe
// phase, not at time zero.
func TestScenarioProbePlacedAfterBuild(t *testing.T) {
	plan := loadPlan(t, "columns_with_no_statistics.sqlplan")
	cat := NewCatalog()
	for p := uint64(100); p < 103; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "myschema", Table: "TestTableB", Index: "UK_myschema_TestTableA_MyName"})
	}
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 100)
	st.read(2, 1, 101)
	st.read(3, 1, 102)
	st.profile(10, 0, 0, 9000) // the join: 1–10 ms
	st.batchEnd(11, 11000)
	tr := build(t, plan, cat, nil, st.events)

	join, probe := op(tr, 0), op(tr, 2)
	b := phase(join, PhaseBuild)
	if b == nil || b.End != 3000 {
		t.Fatalf("join build phase %+v, want it to end with the build reads at 3000", b)
	}
	if probe.Start != b.End || probe.End != join.End || probe.TimeSource != "parent" {
		t.Errorf("probe scan %d–%d (%s): want it inside the probe phase %d–%d, placed by its parent", probe.Start, probe.End, probe.TimeSource, b.End, join.End)
	}
	if o := jsonOperator(t, traceJSON(t, tr), 2); o["timeSource"] != "parent" || o["start"] != 3000.0 {
		t.Errorf("JSON probe %v", o)
	}
}

// Item 4: an adaptive join that ran as nested loops never ran its hash
// probe input (Filter node 3 over Table Scan node 4; ActualJoinType). They
// are not executed: no phases, no plan-lane bar, not drawn at [0, 0], and
// no event goes to them — a heap read of Numbers2 goes to the seek that
// did run, weakly.
func TestScenarioAdaptiveJoinUnusedBranch(t *testing.T) {
	plan := loadPlan(t, "adaptive_join.sqlplan")
	cat := NewCatalog()
	cat.AddPage(5, 1, 10, ObjectName{Schema: "dbo", Table: "Numbers1", Index: "ix_NumberID1"})
	cat.AddPage(5, 1, 40, ObjectName{Schema: "dbo", Table: "Numbers2", Index: "ix_NumberID2"})
	cat.AddPage(5, 1, 30, ObjectName{Schema: "dbo", Table: "Numbers2"}) // a heap page
	st := newStream()
	st.batchStart(0)
	st.read(2, 1, 10)
	st.read(3, 1, 40)
	st.read(4, 1, 30)
	st.batchEnd(6, 6000)
	tr := build(t, plan, cat, nil, st.events)

	aj := op(tr, 0)
	for _, id := range []int{3, 4} {
		o := op(tr, id)
		if !o.NotExecuted || len(o.Phases) != 0 || o.TimeSource != "not_executed" || !strings.Contains(o.NotExecutedReason, "Nested Loops") && id == 3 {
			t.Errorf("node %d %+v: want not executed", id, o)
		}
		if o.Start != aj.Start || o.Start == 0 {
			t.Errorf("node %d at %d: want its parent's start %d, not 0", id, o.Start, aj.Start)
		}
		for _, e := range tr.Lanes.Plan {
			if e.NodeID == NodeID(id) {
				t.Errorf("node %d has a plan-lane bar", id)
			}
		}
	}
	if r := tr.Lanes.Read[2]; r.NodeID != 7 || r.Confidence != ConfidenceWeak || r.Rule != RuleObject {
		t.Errorf("heap read %+v: want the seek that ran (7), weak", r.Match)
	}
	if op(tr, 7).NotExecuted || op(tr, 2).NotExecuted {
		t.Error("the build input and the loop inner input ran")
	}
	js := traceJSON(t, tr)
	if o := jsonOperator(t, js, 4); o["notExecuted"] != true || len(o["phases"].([]any)) != 0 || o["notExecutedReason"] == "" {
		t.Errorf("JSON node 4 %v", o)
	}
}

// Item 4: operators the counters say ran 0 times (the inner side of a
// nested loops whose outer scan found no rows) are not executed, and the
// outer scan is the only candidate for the index both read.
func TestScenarioZeroExecutions(t *testing.T) {
	plan := loadPlan(t, "three_nested_loops.sqlplan")
	cat := NewCatalog()
	cat.AddPage(5, 1, 9, ObjectName{Schema: "dbo", Table: "Posts", Index: "PK_Posts"})
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 9)
	st.batchEnd(2, 2000)
	tr := build(t, plan, cat, nil, st.events)
	for _, id := range []int{3, 4, 6, 7, 8, 12} {
		if o := op(tr, id); !o.NotExecuted {
			t.Errorf("node %d is executed: %+v", id, o)
		}
	}
	if !strings.Contains(op(tr, 3).NotExecutedReason, "ActualExecutions is 0") || !strings.Contains(op(tr, 7).NotExecutedReason, "never ran") {
		t.Errorf("reasons %q %q", op(tr, 3).NotExecutedReason, op(tr, 7).NotExecutedReason)
	}
	if r := tr.Lanes.Read[0]; r.NodeID != 2 || r.Rule != RuleObject || r.Confidence != ConfidenceStrong {
		t.Errorf("read %+v: want the outer scan, the only operator that ran on PK_Posts", r.Match)
	}
	if len(tr.Lanes.Plan) != 3 {
		t.Errorf("plan lane %+v: want the 3 operators that ran", tr.Lanes.Plan)
	}
}

// One of my own: a thread profile for an operator the plan says never ran
// wins (it and its ancestors ran), with a note.
func TestScenarioProfileOverridesZeroExecutions(t *testing.T) {
	plan := loadPlan(t, "three_nested_loops.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.profile(3, 4, 0, 1000)
	st.batchEnd(4, 4000)
	tr := build(t, plan, nil, nil, st.events)
	if o := op(tr, 4); o.NotExecuted || o.TimeSource != "thread_profile" {
		t.Errorf("node 4 %+v", o)
	}
	// Its parent ran too, then (an operator runs only when its parent
	// opens it); its sibling branch under that parent did not.
	if op(tr, 3).NotExecuted || !op(tr, 6).NotExecuted || !op(tr, 12).NotExecuted {
		t.Errorf("node 3 not executed %v, node 6 %v, node 12 %v: want false, true, true", op(tr, 3).NotExecuted, op(tr, 6).NotExecuted, op(tr, 12).NotExecuted)
	}
	if !strings.Contains(strings.Join(tr.Summary.Notes, ";"), "node 4: the plan says it never ran") {
		t.Errorf("notes %v", tr.Summary.Notes)
	}
}

// One of my own: a plan with no evidence below the root is placed top-down
// inside the statement, every child within its parent's phases: the
// Distinct Sort's input ends before it emits, the Sort below the window
// spool consumes until its nested loops ends, and the inner table scan of
// the nested loops starts after the outer one's first row.
func TestScenarioWindowSpoolChainPlaced(t *testing.T) {
	plan := loadPlan(t, "window_spool.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.batchEnd(20, 20000)
	tr := build(t, plan, nil, nil, st.events)
	for _, o := range tr.Operators {
		if o.TimeSource != "parent" {
			t.Errorf("node %d time source %s", o.ID, o.TimeSource)
		}
		if o.Parent == nil {
			continue
		}
		p := op(tr, *o.Parent)
		if o.Start < p.Start || o.End > p.End {
			t.Errorf("node %d %d–%d outside its parent %d %d–%d", o.ID, o.Start, o.End, p.ID, p.Start, p.End)
		}
		if p.Behavior == "blocking" && len(p.Phases) == 2 && o.End > p.Phases[0].End {
			t.Errorf("node %d ends at %d, after its blocking parent %d stopped consuming (%d)", o.ID, o.End, p.ID, p.Phases[0].End)
		}
		if p.Behavior == "streaming" && o.FirstEmit > p.FirstEmit {
			t.Errorf("node %d emits at %d, after its streaming parent %d (%d)", o.ID, o.FirstEmit, p.ID, p.FirstEmit)
		}
	}
	if outer, inner := op(tr, 9), op(tr, 10); inner.Start < outer.FirstEmit {
		t.Errorf("inner scan starts %d before the outer scan's first row %d", inner.Start, outer.FirstEmit)
	}
	if root := op(tr, 0); root.Start != 0 || root.End != 20000 {
		t.Errorf("root %d–%d, want the statement 0–20000", root.Start, root.End)
	}
}

// Issue 13, timeline item 7: a parallel plan's operators get per-thread
// bars (the Votes scan's threads ran for different times and produced
// different row counts: skew), and the Gather Streams shows its producer
// threads (the branch below) and its consumer thread.
func TestScenarioParallelThreadsAndExchange(t *testing.T) {
	plan := loadPlan(t, "parallel-skew.sqlplan")
	st := newStream()
	st.batchStart(0)
	ends := map[uint64]int{1: 9, 2: 5, 3: 7, 4: 3}
	for th := uint64(1); th <= 4; th++ {
		st.profile(ends[th], 5, th, uint64(ends[th]-1)*1000) // Votes scan threads: all start at 1 ms
	}
	st.profile(12, 0, 0, 11000) // gather streams, consumer thread 0: 1–12 ms
	st.batchEnd(13, 13000)
	tr := build(t, plan, nil, nil, st.events)

	scan := op(tr, 5)
	if len(scan.Threads) != 5 {
		t.Fatalf("Votes scan threads %+v, want threads 0–4", scan.Threads)
	}
	rows := map[int]int64{1: 10847681, 2: 10983276, 3: 15769296, 4: 15328467}
	for _, b := range scan.Threads {
		if b.Thread == 0 {
			if b.Rows != 0 || b.Source != "plan" {
				t.Errorf("coordinator bar %+v", b)
			}
			continue
		}
		if b.Source != "thread_profile" || b.Start != 1000 || b.End != int64(ends[uint64(b.Thread)])*1000 || b.Rows != rows[b.Thread] {
			t.Errorf("thread %d bar %+v: want 1000–%d, %d rows", b.Thread, b, ends[uint64(b.Thread)]*1000, rows[b.Thread])
		}
	}
	ex := op(tr, 0).Exchange
	if ex == nil {
		t.Fatal("gather streams has no exchange sides")
	}
	if got := ex.Producer.Threads; len(got) != 4 || got[0] != 1 || got[3] != 4 || ex.Producer.Rows != 53946 {
		t.Errorf("producer %+v: want threads 1–4 of the sort below, 53946 rows", ex.Producer)
	}
	if got := ex.Consumer.Threads; len(got) != 1 || got[0] != 0 || ex.Consumer.Source != "thread_profile" || ex.Consumer.Start != 1000 || ex.Consumer.End != 12000 {
		t.Errorf("consumer %+v: want thread 0, 1000–12000 from its profile", ex.Consumer)
	}
	js := traceJSON(t, tr)
	g := jsonOperator(t, js, 0)["exchange"].(map[string]any)
	if g["producer"].(map[string]any)["rows"] != 53946.0 || g["consumer"].(map[string]any)["source"] != "thread_profile" {
		t.Errorf("JSON exchange %v", g)
	}
	if th := jsonOperator(t, js, 5)["threads"].([]any); len(th) != 5 || th[4].(map[string]any)["rows"] != 15328467.0 {
		t.Errorf("JSON threads %v", th)
	}
}

// One of my own: a Repartition Streams between two parallel branches.
// Thread ids restart per branch, so producer (the nested loops' threads
// 1–8) and consumer (its own threads 1–8) share ids; its profile windows
// cannot be split between them and both sides come from the plan.
func TestScenarioRepartitionSidesShareThreadIDs(t *testing.T) {
	plan := loadPlan(t, "serially-parallel.sqlplan")
	st := newStream()
	st.batchStart(0)
	for th := uint64(1); th <= 8; th++ {
		st.profile(10, 3, th, 8000) // the repartition: 2–10 ms on every thread
	}
	st.profile(9, 4, 1, 6000) // the nested loops below: 3–9 ms
	st.batchEnd(12, 12000)
	tr := build(t, plan, nil, nil, st.events)
	ex := op(tr, 3).Exchange
	if ex == nil || len(ex.Producer.Threads) != 8 || len(ex.Consumer.Threads) != 8 || ex.Consumer.Threads[0] != 1 {
		t.Fatalf("exchange %+v: want 8 worker threads a side, no coordinator", ex)
	}
	if ex.Producer.Source != "derived" || ex.Consumer.Source != "derived" ||
		ex.Producer.Start != op(tr, 4).Start || ex.Producer.End != op(tr, 4).End {
		t.Errorf("sides %+v / %+v: want both derived, the producers spanning the nested loops %d–%d", ex.Producer, ex.Consumer, op(tr, 4).Start, op(tr, 4).End)
	}
	if ex.Consumer.Rows != 21 || ex.Producer.Rows != 21 {
		t.Errorf("rows %d / %d, want 21 each", ex.Producer.Rows, ex.Consumer.Rows)
	}
}

// Issue 26 item 5 (held out): a Sort over a Clustered Index Scan whose 12
// reads run until 2.750 ms. Whatever placed the scan — its reads' pages
// the catalog knows, a catalog that does not know them (the reads go to
// the scan by timing), a query_thread_profile window that ended before its
// last read, or only its active time inside the Sort's consume phase —
// the scan does not end before its own last read, and the Sort does not
// emit before its input's last read.
func TestSortOverScanKeepsItsReads(t *testing.T) {
	for _, c := range []struct {
		name    string
		catalog bool
		events  func(st *stream)
		elapsed int64 // the scan's ActualElapsedms
	}{
		{name: "catalog", catalog: true},
		{name: "no_catalog_scan_window", events: func(st *stream) { st.profile(2, 1, 0, 2000); st.at(2500) }},
		{name: "no_catalog_sort_window_scan_active_time", elapsed: 2, events: func(st *stream) { st.profile(5, 0, 0, 5000) }},
		{name: "catalog_scan_window", catalog: true, events: func(st *stream) { st.profile(2, 1, 0, 2000); st.at(2500) }},
		{name: "no_catalog_both_windows", events: func(st *stream) {
			st.profile(2, 1, 0, 2500)
			st.at(2500)
			st.profile(5, 0, 0, 5000)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := loadSynthetic(t, "sort_over_scan.sqlplan")
			if c.elapsed > 0 {
				scan := plan.Statements[0].OperatorByID(1)
				scan.Threads[0].ElapsedMs, scan.Threads[0].HasTiming = c.elapsed, true
			}
			var cat *Catalog
			if c.catalog {
				cat = NewCatalog()
				for p := uint64(100); p < 112; p++ {
					cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Orders", Index: "PK_Orders"})
				}
			}
			st := newStream()
			st.batchStart(0)
			for i := 0; i < 12; i++ {
				st.read(0, 1, uint64(100+i))
				st.at(int64(i) * 250) // 0 … 2750 µs
			}
			if c.events != nil {
				c.events(st)
			}
			st.batchEnd(5, 5000)
			tr := build(t, plan, cat, nil, st.events)
			sort, scan := op(tr, 0), op(tr, 1)
			last := int64(-1)
			for _, r := range tr.Lanes.Read {
				if r.NodeID == 1 && !r.Ambiguous {
					last = max(last, r.T)
				}
			}
			if last != 2750 {
				t.Fatalf("the scan's last read at %d, want 2750 (reads %+v)", last, tr.Lanes.Read)
			}
			if scan.End < last {
				t.Errorf("scan ends at %d (%s), before its own last read at %d", scan.End, scan.TimeSource, last)
			}
			if sort.FirstEmit < last {
				t.Errorf("sort first emits at %d, before its input's last read at %d", sort.FirstEmit, last)
			}
			if c := phase(sort, PhaseConsume); c == nil || c.End < last {
				t.Errorf("sort consume phase %+v ends before %d", c, last)
			}
		})
	}
}
