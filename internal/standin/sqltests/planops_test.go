package sqltests

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// planShape is one plan SQL Server could plausibly choose for a statement:
// operators it must contain and operators it must not.
//
// A term is "Physical[/Logical][@Table[.Index]]", where Physical is the
// operator as SSMS shows it (a Clustered Index Seek with Lookup="1" is "Key
// Lookup") or "*" for any, and alternatives are separated by " | ". An "N*"
// prefix asks for at least N matching operators.
type planShape struct {
	need  []string
	never []string
}

// stmtPlan lists the acceptable shapes of one statement's actual plan (the
// statements of a batch that have a plan, in order).
type stmtPlan struct {
	stmt   int
	shapes []planShape
}

// planExpectation is what SQL Server would plausibly do for one everyday
// query on the demo schema: Customers (PK_Customers on CustomerID, 1,000
// rows), Products (PK_Products on ProductID, 200 rows), Orders (PK_Orders on
// OrderID, nonclustered IX_Orders_CustomerID on CustomerID, 10,000 rows, about
// 60 pages) and OrderLines (PK_OrderLines on OrderID, LineNumber, about
// 30,000 rows). gap names, where there is one, what SQL Server's plan has
// that the stand-in's does not model; the shapes then check the rest.
type planExpectation struct {
	stmts []stmtPlan
	gap   string
}

func one(shapes ...planShape) []stmtPlan { return []stmtPlan{{stmt: 0, shapes: shapes}} }

// Operator names and what each implements come from SQL Server's "Showplan
// Logical and Physical Operators Reference"
// (https://learn.microsoft.com/en-us/sql/relational-databases/showplan-logical-and-physical-operators-reference):
// Stream Aggregate needs input ordered by its groups (a Sort, or an ordered
// index scan or seek) and is the only row-mode operator that computes
// ROLLUP levels; Hash Match implements Aggregate, Flow Distinct, Union and
// every join kind including (Right) Semi/Anti Semi Join; Segment plus
// Sequence Project compute ROW_NUMBER, RANK, DENSE_RANK and NTILE ("a
// Sequence Project and generally two segments",
// https://learn.microsoft.com/en-us/previous-versions/sql/sql-server-2008/ms187041(v=sql.100));
// Window Spool with Stream Aggregate computes framed window aggregates (ROWS/
// RANGE, LAG/LEAD, FIRST_VALUE/LAST_VALUE); Top implements TOP and
// OFFSET/FETCH, and Sort's TopN Sort folds a TOP into the sort; Concatenation
// implements UNION ALL; Index Spool (the stack spool) + Table Spool +
// Concatenation + Nested Loops is how a recursive CTE is executed; Table
// Insert fills a heap, Clustered Index Insert/Update/Merge a table with a
// clustered index; Key Lookup is a Clustered Index Seek with the Lookup
// attribute (a bookmark lookup after a nonclustered Index Seek).
var (
	scanOrders     = "Clustered Index Scan@Orders.PK_Orders"
	scanCustomers  = "Clustered Index Scan@Customers.PK_Customers"
	scanProducts   = "Clustered Index Scan@Products.PK_Products"
	anyAggregate   = "Hash Match/Aggregate | Stream Aggregate/Aggregate"
	anyInnerJoin   = "*/Inner Join"
	anySemiJoin    = "*/Left Semi Join | */Right Semi Join"
	anyAntiSemi    = "*/Left Anti Semi Join | */Right Anti Semi Join"
	anyDistinct    = "Hash Match/Aggregate | Hash Match/Flow Distinct | Stream Aggregate/Aggregate | Sort/Distinct Sort"
	anyTop         = "Top | Sort/TopN Sort"
	noSeek         = []string{"Clustered Index Seek", "Index Seek", "Key Lookup"}
	recursiveSteps = []string{"Index Spool/Lazy Spool", "Table Spool/Lazy Spool", "Concatenation", "Constant Scan"}
)

// recursiveGap: the stand-in runs the recursive member once per level over
// the previous level's rows rather than once per stack-spool row.
const recursiveGap = "SQL Server reads the stack spool row by row through a Nested Loops (Inner Join) into the recursive member, under an Assert for MAXRECURSION; the stand-in's recursive member reads the Table Spool directly"

