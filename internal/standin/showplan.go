package standin

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Actual execution plans in SQL Server's showplan XML (namespace
// http://schemas.microsoft.com/sqlserver/2004/07/showplan, Version 1.6 as
// SQL Server 2017 writes it; the element order follows showplanxml.xsd,
// which the tests validate every plan against). Each RelOp carries the
// operator's estimates and its actual per-thread counters.

type xmlBuilder struct {
	b     strings.Builder
	stack []string
	exprs map[*engine.Relation]map[int]string // names of computed columns
	next  int
	dop   int
}

func newXMLBuilder() *xmlBuilder {
	return &xmlBuilder{exprs: map[*engine.Relation]map[int]string{}, next: 1001}
}

func (b *xmlBuilder) attrs(kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b.b, ` %s="%s"`, kv[i], xmlEscape(kv[i+1]))
	}
}

func (b *xmlBuilder) open(name string, kv ...string) {
	b.b.WriteString("<" + name)
	b.attrs(kv)
	b.b.WriteString(">")
	b.stack = append(b.stack, name)
}

func (b *xmlBuilder) empty(name string, kv ...string) {
	b.b.WriteString("<" + name)
	b.attrs(kv)
	b.b.WriteString("/>")
}

func (b *xmlBuilder) close() {
	name := b.stack[len(b.stack)-1]
	b.stack = b.stack[:len(b.stack)-1]
	b.b.WriteString("</" + name + ">")
}

func ftoa(f float64) string {
	if f < 0 {
		f = 0
	}
	return strconv.FormatFloat(f, 'g', 7, 64)
}

// colName is the showplan name of column i of r: its own, or ExprNNNN.
func (b *xmlBuilder) colName(r *engine.Relation, i int) string {
	c := r.Cols[i]
	if c.Name != "" && c.Base != nil {
		return c.Name
	}
	m := b.exprs[r]
	if m == nil {
		m = map[int]string{}
		b.exprs[r] = m
	}
	if n, ok := m[i]; ok {
		return n
	}
	name := c.Name
	if name == "" || c.Base == nil {
		name = fmt.Sprintf("Expr%d", b.next)
		b.next++
	}
	m[i] = name
	return name
}

// ColRef writes a ColumnReference for column i of r.
func (b *xmlBuilder) colRef(r *engine.Relation, i int) {
	c := r.Cols[i]
	name := b.colName(r, i)
	if c.Base != nil && name == c.Name {
		kv := []string{"Database", "[" + c.Base.Db + "]", "Schema", "[" + c.Base.Schema + "]", "Table", "[" + c.Base.Table + "]"}
		if c.Base.Alias != "" && !strings.EqualFold(c.Base.Alias, c.Base.Table) {
			kv = append(kv, "Alias", "["+c.Base.Alias+"]")
		}
		b.empty("ColumnReference", append(kv, "Column", name)...)
		return
	}
	b.empty("ColumnReference", "Column", name)
}

// exprRef writes a ColumnReference for an expression that is a column of r,
// or a computed one.
func (b *xmlBuilder) exprRef(e sqlfront.Expr, r *engine.Relation) {
	if r != nil {
		if i, ok := r.Subst[e]; ok {
			b.colRef(r, i)
			return
		}
		if c, ok := e.(*sqlfront.ColRef); ok {
			if i, _ := r.LookupRef(c); i >= 0 {
				b.colRef(r, i)
				return
			}
		}
	}
	if c, ok := e.(*sqlfront.ColRef); ok {
		b.empty("ColumnReference", "Column", c.Parts[len(c.Parts)-1])
		return
	}
	b.empty("ColumnReference", "Column", fmt.Sprintf("Expr%d", b.next))
	b.next++
}

func (b *xmlBuilder) outputList(r *engine.Relation) {
	b.open("OutputList")
	for i, c := range r.Cols {
		if c.Hidden && c.OrderExpr == nil {
			continue
		}
		b.colRef(r, i)
	}
	b.close()
}

func (b *xmlBuilder) definedValues(r *engine.Relation) {
	b.empty("DefinedValues")
}

