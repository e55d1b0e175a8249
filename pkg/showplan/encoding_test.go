package showplan

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"
)

// A small real UTF-8 plan used to derive the encoding and wrapping variants.
const utf8Plan = "html-query-plan/clustered_index_seek.sqlplan"

func readPlan(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(plansDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func encodeUTF16(s string, bigEndian, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	out := make([]byte, 0, 2*len(units))
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// planSignature summarises a parse for comparing variants of one document.
func planSignature(t *testing.T, data []byte) string {
	t.Helper()
	plan, err := ParseBytes(data)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var b strings.Builder
	for _, st := range plan.Statements {
		b.WriteString(st.Type + "|" + st.Text + "\n")
		for _, op := range st.Operators {
			b.WriteString(op.PhysicalOp + "/" + op.LogicalOp + "/" + strings.Join(op.SeekPredicates, ",") + "/" + op.Predicate + "\n")
		}
	}
	return b.String()
}

func TestEncodingVariantsParseAlike(t *testing.T) {
	utf8Data := readPlan(t, utf8Plan)
	want := planSignature(t, utf8Data)
	if !strings.Contains(want, "Clustered Index Seek") {
		t.Fatalf("base plan signature looks wrong:\n%s", want)
	}
	text := string(bytes.TrimPrefix(utf8Data, []byte{0xEF, 0xBB, 0xBF}))
	declaredUTF16 := `<?xml version="1.0" encoding="utf-16"?>` + regexp.MustCompile(`^<\?xml[^>]*\?>`).ReplaceAllString(text, "")
	for name, data := range map[string][]byte{
		"UTF-8 with BOM":               append([]byte{0xEF, 0xBB, 0xBF}, text...),
		"UTF-16LE with BOM":            encodeUTF16(declaredUTF16, false, true),
		"UTF-16BE with BOM":            encodeUTF16(declaredUTF16, true, true),
		"UTF-16LE without BOM":         encodeUTF16(declaredUTF16, false, false),
		"UTF-8 declared as utf-16":     []byte(declaredUTF16),
		"UTF-8 BOM declared as utf-16": append([]byte{0xEF, 0xBB, 0xBF}, declaredUTF16...),
	} {
		if got := planSignature(t, data); got != want {
			t.Errorf("%s parses differently:\n%s\nwant\n%s", name, got, want)
		}
	}
}

func TestRealMislabelledUTF16Plans(t *testing.T) {
	// These real files declare utf-16 but are UTF-8 [V, docs/design/tracing.md §7.2].
	for _, rel := range []string{"html-query-plan/clustered_index_merge.sqlplan", "performancestudio/parallel-skew.sqlplan"} {
		data := readPlan(t, rel)
		if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || !bytes.Contains(data[:200], []byte(`encoding="utf-16"`)) {
			t.Fatalf("%s is no longer a mislabelled UTF-8 file", rel)
		}
		if _, err := ParseBytes(data); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
}

func TestNamespaceAgnostic(t *testing.T) {
	text := string(readPlan(t, utf8Plan))
	want := planSignature(t, []byte(text))
	// Same document with an explicit prefix on every element, and with no
	// namespace at all.
	prefixed := regexp.MustCompile(`<(/?)([A-Za-z])`).ReplaceAllString(text, "<${1}shp:$2")
	prefixed = strings.Replace(prefixed, `xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan"`,
		`xmlns:shp="http://schemas.microsoft.com/sqlserver/2004/07/showplan"`, 1)
	prefixed = strings.Replace(prefixed, "<?shp:xml", "<?xml", 1)
	noNamespace := strings.Replace(text, `xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan"`, "", 1)
	for name, variant := range map[string]string{"prefixed": prefixed, "no namespace": noNamespace} {
		if variant == text {
			t.Fatalf("%s variant is unchanged", name)
		}
		if got := planSignature(t, []byte(variant)); got != want {
			t.Errorf("%s parses differently:\n%s", name, got)
		}
	}
}

func TestPlanInsideShowplanEvent(t *testing.T) {
	// query_post_execution_showplan carries the plan as a child element of
	// <value> [V, docs/design/tracing.md §4].
	text := string(readPlan(t, utf8Plan))
	body := text[strings.Index(text, "<ShowPlanXML"):]
	event := `<event name="query_post_execution_showplan" package="sqlserver" timestamp="2026-11-29T10:00:00.000Z">` +
		`<data name="duration"><value>12</value></data><data name="showplan_xml"><value>` + body +
		`</value></data><action name="plan_handle" package="sqlserver"><value>0x0600</value></action></event>`
	if got, want := planSignature(t, []byte(event)), planSignature(t, []byte(text)); got != want {
		t.Errorf("plan inside an event parses differently:\n%s", got)
	}
}

func TestBadInputGivesClearErrors(t *testing.T) {
	text := string(readPlan(t, utf8Plan))
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"truncated":            {[]byte(text[:len(text)/2]), "showplan XML"},
		"not a showplan":       {[]byte(`<?xml version="1.0"?><root><child/></root>`), "no ShowPlanXML element"},
		"empty":                {nil, "no ShowPlanXML element"},
		"mismatched tags":      {[]byte(`<ShowPlanXML><BatchSequence></Batch></ShowPlanXML>`), "does not match"},
		"bad number":           {[]byte(strings.Replace(text, `EstimateRows="`, `EstimateRows="x`, 1)), `RelOp@EstimateRows: "x`},
		"odd UTF-16":           {append(encodeUTF16("<ShowPlanXML/>", false, true), 0), "odd number of bytes"},
		"RelOp outside a plan": {[]byte(`<ShowPlanXML><RelOp NodeId="0"/></ShowPlanXML>`), "RelOp outside a QueryPlan"},
		"unknown encoding":     {[]byte(`<?xml version="1.0" encoding="ebcdic"?><ShowPlanXML/>`), "unsupported declared encoding"},
	} {
		_, err := ParseBytes(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
}

func TestSubqueryRelOpsAreOperators(t *testing.T) {
	// No real plan here nests a RelOp in a scalar expression, so this one
	// is written by hand after the XSD's SubqueryType (ScalarOperator >
	// Subquery > RelOp) inside a Compute Scalar.
	const doc = `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564">
<BatchSequence><Batch><Statements><StmtSimple StatementType="SELECT" StatementText="select">
<QueryPlan><RelOp NodeId="0" PhysicalOp="Compute Scalar" LogicalOp="Compute Scalar" EstimateRows="1" EstimatedTotalSubtreeCost="3">
<OutputList/><ComputeScalar><DefinedValues><DefinedValue><ColumnReference Column="Expr1"/>
<ScalarOperator ScalarString="subquery"><Subquery Operation="EXISTS">
<RelOp NodeId="1" PhysicalOp="Clustered Index Scan" LogicalOp="Clustered Index Scan" EstimateRows="5" EstimatedTotalSubtreeCost="1">
<OutputList/><IndexScan><Object Schema="[dbo]" Table="[Inner]" Index="[PK_Inner]"/></IndexScan></RelOp>
</Subquery></ScalarOperator></DefinedValue></DefinedValues>
<RelOp NodeId="2" PhysicalOp="Table Scan" LogicalOp="Table Scan" EstimateRows="1" EstimatedTotalSubtreeCost="1.5">
<OutputList/><TableScan><Object Schema="[dbo]" Table="[Outer]"/></TableScan></RelOp>
</ComputeScalar></RelOp></QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`
	plan, err := ParseBytes([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	st := plan.Statements[0]
	if len(st.Operators) != 3 {
		t.Fatalf("operators = %d, want 3", len(st.Operators))
	}
	sub, input := st.OperatorByID(1), st.OperatorByID(2)
	if sub.Parent != st.Root || !sub.InExpression || input.InExpression {
		t.Errorf("subquery parent/flag wrong: sub %+v input %+v", sub.InExpression, input.InExpression)
	}
	if st.Root.Object != nil || sub.Object.Table != "Inner" || input.Object.Table != "Outer" {
		t.Errorf("objects: root %+v sub %+v input %+v", st.Root.Object, sub.Object, input.Object)
	}
	if st.Root.OwnCost != 0.5 {
		t.Errorf("own cost = %g, want 3 - 1 - 1.5", st.Root.OwnCost)
	}
}