func needs(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

var everydayPlans = map[string]planExpectation{
	// WHERE Status = ... has no index: scan, then TOP with ORDER BY is a TopN Sort
	"top_filter_order": {stmts: one(planShape{need: []string{scanOrders, "Sort", anyTop}, never: noSeek})},
	// SUM(Amount) is not covered by IX_Orders_CustomerID: scan the clustered
	// index; HAVING is a Filter over the aggregate
	"group_having": {stmts: one(planShape{need: []string{scanOrders, anyAggregate, "Filter", "Sort"}, never: noSeek})},
	"join_group_by_region": {stmts: one(planShape{need: []string{scanOrders, scanCustomers, anyInnerJoin, anyAggregate, "Sort"},
		never: []string{"Key Lookup"}})},
	"cte_join": {stmts: one(planShape{need: []string{scanOrders, "Clustered Index Scan@Customers | Clustered Index Seek@Customers.PK_Customers",
		anyAggregate, anyInnerJoin, anyTop}})},
	"recursive_cte_numbers": {gap: recursiveGap, stmts: one(planShape{need: needs(recursiveSteps, "Stream Aggregate/Aggregate"), never: []string{"Hash Match", "Sort"}})},
	// the join on CAST(OrderDate AS date) cannot seek: Orders is scanned
	"recursive_cte_calendar": {gap: recursiveGap, stmts: one(planShape{need: needs(recursiveSteps, "*/Left Outer Join", scanOrders, anyAggregate, "Sort"),
		never: noSeek})},
	// UNION ALL concatenates; COUNT(*) reads the narrowest index of each table
	"union_all_counts": {stmts: one(planShape{need: []string{"Concatenation", "3*Stream Aggregate/Aggregate", scanCustomers, scanProducts,
		"Index Scan@Orders.IX_Orders_CustomerID"}, never: []string{"Hash Match", "Sort", "Clustered Index Scan@Orders"}})},
	// UNION: concatenate then remove duplicates, or a Hash Match / Merge Join (Union)
	"union_distinct": {stmts: one(
		planShape{need: []string{scanCustomers, scanProducts, "Concatenation", anyDistinct, "Sort"}},
		planShape{need: []string{scanCustomers, scanProducts, "Hash Match/Union", "Sort"}},
		planShape{need: []string{scanCustomers, scanProducts, "Merge Join/Union", "Sort"}})},
	// INTERSECT is a semi join with a distinct step; Status/Amount are not indexed
	"intersect": {stmts: one(planShape{need: []string{"2*" + scanOrders, anySemiJoin, anyDistinct, "Sort"}, never: needs(noSeek, anyAntiSemi)})},
	// EXCEPT is an anti semi join; CustomerID is Customers' key, so no distinct
	// step, and Orders' CustomerID is read from the narrow nonclustered index
	"except": {stmts: one(planShape{need: []string{scanCustomers, "Index Scan@Orders.IX_Orders_CustomerID", anyAntiSemi},
		never: []string{"Hash Match/Aggregate", "Stream Aggregate", "Sort/Distinct Sort", "Hash Match/Flow Distinct", scanOrders}})},
	// about 200 of 10,000 orders: past the tipping point for key lookups, so
	// a scan is as plausible as a seek with lookups
	"row_number_partition": {stmts: one(
		planShape{need: []string{scanOrders, "Segment", "Sequence Project/Compute Scalar", "Sort"}, never: []string{"Window Spool"}},
		planShape{need: []string{"Index Seek@Orders.IX_Orders_CustomerID", "Key Lookup@Orders.PK_Orders", "Segment", "Sequence Project/Compute Scalar", "Sort"},
			never: []string{"Window Spool"}})},
	"rank_dense_rank": {stmts: one(planShape{need: []string{scanProducts, "Segment", "2*Sequence Project/Compute Scalar", "Sort"},
		never: []string{"Window Spool"}})},
	"ntile": {gap: "SQL Server computes NTILE's partition row count with a Table Spool and Nested Loops; the stand-in counts inside Sequence Project",
		stmts: one(planShape{need: []string{"Clustered Index Seek@Customers.PK_Customers", "Segment", "Sequence Project/Compute Scalar"},
			never: []string{"Clustered Index Scan", "Window Spool"}})},
	// OrderID <= 30 seeks the clustered key; LAG/LEAD run as a one-row frame
	"lag_lead": {stmts: one(planShape{need: []string{"Clustered Index Seek@Orders.PK_Orders", "Segment", "Window Spool", "Stream Aggregate"},
		never: []string{"Clustered Index Scan", "Hash Match"}})},
	"first_last_value_distinct": {stmts: one(planShape{need: []string{scanOrders + " | Key Lookup@Orders.PK_Orders", "Segment", "Window Spool",
		"Stream Aggregate", "Sort", anyDistinct}})},
	"running_total_rows_frames": {stmts: one(planShape{need: []string{"Clustered Index Seek@Orders.PK_Orders", "Segment", "Window Spool", "Stream Aggregate"},
		never: []string{"Clustered Index Scan", "Hash Match"}})},
	"range_frame_peers": {stmts: one(planShape{need: []string{scanOrders + " | Key Lookup@Orders.PK_Orders", "Segment", "2*Window Spool",
		"Stream Aggregate", "Sort"}})},
	"offset_fetch": {stmts: one(planShape{need: []string{scanOrders, "Sort", "Top"}, never: noSeek})},
	// COUNT(*) by CustomerID is covered by IX_Orders_CustomerID, in its order
	"top_with_ties": {stmts: one(planShape{need: []string{"Index Scan@Orders.IX_Orders_CustomerID", anyAggregate, "Sort", "Top"},
		never: []string{"Clustered Index Scan", "Key Lookup"}})},
	// ROLLUP levels come from a Stream Aggregate over sorted input
	"rollup_with_grouping": {stmts: one(planShape{need: []string{scanOrders, scanCustomers, anyInnerJoin, "Sort", "Stream Aggregate/Aggregate"}})},
	"cube_on_expression": {gap: "SQL Server runs CUBE as several rollups (a spool read by Stream Aggregates joined by Concatenation); the stand-in computes every grouping set in one aggregate",
		stmts: one(planShape{need: []string{scanProducts, anyAggregate}, never: noSeek})},
	"grouping_sets_grouping_id": {gap: "as for CUBE: SQL Server concatenates one aggregate per rollup, the stand-in has one aggregate",
		stmts: one(planShape{need: []string{scanOrders, anyAggregate}, never: noSeek})},
	"case_iif_coalesce_nullif": {stmts: one(planShape{need: []string{"Clustered Index Seek@Orders.PK_Orders", "Compute Scalar"},
		never: []string{"Clustered Index Scan", "Sort"}})},
	"date_functions": {stmts: one(planShape{need: []string{"Clustered Index Seek@Orders.PK_Orders", "Compute Scalar"},
		never: []string{"Clustered Index Scan", "Sort"}})},
	// ORDER BY the clustered key: an ordered scan, no Sort
	"string_functions": {stmts: one(planShape{need: []string{scanCustomers, "Top", "Compute Scalar"}, never: []string{"Sort"}})},
	// STRING_AGG is computed by Stream Aggregate only; both tables seek their
	// clustered key on OrderID
	"string_agg_within_group": {stmts: one(planShape{need: []string{"Clustered Index Seek@Orders.PK_Orders", "Clustered Index Seek@OrderLines.PK_OrderLines",
		"Nested Loops/Inner Join | Merge Join/Inner Join", "Stream Aggregate/Aggregate"}, never: []string{"Hash Match", "Clustered Index Scan"}})},
	"conversions":   {stmts: one(planShape{need: []string{scanOrders, "Top", "Compute Scalar"}, never: []string{"Sort"}})},
	"derived_table": {stmts: one(planShape{need: []string{scanProducts, anyAggregate, "Filter", "Sort"}, never: noSeek})},
	// APPLY: Nested Loops, the inner side seeking IX_Orders_CustomerID with lookups
	"cross_apply_top_n": {stmts: one(planShape{need: []string{"Nested Loops/Inner Join", "Clustered Index Seek@Customers.PK_Customers",
		"Index Seek@Orders.IX_Orders_CustomerID", "Key Lookup@Orders.PK_Orders", anyTop}, never: []string{"Clustered Index Scan", "Hash Match"}})},
	// ORDER BY c.CustomerID: the Nested Loops keeps the seek's order, no Sort
	"outer_apply_aggregate": {stmts: one(planShape{need: []string{"Nested Loops/Left Outer Join", "Clustered Index Seek@Customers.PK_Customers",
		"Index Seek@Orders.IX_Orders_CustomerID", "Stream Aggregate/Aggregate"}, never: []string{"Clustered Index Scan", "Hash Match", "Sort"}})},
	// Amount > 3000 is not in IX_Orders_CustomerID: seeking it for 1,000
	// customers would look up every order; one scan of Orders into a hash or
	// merge semi join is cheaper
	"exists": {stmts: one(planShape{need: []string{scanCustomers, scanOrders, anySemiJoin, "Stream Aggregate/Aggregate"},
		never: needs(noSeek, anyAntiSemi)})},
	// OrderID <= 3000 seeks the leading key of PK_OrderLines
	"not_exists": {stmts: one(planShape{need: []string{scanProducts, "Clustered Index Seek@OrderLines.PK_OrderLines | Clustered Index Scan@OrderLines.PK_OrderLines",
		anyAntiSemi}, never: []string{"*/Left Semi Join", "*/Right Semi Join"}})},
	// IN over Customers' key: a semi join, or an inner join since the key is unique
	"in_subquery": {stmts: one(planShape{need: []string{scanCustomers, scanOrders, anySemiJoin + " | " + anyInnerJoin, "Stream Aggregate/Aggregate"},
		never: []string{"Key Lookup"}})},
	// ORDER BY the clustered key: Top takes the first 10 rows of the ordered
	// scan, so each subquery runs 10 times and nothing is sorted
	"scalar_subqueries": {stmts: one(planShape{need: []string{scanOrders, "Clustered Index Seek@OrderLines.PK_OrderLines", "Nested Loops",
		"2*Stream Aggregate/Aggregate", "Top"}, never: []string{"Sort"}})},
	// #big has a primary key: the insert is a Clustered Index Insert
	"temp_table": {stmts: []stmtPlan{
		{stmt: 0, shapes: []planShape{{need: []string{"Clustered Index Insert/Insert@#big", scanOrders, anyAggregate, "Filter"}}}},
		{stmt: 1, shapes: []planShape{{need: []string{"Clustered Index Scan@#big", "Stream Aggregate/Aggregate"}, never: []string{"Sort", "Hash Match"}}}},
	}},
	// SELECT INTO creates a heap: Table Insert, then a Table Scan of it
	"select_into_temp": {stmts: []stmtPlan{
		{stmt: 0, shapes: []planShape{{need: []string{"Table Insert/Insert@#counts", "Index Scan@Orders.IX_Orders_CustomerID", anyAggregate},
			never: []string{"Clustered Index Scan@Orders"}}}},
		{stmt: 1, shapes: []planShape{{need: []string{"Table Scan@#counts", "Clustered Index Scan@Customers.PK_Customers | Clustered Index Seek@Customers.PK_Customers",
			anyInnerJoin, anyTop}}}},
	}},
	"table_variable": {stmts: []stmtPlan{
		{stmt: 0, shapes: []planShape{{need: []string{"Clustered Index Insert/Insert@@t", scanCustomers, anyAggregate}}}},
		{stmt: 1, shapes: []planShape{{need: []string{"Clustered Index Scan@@t"}, never: []string{"Sort"}}}},
	}},
	// Status is in no nonclustered index: only the clustered index is updated
	"update_from_join": {stmts: []stmtPlan{
		{stmt: 0, shapes: []planShape{{need: []string{"Clustered Index Update/Update@Orders.PK_Orders", scanOrders, scanCustomers, anyInnerJoin},
			never: []string{"Index Update"}}}},
		{stmt: 1, shapes: []planShape{{need: []string{scanOrders, "Stream Aggregate/Aggregate"}, never: noSeek}}},
	}},
	// WHEN MATCHED and WHEN NOT MATCHED [BY TARGET] keep the unmatched source
	// rows only: an outer join preserving the source, never a Full Outer Join
	// (that needs WHEN NOT MATCHED BY SOURCE)
	"merge_upsert": {gap: "SQL Server joins the two source rows to Products with Nested Loops (Left Outer Join) over Clustered Index Seeks; the stand-in's MERGE scans Products into a Hash Match (Right Outer Join)",
		stmts: []stmtPlan{
			{stmt: 0, shapes: []planShape{{need: []string{"Clustered Index Merge/Merge@Products.PK_Products", "Constant Scan",
				"Hash Match/Right Outer Join | Nested Loops/Left Outer Join | Merge Join/Left Outer Join"}, never: []string{"*/Full Outer Join"}}}},
			{stmt: 1, shapes: []planShape{{need: []string{"Clustered Index Seek@Products.PK_Products"}, never: []string{"Clustered Index Scan"}}}},
		}},
	"index_hint_range_with_lookup": {stmts: one(planShape{need: []string{"Index Seek@Orders.IX_Orders_CustomerID", "Key Lookup@Orders.PK_Orders",
		"Nested Loops/Inner Join", "Sort"}, never: []string{"Clustered Index Scan"}})},
	"all_quantifier_and_like": {gap: "SQL Server plans > ALL as Nested Loops (Left Anti Semi Join) on the negated comparison; the stand-in uses a Left Semi Join and a Filter",
		stmts: one(planShape{need: []string{"2*" + scanProducts, "Nested Loops", "Stream Aggregate/Aggregate"}, never: []string{"Hash Match/Aggregate"}})},
	// LEFT JOIN ... IS NULL: an outer join and a Filter (or an anti semi join)
	"left_join_is_null": {stmts: one(
		planShape{need: []string{scanProducts, "Clustered Index Seek@OrderLines.PK_OrderLines", "*/Left Outer Join | */Right Outer Join", "Filter"}},
		planShape{need: []string{scanProducts, "Clustered Index Seek@OrderLines.PK_OrderLines", anyAntiSemi}})},
}

// opTerm is one parsed alternative of a plan term.
type opTerm struct{ physical, logical, table, index string }

func parseTerm(s string) (n int, alts []opTerm) {
	n = 1
	if i := strings.Index(s, "*"); i > 0 {
		if v, err := strconv.Atoi(s[:i]); err == nil {
			n, s = v, s[i+1:]
		}
	}
	for _, a := range strings.Split(s, " | ") {
		var t opTerm
		if at := strings.Index(a, "@"); at >= 0 {
			obj := a[at+1:]
			a = a[:at]
			t.table, t.index, _ = strings.Cut(obj, ".")
		}
		t.physical, t.logical, _ = strings.Cut(strings.TrimSpace(a), "/")
		alts = append(alts, t)
	}
	return n, alts
}

func (t opTerm) matches(op *showplan.Operator) bool {
	if t.physical != "*" && t.physical != op.DisplayName {
		return false
	}
	if t.logical != "" && t.logical != op.LogicalOp {
		return false
	}
	if t.table != "" && (op.Object == nil || op.Object.Table != t.table) {
		return false
	}
	return t.index == "" || op.Object != nil && op.Object.Index == t.index
}

// countMatches counts the operators matching any alternative of term.
func countMatches(ops []*showplan.Operator, term string) (want, got int) {
	want, alts := parseTerm(term)
	for _, op := range ops {
		for _, a := range alts {
			if a.matches(op) {
				got++
				break
			}
		}
	}
	return want, got
}

// shapeMismatch says why ops do not have shape, or "" when they do.
func shapeMismatch(ops []*showplan.Operator, shape planShape) string {
	var why []string
	for _, term := range shape.need {
		if want, got := countMatches(ops, term); got < want {
			why = append(why, fmt.Sprintf("needs %d× %q, has %d", want, term, got))
		}
	}
	for _, term := range shape.never {
		if _, got := countMatches(ops, term); got > 0 {
			why = append(why, fmt.Sprintf("must not have %q", term))
		}
	}
	return strings.Join(why, "; ")
}

// describeOps lists a plan's operators as "Physical (Logical) [Table.Index]"
// in plan order, indented by depth.
func describeOps(ops []*showplan.Operator) string {
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "\n  %s%s (%s)", strings.Repeat("  ", op.Depth), op.DisplayName, op.LogicalOp)
		if op.Object != nil {
			fmt.Fprintf(&b, " [%s.%s]", op.Object.Table, op.Object.Index)
		}
	}
	return b.String()
}