func (b *xmlBuilder) object(ix *engine.Index, alias string) {
	kv := []string{"Database", "[" + ix.Tbl.DB.Name + "]", "Schema", "[" + ix.Tbl.Schema + "]", "Table", "[" + ix.Tbl.Name + "]"}
	if ix.Name != "" {
		kv = append(kv, "Index", "["+ix.Name+"]")
	}
	if alias != "" && !strings.EqualFold(alias, ix.Tbl.Name) {
		kv = append(kv, "Alias", "["+alias+"]")
	}
	kind := "Heap"
	switch {
	case ix.Name == "":
	case ix.ID == 1:
		kind = "Clustered"
	default:
		kind = "NonClustered"
	}
	b.empty("Object", append(kv, "IndexKind", kind, "Storage", "RowStore")...)
}

func (b *xmlBuilder) predicate(elem string, e sqlfront.Expr, r *engine.Relation) {
	b.open(elem)
	b.scalar(e, r)
	b.close()
}

// scalar writes a ScalarOperator for e evaluated over r.
// definedScalars writes DefinedValues for n computed columns: output column
// first+i of out, defined by value(i) over the input relation in.
func (b *xmlBuilder) definedScalars(out *engine.Relation, first, n int, value func(i int) sqlfront.Expr, in *engine.Relation) {
	b.open("DefinedValues")
	for i := range n {
		b.open("DefinedValue")
		b.colRef(out, first+i)
		b.scalar(value(i), in)
		b.close()
	}
	b.close()
}

func (b *xmlBuilder) scalar(e sqlfront.Expr, r *engine.Relation) {
	b.open("ScalarOperator", "ScalarString", scalarString(e))
	b.scalarBody(e, r)
	b.close()
}

func compareOp(op string) string {
	return map[string]string{"=": "EQ", "<>": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}[op]
}

func (b *xmlBuilder) scalarBody(e sqlfront.Expr, r *engine.Relation) {
	if r != nil {
		if i, ok := r.Subst[e]; ok {
			b.open("Identifier")
			b.colRef(r, i)
			b.close()
			return
		}
	}
	switch x := e.(type) {
	case *sqlfront.ColRef:
		b.open("Identifier")
		b.exprRef(x, r)
		b.close()
	case *sqlfront.VarRef:
		b.open("Identifier")
		b.empty("ColumnReference", "Column", x.Name)
		b.close()
	case *sqlfront.Literal:
		b.empty("Const", "ConstValue", constString(x.V))
	case *sqlfront.BinaryExpr:
		switch x.Op {
		case "AND", "OR":
			b.open("Logical", "Operation", x.Op)
			b.scalar(x.L, r)
			b.scalar(x.R, r)
			b.close()
		case "=", "<>", "<", "<=", ">", ">=":
			b.open("Compare", "CompareOp", compareOp(x.Op))
			b.scalar(x.L, r)
			b.scalar(x.R, r)
			b.close()
		default:
			op := map[string]string{"+": "ADD", "-": "SUB", "*": "MULT", "/": "DIV", "%": "MOD", "&": "BIT_AND", "|": "BIT_OR", "^": "BIT_XOR"}[x.Op]
			if op == "" {
				op = "ADD"
			}
			b.open("Arithmetic", "Operation", op)
			b.scalar(x.L, r)
			b.scalar(x.R, r)
			b.close()
		}
	case *sqlfront.UnaryExpr:
		switch x.Op {
		case "NOT":
			b.open("Logical", "Operation", "NOT")
		case "~":
			b.open("Arithmetic", "Operation", "BIT_NOT")
		default:
			b.open("Arithmetic", "Operation", "MINUS")
		}
		b.scalar(x.E, r)
		b.close()
	case *sqlfront.IsNullExpr:
		op := "IS NULL"
		if x.Not {
			op = "IS NOT NULL"
		}
		b.open("Compare", "CompareOp", op)
		b.scalar(x.E, r)
		b.close()
	case *sqlfront.CastExpr:
		b.open("Convert", "DataType", x.T.String(), "Style", "0", "Implicit", "false")
		b.scalar(x.E, r)
		b.close()
	case *sqlfront.CaseExpr:
		b.caseBody(x, 0, r)
	case *sqlfront.BetweenExpr:
		b.open("Logical", "Operation", "AND")
		b.scalar(&sqlfront.BinaryExpr{Op: ">=", L: x.E, R: x.Lo}, r)
		b.scalar(&sqlfront.BinaryExpr{Op: "<=", L: x.E, R: x.Hi}, r)
		b.close()
	case *sqlfront.InExpr:
		if x.Sub == nil && len(x.List) > 0 {
			b.open("Logical", "Operation", "OR")
			for _, v := range x.List {
				b.scalar(&sqlfront.BinaryExpr{Op: "=", L: x.E, R: v}, r)
			}
			if len(x.List) == 1 {
				b.scalar(&sqlfront.Literal{V: false}, r)
			}
			b.close()
			return
		}
		b.intrinsic("in", nil, r)
	case *sqlfront.LikeExpr:
		b.intrinsic("like", []sqlfront.Expr{x.E, x.Pattern}, r)
	case *sqlfront.FuncCall:
		if engine.IsAggregateName(x.Name) {
			agg := x.Name
			if x.Star {
				agg = "countstar"
			}
			b.open("Aggregate", "AggType", agg, "Distinct", fmt.Sprint(x.Distinct))
			for _, a := range x.Args {
				b.scalar(a, r)
			}
			b.close()
			return
		}
		b.intrinsic(strings.ToLower(x.Name), x.Args, r)
	case *sqlfront.WindowExpr:
		b.intrinsic(strings.ToLower(x.F.Name), x.F.Args, r)
	default:
		b.intrinsic(strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", e), "*standin.")), nil, r)
	}
}

func (b *xmlBuilder) intrinsic(name string, args []sqlfront.Expr, r *engine.Relation) {
	b.open("Intrinsic", "FunctionName", name)
	for _, a := range args {
		b.scalar(a, r)
	}
	b.close()
}

func (b *xmlBuilder) caseBody(c *sqlfront.CaseExpr, i int, r *engine.Relation) {
	if i >= len(c.Whens) {
		if c.Else != nil {
			b.scalarBody(c.Else, r)
		} else {
			b.empty("Const", "ConstValue", "NULL")
		}
		return
	}
	w := c.Whens[i]
	cond := w.Cond
	if c.Operand != nil {
		cond = &sqlfront.BinaryExpr{Op: "=", L: c.Operand, R: w.Cond}
	}
	b.open("IF")
	b.predicate("Condition", cond, r)
	b.predicate("Then", w.Result, r)
	b.open("Else")
	b.open("ScalarOperator")
	b.caseBody(c, i+1, r)
	b.close()
	b.close()
	b.close()
}

func constString(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "N'" + strings.ReplaceAll(x, "'", "''") + "'"
	case bool:
		return map[bool]string{true: "(1)", false: "(0)"}[x]
	case int64, float64:
		return "(" + engine.ValueString(v) + ")"
	}
	return "'" + engine.ValueString(v) + "'"
}

