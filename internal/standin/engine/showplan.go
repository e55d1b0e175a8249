package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Actual execution plans in SQL Server's showplan XML (namespace
// http://schemas.microsoft.com/sqlserver/2004/07/showplan, Version 1.6 as
// SQL Server 2017 writes it; the element order follows showplanxml.xsd,
// which the tests validate every plan against). Each RelOp carries the
// operator's estimates and its actual per-thread counters.

// XMLBuilder writes showplan XML element by element.
type XMLBuilder struct {
	Buf   strings.Builder
	stack []string
	exprs map[*Relation]map[int]string // names of computed columns
	next  int
	DOP   int
}

// NewXMLBuilder starts an empty document.
func NewXMLBuilder() *XMLBuilder {
	return &XMLBuilder{exprs: map[*Relation]map[int]string{}, next: 1001}
}

func (b *XMLBuilder) attrs(kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b.Buf, ` %s="%s"`, kv[i], XMLEscape(kv[i+1]))
	}
}

// Open starts element name with attributes kv (name, value pairs).
func (b *XMLBuilder) Open(name string, kv ...string) {
	b.Buf.WriteString("<" + name)
	b.attrs(kv)
	b.Buf.WriteString(">")
	b.stack = append(b.stack, name)
}

// Empty writes element name with attributes kv and no content.
func (b *XMLBuilder) Empty(name string, kv ...string) {
	b.Buf.WriteString("<" + name)
	b.attrs(kv)
	b.Buf.WriteString("/>")
}

// Close ends the innermost open element.
func (b *XMLBuilder) Close() {
	name := b.stack[len(b.stack)-1]
	b.stack = b.stack[:len(b.stack)-1]
	b.Buf.WriteString("</" + name + ">")
}

// Ftoa renders a number as showplan attributes carry it.
func Ftoa(f float64) string {
	if f < 0 {
		f = 0
	}
	return strconv.FormatFloat(f, 'g', 7, 64)
}

// colName is the showplan name of column i of r: its own, or ExprNNNN.
func (b *XMLBuilder) colName(r *Relation, i int) string {
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
func (b *XMLBuilder) colRef(r *Relation, i int) {
	c := r.Cols[i]
	name := b.colName(r, i)
	if c.Base != nil && name == c.Name {
		kv := []string{"Database", "[" + c.Base.Db + "]", "Schema", "[" + c.Base.Schema + "]", "Table", "[" + c.Base.Table + "]"}
		if c.Base.Alias != "" && !strings.EqualFold(c.Base.Alias, c.Base.Table) {
			kv = append(kv, "Alias", "["+c.Base.Alias+"]")
		}
		b.Empty("ColumnReference", append(kv, "Column", name)...)
		return
	}
	b.Empty("ColumnReference", "Column", name)
}

// exprRef writes a ColumnReference for an expression that is a column of r,
// or a computed one.
func (b *XMLBuilder) exprRef(e sqlfront.Expr, r *Relation) {
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
		b.Empty("ColumnReference", "Column", c.Parts[len(c.Parts)-1])
		return
	}
	b.Empty("ColumnReference", "Column", fmt.Sprintf("Expr%d", b.next))
	b.next++
}

func (b *XMLBuilder) outputList(r *Relation) {
	b.Open("OutputList")
	for i, c := range r.Cols {
		if c.Hidden && c.OrderExpr == nil {
			continue
		}
		b.colRef(r, i)
	}
	b.Close()
}

func (b *XMLBuilder) definedValues(r *Relation) {
	b.Empty("DefinedValues")
}

// Object writes the Object element naming ix (and the alias it is read
// under).
func (b *XMLBuilder) Object(ix *Index, alias string) {
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
	b.Empty("Object", append(kv, "IndexKind", kind, "Storage", "RowStore")...)
}

func (b *XMLBuilder) predicate(elem string, e sqlfront.Expr, r *Relation) {
	b.Open(elem)
	b.scalar(e, r)
	b.Close()
}