// actualPlans runs q with SET STATISTICS XML ON and returns the statements
// of its actual plans that have operators, in execution order.
func actualPlans(ctx context.Context, conn *sql.Conn, q string) ([]*showplan.Statement, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var stmts []*showplan.Statement
	for {
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			vals, err := scanRow(rows, len(cols))
			if err != nil {
				return nil, err
			}
			if len(cols) != 1 || cols[0] != "Microsoft SQL Server 2005 XML Showplan" {
				continue
			}
			text, _ := vals[0].(string)
			p, err := showplan.ParseBytes([]byte(text))
			if err != nil {
				return nil, fmt.Errorf("parse plan %d: %w", len(stmts), err)
			}
			for _, st := range p.Statements {
				if len(st.Operators) > 0 {
					stmts = append(stmts, st)
				}
			}
		}
		if !rows.NextResultSet() {
			break
		}
	}
	return stmts, rows.Err()
}

// TestEverydayPlanOperators checks that each everyday query's actual plan
// uses operators SQL Server would plausibly choose for it on the demo
// schema (everydayPlans), not merely some valid plan.
func TestEverydayPlanOperators(t *testing.T) {
	_, db := startStandin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn := statisticsXMLConn(ctx, t, db)
	seen := map[string]bool{}
	for _, q := range everydayQueries {
		if q.wantErr != 0 {
			continue
		}
		seen[q.name] = true
		t.Run(q.name, func(t *testing.T) {
			exp, ok := everydayPlans[q.name]
			if !ok {
				t.Fatalf("query %s has no plan expectation in everydayPlans", q.name)
			}
			if exp.gap != "" {
				t.Logf("known gap: %s", exp.gap)
			}
			stmts, err := actualPlans(ctx, conn, q.sql)
			if err != nil {
				t.Fatalf("query %s: %v", q.name, err)
			}
			for _, sp := range exp.stmts {
				if sp.stmt >= len(stmts) {
					t.Fatalf("query %s: statement %d has no plan (%d plans)", q.name, sp.stmt, len(stmts))
				}
				ops := stmts[sp.stmt].Operators
				var whys []string
				for i, shape := range sp.shapes {
					why := shapeMismatch(ops, shape)
					if why == "" {
						whys = nil
						break
					}
					whys = append(whys, fmt.Sprintf("shape %d: %s", i+1, why))
				}
				if whys != nil {
					t.Errorf("query %s, statement %d: no plausible plan shape matches:\n  %s\nplan operators:%s",
						q.name, sp.stmt, strings.Join(whys, "\n  "), describeOps(ops))
				}
			}
		})
	}
	for name := range everydayPlans {
		if !seen[name] {
			t.Errorf("everydayPlans names %s, which is not an everyday query", name)
		}
	}
}

