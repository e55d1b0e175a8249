package showplan

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseBytes checks that no input panics the parser, and that whatever
// parses yields a consistent tree that the JSON and text renderers accept.
// Seeds: the small real plans plus hand-made fragments.
func FuzzParseBytes(f *testing.F) {
	for _, rel := range []string{
		"performancestudio/key_lookup_plan.sqlplan",
		"performancestudio/lazy_spool_plan.sqlplan", // row goals, spools with rebinds
		"performancestudio/table_variable_plan.sqlplan",
		"performancestudio/tvf_plan.sqlplan",
		"html-query-plan/adaptive_join.sqlplan",
		"html-query-plan/StmtCond.sqlplan",
		"html-query-plan/StmtUseDb.sqlplan",
		"html-query-plan/Columnstore-columnstore_index_delete.sqlplan",
		"html-query-plan/clustered_index_seek.sqlplan",
	} {
		data, err := os.ReadFile(filepath.Join(plansDir, rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`<ShowPlanXML><BatchSequence><Batch><Statements><StmtCursor><CursorPlan><Operation OperationType="FetchQuery"><QueryPlan><RelOp NodeId="0" PhysicalOp="Hash Match" LogicalOp="Inner Join"><Hash><RelOp NodeId="1"/><RelOp NodeId="2"/></Hash></RelOp></QueryPlan></Operation><Operation><QueryPlan/></Operation></CursorPlan></StmtCursor></Statements></Batch></BatchSequence></ShowPlanXML>`))
	f.Add([]byte{0xFF, 0xFE, '<', 0, 'S', 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		plan, err := ParseBytes(data)
		if err != nil {
			if plan != nil {
				t.Fatal("a plan and an error together")
			}
			return
		}
		for i, st := range plan.Statements {
			if st.Index != i || st.ParentIndex >= i {
				t.Fatalf("statement %d: index %d parent %d", i, st.Index, st.ParentIndex)
			}
			reached := 0
			stack := []*Operator{}
			if st.Root != nil {
				stack = append(stack, st.Root)
			}
			for len(stack) > 0 {
				op := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				reached++
				if reached > len(st.Operators) {
					t.Fatalf("statement %d: tree has a cycle", i)
				}
				for _, c := range op.Children {
					if c.Parent != op {
						t.Fatalf("statement %d: child %d does not point back to %d", i, c.NodeID, op.NodeID)
					}
					stack = append(stack, c)
				}
				for _, id := range op.Semantics.BlockingInputs {
					found := false
					for _, c := range op.Children {
						found = found || c.NodeID == id
					}
					if !found {
						t.Fatalf("statement %d: blocking input %d is not a child of %d", i, id, op.NodeID)
					}
				}
			}
			if reached != len(st.Operators) {
				t.Fatalf("statement %d: root reaches %d of %d operators", i, reached, len(st.Operators))
			}
		}
		if _, err := json.Marshal(NewDocument(plan)); err != nil {
			t.Fatalf("JSON: %v", err)
		}
		if err := WriteTree(io.Discard, plan); err != nil {
			t.Fatal(err)
		}
		// Parsing is deterministic.
		again, err := ParseBytes(data)
		if err != nil {
			t.Fatalf("second parse failed: %v", err)
		}
		a, _ := json.Marshal(NewDocument(plan))
		b, _ := json.Marshal(NewDocument(again))
		if !bytes.Equal(a, b) {
			t.Fatal("two parses of the same input differ")
		}
	})
}
