package compare

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text renders the comparison for a terminal: the sides, the statement's
// verdict, a table of operators (node ids on both sides, status, reads,
// rows, time, waits, spills, each as "A → B") and every operator's verdict.
func (r *Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s (%d operators)\nB: %s (%d operators)\n", orDash(r.A.Label), r.A.Operators, orDash(r.B.Label), r.B.Operators)
	fmt.Fprintf(&b, "Overall: %s\n", r.Verdict)
	fmt.Fprintf(&b, "Reads are %s (docs/frames.md, \"Vocabulary\"); elapsed is the batch's, operator time its operators' own.\n\n", readsLabel(r.ReadsSource == "logical"))
	r.statementsText(&b)
	rows := [][]string{{"A", "B", "operator", "status", readsLabel(r.ReadsSource == "logical"), "rows", "time", "waits", "spills"}}
	for _, d := range r.Operators {
		rows = append(rows, []string{nodeID(d.A), nodeID(d.B), clip(statementPrefix(d.Statement)+name(&d), 44), d.Status,
			cell(d.Metrics, "reads"), cell(d.Metrics, "rows"), cell(d.Metrics, "durationUs"), waitCell(d.Metrics), cell(d.Metrics, "spills")})
	}
	writeTable(&b, rows)
	b.WriteString("\nVerdicts:\n")
	for _, d := range r.Operators {
		fmt.Fprintf(&b, "  [%s→%s] %s\n", nodeID(d.A), nodeID(d.B), d.Verdict)
	}
	return b.String()
}

// statementsText lists the statement pairs when the sides had statement
// trees: which statement of A went with which of B, how, and each pair's
// own verdict (the Overall line is the whole batch's).
func (r *Result) statementsText(b *strings.Builder) {
	if len(r.Statements) == 0 {
		return
	}
	b.WriteString("Statements (matched by text, then position):\n")
	for _, s := range r.Statements {
		how := s.How
		if how == "" {
			how = "unmatched"
		}
		fmt.Fprintf(b, "  %s↔%s %-8s %-9s %s\n", stmtID(s.A), stmtID(s.B), s.Status, how, clip(strings.Join(strings.Fields(s.Text), " "), 60))
		fmt.Fprintf(b, "      %s\n", s.Verdict)
	}
	b.WriteString("\n")
}

func stmtID(id int) string {
	if id < 0 {
		return "-"
	}
	return fmt.Sprintf("s%d", id)
}

// statementPrefix is "s1↔s1 " before an operator of a statement pair.
func statementPrefix(s *StatementRef) string {
	if s == nil {
		return ""
	}
	return stmtID(s.A) + "↔" + stmtID(s.B) + " "
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func nodeID(o *OperatorSide) string {
	if o == nil {
		return "-"
	}
	return fmt.Sprint(o.NodeID)
}

func name(d *OperatorDiff) string {
	switch {
	case d.A == nil:
		return d.B.Label()
	case d.B == nil:
		return d.A.Label()
	case d.A.Label() == d.B.Label():
		return d.A.Label()
	}
	return d.A.Name + " → " + d.B.Name
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func side1(unit string, v *float64) string {
	if v == nil {
		return "-"
	}
	return value(unit, *v)
}

func cell(ms []Metric, name string) string {
	m, ok := metricNamed(ms, name)
	if !ok {
		return "-"
	}
	if m.A == nil && m.B == nil {
		return "-"
	}
	if m.A != nil && m.B != nil && *m.A == *m.B {
		return side1(m.Unit, m.A)
	}
	return side1(m.Unit, m.A) + " → " + side1(m.Unit, m.B)
}

// waitCell sums the wait categories on each side.
func waitCell(ms []Metric) string {
	var a, b float64
	var hasA, hasB bool
	for _, m := range ms {
		if !strings.HasPrefix(m.Name, "wait") {
			continue
		}
		if m.A != nil {
			a, hasA = a+*m.A, true
		}
		if m.B != nil {
			b, hasB = b+*m.B, true
		}
	}
	if !hasA && !hasB {
		return "-"
	}
	pa, pb := &a, &b
	if !hasA {
		pa = nil
	}
	if !hasB {
		pb = nil
	}
	return cell([]Metric{{Name: "w", Unit: "us", A: pa, B: pb}}, "w")
}

func writeTable(b *strings.Builder, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			line.WriteString(c)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