// TestPlanShapeMatching checks the matcher itself on a hand-built plan: a
// shape passes only with every needed operator present in the needed number
// and no forbidden one.
func TestPlanShapeMatching(t *testing.T) {
	seek := &showplan.Operator{DisplayName: "Clustered Index Seek", PhysicalOp: "Clustered Index Seek", LogicalOp: "Clustered Index Seek",
		Object: &showplan.ObjectRef{Table: "Orders", Index: "PK_Orders"}}
	lookup := &showplan.Operator{DisplayName: "Key Lookup", PhysicalOp: "Clustered Index Seek", LogicalOp: "Clustered Index Seek", IsKeyLookup: true,
		Object: &showplan.ObjectRef{Table: "Orders", Index: "PK_Orders"}}
	agg := &showplan.Operator{DisplayName: "Stream Aggregate", PhysicalOp: "Stream Aggregate", LogicalOp: "Aggregate"}
	ops := []*showplan.Operator{agg, seek, lookup}
	for _, c := range []struct {
		shape planShape
		ok    bool
	}{
		{planShape{need: []string{"Clustered Index Seek@Orders.PK_Orders", "Stream Aggregate/Aggregate"}}, true},
		{planShape{need: []string{"2*Clustered Index Seek"}}, false}, // a key lookup is not a seek
		{planShape{need: []string{"Key Lookup@Orders"}}, true},
		{planShape{need: []string{"Hash Match/Aggregate | Stream Aggregate/Aggregate"}}, true},
		{planShape{need: []string{"Stream Aggregate/Flow Distinct"}}, false},
		{planShape{need: []string{"Clustered Index Seek@Orders.IX_Orders_CustomerID"}}, false},
		{planShape{need: []string{"*/Aggregate"}, never: []string{"Clustered Index Scan"}}, true},
		{planShape{need: []string{"*/Aggregate"}, never: []string{"Key Lookup"}}, false},
	} {
		if got := shapeMismatch(ops, c.shape) == ""; got != c.ok {
			t.Errorf("shape %+v: matched %v, want %v (%s)", c.shape, got, c.ok, shapeMismatch(ops, c.shape))
		}
	}
}
