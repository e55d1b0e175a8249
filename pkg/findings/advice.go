package findings

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Index advice for a scan or a residual predicate follows from what the
// plan proves, in this order: a forced index (the plan did as told), a
// predicate no index can seek on (a function or conversion on the column,
// arithmetic on columns, a leading wildcard), a scan that returned most of
// what it read (no index reads less), the optimizer's own missing-index
// suggestion, and only then a generic index on the predicate's columns.
// Sargability: https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-index-design-guide

// mostRowsShare: a scan that returns at least this share of the rows it
// read gains nothing from a seek: the seek would read the same rows, each
// by a random lookup when the index does not cover the query.
const mostRowsShare = 0.5

var (
	// colFuncRE finds a function or conversion whose argument list holds
	// a column reference ([schema].[table].[column] as written in plans).
	colFuncRE = regexp.MustCompile(`(?i)\b(CONVERT_IMPLICIT|CONVERT|CAST|TRY_CONVERT|isnull|COALESCE|upper|lower|ltrim|rtrim|trim|substring|left|right|datepart|datediff|dateadd|year|month|day|abs|len)\((?:[^()]|\([^()]*\))*?\]\.\[(?:[^()]|\([^()]*\))*\)`)
	// arithRE finds arithmetic applied to a column reference.
	arithRE = regexp.MustCompile(`\]\s*[*/+%-]\s*(\[|\(|[0-9])|\)\s*[*/%]\s*\[`)
	// leadingWildcardRE finds LIKE with a pattern starting with %.
	leadingWildcardRE = regexp.MustCompile(`(?i)\blike\s+N?'%`)
)

// indexAdvice returns the hint for an operator that read many rows to
// return few (or most of a statement's reads), and its reference.
func (a *analysis) indexAdvice(o *OperatorStats) (string, string) {
	var po *showplan.Operator
	if a.in.Plan != nil {
		po = a.in.Plan.OperatorByID(o.NodeID)
	}
	pred := ""
	if po != nil {
		pred = clip(po.Predicate, 4096)
	}
	switch {
	case po != nil && po.ForcedIndex:
		return fmt.Sprintf("The query forces this index with a table hint (WITH (INDEX(...)), ForcedIndex in the plan), so the %s is "+
			"what it was told to do. Remove or change the hint before adding an index.", o.Name), refTableHints
	case pred != "" && colFuncRE.MatchString(pred):
		m := colFuncRE.FindString(pred)
		return fmt.Sprintf("The predicate is non-sargable: it applies %s to the column, so no index on that column can be "+
			"sought. Compare the bare column with a value of its own type (a parameter or literal of the column's data type), or "+
			"index a computed column of the expression.", clip(m, 120)), refIndexDesign
	case pred != "" && arithRE.MatchString(pred):
		return "The predicate is arithmetic on columns (" + clip(pred, 120) + "): no index key can be sought for it. A computed " +
			"column of the expression, indexed (and persisted if it is imprecise), lets SQL Server seek; it also gets its own " +
			"statistics, where the optimizer now guesses.", refComputedColumns
	case pred != "" && leadingWildcardRE.MatchString(pred):
		return "The LIKE pattern starts with a wildcard, so an index on the column cannot narrow the search: each row must be " +
			"tested. Full-text search, or a pattern anchored at the start, can use an index.", refIndexDesign
	}
	if po != nil && pred == "" && strings.Contains(o.PhysicalOp, "Scan") && o.Counters != nil {
		return fmt.Sprintf("The scan has no predicate: the query wants all %s it read, so no index would read fewer. "+
			"The cost is the rows the query asks for (a narrower index covering the columns it uses reads fewer pages).",
			plural(o.Counters.Rows, "row", "rows")), refIndexDesign
	}
	if c := o.Counters; c != nil && c.HasRowsRead && c.RowsRead > 0 && share(c.Rows, c.RowsRead) >= mostRowsShare {
		return fmt.Sprintf("The scan returned %s of the %s it read (%s): most rows qualify, so an index seek would read as "+
			"much, and a non-covering one would add a lookup per row. The cost is the rows the query asks for.",
			Count(c.Rows), plural(c.RowsRead, "row", "rows"), Percent(share(c.Rows, c.RowsRead))), refIndexDesign
	}
	sel := ""
	if c := o.Counters; c != nil && c.HasRowsRead && c.RowsRead > 0 {
		sel = fmt.Sprintf(" It returned %s of the rows it read.", Percent(share(c.Rows, c.RowsRead)))
	}
	if s := a.missingIndexFor(o); s != "" {
		return strings.TrimSpace(sel + " " + s), refMissingIndexes
	}
	return "The predicate filters rows after they are read, so the operator reads far more than it returns." + sel + " An index keyed on " +
		"the predicate's columns (covering the columns the query uses) lets SQL Server read only the matching rows.", refIndexDesign
}

// missingIndexFor states the plan's own missing-index suggestion for o's
// table, with its impact.
func (a *analysis) missingIndexFor(o *OperatorStats) string {
	if a.in.Plan == nil || o.Table == "" {
		return ""
	}
	for _, g := range a.in.Plan.MissingIndexes {
		for _, mi := range g.Indexes {
			if !strings.EqualFold(strings.Trim(mi.Table, "[]"), strings.Trim(o.Table, "[]")) {
				continue
			}
			key := strings.Join(append(append([]string{}, mi.Equality...), mi.Inequality...), ", ")
			s := fmt.Sprintf("The optimizer's own missing-index suggestion for %s (estimated impact %.1f%%): key (%s)", mi.Table, g.Impact, key)
			if len(mi.Include) > 0 {
				s += " INCLUDE (" + strings.Join(mi.Include, ", ") + ")"
			}
			return s + ". Equality columns first, then inequality; check it against the table's existing indexes before creating it."
		}
	}
	return ""
}
