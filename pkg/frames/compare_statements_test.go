package frames

import (
	"testing"

	"github.com/queryreplay/queryreplay/pkg/compare"
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