// scalar writes a ScalarOperator for e evaluated over r.
// definedScalars writes DefinedValues for n computed columns: output column
// first+i of out, defined by value(i) over the input relation in.
func (b *XMLBuilder) definedScalars(out *Relation, first, n int, value func(i int) sqlfront.Expr, in *Relation) {
	b.Open("DefinedValues")
	for i := range n {
		b.Open("DefinedValue")
		b.colRef(out, first+i)
		b.scalar(value(i), in)
		b.Close()
	}
	b.Close()
}

func (b *XMLBuilder) scalar(e sqlfront.Expr, r *Relation) {
	b.Open("ScalarOperator", "ScalarString", scalarString(e))
	b.scalarBody(e, r)
	b.Close()
}

func compareOp(op string) string {
	return map[string]string{"=": "EQ", "<>": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}[op]
}

func (b *XMLBuilder) scalarBody(e sqlfront.Expr, r *Relation) {
	if r != nil {
		if i, ok := r.Subst[e]; ok {
			b.Open("Identifier")
			b.colRef(r, i)
			b.Close()
			return
		}
	}
	switch x := e.(type) {
	case *sqlfront.ColRef:
		b.Open("Identifier")
		b.exprRef(x, r)
		b.Close()
	case *sqlfront.VarRef:
		b.Open("Identifier")
		b.Empty("ColumnReference", "Column", x.Name)
		b.Close()
	case *sqlfront.Literal:
		b.Empty("Const", "ConstValue", constString(x.V))
	case *sqlfront.BinaryExpr:
		switch x.Op {
		case "AND", "OR":
			b.Open("Logical", "Operation", x.Op)
			b.scalar(x.L, r)
			b.scalar(x.R, r)
			b.Close()
		case "=", "<>", "<", "<=", ">", ">=":
			b.Open("Compare", "CompareOp", compareOp(x.Op))
			b.scalar(x.L, r)
			b.scalar(x.R, r)
			b.Close()
		default:
			op := map[string]string{"+": "ADD", "-": "SUB", "*": "MULT", "/": "DIV", "%": "MOD", "&": "BIT_AND", "|": "BIT_OR", "^": "BIT_XOR"}[x.Op]
			if op == "" {
				op = "ADD"
			}
			b.Open("Arithmetic", "Operation", op)
			b.scalar(x.L, r)
			b.scalar(x.R, r)
			b.Close()
		}
	case *sqlfront.UnaryExpr:
		switch x.Op {
		case "NOT":
			b.Open("Logical", "Operation", "NOT")
		case "~":
			b.Open("Arithmetic", "Operation", "BIT_NOT")
		default:
			b.Open("Arithmetic", "Operation", "MINUS")
		}
		b.scalar(x.E, r)
		b.Close()
	case *sqlfront.IsNullExpr:
		op := "IS NULL"
		if x.Not {
			op = "IS NOT NULL"
		}
		b.Open("Compare", "CompareOp", op)
		b.scalar(x.E, r)
		b.Close()
	case *sqlfront.CastExpr:
		b.Open("Convert", "DataType", x.T.String(), "Style", "0", "Implicit", "false")
		b.scalar(x.E, r)
		b.Close()
	case *sqlfront.CaseExpr:
		b.caseBody(x, 0, r)
	case *sqlfront.BetweenExpr:
		b.Open("Logical", "Operation", "AND")
		b.scalar(&sqlfront.BinaryExpr{Op: ">=", L: x.E, R: x.Lo}, r)
		b.scalar(&sqlfront.BinaryExpr{Op: "<=", L: x.E, R: x.Hi}, r)
		b.Close()
	case *sqlfront.InExpr:
		if x.Sub == nil && len(x.List) > 0 {
			b.Open("Logical", "Operation", "OR")
			for _, v := range x.List {
				b.scalar(&sqlfront.BinaryExpr{Op: "=", L: x.E, R: v}, r)
			}
			if len(x.List) == 1 {
				b.scalar(&sqlfront.Literal{V: false}, r)
			}
			b.Close()
			return
		}
		b.intrinsic("in", nil, r)
	case *sqlfront.LikeExpr:
		b.intrinsic("like", []sqlfront.Expr{x.E, x.Pattern}, r)
	case *sqlfront.FuncCall:
		if IsAggregateName(x.Name) {
			agg := x.Name
			if x.Star {
				agg = "countstar"
			}
			b.Open("Aggregate", "AggType", agg, "Distinct", fmt.Sprint(x.Distinct))
			for _, a := range x.Args {
				b.scalar(a, r)
			}
			b.Close()
			return
		}
		b.intrinsic(strings.ToLower(x.Name), x.Args, r)
	case *sqlfront.WindowExpr:
		b.intrinsic(strings.ToLower(x.F.Name), x.F.Args, r)
	default:
		b.intrinsic(strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", e), "*standin.")), nil, r)
	}
}

func (b *XMLBuilder) intrinsic(name string, args []sqlfront.Expr, r *Relation) {
	b.Open("Intrinsic", "FunctionName", name)
	for _, a := range args {
		b.scalar(a, r)
	}
	b.Close()
}

func (b *XMLBuilder) caseBody(c *sqlfront.CaseExpr, i int, r *Relation) {
	if i >= len(c.Whens) {
		if c.Else != nil {
			b.scalarBody(c.Else, r)
		} else {
			b.Empty("Const", "ConstValue", "NULL")
		}
		return
	}
	w := c.Whens[i]
	cond := w.Cond
	if c.Operand != nil {
		cond = &sqlfront.BinaryExpr{Op: "=", L: c.Operand, R: w.Cond}
	}
	b.Open("IF")
	b.predicate("Condition", cond, r)
	b.predicate("Then", w.Result, r)
	b.Open("Else")
	b.Open("ScalarOperator")
	b.caseBody(c, i+1, r)
	b.Close()
	b.Close()
	b.Close()
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
		return "(" + ValueString(v) + ")"
	}
	return "'" + ValueString(v) + "'"
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

// Relop writes one operator and, through its details, its children.
func (b *XMLBuilder) Relop(n *PlanNode) {
	for n.Hidden && len(n.Children) == 1 {
		n = n.Children[0]
	}
	tot := n.total()
	_ = tot
	kv := []string{"NodeId", strconv.Itoa(n.ID), "PhysicalOp", n.Physical, "LogicalOp", n.Logical,
		"EstimateRows", Ftoa(n.EstRows), "EstimateIO", Ftoa(n.EstIO), "EstimateCPU", Ftoa(n.EstCPU),
		"AvgRowSize", strconv.Itoa(max(n.rowSize, rowSizeOf(n.Schema))), "EstimatedTotalSubtreeCost", Ftoa(n.SubtreeCost),
		"Parallel", fmt.Sprint(n.parallel), "EstimateRebinds", Ftoa(n.EstExecs - 1), "EstimateRewinds", "0", "EstimatedExecutionMode", "Row"}
	if n.Index != nil {
		kv = append(kv, "TableCardinality", strconv.Itoa(len(n.Index.Tbl.Rows)))
		if n.estRowsRead > 0 {
			kv = append(kv, "EstimatedRowsRead", Ftoa(n.estRowsRead))
		}
	}
	b.Open("RelOp", kv...)
	b.outputList(n.Schema)
	b.warnings(n)
	b.runtime(n)
	if n.Details != nil {
		n.Details(b)
	} else {
		b.genericOperator(n)
	}
	b.Close()
}

// Children writes the RelOp elements of n's inputs.
func (b *XMLBuilder) Children(n *PlanNode) {
	for _, c := range n.Children {
		b.Relop(c)
	}
}

// genericOperator writes the operator element of nodes without their own.
func (b *XMLBuilder) genericOperator(n *PlanNode) {
	switch n.Physical {
	case "Constant Scan":
		b.Empty("ConstantScan")
	case "Table-valued function":
		b.Empty("TableValuedFunction")
	case "Table Spool", "Index Spool":
		kv := []string{}
		if n.stack || n.primary != nil {
			kv = append(kv, "Stack", "true")
		}
		if n.primary != nil && n.primary.spool != nil {
			kv = append(kv, "PrimaryNodeId", strconv.Itoa(n.primary.spool.ID))
		}
		if len(n.Children) == 0 {
			b.Empty("Spool", kv...)
			return
		}
		b.Open("Spool", kv...)
		b.Children(n)
		b.Close()
	default:
		b.Open("ComputeScalar")
		b.Empty("DefinedValues")
		b.Children(n)
		b.Close()
	}
}

func (b *XMLBuilder) warnings(n *PlanNode) {
	if n.spillPages == 0 && n.exchangeSpill == 0 {
		return
	}
	b.Open("Warnings")
	if n.spillPages > 0 {
		b.Empty("SpillToTempDb", "SpillLevel", strconv.Itoa(max(n.spillLevel, 1)), "SpilledThreadCount", strconv.Itoa(max(n.spillThreads, 1)))
		detail := "SortSpillDetails"
		if n.spillKind == "hash" {
			detail = "HashSpillDetails"
		}
		b.Empty(detail, "GrantedMemoryKb", strconv.FormatInt(n.GrantKB, 10), "UsedMemoryKb", strconv.FormatInt(n.UsedKB, 10),
			"WritesToTempDb", strconv.FormatInt(n.spillPages, 10), "ReadsFromTempDb", strconv.FormatInt(n.spillPages, 10))
	}
	if n.exchangeSpill > 0 {
		b.Empty("ExchangeSpillDetails", "WritesToTempDb", strconv.FormatInt(n.exchangeSpill, 10))
	}
	b.Close()
}

// runtime writes RunTimeInformation: one RunTimeCountersPerThread per
// thread that ran the operator.
func (b *XMLBuilder) runtime(n *PlanNode) {
	var threads []int
	for t := range n.threads {
		threads = append(threads, t)
	}
	if n.parallel && b.DOP > 1 {
		// every worker thread of a parallel branch reports, idle or not
		have := map[int]bool{}
		for _, t := range threads {
			have[t] = true
		}
		for t := 1; t <= b.DOP; t++ {
			if !have[t] {
				threads = append(threads, t)
			}
		}
	}
	sort.Ints(threads)
	if len(threads) == 0 {
		threads = []int{0}
	}
	b.Open("RunTimeInformation")
	for _, t := range threads {
		// the thread's active time, its inputs' included (row mode), as
		// query_thread_profile reports it (optiming.go)
		elapsed := n.activeTime(t).Milliseconds()
		c := n.Counters(t)
		kv := []string{"Thread", strconv.Itoa(t), "ActualRows", strconv.FormatInt(c.Rows, 10)}
		if n.Index != nil {
			kv = append(kv, "ActualRowsRead", strconv.FormatInt(c.rowsRead, 10))
		}
		if c.rebinds > 0 || c.rewinds > 0 {
			kv = append(kv, "ActualRebinds", strconv.FormatInt(c.rebinds, 10), "ActualRewinds", strconv.FormatInt(c.rewinds, 10))
		}
		kv = append(kv, "Batches", "0", "ActualEndOfScans", strconv.FormatInt(c.endOfScans, 10), "ActualExecutions", strconv.FormatInt(c.Executions, 10),
			"ActualExecutionMode", "Row", "ActualElapsedms", strconv.FormatInt(elapsed, 10), "ActualCPUms", strconv.FormatInt(elapsed*6/10, 10))
		if n.Index != nil {
			kv = append(kv, "ActualScans", strconv.FormatInt(c.scans, 10), "ActualLogicalReads", strconv.FormatInt(c.logical, 10),
				"ActualPhysicalReads", strconv.FormatInt(c.physical, 10), "ActualReadAheads", strconv.FormatInt(c.readAheads, 10),
				"ActualLobLogicalReads", "0", "ActualLobPhysicalReads", "0", "ActualLobReadAheads", "0")
		}
		if n.Memory && n.GrantKB > 0 {
			kv = append(kv, "InputMemoryGrant", strconv.FormatInt(n.GrantKB, 10), "OutputMemoryGrant", strconv.FormatInt(n.GrantKB, 10), "UsedMemoryGrant", strconv.FormatInt(n.UsedKB, 10))
		}
		b.Empty("RunTimeCountersPerThread", kv...)
	}
	b.Close()
}

// Operator elements.

func (f *filterIter) Showplan(b *XMLBuilder) {
	b.Open("Filter", "StartupExpression", "false")
	b.Children(f.n)
	b.predicate("Predicate", f.pred, f.in.Node().Schema)
	b.Close()
}

func (c *projectIter) Showplan(b *XMLBuilder) {
	src := c.in.Node().Schema
	b.Open("ComputeScalar")
	b.Open("DefinedValues")
	for i, e := range c.exprs {
		if _, plain := e.(*sqlfront.ColRef); plain {
			continue
		}
		if _, ok := src.Subst[e]; ok {
			continue
		}
		b.Open("DefinedValue")
		b.colRef(c.n.Schema, i)
		b.scalar(e, src)
		b.Close()
	}
	b.Close()
	b.Children(c.n)
	b.Close()
}

func (j *nlIter) Showplan(b *XMLBuilder) {
	b.Open("NestedLoops", "Optimized", "false")
	if j.pred != nil {
		b.predicate("Predicate", j.pred, j.schema)
	}
	if len(j.n.outerRefs) > 0 {
		b.Open("OuterReferences")
		for _, c := range j.n.outerRefs {
			b.exprRef(c, j.outer.Node().Schema)
		}
		b.Close()
	}
	if j.mode != nlJoin {
		b.Open("ProbeColumn")
		b.colRef(j.schema, len(j.schema.Cols)-1)
		b.Close()
	}
	b.Children(j.n)
	b.Close()
}

func (h *hashJoinIter) Showplan(b *XMLBuilder) {
	b.Open("Hash")
	b.Empty("DefinedValues")
	b.columnList("HashKeysBuild", h.buildKeys, h.build.Node().Schema)
	b.columnList("HashKeysProbe", h.probeKeys, h.probe.Node().Schema)
	if h.residual != nil {
		b.predicate("ProbeResidual", h.residual, h.schema)
	}
	b.Children(h.n)
	b.Close()
}

func (m *mergeJoinIter) Showplan(b *XMLBuilder) {
	b.Open("Merge", "ManyToMany", "false")
	b.columnList("InnerSideJoinColumns", m.rk, m.right.Node().Schema)
	b.columnList("OuterSideJoinColumns", m.lk, m.left.Node().Schema)
	if m.residual != nil {
		b.predicate("Residual", m.residual, m.schema)
	}
	b.Children(m.n)
	b.Close()
}

// columnList writes an element of column references for exprs over r.
func (b *XMLBuilder) columnList(elem string, exprs []sqlfront.Expr, r *Relation) {
	b.Open(elem)
	for _, e := range exprs {
		b.exprRef(e, r)
	}
	b.Close()
}

func (b *XMLBuilder) orderBy(r *Relation, keys []sortKey) {
	b.Open("OrderBy")
	for _, k := range keys {
		b.Open("OrderByColumn", "Ascending", fmt.Sprint(!k.desc))
		b.colRef(r, k.col)
		b.Close()
	}
	b.Close()
}

func (s *sortIter) Showplan(b *XMLBuilder) {
	b.Open("Sort", "Distinct", fmt.Sprint(s.distinct))
	b.orderBy(s.n.Schema, s.keys)
	b.Children(s.n)
	b.Close()
}

func (t *topIter) Showplan(b *XMLBuilder) {
	kv := []string{"RowCount", "false", "IsPercent", fmt.Sprint(t.percent), "WithTies", fmt.Sprint(t.ties)}
	b.Open("Top", kv...)
	if t.ties {
		b.Open("TieColumns")
		for _, k := range t.keys {
			b.colRef(t.n.Schema, k.col)
		}
		b.Close()
	}
	if t.offset != nil {
		b.predicate("OffsetExpression", t.offset, nil)
	}
	if t.count != nil {
		b.predicate("TopExpression", t.count, nil)
	} else if t.fetch != nil {
		b.predicate("TopExpression", t.fetch, nil)
	}
	b.Children(t.n)
	b.Close()
}

func (e *exchangeIter) Showplan(b *XMLBuilder) {
	b.Open("Parallelism")
	if len(e.keys) > 0 {
		b.Open("PartitionColumns")
		for _, k := range e.keys {
			b.colRef(e.in.Node().Schema, k)
		}
		b.Close()
	}
	if len(e.order) > 0 {
		b.orderBy(e.in.Node().Schema, e.order)
	}
	b.Children(e.n)
	b.Close()
}

func (a *aggIter) Showplan(b *XMLBuilder) {
	src := a.in.Node().Schema
	stream := a.n.Physical == "Stream Aggregate"
	if stream {
		b.Open("StreamAggregate")
	} else {
		b.Open("Hash")
	}
	b.definedScalars(a.schema, len(a.groups), len(a.aggs), func(i int) sqlfront.Expr { return a.aggs[i].f }, src)
	if len(a.groups) > 0 {
		if stream {
			b.Open("GroupBy")
		} else {
			b.Open("HashKeysBuild")
		}
		for _, g := range a.groups {
			b.exprRef(g, src)
		}
		b.Close()
	}
	if stream && a.sets != nil && len(a.groups) > 0 {
		b.Open("RollupInfo", "HighestLevel", strconv.Itoa(len(a.groups)))
		for l := 0; l <= len(a.groups); l++ {
			b.Empty("RollupLevel", "Level", strconv.Itoa(l))
		}
		b.Close()
	}
	b.Children(a.n)
	b.Close()
}

func (d *distinctIter) Showplan(b *XMLBuilder) {
	b.Open("Hash")
	b.Empty("DefinedValues")
	b.Open("HashKeysBuild")
	for i := 0; i < d.width; i++ {
		b.colRef(d.in.Node().Schema, i)
	}
	b.Close()
	b.Children(d.n)
	b.Close()
}

func (c *concatIter) Showplan(b *XMLBuilder) {
	b.Open("Concat")
	b.Open("DefinedValues")
	for i := range c.schema.Cols {
		b.Open("DefinedValue")
		b.colRef(c.schema, i)
		for _, in := range c.ins {
			b.colRef(in.Node().Schema, i)
		}
		b.Close()
	}
	b.Close()
	b.Children(c.n)
	b.Close()
}

// partShowplan renders one of the nodes of a window operator.
func (w *windowIter) partShowplan(n *PlanNode) func(*XMLBuilder) {
	return func(b *XMLBuilder) {
		src := w.in.Node().Schema
		switch n.Physical {
		case "Sequence Project":
			b.Open("SequenceProject")
			b.definedScalars(w.schema, len(src.Cols), len(w.funcs), func(i int) sqlfront.Expr { return w.funcs[i] }, src)
		case "Segment":
			b.Open("Segment")
			b.Open("GroupBy")
			for _, e := range w.spec.PartitionBy {
				b.exprRef(e, src)
			}
			b.Close()
			b.Open("SegmentColumn")
			b.Empty("ColumnReference", "Column", fmt.Sprintf("Segment%d", 1000+n.ID))
			b.Close()
		case "Window Spool":
			b.Open("WindowSpool")
		case "Stream Aggregate":
			b.Open("StreamAggregate")
			b.definedScalars(w.schema, len(src.Cols), len(w.funcs), func(i int) sqlfront.Expr { return w.funcs[i].F }, src)
		}
		b.Children(n)
		b.Close()
	}
}

func (w *windowIter) sortShowplan(b *XMLBuilder) {
	src := w.in.Node().Schema
	b.Open("Sort", "Distinct", "false")
	b.Open("OrderBy")
	n := 0
	for _, e := range w.spec.PartitionBy {
		b.Open("OrderByColumn", "Ascending", "true")
		b.exprRef(e, src)
		b.Close()
		n++
	}
	for _, o := range w.spec.OrderBy {
		b.Open("OrderByColumn", "Ascending", fmt.Sprint(!o.Desc))
		b.exprRef(o.Expr, src)
		b.Close()
		n++
	}
	b.Close()
	b.Children(w.sortN)
	b.Close()
}

func (c *recursiveIter) Showplan(b *XMLBuilder) {
	b.Open("Spool", "Stack", "true")
	b.Children(c.n)
	b.Close()
}

func (c *recursiveIter) concatShowplan(b *XMLBuilder) {
	b.Open("Concat")
	b.Empty("DefinedValues")
	b.Children(c.concat)
	b.Close()
}

func (t *tvfIter) Showplan(b *XMLBuilder) {
	b.Empty("ConstantScan")
}

// seekPredicates writes a seek's ranges on the leading key.
func (b *XMLBuilder) seekPredicates(s *scanIter) {
	b.Open("SeekPredicates")
	col := -1
	for i, c := range s.colMap {
		if c == s.seek.col {
			col = i
		}
	}
	for _, r := range s.seek.ranges {
		b.Open("SeekPredicateNew")
		b.Open("SeekKeys")
		keyCol := func() {
			b.Open("RangeColumns")
			if col >= 0 {
				b.colRef(s.schema, col)
			}
			b.Close()
		}
		rangeElem := func(elem, scanType string, value sqlfront.Expr) {
			b.Open(elem, "ScanType", scanType)
			keyCol()
			b.Open("RangeExpressions")
			b.scalar(value, s.schema)
			b.Close()
			b.Close()
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
		b.Close()
		b.Close()
	}
	b.Close()
}

// seekLookup writes a key lookup's seek on the clustered key.
func (b *XMLBuilder) seekLookup(s *scanIter) {
	b.Open("SeekPredicates")
	b.Open("SeekPredicateNew")
	b.Open("SeekKeys")
	b.Open("Prefix", "ScanType", "EQ")
	b.Open("RangeColumns")
	for _, k := range s.t.PK {
		col := s.t.Columns[k]
		b.Empty("ColumnReference", "Database", "["+s.t.DB.Name+"]", "Schema", "["+s.t.Schema+"]", "Table", "["+s.t.Name+"]", "Column", col.Name)
	}
	b.Close()
	b.Open("RangeExpressions")
	for _, k := range s.t.PK {
		col := s.t.Columns[k]
		b.Open("ScalarOperator", "ScalarString", "["+s.t.Name+"].["+col.Name+"]")
		b.Open("Identifier")
		b.Empty("ColumnReference", "Database", "["+s.t.DB.Name+"]", "Schema", "["+s.t.Schema+"]", "Table", "["+s.t.Name+"]", "Column", col.Name)
		b.Close()
		b.Close()
	}
	b.Close()
	b.Close()
	b.Close()
	b.Close()
	b.Close()
}

// XMLEscape escapes s for an XML attribute or text.
func XMLEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
