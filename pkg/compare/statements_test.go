package compare

import (
	"strings"
	"testing"
)

// twoStatements is a batch of two statements as a side with a statement
// tree: statement 1 seeks Customers; statement 2 reads Orders with the
// given plan.
func twoStatements(label string, second *plan, secondText string) Side {
	first := newPlan(100).op(0, -1, "Clustered Index Seek", "Clustered Index Seek", "dbo.Customers.PK", 0, 50).reads(0, 2)
	return Side{Label: label, Trace: &first.tr, Statements: []StatementSide{
		{ID: 1, Text: "SELECT Name FROM dbo.Customers WHERE Id = 1", Position: 0, Trace: &first.tr},
		{ID: 2, Text: secondText, Position: 1, Trace: &second.tr},
	}}
}

func scanOrders() *plan {
	return newPlan(900).op(0, -1, "Clustered Index Scan", "Clustered Index Scan", "dbo.Orders.PK", 0, 800).reads(0, 40)
}

func seekOrders() *plan {
	return newPlan(200).op(0, -1, "Nested Loops", "Inner Join", "", 0, 150).
		op(1, 0, "Index Seek", "Index Seek", "dbo.Orders.IX_Customer", 0, 100).reads(1, 3).
		op(2, 0, "Key Lookup", "Key Lookup", "dbo.Orders.PK", 10, 140).reads(2, 3)
}

// Issue 30: compare took one plan per trace, so a batch whose second
// statement changed plan compared the first statements only.
func TestCompareMatchesStatementsThenOperators(t *testing.T) {
	text := "SELECT * FROM dbo.Orders WHERE CustomerId = 1"
	r := compareOf(t, twoStatements("a", scanOrders(), text), twoStatements("b", seekOrders(), text))
	if len(r.Statements) != 2 {
		t.Fatalf("statements %+v, want 2 pairs", r.Statements)
	}
	s1, s2 := r.Statements[0], r.Statements[1]
	if s1.A != 1 || s1.B != 1 || s1.How != "text" || s1.Status != StatusSame {
		t.Errorf("first statement %+v, want 1↔1 by text, same", s1)
	}
	if s2.A != 2 || s2.B != 2 || s2.How != "text" || s2.Status != StatusChanged {
		t.Errorf("second statement %+v, want 2↔2 by text, changed", s2)
	}
	// every operator row names its statement; the second statement's rows
	// hold its own operators only
	perStatement := map[int][]OperatorDiff{}
	for _, d := range r.Operators {
		if d.Statement == nil {
			t.Fatalf("operator row without its statement: %+v", d)
		}
		perStatement[d.Statement.A] = append(perStatement[d.Statement.A], d)
	}
	if n := len(perStatement[1]); n != 1 || perStatement[1][0].Status != StatusSame {
		t.Errorf("first statement rows %+v, want its one seek, same", perStatement[1])
	}
	var objects []string
	for _, d := range perStatement[2] {
		for _, o := range []*OperatorSide{d.A, d.B} {
			if o != nil && o.Object != "" {
				objects = append(objects, o.Object)
			}
		}
		if d.A != nil && d.A.Object == "dbo.Customers.PK" || d.B != nil && d.B.Object == "dbo.Customers.PK" {
			t.Errorf("the first statement's operator in the second's rows: %+v", d)
		}
	}
	if len(perStatement[2]) < 2 {
		t.Errorf("second statement rows %+v, want the scan against the seek plan", perStatement[2])
	}
	if r.Counts.Same < 1 || r.Counts.Changed+r.Counts.Replaced+r.Counts.Added+r.Counts.Removed == 0 {
		t.Errorf("counts %+v: the second statement's new plan is not seen", r.Counts)
	}
}

func TestCompareStatementsByPositionWhenTextChanged(t *testing.T) {
	a := twoStatements("a", scanOrders(), "SELECT * FROM dbo.Orders WHERE CustomerId = 1")
	b := twoStatements("b", scanOrders(), "SELECT * FROM dbo.Orders WHERE CustomerId = 2")
	r := compareOf(t, a, b)
	if len(r.Statements) != 2 || r.Statements[1].How != "position" || r.Statements[1].B != 2 {
		t.Fatalf("statements %+v, want the second paired by position", r.Statements)
	}
}

