package timeline

import (
	"slices"
	"testing"
)

// Issue 13, timeline item 3: one index read twice in a self-join under
// nested loops (Key Lookup node 18 on the outer side, Clustered Index Seek
// node 19 on the inner side, both on dbo.Posts.PK_Posts_Id). Both windows
// hold every read: timing decided, so each match is ambiguous, low, and
// lists both candidates — none is "strong".
func TestScenarioSelfJoinUnderNestedLoopsIsAmbiguous(t *testing.T) {
	plan := loadPlan(t, "serially-parallel.sqlplan")
	cat := NewCatalog()
	for p := uint64(100); p < 108; p++ {
		cat.AddPage(5, 1, p, ObjectName{Schema: "dbo", Table: "Posts", Index: "PK_Posts_Id"})
	}
	st := newStream()
	st.batchStart(0)
	for i := 0; i < 8; i++ {
		st.read(3+i, 1, uint64(100+i))
	}
	st.profile(19, 19, 1, 17000) // inner seek: 2–19 ms
	st.profile(20, 18, 1, 19000) // outer key lookup: 1–20 ms
	st.batchEnd(21, 21000)
	tr := build(t, plan, cat, nil, st.events)

	for i, r := range tr.Lanes.Read {
		if r.Rule != RuleObjectTiming || r.Confidence != ConfidenceLow || !r.Ambiguous || !slices.Equal(tr.CandidatesOf(&r.Match), []NodeID{18, 19}) {
			t.Errorf("read %d: %+v, want object_timing, low, ambiguous between 18 and 19", i, r.Match)
		}
	}
	if tr.Summary.Ambiguous["read"] != 8 {
		t.Errorf("summary ambiguous %v", tr.Summary.Ambiguous)
	}
	reads := jsonLane(t, traceJSON(t, tr), "read")
	if reads[0]["ambiguous"] != true || len(reads[0]["candidates"].([]any)) != 2 || reads[0]["confidence"] != "low" {
		t.Errorf("JSON read %v", reads[0])
	}
}

