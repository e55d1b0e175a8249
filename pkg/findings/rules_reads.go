package findings

import (
	"fmt"
	"strings"
)

// readsOf returns an operator's reads and whether they are logical reads
// from the plan (true) or physical page reads from the trace (false).
func (a *analysis) readsOf(o *OperatorStats, logical bool) int64 {
	if logical {
		if o.Counters == nil {
			return 0
		}
		return o.Counters.LogicalReads
	}
	return int64(o.Reads)
}

// readsConcentrated: one operator did at least ReadShare of the reads (and
// at least MinReads pages), among at least two operators that read. A
// single reading operator trivially does all reads; residual-predicate and
// cold-cache speak for that case.
func readsConcentrated(a *analysis) []Finding {
	p := a.p
	logical := p.HasCounters && p.LogicalReads > 0
	var total int64
	readers := 0
	var top *OperatorStats
	for i := range p.Operators {
		o := &p.Operators[i]
		n := a.readsOf(o, logical)
		if n == 0 {
			continue
		}
		readers++
		total += n
		if top == nil || n > a.readsOf(top, logical) {
			top = o
		}
	}
	if top == nil || readers < 2 {
		return nil
	}
	n := a.readsOf(top, logical)
	sh := share(n, total)
	if n < a.cfg.MinReads || sh < a.cfg.ReadShare {
		return nil
	}
	// The kind is named (docs/frames.md, "Reads"): logical reads from the
	// plan's runtime counters, else the page reads the trace caught
	// (physical_page_read events).
	what, src := "logical reads", "plan"
	if !logical {
		what, src = "page reads in the trace", "events"
	}
	f := Finding{
		Title:     fmt.Sprintf("%s did %s of the %s: %s of %s pages", top.Name, Percent(sh), what, Count(n), Count(total)),
		Severity:  SeverityWarning,
		Operators: []OperatorRef{top.Ref()},
		pending:   ev(LaneRead, p.Entries(LaneRead, top.NodeID)),
		Numbers: []Number{num("reads", float64(n), "pages", src), num("totalReads", float64(total), "pages", src),
			num("share", sh*100, "percent", src)},
	}
	var execs, rows int64
	if c := top.Counters; c != nil {
		execs, rows = c.Runs(), c.Rows
		f.Numbers = append(f.Numbers, num("executions", float64(execs), "count", "plan"), num("rows", float64(rows), "rows", "plan"))
		if execs > 1 {
			f.Detail = fmt.Sprintf("It ran %s times for %s.", Count(execs), plural(rows, "row", "rows"))
		}
	}
	if n < a.cfg.ReadsWarning {
		f.Severity = SeverityInfo
	}
	a.weighByTime(&f, top)
	f.Hint, f.Reference = readsHint(top, execs, rows)
	if strings.Contains(top.Name, "Scan") && !strings.Contains(top.Name, "Lookup") {
		f.Hint, f.Reference = a.indexAdvice(top)
	}
	return []Finding{f}
}

// readsHint picks the advice by what the operator is.
func readsHint(o *OperatorStats, execs, rows int64) (hint, ref string) {
	name := o.Name
	switch {
	case strings.Contains(name, "Key Lookup") || strings.Contains(name, "RID Lookup"):
		into := "clustered index"
		if strings.Contains(name, "RID") {
			into = "heap"
		}
		here := ""
		if execs > 0 {
			here = " (" + plural(execs, "lookup", "lookups") + " here)"
		}
		return fmt.Sprintf("Every row the index seek found cost a separate lookup into the %s%s. A covering index — the seek's "+
			"index with the columns the lookup fetches added as INCLUDE columns — removes the lookup.", into, here), refIncludedColumns
	case strings.Contains(name, "Scan"):
		ret := ""
		if o.Counters != nil {
			ret = " to return " + plural(rows, "row", "rows")
		}
		return fmt.Sprintf("The scan read the whole of %s%s. An index whose key starts with the columns the query filters on "+
			"lets SQL Server seek to the rows instead.", objectOr(o, "the index"), ret), refIndexDesign
	case execs > 1:
		return fmt.Sprintf("The operator ran %s times, once per outer row of a nested loops join. Fewer outer rows, or a hash or merge "+
			"join that reads the input once, would read far fewer pages.", Count(execs)), refJoins
	}
	return "Most of the statement's I/O happened here: this operator is where an index or a rewrite pays off first.", refIndexDesign
}

func objectOr(o *OperatorStats, fallback string) string {
	if o.Object != "" {
		return o.Object
	}
	return fallback
}

// residualPredicate: an operator with a residual predicate read at least
// ResidualRatio rows per row returned, and at least MinRowsRead rows. It
// needs the plan (the predicate and ActualRowsRead).
func residualPredicate(a *analysis) []Finding {
	if a.in.Plan == nil {
		return nil
	}
	var out []Finding
	for i := range a.p.Operators {
		o := &a.p.Operators[i]
		po := a.in.Plan.OperatorByID(o.NodeID)
		c := o.Counters
		if po == nil || c == nil || !c.HasRowsRead || po.Predicate == "" {
			continue
		}
		if c.RowsRead < a.cfg.MinRowsRead || float64(c.RowsRead) < a.cfg.ResidualRatio*float64(max(c.Rows, 1)) {
			continue
		}
		f := Finding{
			Title:     fmt.Sprintf("%s read %s to return %s", o.Label(), plural(c.RowsRead, "row", "rows"), Count(c.Rows)),
			Severity:  SeverityWarning,
			Operators: []OperatorRef{o.Ref()},
			pending:   ev(LaneRead, a.p.Entries(LaneRead, o.NodeID)),
			Numbers: []Number{num("rowsRead", float64(c.RowsRead), "rows", "plan"), num("rows", float64(c.Rows), "rows", "plan"),
				num("ratio", float64(c.RowsRead)/float64(max(c.Rows, 1)), "ratio", "plan"), num("logicalReads", float64(c.LogicalReads), "pages", "plan")},
			Detail: fmt.Sprintf("The residual predicate %s was tested on every row read (%s).", clip(po.Predicate, 160),
				plural(c.LogicalReads, "page", "pages")),
		}
		f.Hint, f.Reference = a.indexAdvice(o)
		out = append(out, f)
	}
	return out
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
