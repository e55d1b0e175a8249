package compare

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

var update = flag.Bool("update", false, "rewrite golden files")

// plan builds a synthetic trace: operators as "id parent physical|logical
// object" with their times, and lane entries added by the helpers below.
type plan struct{ tr timeline.Trace }

func newPlan(endUs int64) *plan {
	return &plan{tr: timeline.Trace{Schema: timeline.Schema, ZeroTime: "2026-12-01T09:00:00Z", End: endUs}}
}

func (p *plan) op(id, parent int, physical, logical, object string, start, end int64) *plan {
	o := timeline.Operator{ID: id, PhysicalOp: physical, LogicalOp: logical, Object: object, Start: start, End: end, FirstEmit: start}
	if parent >= 0 {
		o.Parent = &parent
	}
	p.tr.Operators = append(p.tr.Operators, o)
	return p
}

func (p *plan) reads(node int, n int) *plan {
	for i := range n {
		p.tr.Lanes.Read = append(p.tr.Lanes.Read, timeline.PageEvent{T: int64(i), Match: timeline.Match{NodeID: timeline.NodeID(node)}, PageID: uint64(i)})
	}
	return p
}

func (p *plan) spill(node int) *plan {
	p.tr.Lanes.Memory = append(p.tr.Lanes.Memory, timeline.MemoryEvent{T: 10, Kind: "sort_warning", Spill: true, Match: timeline.Match{NodeID: timeline.NodeID(node)}})
	return p
}

func (p *plan) wait(node int, waitType string, us int64) *plan {
	p.tr.Lanes.Wait = append(p.tr.Lanes.Wait, timeline.WaitInterval{T: 5, End: 5 + us, WaitType: waitType, Category: timeline.WaitCategory(waitType),
		DurationUs: uint64(us), Match: timeline.Match{NodeID: timeline.NodeID(node)}})
	return p
}

func (p *plan) side(label string) Side { return Side{Label: label, Trace: &p.tr} }

