package showplan

import (
	"fmt"
	"testing"
)

// Issue 26 item 4: lookups are named as SSMS names them. A Clustered Index
// Seek whose IndexScan has Lookup="1" (or "true") is a Key Lookup; a RID
// Lookup — which also carries Lookup="1" on its IndexScan — stays a RID
// Lookup (it reads a heap, not a clustered index); an older plan's
// PhysicalOp "Key Lookup" is one too; a seek without the attribute is not.
func TestLookupDisplayNames(t *testing.T) {
	cases := []struct {
		physical, lookup, want string
		key                    bool
	}{
		{"Clustered Index Seek", `Lookup="1"`, "Key Lookup", true},
		{"Clustered Index Seek", `Lookup="true"`, "Key Lookup", true},
		{"Clustered Index Seek", `Lookup="0"`, "Clustered Index Seek", false},
		{"Clustered Index Seek", ``, "Clustered Index Seek", false},
		{"RID Lookup", `Lookup="1"`, "RID Lookup", false},
		{"RID Lookup", `Lookup="true"`, "RID Lookup", false},
		{"Key Lookup", ``, "Key Lookup", true},
		{"Index Seek", ``, "Index Seek", false},
	}
	for _, c := range cases {
		doc := fmt.Sprintf(`<ShowPlanXML><BatchSequence><Batch><Statements><StmtSimple StatementType="SELECT"><QueryPlan>
<RelOp NodeId="0" PhysicalOp=%q LogicalOp=%q><OutputList/><IndexScan %s Ordered="true"><Object Table="[T]" Index="[PK_T]"/></IndexScan></RelOp>
</QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`, c.physical, c.physical, c.lookup)
		p, err := ParseBytes([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		op := p.Statements[0].Root
		if op.DisplayName != c.want || op.IsKeyLookup != c.key {
			t.Errorf("%s %s: name %q, key lookup %v; want %q, %v", c.physical, c.lookup, op.DisplayName, op.IsKeyLookup, c.want, c.key)
		}
	}
	plan := mustParse(t, "html-query-plan/rid_lookup.sqlplan")
	if op := plan.Statements[0].OperatorByID(3); op == nil || op.DisplayName != "RID Lookup" {
		t.Errorf("rid_lookup.sqlplan node 3: %+v", op)
	}
}
