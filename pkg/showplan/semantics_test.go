package showplan

import (
	"slices"
	"strings"
	"testing"
)

// op builds an operator with n plain row inputs numbered from 10.
func testOperator(physical, logical string, inputs int) *Operator {
	op := &Operator{NodeID: 1, PhysicalOp: physical, LogicalOp: logical, PrimarySpoolNodeID: -1}
	for i := range inputs {
		op.Children = append(op.Children, &Operator{NodeID: 10 + i, Parent: op})
	}
	return op
}

func TestSemanticsTable(t *testing.T) {
	for _, tc := range []struct {
		physical, logical string
		inputs            int
		groupBy           bool
		want              Behavior
		blocking          []int
	}{
		{"Sort", "Sort", 1, false, Blocking, []int{10}},
		{"Sort", "TopN Sort", 1, false, Blocking, []int{10}},
		{"Sort", "Distinct Sort", 1, false, Blocking, []int{10}},
		{"Hash Match", "Aggregate", 1, true, Blocking, []int{10}},
		{"Hash Match", "Partial Aggregate", 1, true, Blocking, []int{10}},
		{"Hash Match", "Flow Distinct", 1, true, Streaming, nil},
		{"Hash Match", "Inner Join", 2, false, Hybrid, []int{10}},
		{"Hash Match", "Right Outer Join", 2, false, Hybrid, []int{10}},
		{"Hash Match", "Right Anti Semi Join", 2, false, Hybrid, []int{10}},
		{"Hash Match", "Left Anti Semi Join", 2, false, Blocking, []int{10, 11}},
		{"Adaptive Join", "Inner Join", 3, false, Hybrid, []int{10}},
		{"Batch Hash Table Build", "Batch Hash Table Build", 1, false, Blocking, []int{10}},
		{"Table Spool", "Eager Spool", 1, false, Blocking, []int{10}},
		{"Table Spool", "Eager Spool", 0, false, Streaming, nil},
		{"Table Spool", "Lazy Spool", 1, false, Streaming, nil},
		{"Index Spool", "Eager Spool", 1, false, Blocking, []int{10}},
		{"Row Count Spool", "Lazy Spool", 1, false, Streaming, nil},
		{"Window Spool", "Window Spool", 1, false, Streaming, nil},
		{"Window Aggregate", "Window Aggregate", 1, false, Streaming, nil},
		{"Stream Aggregate", "Aggregate", 1, true, Streaming, nil},
		{"Stream Aggregate", "Aggregate", 1, false, Blocking, []int{10}},
		{"Sequence", "Sequence", 3, false, Hybrid, []int{10, 11}},
		{"Bitmap", "Bitmap Create", 1, false, Streaming, nil},
		{"Parallelism", "Repartition Streams", 1, false, Streaming, nil},
		{"Merge Join", "Inner Join", 2, false, Streaming, nil},
		{"Nested Loops", "Left Anti Semi Join", 2, false, Streaming, nil},
		{"Segment", "Segment", 1, false, Streaming, nil},
		{"Sequence Project", "Compute Scalar", 1, false, Streaming, nil},
		{"Assert", "Assert", 1, false, Streaming, nil},
		{"Concatenation", "Concatenation", 3, false, Streaming, nil},
		{"Constant Scan", "Constant Scan", 0, false, Streaming, nil},
		{"Table-valued function", "Table-valued function", 0, false, Streaming, nil},
		{"Remote Query", "Remote Query", 0, false, Streaming, nil},
		{"Clustered Index Delete", "Delete", 1, false, Streaming, nil},
		{"Index Update", "Update", 1, false, Streaming, nil},
	} {
		op := testOperator(tc.physical, tc.logical, tc.inputs)
		op.HasGroupBy = tc.groupBy
		s := classify(op)
		if !s.Known || s.Behavior != tc.want || !slices.Equal(s.BlockingInputs, orEmpty(tc.blocking)) {
			t.Errorf("(%s, %s) with %d inputs: got %s %v known=%v (%s), want %s %v",
				tc.physical, tc.logical, tc.inputs, s.Behavior, s.BlockingInputs, s.Known, s.Rule, tc.want, tc.blocking)
		}
		if !strings.Contains(s.Rule, tc.physical) || !strings.HasSuffix(s.Rule, "→ "+string(tc.want)) {
			t.Errorf("(%s, %s): rule %q does not say how it was decided", tc.physical, tc.logical, s.Rule)
		}
	}
}

func orEmpty(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

func TestUnknownOperatorStreamsAndIsFlagged(t *testing.T) {
	for _, tc := range [][2]string{{"Hash Match", "Cube"}, {"Quantum Join", "Inner Join"}} {
		s := classify(testOperator(tc[0], tc[1], 2))
		if s.Known || s.Behavior != Streaming || len(s.BlockingInputs) != 0 || !strings.Contains(s.Rule, "not in the semantics table") {
			t.Errorf("%v: %+v", tc, s)
		}
	}
}

func TestSubqueryRelOpIsNotABuildInput(t *testing.T) {
	// A scalar subquery inside a hash join's residual precedes the real
	// inputs in document order; it must not be taken as the build side.
	op := testOperator("Hash Match", "Inner Join", 3)
	op.Children[0].InExpression = true
	s := classify(op)
	if s.Behavior != Hybrid || !slices.Equal(s.BlockingInputs, []int{11}) {
		t.Errorf("got %+v", s)
	}
}

func TestEveryRealOperatorIsInTheTable(t *testing.T) {
	pairs := map[[2]string]bool{}
	for _, path := range realPlans(t) {
		plan := parseFile(t, path)
		for _, st := range plan.Statements {
			for _, op := range st.Operators {
				pairs[[2]string{op.PhysicalOp, op.LogicalOp}] = true
				if !op.Semantics.Known {
					t.Errorf("%s node %d: (%s, %s) not in the semantics table", path, op.NodeID, op.PhysicalOp, op.LogicalOp)
				}
				for _, id := range op.Semantics.BlockingInputs {
					if c := st.OperatorByID(id); c == nil || c.Parent != op {
						t.Errorf("%s node %d: blocking input %d is not its child", path, op.NodeID, id)
					}
				}
			}
		}
	}
	if len(pairs) < 50 {
		t.Errorf("only %d distinct (PhysicalOp, LogicalOp) pairs seen in the real plans", len(pairs))
	}
}

func TestHashBuildKeyCrossCheck(t *testing.T) {
	st := mustParse(t, "html-query-plan/columns_with_no_statistics.sqlplan").Statements[0]
	rule := st.Root.Semantics.Rule
	if !strings.Contains(rule, "build input = first child in showplan order (node 1)") || !strings.Contains(rule, "(agrees)") {
		t.Errorf("hash join rule = %q", rule)
	}
}