func compareOf(t *testing.T, a, b Side) *Result {
	t.Helper()
	r, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// find returns the diff whose A (or, for added operators, B) node is id.
func find(t *testing.T, r *Result, aNode, bNode int) OperatorDiff {
	t.Helper()
	for _, d := range r.Operators {
		if (aNode < 0 && d.A == nil || d.A != nil && d.A.NodeID == aNode) && (bNode < 0 && d.B == nil || d.B != nil && d.B.NodeID == bNode) {
			return d
		}
	}
	t.Fatalf("no diff %d→%d in %s", aNode, bNode, r.Text())
	return OperatorDiff{}
}

// Scan vs seek after an index: the seek replaces the scan; node ids differ.
func TestScanReplacedBySeek(t *testing.T) {
	a := newPlan(120_000).op(0, -1, "Clustered Index Scan", "Clustered Index Scan", "dbo.Orders.PK_Orders", 0, 120_000).reads(0, 14600)
	b := newPlan(2_000).op(0, -1, "Compute Scalar", "Compute Scalar", "", 0, 2000).
		op(3, 0, "Index Seek", "Index Seek", "dbo.Orders.IX_Orders_CustomerID", 100, 1900).reads(3, 31)
	r := compareOf(t, a.side("scan.json.gz"), b.side("seek.json.gz"))
	d := find(t, r, 0, 3)
	if d.Status != StatusReplaced || d.How != HowReplaced {
		t.Errorf("status %s how %s", d.Status, d.How)
	}
	if d.Verdict != "Index Seek replaced Clustered Index Scan: page reads in the trace 14,600 → 31, time 120 ms → 1.8 ms" {
		t.Errorf("verdict %q", d.Verdict)
	}
	if m, _ := d.Metric("reads"); *m.A != 14600 || *m.B != 31 || !m.Changed {
		t.Errorf("reads %+v", m)
	}
	added := find(t, r, -1, 0)
	if added.Status != StatusAdded || added.Verdict != "added Compute Scalar" {
		t.Errorf("added %+v", added)
	}
	if r.Counts != (Counts{Replaced: 1, Added: 1}) || r.ReadsSource != "physical" {
		t.Errorf("counts %+v source %s", r.Counts, r.ReadsSource)
	}
	if r.Verdict != "elapsed 120 ms → 2.0 ms, operator time 120 ms → 2.0 ms, page reads in the trace 14,600 → 31; operators: 1 replaced, 1 added" {
		t.Errorf("overall %q", r.Verdict)
	}
}

// Hash join vs nested loops with a hint: the join operator is replaced,
// its inputs match.
func TestHashJoinReplacedByNestedLoops(t *testing.T) {
	a := newPlan(50_000).op(0, -1, "Hash Match", "Inner Join", "", 0, 50_000).
		op(1, 0, "Clustered Index Scan", "Clustered Index Scan", "dbo.Customers.PK_Customers", 0, 10_000).reads(1, 40).
		op(2, 0, "Clustered Index Scan", "Clustered Index Scan", "dbo.Orders.PK_Orders", 10_000, 50_000).reads(2, 1200)
	b := newPlan(30_000).op(0, -1, "Nested Loops", "Inner Join", "", 0, 30_000).
		op(1, 0, "Clustered Index Scan", "Clustered Index Scan", "dbo.Customers.PK_Customers", 0, 9_000).reads(1, 40).
		op(2, 0, "Clustered Index Seek", "Clustered Index Seek", "dbo.Orders.PK_Orders", 1_000, 29_000).reads(2, 900)
	r := compareOf(t, a.side("hash"), b.side("loop"))
	join := find(t, r, 0, 0)
	if join.Status != StatusReplaced || join.How != HowContainer || join.Verdict != "Nested Loops (Inner Join) replaced Hash Match (Inner Join): time 50 ms → 30 ms" {
		t.Errorf("join %+v", join)
	}
	if c := find(t, r, 1, 1); c.Status != StatusSame || c.How != HowIdentical || c.Verdict != "Clustered Index Scan: no significant change" {
		t.Errorf("customers %+v", c)
	}
	if o := find(t, r, 2, 2); o.Status != StatusReplaced || o.How != HowReplaced || o.Verdict != "Clustered Index Seek replaced Clustered Index Scan: page reads in the trace 1,200 → 900, time 40 ms → 28 ms" {
		t.Errorf("orders %+v", o)
	}
	if r.Counts.Added+r.Counts.Removed != 0 {
		t.Errorf("counts %+v", r.Counts)
	}
}

// Spill vs no spill with a bigger grant: same plan shape, the sort's spill
// and its I/O waits go away.
func TestSpillGone(t *testing.T) {
	shape := func(end int64) *plan {
		return newPlan(end).op(0, -1, "Sort", "Sort", "", 0, end).op(1, 0, "Clustered Index Scan", "Clustered Index Scan", "dbo.OrderLines.PK_OrderLines", 0, end/2).reads(1, 500)
	}
	a := shape(120_000).spill(0).wait(0, "IO_COMPLETION", 40_000)
	b := shape(60_000)
	r := compareOf(t, a.side("small grant"), b.side("MIN_GRANT_PERCENT"))
	s := find(t, r, 0, 0)
	if s.Status != StatusChanged || s.Verdict != "Sort: spills 1 → 0, Io waits 40 ms → 0, time 120 ms → 60 ms" {
		t.Errorf("sort %+v", s)
	}
	if scan := find(t, r, 1, 1); scan.Status != StatusChanged || scan.Verdict != "Clustered Index Scan: time 60 ms → 30 ms" {
		t.Errorf("scan %+v", scan)
	}
	if m, _ := metricNamed(r.Statement, "spills"); *m.A != 1 || *m.B != 0 || !m.Changed {
		t.Errorf("statement spills %+v", m)
	}
	if !strings.Contains(r.Verdict, "spills 1 → 0") || !strings.HasSuffix(r.Verdict, "; operators: 2 changed") {
		t.Errorf("overall %q", r.Verdict)
	}
}

func TestSamePlanSameResult(t *testing.T) {
	p := func() *plan {
		return newPlan(10_000).op(0, -1, "Nested Loops", "Inner Join", "", 0, 10_000).
			op(2, 0, "Index Seek", "Index Seek", "dbo.Users.Reputation", 0, 1000).reads(2, 3).
			op(4, 0, "Clustered Index Seek", "Clustered Index Seek", "dbo.Users.PK_Users_Id", 1000, 9000).reads(4, 319)
	}
	r := compareOf(t, p().side("a"), p().side("b"))
	if r.Counts != (Counts{Same: 3}) || !strings.HasSuffix(r.Verdict, "the plans have the same shape") {
		t.Errorf("counts %+v verdict %q", r.Counts, r.Verdict)
	}
	for _, d := range r.Operators {
		if d.A.NodeID != d.B.NodeID || d.How != HowIdentical {
			t.Errorf("%+v", d)
		}
	}
	if _, err := Compare(Side{}, p().side("b")); err == nil {
		t.Error("a side without a timeline accepted")
	}
}

// The terminal table and the JSON: golden files, beside independent checks.
func TestCompareGolden(t *testing.T) {
	a := newPlan(50_000).op(0, -1, "Hash Match", "Inner Join", "", 0, 50_000).
		op(1, 0, "Clustered Index Scan", "Clustered Index Scan", "dbo.Customers.PK_Customers", 0, 10_000).reads(1, 40).
		op(2, 0, "Clustered Index Scan", "Clustered Index Scan", "dbo.Orders.PK_Orders", 10_000, 50_000).reads(2, 1200).wait(2, "PAGEIOLATCH_SH", 3000)
	b := newPlan(30_000).op(0, -1, "Nested Loops", "Inner Join", "", 0, 30_000).
		op(1, 0, "Clustered Index Scan", "Clustered Index Scan", "dbo.Customers.PK_Customers", 0, 9_000).reads(1, 40).
		op(2, 0, "Index Seek", "Index Seek", "dbo.Orders.IX_Orders_CustomerID", 1_000, 10_000).reads(2, 12).
		op(3, 0, "Clustered Index Seek", "Clustered Index Seek", "dbo.Orders.PK_Orders", 10_000, 29_000).reads(3, 60)
	r := compareOf(t, a.side("hash.json.gz"), b.side("loop.json.gz"))
	text := r.Text()
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "A: hash.json.gz (3 operators)") || !strings.HasPrefix(lines[2], "Overall: ") {
		t.Errorf("head:\n%s", text)
	}
	if strings.Count(text, "\n  [") != len(r.Operators) {
		t.Errorf("one verdict line per operator:\n%s", text)
	}
	testenv.Golden(t, filepath.Join("testdata", "golden", "hash_vs_loop.txt"), []byte(text), *update)
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil || len(back.Operators) != len(r.Operators) || back.Verdict != r.Verdict {
		t.Fatalf("round trip: %v", err)
	}
	testenv.Golden(t, filepath.Join("testdata", "golden", "hash_vs_loop.json"), append(js, '\n'), *update)
}

