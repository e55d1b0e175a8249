package showplan

import (
	"bytes"
	"encoding/xml"
	"os"
	"strconv"
	"testing"
)

// opFacts is what the cross-check compares per operator.
type opFacts struct {
	id, parent         int
	physical, logical  string
	estimateRows       float64
	table, index       string
	threads            int
	rows, logicalReads int64
}

func (g *genericNode) attr(name string) string {
	for _, a := range g.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// referenceFacts walks a generic xml.Unmarshal tree — a different decoding
// path from the parser's (Token with namespace translation, reflection) —
// and lists every RelOp of every QueryPlan with the facts it can read
// directly: the operator element is the first RelOp child that is not one
// of the shared RelOp children, and its direct Object children are the
// operator's own.
func referenceFacts(t *testing.T, root *genericNode) [][]opFacts {
	t.Helper()
	shared := map[string]bool{"OutputList": true, "Warnings": true, "MemoryFractions": true,
		"RunTimeInformation": true, "RunTimePartitionSummary": true, "InternalInfo": true}
	num := func(s string) int64 {
		if s == "" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("reference: %q: %v", s, err)
		}
		return n
	}
	var plans [][]opFacts
	var walk func(n *genericNode, parent int, ops *[]opFacts)
	walk = func(n *genericNode, parent int, ops *[]opFacts) {
		for i := range n.Nodes {
			c := &n.Nodes[i]
			switch c.XMLName.Local {
			case "QueryPlan":
				var planOps []opFacts
				walk(c, -1, &planOps)
				plans = append(plans, planOps)
			case "RelOp":
				id := int(num(c.attr("NodeId")))
				est, err := strconv.ParseFloat(c.attr("EstimateRows"), 64)
				if err != nil {
					t.Fatal(err)
				}
				f := opFacts{id: id, parent: parent, physical: c.attr("PhysicalOp"), logical: c.attr("LogicalOp"), estimateRows: est}
				for j := range c.Nodes {
					e := &c.Nodes[j]
					if e.XMLName.Local == "RunTimeInformation" {
						for _, th := range e.Nodes {
							f.threads++
							f.rows += num(th.attr("ActualRows"))
							f.logicalReads += num(th.attr("ActualLogicalReads"))
						}
					}
				}
				for j := range c.Nodes {
					e := &c.Nodes[j]
					if shared[e.XMLName.Local] {
						continue
					}
					for _, o := range e.Nodes {
						if o.XMLName.Local == "Object" {
							f.table, f.index = trimBrackets(o.attr("Table")), trimBrackets(o.attr("Index"))
							break
						}
					}
					break
				}
				*ops = append(*ops, f)
				walk(c, id, ops)
			default:
				walk(c, parent, ops)
			}
		}
	}
	walk(&genericNode{Nodes: []genericNode{*root}}, -1, nil)
	return plans
}

func TestAgreesWithGenericTreeWalk(t *testing.T) {
	compared := 0
	for _, path := range realPlans(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader([]byte(oracleText(t, data))))
		dec.CharsetReader = passThroughCharset
		var root genericNode
		if err := dec.Decode(&root); err != nil {
			t.Fatalf("%s: reference decode: %v", path, err)
		}
		want := referenceFacts(t, &root)
		plan := parseFile(t, path)
		var got [][]opFacts
		for _, st := range plan.Statements {
			if !st.HasPlan {
				continue
			}
			var ops []opFacts
			for _, op := range st.Operators {
				f := opFacts{id: op.NodeID, parent: -1, physical: op.PhysicalOp, logical: op.LogicalOp,
					estimateRows: op.EstimateRows, threads: len(op.Threads)}
				if op.Parent != nil {
					f.parent = op.Parent.NodeID
				}
				if op.Object != nil {
					f.table, f.index = op.Object.Table, op.Object.Index
				}
				if op.Actual != nil {
					f.rows, f.logicalReads = op.Actual.Rows, op.Actual.LogicalReads
				}
				ops = append(ops, f)
			}
			got = append(got, ops)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d plans, reference %d", path, len(got), len(want))
			continue
		}
		for i := range want {
			if len(got[i]) != len(want[i]) {
				t.Errorf("%s plan %d: %d operators, reference %d", path, i, len(got[i]), len(want[i]))
				continue
			}
			for j := range want[i] {
				compared++
				if got[i][j] != want[i][j] {
					t.Errorf("%s plan %d operator %d:\n got  %+v\n want %+v", path, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
	if compared < 700 {
		t.Fatal("nothing compared")
	}
}
