package frames

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// statementsSource is the sample trace as the first of two statements of
// a procedure, the second with one operator of its own.
func statementsSource() *Source {
	src := sampleSource()
	b := *src.Bundle
	second := *b.Trace
	second.Statement = "SELECT o.OrderID FROM dbo.Orders AS o"
	second.Operators = second.Operators[:1]
	b.Statements = []timeline.Statement{
		{ID: 0, Parent: -1, Kind: "batch", Text: "EXEC dbo.P", Events: 2, Trace: &timeline.Trace{Schema: timeline.Schema}},
		{ID: 1, Parent: 0, Kind: "statement", Text: b.Trace.Statement, ObjectName: "P", NestLevel: 1, OffsetStart: 40, OffsetEnd: 120,
			StartUs: 10, EndUs: 900, ElapsedUs: 890, Rows: 12, LogicalReads: 3, Events: 20, Executions: 1, Plan: "<ShowPlanXML/>", Trace: b.Trace},
		{ID: 2, Parent: 0, Kind: "statement", Text: second.Statement, ObjectName: "P", NestLevel: 1, OffsetStart: 122, OffsetEnd: -1,
			StartUs: 910, EndUs: 1500, ElapsedUs: 590, Rows: 4, Events: 9, Executions: 1, Plan: "<ShowPlanXML/>", Trace: &second},
	}
	src.Bundle = &b
	return src
}

func TestStatementsFrame(t *testing.T) {
	src := statementsSource()
	fs := build(t, src, Request{})
	st := byName(t, fs, "statements")
	golden(t, "statements", append(fs[:0:0], st))
	if st.Rows() != 3 {
		t.Fatalf("statements frame has %d rows, want the batch and two statements", st.Rows())
	}
	for i, want := range []int64{-1, 0, 0} {
		if got := field(t, st, "parentId").At(i).(int64); got != want {
			t.Errorf("row %d parentId = %d, want %d", i, got, want)
		}
	}
	if got := field(t, st, "text").At(2).(string); got != src.Bundle.Statements[2].Text {
		t.Errorf("row 2 text = %q", got)
	}
	// the default frames are the bundle's Trace: the first planned statement
	if id := customOf(t, byName(t, fs, "operators"))["statementId"]; id != 1 {
		t.Errorf("operators statementId = %v, want 1", id)
	}
	// a chosen statement draws its own operators and events, never the first's
	two := 2
	fs2 := build(t, src, Request{Statement: &two, Groups: []string{GroupOperators, GroupLanes}})
	ops := byName(t, fs2, "operators")
	if ops.Rows() != 1 || customOf(t, ops)["statementId"] != 2 {
		t.Errorf("statement 2: %d operator rows, statementId %v; want 1 and 2", ops.Rows(), customOf(t, ops)["statementId"])
	}
	for _, f := range fs2 {
		if customOf(t, f)["statementId"] != 2 {
			t.Errorf("frame %s: statementId %v, want 2", f.Name, customOf(t, f)["statementId"])
		}
	}
	nine := 9
	if _, err := Build(src, Request{Statement: &nine}); err == nil || !strings.Contains(err.Error(), "statement 9") {
		t.Errorf("statement 9: err %v", err)
	}
	// a bundle without a tree has no statements frame and no statementId
	for _, f := range build(t, sampleSource(), Request{}) {
		if f.Name == "statements" || customOf(t, f)["statementId"] != nil {
			t.Errorf("frame %s of a bundle without statements carries them", f.Name)
		}
	}
}

// Issue 30: a `bundle` query with `statement` and the default frame groups
// (what the panel's statement picker sends) dereferenced the findings the
// view had left out for another statement, and the backend panicked.
func TestStatementWithDefaultGroupsLeavesFindingsOut(t *testing.T) {
	src := statementsSource()
	src.Findings = &findings.Report{} // the bundle's Trace's report (empty is enough: the frame is built from it)
	two := 2
	fs := build(t, src, Request{Statement: &two})
	for _, f := range fs {
		if f.Name == "findings" && customOf(t, f)["statementId"] != 2 {
			t.Errorf("statement 2's frames carry the findings of statement %v", customOf(t, f)["statementId"])
		}
	}
	if ops := byName(t, fs, "operators"); ops.Rows() != 1 {
		t.Errorf("statement 2: %d operator rows, want its own 1", ops.Rows())
	}
}