// scalarString renders an expression as T-SQL text (ScalarString).
func scalarString(e sqlfront.Expr) string {
	switch x := e.(type) {
	case nil:
		return ""
	case *sqlfront.ColRef:
		parts := make([]string, len(x.Parts))
		for i, p := range x.Parts {
			parts[i] = "[" + p + "]"
		}
		return strings.Join(parts, ".")
	case *sqlfront.VarRef:
		return x.Name
	case *sqlfront.Literal:
		return constString(x.V)
	case *sqlfront.BinaryExpr:
		return scalarString(x.L) + " " + x.Op + " " + scalarString(x.R)
	case *sqlfront.UnaryExpr:
		if x.Op == "NOT" {
			return "NOT " + scalarString(x.E)
		}
		return x.Op + scalarString(x.E)
	case *sqlfront.IsNullExpr:
		if x.Not {
			return scalarString(x.E) + " IS NOT NULL"
		}
		return scalarString(x.E) + " IS NULL"
	case *sqlfront.CastExpr:
		return "CONVERT(" + x.T.String() + "," + scalarString(x.E) + ",0)"
	case *sqlfront.FuncCall:
		var args []string
		for _, a := range x.Args {
			args = append(args, scalarString(a))
		}
		if x.Star {
			args = []string{"*"}
		}
		return strings.ToLower(x.Name) + "(" + strings.Join(args, ",") + ")"
	case *sqlfront.BetweenExpr:
		return scalarString(x.E) + ">=" + scalarString(x.Lo) + " AND " + scalarString(x.E) + "<=" + scalarString(x.Hi)
	case *sqlfront.LikeExpr:
		return scalarString(x.E) + " like " + scalarString(x.Pattern)
	case *sqlfront.InExpr:
		var vals []string
		for _, v := range x.List {
			vals = append(vals, scalarString(v))
		}
		return scalarString(x.E) + " IN (" + strings.Join(vals, ",") + ")"
	case *sqlfront.CaseExpr:
		return "CASE … END"
	case *sqlfront.WindowExpr:
		return scalarString(x.F) + " OVER (…)"
	case *sqlfront.SubqueryExpr:
		return "(subquery)"
	case *sqlfront.ExistsExpr:
		return "EXISTS (subquery)"
	case *sqlfront.PseudoCol:
		return x.Name
	}
	return ""
}

