package showplan

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"
)

const plansDir = "testdata/plans"

// realPlans lists every real plan copied from the project's real-data collection (testdata/ATTRIBUTION.md).
func realPlans(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(plansDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".sqlplan") || strings.HasSuffix(path, ".sqplan")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", plansDir, err)
	}
	if len(files) != 86 {
		t.Fatalf("expected the 86 real plans of realdata/showplan under %s, found %d", plansDir, len(files))
	}
	return files
}

// oracleText decodes a plan for the oracle with a method independent of the
// parser's: only the BOM decides, via unicode/utf16 on a []uint16.
func oracleText(t testing.TB, data []byte) string {
	t.Helper()
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		u := make([]uint16, (len(data)-2)/2)
		if err := binary.Read(bytes.NewReader(data[2:]), binary.LittleEndian, u); err != nil {
			t.Fatal(err)
		}
		return string(utf16.Decode(u))
	}
	return string(bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF}))
}

var (
	tagRe     = regexp.MustCompile(`<(/?)(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)[^>]*?(/?)>`)
	commentRe = regexp.MustCompile(`(?s)<!--.*?-->`)
)

// planOracle counts, straight from the tags, the RelOps under each QueryPlan
// (in document order) and the number of statement units: one per Stmt*
// element plus one per extra cursor/receive Operation.
type planOracle struct {
	relOpsPerPlan []int
	statements    int
}

func computeOracle(text string) planOracle {
	text = commentRe.ReplaceAllString(text, "")
	var o planOracle
	var names []string
	current := -1 // index into relOpsPerPlan of the open QueryPlan
	var planStack []int
	opsInCursor := []int{}
	for _, m := range tagRe.FindAllStringSubmatch(text, -1) {
		closing, name, selfClosing := m[1] == "/", m[2], m[3] == "/"
		if closing {
			if len(names) > 0 {
				names = names[:len(names)-1]
			}
			switch name {
			case "QueryPlan":
				planStack = planStack[:len(planStack)-1]
				current = -1
				if len(planStack) > 0 {
					current = planStack[len(planStack)-1]
				}
			case "CursorPlan", "ReceivePlan":
				if n := opsInCursor[len(opsInCursor)-1]; n > 1 {
					o.statements += n - 1
				}
				opsInCursor = opsInCursor[:len(opsInCursor)-1]
			}
			continue
		}
		switch {
		case strings.HasPrefix(name, "Stmt"):
			o.statements++
		case name == "CursorPlan" || name == "ReceivePlan":
			if !selfClosing {
				opsInCursor = append(opsInCursor, 0)
			}
		case name == "Operation" && len(names) > 0 && (names[len(names)-1] == "CursorPlan" || names[len(names)-1] == "ReceivePlan"):
			opsInCursor[len(opsInCursor)-1]++
		case name == "QueryPlan" && !selfClosing:
			o.relOpsPerPlan = append(o.relOpsPerPlan, 0)
			current = len(o.relOpsPerPlan) - 1
			planStack = append(planStack, current)
		case name == "QueryPlan":
			o.relOpsPerPlan = append(o.relOpsPerPlan, 0)
		case name == "RelOp":
			o.relOpsPerPlan[current]++
		}
		if !selfClosing {
			names = append(names, name)
		}
	}
	return o
}

func TestEveryRealPlanParsesWithOracleCounts(t *testing.T) {
	total := 0
	for _, path := range realPlans(t) {
		t.Run(strings.TrimPrefix(path, plansDir+"/"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			oracle := computeOracle(oracleText(t, data))
			plan, err := ParseBytes(data)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := len(plan.Statements); got != oracle.statements {
				t.Errorf("statements: got %d, oracle %d", got, oracle.statements)
			}
			var got []int
			for _, st := range plan.Statements {
				if st.HasPlan {
					got = append(got, len(st.Operators))
				}
				checkTree(t, st)
			}
			if !equalInts(got, oracle.relOpsPerPlan) {
				t.Errorf("RelOps per statement plan: got %v, oracle %v", got, oracle.relOpsPerPlan)
			}
			for _, n := range got {
				total += n
			}
		})
	}
	if total == 0 {
		t.Fatal("no operators parsed at all")
	}
}

// checkTree verifies the operator tree of one statement is consistent: the
// root reaches every operator exactly once, parents and children agree, node
// ids are unique.
func checkTree(t *testing.T, st *Statement) {
	t.Helper()
	if len(st.Operators) == 0 {
		if st.Root != nil {
			t.Errorf("statement %d: root without operators", st.Index)
		}
		return
	}
	if st.Root != st.Operators[0] {
		t.Errorf("statement %d: root is not the first operator", st.Index)
	}
	seen := map[*Operator]bool{}
	ids := map[int]bool{}
	stack := []*Operator{st.Root}
	for len(stack) > 0 {
		op := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[op] {
			t.Fatalf("statement %d: node %d reached twice", st.Index, op.NodeID)
		}
		seen[op] = true
		if ids[op.NodeID] {
			t.Errorf("statement %d: duplicate NodeId %d", st.Index, op.NodeID)
		}
		ids[op.NodeID] = true
		for _, c := range op.Children {
			if c.Parent != op {
				t.Errorf("statement %d: node %d's parent is not node %d", st.Index, c.NodeID, op.NodeID)
			}
			stack = append(stack, c)
		}
	}
	if len(seen) != len(st.Operators) {
		t.Errorf("statement %d: tree reaches %d of %d operators", st.Index, len(seen), len(st.Operators))
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mustParse(t testing.TB, rel string) *Plan {
	t.Helper()
	return parseFile(t, filepath.Join(plansDir, rel))
}

func parseFile(t testing.TB, path string) *Plan {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ParseBytes(data)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return plan
}

// ParameterList: the compiled (sniffed) and runtime values of each
// parameter, from a real plan (stack_overflow-inequality_index).
func TestParameterList(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "plans", "html-query-plan", "stack_overflow-inequality_index.sqlplan"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Statements[0].Parameters
	want := Parameter{Name: "@d", DataType: "datetime", Compiled: "'2017-06-02 00:00:00.000'", Runtime: "'2009-01-01 00:00:00.000'"}
	if len(got) != 1 || got[0] != want {
		t.Errorf("parameters %+v, want %+v", got, want)
	}
}