// Issue 26 item 3: a batch that waited 67 ms before its first operator is
// slower in elapsed time, not in its operators' time; compare says both,
// each labelled. Item 4: the lookup keeps its SSMS name.
func TestElapsedAndOperatorTimeLabelled(t *testing.T) {
	mk := func(lead int64) *plan {
		p := newPlan(lead+7500).op(0, -1, "Nested Loops", "Inner Join", "", lead, lead+7500).
			op(1, 0, "Index Seek", "Index Seek", "dbo.Orders.IX_Orders_CustomerID", lead, lead+7500).
			op(2, 0, "Clustered Index Seek", "Clustered Index Seek", "dbo.Orders.PK_Orders", lead+100, lead+7500)
		p.tr.Operators[2].Name = "Key Lookup"
		p.tr.Summary = timeline.Summary{ElapsedUs: lead + 7500, ElapsedSource: "batch_events", LeadInUs: lead, OperatorUs: 7500}
		return p
	}
	r := compareOf(t, mk(37_500).side("a"), mk(67_500).side("b"))
	if !strings.HasPrefix(r.Verdict, "elapsed 45 ms → 75 ms, operator time 7.5 ms → 7.5 ms") {
		t.Errorf("overall %q: want elapsed and operator time, each labelled", r.Verdict)
	}
	if r.A.DurationUs != 45_000 || r.A.LeadInUs != 37_500 || r.B.OperatorUs != 7500 {
		t.Errorf("sides %+v %+v", r.A, r.B)
	}
	for _, m := range r.Statement {
		if m.Label == "" {
			t.Errorf("statement metric %s has no label", m.Name)
		}
	}
	lk := find(t, r, 2, 2)
	if lk.A.Name != "Key Lookup" || !strings.Contains(r.Text(), "Key Lookup") {
		t.Errorf("lookup named %q:\n%s", lk.A.Name, r.Text())
	}
}