// relop writes one operator and, through its details, its children.
func (b *xmlBuilder) relop(n *planNode) {
	for n.hidden && len(n.children) == 1 {
		n = n.children[0]
	}
	tot := n.total()
	_ = tot
	kv := []string{"NodeId", strconv.Itoa(n.id), "PhysicalOp", n.physical, "LogicalOp", n.logical,
		"EstimateRows", ftoa(n.estRows), "EstimateIO", ftoa(n.estIO), "EstimateCPU", ftoa(n.estCPU),
		"AvgRowSize", strconv.Itoa(max(n.rowSize, rowSizeOf(n.schema))), "EstimatedTotalSubtreeCost", ftoa(n.subtreeCost),
		"Parallel", fmt.Sprint(n.parallel), "EstimateRebinds", ftoa(n.estExecs - 1), "EstimateRewinds", "0", "EstimatedExecutionMode", "Row"}
	if n.ix != nil {
		kv = append(kv, "TableCardinality", strconv.Itoa(len(n.ix.Tbl.Rows)))
		if n.estRowsRead > 0 {
			kv = append(kv, "EstimatedRowsRead", ftoa(n.estRowsRead))
		}
	}
	b.open("RelOp", kv...)
	b.outputList(n.schema)
	b.warnings(n)
	b.runtime(n)
	if n.details != nil {
		n.details(b)
	} else {
		b.genericOperator(n)
	}
	b.close()
}

func (b *xmlBuilder) children(n *planNode) {
	for _, c := range n.children {
		b.relop(c)
	}
}

// genericOperator writes the operator element of nodes without their own.
func (b *xmlBuilder) genericOperator(n *planNode) {
	switch n.physical {
	case "Constant Scan":
		b.empty("ConstantScan")
	case "Table-valued function":
		b.empty("TableValuedFunction")
	case "Table Spool", "Index Spool":
		kv := []string{}
		if n.stack || n.primary != nil {
			kv = append(kv, "Stack", "true")
		}
		if n.primary != nil && n.primary.spool != nil {
			kv = append(kv, "PrimaryNodeId", strconv.Itoa(n.primary.spool.id))
		}
		if len(n.children) == 0 {
			b.empty("Spool", kv...)
			return
		}
		b.open("Spool", kv...)
		b.children(n)
		b.close()
	default:
		b.open("ComputeScalar")
		b.empty("DefinedValues")
		b.children(n)
		b.close()
	}
}

func (b *xmlBuilder) warnings(n *planNode) {
	if n.spillPages == 0 && n.exchangeSpill == 0 {
		return
	}
	b.open("Warnings")
	if n.spillPages > 0 {
		b.empty("SpillToTempDb", "SpillLevel", strconv.Itoa(max(n.spillLevel, 1)), "SpilledThreadCount", strconv.Itoa(max(n.spillThreads, 1)))
		detail := "SortSpillDetails"
		if n.spillKind == "hash" {
			detail = "HashSpillDetails"
		}
		b.empty(detail, "GrantedMemoryKb", strconv.FormatInt(n.grantKB, 10), "UsedMemoryKb", strconv.FormatInt(n.usedKB, 10),
			"WritesToTempDb", strconv.FormatInt(n.spillPages, 10), "ReadsFromTempDb", strconv.FormatInt(n.spillPages, 10))
	}
	if n.exchangeSpill > 0 {
		b.empty("ExchangeSpillDetails", "WritesToTempDb", strconv.FormatInt(n.exchangeSpill, 10))
	}
	b.close()
}