// secondPlan is statement 2's actual plan: its one operator (node 0) with
// runtime counters and the statement's QueryTimeStats.
const secondPlan = `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564"><BatchSequence><Batch><Statements>` +
	`<StmtSimple StatementText="SELECT o.OrderID FROM dbo.Orders AS o" StatementId="1" StatementType="SELECT"><QueryPlan DegreeOfParallelism="1">` +
	`<QueryTimeStats CpuTime="3" ElapsedTime="1"/>` +
	`<RelOp NodeId="0" PhysicalOp="Hash Match" LogicalOp="Inner Join" EstimateRows="4"><RunTimeInformation>` +
	`<RunTimeCountersPerThread Thread="0" ActualRows="4" ActualExecutions="1" ActualLogicalReads="7" ActualPhysicalReads="2" ActualReadAheads="1" ActualScans="1"/>` +
	`</RunTimeInformation><Hash/></RelOp></QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`

// Issue 30 review: picking a statement other than the first gave frames
// whose header carried the batch's text and no counters ("unknown" reads)
// and no findings. Each statement's frames carry its own text, elapsed,
// rows, reads, CPU and findings.
func TestStatementFramesCarryTheirOwnFigures(t *testing.T) {
	src := statementsSource()
	src.Findings = &findings.Report{}
	src.Bundle.Statements[2].Plan = secondPlan
	src.Bundle.Statements[2].CPUUs = 3000
	for _, tc := range []struct {
		id                     int
		logical, physical, cpu int64
		rows, elapsed          int64
	}{{2, 7, 2, 3, 4, 590}, {1, 3, 1, 7, 12, 890}} {
		id := tc.id
		st := src.Bundle.Statements[id]
		fs := build(t, src, Request{Statement: &id})
		if id == 2 {
			// what the panel's statement picker receives (its jest test)
			writeContract(t, "statement_response", fs)
		}
		tr := byName(t, fs, "trace")
		if got := field(t, tr, "statement").At(0).(string); got != st.Text {
			t.Errorf("statement %d: header text %q, want its own %q", id, got, st.Text)
		}
		if got := customOf(t, tr)["statement"]; got != st.Text {
			t.Errorf("statement %d: meta statement %v, want its own", id, got)
		}
		if got := field(t, tr, "durationUs").At(0).(int64); got != tc.elapsed {
			t.Errorf("statement %d: elapsed %d µs, want its own %d", id, got, tc.elapsed)
		}
		if got := field(t, tr, "rows").At(0).(int64); got != tc.rows {
			t.Errorf("statement %d: rows %d, want %d", id, got, tc.rows)
		}
		for name, want := range map[string]int64{"logicalReads": tc.logical, "physicalReads": tc.physical, "cpuMs": tc.cpu} {
			got := field(t, tr, name).At(0).(*int64)
			if got == nil || *got != want {
				t.Errorf("statement %d: %s = %v, want %d", id, name, got, want)
			}
		}
		if f := byName(t, fs, "findings"); customOf(t, f)["statementId"] != id {
			t.Errorf("statement %d: findings frame of statement %v", id, customOf(t, f)["statementId"])
		}
		if id == 2 {
			ops := byName(t, fs, "operators")
			if got := field(t, ops, "logicalReads").At(0).(*int64); got == nil || *got != 7 {
				t.Errorf("statement 2: its operator's logical reads %v, want its plan's 7", got)
			}
		}
	}
}

// Issue 30 review: the batch node of the statement tree showed elapsed 0.
// It has the batch's elapsed from its own events, and its statements'
// reads and rows summed (an EXEC's nested statements counted once).
func TestStatementsFrameBatchNode(t *testing.T) {
	src := statementsSource()
	st := src.Bundle.Statements
	st[0].Trace.Summary.ElapsedUs, st[0].Trace.Summary.ElapsedSource = 1600, "batch_events"
	st[2].LogicalReads, st[2].PhysicalReads = 7, 2
	// statement 2 becomes an EXEC whose procedure ran statement 3
	st[2].Plan = ""
	three := st[2]
	three.ID, three.Parent, three.Rows, three.LogicalReads, three.PhysicalReads = 3, 2, 5, 11, 1
	three.Plan = "<ShowPlanXML/>"
	src.Bundle.Statements = append(st, three)
	f := byName(t, build(t, src, Request{}), "statements")
	for name, want := range map[string]int64{"elapsedUs": 1600, "endUs": 1600, "rows": 12 + 5, "logicalReads": 3 + 11, "physicalReads": 1} {
		if got := field(t, f, name).At(0).(int64); got != want {
			t.Errorf("batch %s = %d, want %d", name, got, want)
		}
	}
	if got := field(t, f, "elapsedUs").At(1).(int64); got != 890 {
		t.Errorf("statement 1 elapsedUs = %d, want its own 890", got)
	}
}