// Item 3: a RESOURCE_SEMAPHORE wait (the memory grant) 30 ms before any
// operator window belongs to the statement, not to node 0. A wait inside
// nested windows is a timing match among them, ambiguous.
func TestScenarioTimingDistanceLimit(t *testing.T) {
	plan := loadPlan(t, "stack_overflow-my_comment_score_distribution.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.wait(1, false, "RESOURCE_SEMAPHORE", 0)
	st.wait(30, true, "RESOURCE_SEMAPHORE", 29)
	st.wait(33, false, "CXPACKET", 0)
	st.wait(34, true, "CXPACKET", 1)
	st.profile(35, 4, 1, 4000) // scan: 31–35 ms
	st.profile(36, 3, 0, 5000) // gather streams: 31–36 ms
	st.profile(38, 2, 0, 7000) // sort: 31–38 ms
	st.profile(39, 1, 0, 8000)
	st.profile(39, 0, 0, 8000)
	st.batchEnd(40, 40000)
	tr := build(t, plan, nil, nil, st.events)

	w := tr.Lanes.Wait
	if w[0].WaitType != "RESOURCE_SEMAPHORE" || w[0].NodeID != Unmatched || w[0].Rule != RuleStatement {
		t.Errorf("grant wait %+v: want the statement", w[0].Match)
	}
	if w[1].Rule != RuleTiming || !w[1].Ambiguous || w[1].NodeID != 4 || len(tr.CandidatesOf(&w[1].Match)) != 5 {
		t.Errorf("CXPACKET wait %+v: want timing, ambiguous, the narrowest window (scan 4) among 5", w[1].Match)
	}
	if tr.Summary.Unmatched["wait"] != 0 || tr.Summary.TimingLimitUs != TimingLimitUs {
		t.Errorf("summary %+v", tr.Summary)
	}
}

// One of my own: UNION ALL of two scans of one index (Concatenation). With
// a window each, the read inside exactly one is sure (strong); without
// windows nothing can choose and the read stays unmatched, naming both.
func TestScenarioConcatenationSameIndex(t *testing.T) {
	plan := loadPlan(t, "concatenation.sqlplan")
	cat := NewCatalog()
	cat.AddPage(5, 1, 7, ObjectName{Schema: "dbo", Table: "People", Index: "PK_People_id"})
	st := newStream()
	st.batchStart(0)
	st.read(2, 1, 7)
	st.read(6, 1, 7)
	st.batchEnd(8, 8000)
	noWindows := build(t, plan, cat, nil, st.events)
	for _, r := range noWindows.Lanes.Read {
		if r.NodeID != Unmatched || !r.Ambiguous || !slices.Equal(noWindows.CandidatesOf(&r.Match), []NodeID{1, 2}) {
			t.Errorf("without windows %+v: want unmatched, ambiguous between 1 and 2", r.Match)
		}
	}
	if noWindows.Summary.Unmatched["read"] != 2 || noWindows.Summary.Ambiguous["read"] != 2 {
		t.Errorf("summary %+v", noWindows.Summary)
	}

	// Only the first scan has a window: the second, with no evidence of
	// its own, runs after it (Concatenation reads its inputs in turn).
	first := newStream()
	first.batchStart(0)
	first.profile(3, 1, 0, 2000)
	first.batchEnd(8, 8000)
	placed := build(t, plan, cat, nil, first.events)
	if s := op(placed, 2); s.Start != 3000 || s.TimeSource != "parent" {
		t.Errorf("second scan %+v: want it placed after the first one ends (3000)", s)
	}

	st.profile(3, 1, 0, 2000) // first scan 1–3 ms
	st.profile(7, 2, 0, 2000) // second scan 5–7 ms
	tr := build(t, plan, cat, nil, st.events)
	for i, want := range []NodeID{1, 2} {
		r := tr.Lanes.Read[i]
		if r.NodeID != want || r.Rule != RuleObjectTiming || r.Confidence != ConfidenceStrong || r.Ambiguous {
			t.Errorf("read %d %+v: want node %d, strong, one window holds it", i, r.Match, want)
		}
	}
}

// One of my own: a spill that names its node is exact and is evidence of
// that operator; one without a node id goes by timing to hash operators
// only — compared with when they worked, which the named spill shows for
// the hash join (timing uses evidence, not only windows).
func TestScenarioSpillsByNodeAndByTiming(t *testing.T) {
	plan := loadPlan(t, "columns_with_no_statistics.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.profile(4, 1, 0, 3000) // build scan 1–4 ms
	st.spill(5, "hash_warning", 0)
	st.spill(6, "hash_warning", -1)
	st.spill(6, "sort_warning", -1)
	st.batchEnd(8, 8000)
	tr := build(t, plan, nil, nil, st.events)
	mem := tr.Lanes.Memory
	if mem[0].NodeID != 0 || mem[0].Rule != RuleNodeID || mem[0].Confidence != ConfidenceExact {
		t.Errorf("spill with node id %+v", mem[0].Match)
	}
	if mem[1].NodeID != 0 || mem[1].Rule != RuleTiming || mem[1].Confidence != ConfidenceLow {
		t.Errorf("hash spill without node id %+v: want the hash join by timing, low (its named spill a millisecond earlier shows it working)", mem[1].Match)
	}
	if mem[2].Rule != RuleUnmatched || mem[2].NodeID != Unmatched {
		t.Errorf("sort spill %+v: the plan has no sort", mem[2].Match)
	}
	if j := op(tr, 0); j.TimeSource != "events" || j.End < 5000 {
		t.Errorf("hash join %+v: its spill is evidence", j)
	}
}

// One of my own: a page the catalog does not know, read far from every
// window, is a catalog miss (unmatched), not the statement's; near a
// window, timing still ties it.
func TestScenarioUnknownPageFarFromWindows(t *testing.T) {
	plan := loadPlan(t, "columns_with_no_statistics.sqlplan")
	st := newStream()
	st.batchStart(0)
	st.read(1, 1, 999)
	st.profile(20, 2, 0, 3000) // probe scan 17–20 ms
	st.read(18, 1, 998)
	st.batchEnd(21, 21000)
	tr := build(t, plan, nil, nil, st.events)
	if r := tr.Lanes.Read[0]; r.NodeID != Unmatched || r.Rule != RuleUnmatched {
		t.Errorf("far read %+v: want unmatched", r.Match)
	}
	if r := tr.Lanes.Read[1]; r.NodeID != 2 || r.Rule != RuleTiming {
		t.Errorf("near read %+v: want the scan by timing", r.Match)
	}
	if tr.Summary.Unmatched["read"] != 1 {
		t.Errorf("unmatched %v", tr.Summary.Unmatched)
	}
}