// runtime writes RunTimeInformation: one RunTimeCountersPerThread per
// thread that ran the operator.
func (b *xmlBuilder) runtime(n *planNode) {
	var threads []int
	for t := range n.threads {
		threads = append(threads, t)
	}
	if n.parallel && b.dop > 1 {
		// every worker thread of a parallel branch reports, idle or not
		have := map[int]bool{}
		for _, t := range threads {
			have[t] = true
		}
		for t := 1; t <= b.dop; t++ {
			if !have[t] {
				threads = append(threads, t)
			}
		}
	}
	sort.Ints(threads)
	if len(threads) == 0 {
		threads = []int{0}
	}
	b.open("RunTimeInformation")
	for _, t := range threads {
		// the thread's active time, its inputs' included (row mode), as
		// query_thread_profile reports it (optiming.go)
		elapsed := n.activeTime(t).Milliseconds()
		c := n.counters(t)
		kv := []string{"Thread", strconv.Itoa(t), "ActualRows", strconv.FormatInt(c.rows, 10)}
		if n.ix != nil {
			kv = append(kv, "ActualRowsRead", strconv.FormatInt(c.rowsRead, 10))
		}
		if c.rebinds > 0 || c.rewinds > 0 {
			kv = append(kv, "ActualRebinds", strconv.FormatInt(c.rebinds, 10), "ActualRewinds", strconv.FormatInt(c.rewinds, 10))
		}
		kv = append(kv, "Batches", "0", "ActualEndOfScans", strconv.FormatInt(c.endOfScans, 10), "ActualExecutions", strconv.FormatInt(c.executions, 10),
			"ActualExecutionMode", "Row", "ActualElapsedms", strconv.FormatInt(elapsed, 10), "ActualCPUms", strconv.FormatInt(elapsed*6/10, 10))
		if n.ix != nil {
			kv = append(kv, "ActualScans", strconv.FormatInt(c.scans, 10), "ActualLogicalReads", strconv.FormatInt(c.logical, 10),
				"ActualPhysicalReads", strconv.FormatInt(c.physical, 10), "ActualReadAheads", strconv.FormatInt(c.readAheads, 10),
				"ActualLobLogicalReads", "0", "ActualLobPhysicalReads", "0", "ActualLobReadAheads", "0")
		}
		if n.memory && n.grantKB > 0 {
			kv = append(kv, "InputMemoryGrant", strconv.FormatInt(n.grantKB, 10), "OutputMemoryGrant", strconv.FormatInt(n.grantKB, 10), "UsedMemoryGrant", strconv.FormatInt(n.usedKB, 10))
		}
		b.empty("RunTimeCountersPerThread", kv...)
	}
	b.close()
}

// Operator elements.

func (f *filterIter) showplan(b *xmlBuilder) {
	b.open("Filter", "StartupExpression", "false")
	b.children(f.n)
	b.predicate("Predicate", f.pred, f.in.node().schema)
	b.close()
}

func (c *projectIter) showplan(b *xmlBuilder) {
	src := c.in.node().schema
	b.open("ComputeScalar")
	b.open("DefinedValues")
	for i, e := range c.exprs {
		if _, plain := e.(*sqlfront.ColRef); plain {
			continue
		}
		if _, ok := src.Subst[e]; ok {
			continue
		}
		b.open("DefinedValue")
		b.colRef(c.n.schema, i)
		b.scalar(e, src)
		b.close()
	}
	b.close()
	b.children(c.n)
	b.close()
}

func (j *nlIter) showplan(b *xmlBuilder) {
	b.open("NestedLoops", "Optimized", "false")
	if j.pred != nil {
		b.predicate("Predicate", j.pred, j.schema)
	}
	if len(j.n.outerRefs) > 0 {
		b.open("OuterReferences")
		for _, c := range j.n.outerRefs {
			b.exprRef(c, j.outer.node().schema)
		}
		b.close()
	}
	if j.mode != nlJoin {
		b.open("ProbeColumn")
		b.colRef(j.schema, len(j.schema.Cols)-1)
		b.close()
	}
	b.children(j.n)
	b.close()
}

func (h *hashJoinIter) showplan(b *xmlBuilder) {
	b.open("Hash")
	b.empty("DefinedValues")
	b.columnList("HashKeysBuild", h.buildKeys, h.build.node().schema)
	b.columnList("HashKeysProbe", h.probeKeys, h.probe.node().schema)
	if h.residual != nil {
		b.predicate("ProbeResidual", h.residual, h.schema)
	}
	b.children(h.n)
	b.close()
}