func TestCompareStatementAddedAndRemoved(t *testing.T) {
	a := twoStatements("a", scanOrders(), "SELECT * FROM dbo.Orders")
	b := twoStatements("b", scanOrders(), "SELECT * FROM dbo.Orders")
	b.Statements = b.Statements[:1]
	r := compareOf(t, a, b)
	if len(r.Statements) != 2 || r.Statements[1].Status != StatusRemoved || r.Statements[1].B != -1 {
		t.Fatalf("statements %+v, want the second removed", r.Statements)
	}
	r = compareOf(t, b, a)
	if len(r.Statements) != 2 || r.Statements[1].Status != StatusAdded || r.Statements[1].A != -1 {
		t.Fatalf("statements %+v, want the second added", r.Statements)
	}
	if r.Counts.Added != 1 {
		t.Errorf("counts %+v, want the added statement's scan added", r.Counts)
	}
}

// Equal texts pair with the nearest in position, so a statement repeated
// twice pairs first with first.
func TestMatchStatementsRepeatedText(t *testing.T) {
	s := func(texts ...string) []StatementSide {
		out := make([]StatementSide, len(texts))
		for i, x := range texts {
			out[i] = StatementSide{ID: i + 1, Text: x, Position: i}
		}
		return out
	}
	got := matchStatements(s("SELECT 1", "select  1", "SELECT 2"), s("SELECT 0", "SELECT 1", "SELECT 1"))
	want := []statementPair{{0, 1, "text"}, {1, 2, "text"}, {2, 0, "position"}}
	if len(got) != len(want) {
		t.Fatalf("pairs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d %v, want %v", i, got[i], want[i])
		}
	}
}

// Issue 30 review: the overall verdict of a multi-statement compare was the
// first statement's alone. It is over the whole batch, with a verdict per
// statement beside it, and statements without a partner said so.
func TestCompareVerdictIsTheWholeBatchs(t *testing.T) {
	text := "SELECT * FROM dbo.Orders WHERE CustomerId = 1"
	r := compareOf(t, twoStatements("a", scanOrders(), text), twoStatements("b", seekOrders(), text))
	for name, want := range map[string][2]float64{"reads": {2 + 40, 2 + 6}, "pageReads": {42, 8}, "durationUs": {900, 200}} {
		m, ok := metricNamed(r.Statement, name)
		if !ok || m.A == nil || m.B == nil || *m.A != want[0] || *m.B != want[1] {
			t.Errorf("batch %s = %v → %v, want %v → %v", name, deref(m.A), deref(m.B), want[0], want[1])
		}
	}
	for _, want := range []string{"page reads in the trace 42 → 8", "2 statements (1 changed, 1 same)"} {
		if !strings.Contains(r.Verdict, want) {
			t.Errorf("verdict %q lacks %q", r.Verdict, want)
		}
	}
	if v := r.Statements[0].Verdict; !strings.Contains(v, "no significant change") {
		t.Errorf("statement 1 verdict %q", v)
	}
	if v := r.Statements[1].Verdict; !strings.Contains(v, "page reads in the trace 40 → 6") {
		t.Errorf("statement 2 verdict %q", v)
	}
	// a statement only one side ran is counted in the batch and said so
	b := twoStatements("b", scanOrders(), text)
	b.Statements = b.Statements[:1]
	r = compareOf(t, twoStatements("a", scanOrders(), text), b)
	if v := r.Statements[1].Verdict; !strings.Contains(v, "removed") || !strings.Contains(v, "only in A") {
		t.Errorf("removed statement verdict %q", v)
	}
	if !strings.Contains(r.Verdict, "1 removed") {
		t.Errorf("verdict %q does not say a statement was removed", r.Verdict)
	}
	if m, _ := metricNamed(r.Statement, "pageReads"); m.A == nil || *m.A != 42 || *m.B != 2 {
		t.Errorf("batch page reads %v → %v, want 42 → 2", deref(m.A), deref(m.B))
	}
	r = compareOf(t, b, twoStatements("a", scanOrders(), text))
	if v := r.Statements[1].Verdict; !strings.Contains(v, "added") || !strings.Contains(v, "only in B") {
		t.Errorf("added statement verdict %q", v)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// A statement's own verdict uses its own elapsed time (its completed
// events), not the batch's that its timeline's summary carries.
func TestCompareStatementElapsedIsItsOwn(t *testing.T) {
	text := "SELECT * FROM dbo.Orders WHERE CustomerId = 1"
	a, b := twoStatements("a", scanOrders(), text), twoStatements("b", scanOrders(), text)
	a.Statements[1].ElapsedUs, b.Statements[1].ElapsedUs = 40_000, 2_000
	r := compareOf(t, a, b)
	m, ok := metricNamed(r.Statements[1].Metrics, "durationUs")
	if !ok || deref(m.A) != 40_000 || deref(m.B) != 2_000 || !m.Changed {
		t.Errorf("statement 2 elapsed %v → %v, want its own 40,000 → 2,000 µs, changed", deref(m.A), deref(m.B))
	}
}
