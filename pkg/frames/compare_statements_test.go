package frames

import (
	"testing"

	"github.com/queryreplay/queryreplay/pkg/compare"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Issue 30: each compare_operators row names its statement pair when the
// traces had statement trees; a side without the statement is null.
func TestCompareOperatorsNameTheirStatement(t *testing.T) {
	ref := &compare.StatementRef{A: 2, B: -1, Text: "SELECT 2"}
	r := &compare.Result{Operators: []compare.OperatorDiff{
		{Status: compare.StatusSame, A: &compare.OperatorSide{NodeID: 0}, B: &compare.OperatorSide{NodeID: 0}},
		{Status: compare.StatusRemoved, A: &compare.OperatorSide{NodeID: 1}, Statement: ref},
	}}
	f := compareOperatorsFrame("a", "b", r)
	text, _ := f.FieldByName("statement")
	a, _ := f.FieldByName("statementIdA")
	b, _ := f.FieldByName("statementIdB")
	if text.Len() != 2 || text.At(0) != "" || text.At(1) != "SELECT 2" {
		t.Fatalf("statement column %v", text)
	}
	if a.At(0).(*int64) != nil || *a.At(1).(*int64) != 2 || b.At(1).(*int64) != nil {
		t.Errorf("statement ids A %v B %v", a.At(1), b.At(1))
	}
}

// Issue 30 review: a compare of two multi-statement traces, as the panel's
// compare mode receives it (testdata/frames/compare_statements_response.json,
// read by its jest test): the rows name their statements and the compare
// frame lists the statement pairs, each with its own verdict.
func TestCompareStatementsResponse(t *testing.T) {
	a, b := statementsSource(), statementsSource()
	second := *b.Bundle.Statements[2].Trace
	second.Operators = append([]timeline.Operator(nil), second.Operators...)
	second.Operators[0].PhysicalOp, second.Operators[0].LogicalOp = "Merge Join", "Inner Join"
	b.Bundle.Statements = append([]timeline.Statement(nil), b.Bundle.Statements...)
	b.Bundle.Statements[2].Trace = &second
	side := func(label string, s *Source) compare.Side {
		return compare.Side{Label: label, Trace: s.Bundle.Trace, Statements: compare.StatementsOf(s.Bundle)}
	}
	res, err := compare.Compare(side("a", a), side("b", b))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Compare(a, b, res, Request{})
	if err != nil {
		t.Fatal(err)
	}
	writeContract(t, "compare_statements_response", fs)
	pairs, _ := customOf(t, byName(t, fs, "compare"))["statements"].([]compare.StatementDiff)
	if len(pairs) != 2 || pairs[1].Status != compare.StatusChanged || pairs[1].Verdict == "" || pairs[0].Verdict == "" {
		t.Fatalf("statement pairs %+v, want two, the second changed, each with its verdict", pairs)
	}
	ops := byName(t, fs, "compare_operators")
	ids, _ := ops.FieldByName("statementIdA")
	for i := range ops.Rows() {
		if ids.At(i).(*int64) == nil {
			t.Errorf("row %d names no statement", i)
		}
	}
}