func (m *mergeJoinIter) showplan(b *xmlBuilder) {
	b.open("Merge", "ManyToMany", "false")
	b.columnList("InnerSideJoinColumns", m.rk, m.right.node().schema)
	b.columnList("OuterSideJoinColumns", m.lk, m.left.node().schema)
	if m.residual != nil {
		b.predicate("Residual", m.residual, m.schema)
	}
	b.children(m.n)
	b.close()
}

// columnList writes an element of column references for exprs over r.
func (b *xmlBuilder) columnList(elem string, exprs []sqlfront.Expr, r *engine.Relation) {
	b.open(elem)
	for _, e := range exprs {
		b.exprRef(e, r)
	}
	b.close()
}

func (b *xmlBuilder) orderBy(r *engine.Relation, keys []sortKey) {
	b.open("OrderBy")
	for _, k := range keys {
		b.open("OrderByColumn", "Ascending", fmt.Sprint(!k.desc))
		b.colRef(r, k.col)
		b.close()
	}
	b.close()
}

func (s *sortIter) showplan(b *xmlBuilder) {
	b.open("Sort", "Distinct", fmt.Sprint(s.distinct))
	b.orderBy(s.n.schema, s.keys)
	b.children(s.n)
	b.close()
}

func (t *topIter) showplan(b *xmlBuilder) {
	kv := []string{"RowCount", "false", "IsPercent", fmt.Sprint(t.percent), "WithTies", fmt.Sprint(t.ties)}
	b.open("Top", kv...)
	if t.ties {
		b.open("TieColumns")
		for _, k := range t.keys {
			b.colRef(t.n.schema, k.col)
		}
		b.close()
	}
	if t.offset != nil {
		b.predicate("OffsetExpression", t.offset, nil)
	}
	if t.count != nil {
		b.predicate("TopExpression", t.count, nil)
	} else if t.fetch != nil {
		b.predicate("TopExpression", t.fetch, nil)
	}
	b.children(t.n)
	b.close()
}

func (e *exchangeIter) showplan(b *xmlBuilder) {
	b.open("Parallelism")
	if len(e.keys) > 0 {
		b.open("PartitionColumns")
		for _, k := range e.keys {
			b.colRef(e.in.node().schema, k)
		}
		b.close()
	}
	if len(e.order) > 0 {
		b.orderBy(e.in.node().schema, e.order)
	}
	b.children(e.n)
	b.close()
}

func (a *aggIter) showplan(b *xmlBuilder) {
	src := a.in.node().schema
	stream := a.n.physical == "Stream Aggregate"
	if stream {
		b.open("StreamAggregate")
	} else {
		b.open("Hash")
	}
	b.definedScalars(a.schema, len(a.groups), len(a.aggs), func(i int) sqlfront.Expr { return a.aggs[i].f }, src)
	if len(a.groups) > 0 {
		if stream {
			b.open("GroupBy")
		} else {
			b.open("HashKeysBuild")
		}
		for _, g := range a.groups {
			b.exprRef(g, src)
		}
		b.close()
	}
	if stream && a.sets != nil && len(a.groups) > 0 {
		b.open("RollupInfo", "HighestLevel", strconv.Itoa(len(a.groups)))
		for l := 0; l <= len(a.groups); l++ {
			b.empty("RollupLevel", "Level", strconv.Itoa(l))
		}
		b.close()
	}
	b.children(a.n)
	b.close()
}

func (d *distinctIter) showplan(b *xmlBuilder) {
	b.open("Hash")
	b.empty("DefinedValues")
	b.open("HashKeysBuild")
	for i := 0; i < d.width; i++ {
		b.colRef(d.in.node().schema, i)
	}
	b.close()
	b.children(d.n)
	b.close()
}

func (c *concatIter) showplan(b *xmlBuilder) {
	b.open("Concat")
	b.open("DefinedValues")
	for i := range c.schema.Cols {
		b.open("DefinedValue")
		b.colRef(c.schema, i)
		for _, in := range c.ins {
			b.colRef(in.node().schema, i)
		}
		b.close()
	}
	b.close()
	b.children(c.n)
	b.close()
}

// partShowplan renders one of the nodes of a window operator.
func (w *windowIter) partShowplan(n *planNode) func(*xmlBuilder) {
	return func(b *xmlBuilder) {
		src := w.in.node().schema
		switch n.physical {
		case "Sequence Project":
			b.open("SequenceProject")
			b.definedScalars(w.schema, len(src.Cols), len(w.funcs), func(i int) sqlfront.Expr { return w.funcs[i] }, src)
		case "Segment":
			b.open("Segment")
			b.open("GroupBy")
			for _, e := range w.spec.PartitionBy {
				b.exprRef(e, src)
			}
			b.close()
			b.open("SegmentColumn")
			b.empty("ColumnReference", "Column", fmt.Sprintf("Segment%d", 1000+n.id))
			b.close()
		case "Window Spool":
			b.open("WindowSpool")
		case "Stream Aggregate":
			b.open("StreamAggregate")
			b.definedScalars(w.schema, len(src.Cols), len(w.funcs), func(i int) sqlfront.Expr { return w.funcs[i].F }, src)
		}
		b.children(n)
		b.close()
	}
}

func (w *windowIter) sortShowplan(b *xmlBuilder) {
	src := w.in.node().schema
	b.open("Sort", "Distinct", "false")
	b.open("OrderBy")
	n := 0
	for _, e := range w.spec.PartitionBy {
		b.open("OrderByColumn", "Ascending", "true")
		b.exprRef(e, src)
		b.close()
		n++
	}
	for _, o := range w.spec.OrderBy {
		b.open("OrderByColumn", "Ascending", fmt.Sprint(!o.Desc))
		b.exprRef(o.Expr, src)
		b.close()
		n++
	}
	b.close()
	b.children(w.sortN)
	b.close()
}

func (c *recursiveIter) showplan(b *xmlBuilder) {
	b.open("Spool", "Stack", "true")
	b.children(c.n)
	b.close()
}

func (c *recursiveIter) concatShowplan(b *xmlBuilder) {
	b.open("Concat")
	b.empty("DefinedValues")
	b.children(c.concat)
	b.close()
}

func (t *tvfIter) showplan(b *xmlBuilder) {
	b.empty("ConstantScan")
}

// seekPredicates writes a seek's ranges on the leading key.
func (b *xmlBuilder) seekPredicates(s *scanIter) {
	b.open("SeekPredicates")
	col := -1
	for i, c := range s.colMap {
		if c == s.seek.col {
			col = i
		}
	}
	for _, r := range s.seek.ranges {
		b.open("SeekPredicateNew")
		b.open("SeekKeys")
		keyCol := func() {
			b.open("RangeColumns")
			if col >= 0 {
				b.colRef(s.schema, col)
			}
			b.close()
		}
		rangeElem := func(elem, scanType string, value sqlfront.Expr) {
			b.open(elem, "ScanType", scanType)
			keyCol()
			b.open("RangeExpressions")
			b.scalar(value, s.schema)
			b.close()
			b.close()
		}
		switch {
		case r.lo != nil && r.lo == r.hi:
			rangeElem("Prefix", "EQ", r.lo)
		default:
			if r.lo != nil {
				rangeElem("StartRange", map[bool]string{true: "GE", false: "GT"}[r.loIncl], r.lo)
			}
			if r.hi != nil {
				rangeElem("EndRange", map[bool]string{true: "LE", false: "LT"}[r.hiIncl], r.hi)
			}
		}
		b.close()
		b.close()
	}
	b.close()
}

// seekLookup writes a key lookup's seek on the clustered key.
func (b *xmlBuilder) seekLookup(s *scanIter) {
	b.open("SeekPredicates")
	b.open("SeekPredicateNew")
	b.open("SeekKeys")
	b.open("Prefix", "ScanType", "EQ")
	b.open("RangeColumns")
	for _, k := range s.t.PK {
		col := s.t.Columns[k]
		b.empty("ColumnReference", "Database", "["+s.t.DB.Name+"]", "Schema", "["+s.t.Schema+"]", "Table", "["+s.t.Name+"]", "Column", col.Name)
	}
	b.close()
	b.open("RangeExpressions")
	for _, k := range s.t.PK {
		col := s.t.Columns[k]
		b.open("ScalarOperator", "ScalarString", "["+s.t.Name+"].["+col.Name+"]")
		b.open("Identifier")
		b.empty("ColumnReference", "Database", "["+s.t.DB.Name+"]", "Schema", "["+s.t.Schema+"]", "Table", "["+s.t.Name+"]", "Column", col.Name)
		b.close()
		b.close()
	}
	b.close()
	b.close()
	b.close()
	b.close()
	b.close()
}
