package engine

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// FROM and WHERE: table sources are bound first (so that every column
// reference resolves to exactly one of them, or to an enclosing query),
// then joined bottom-up; each WHERE and ON conjunct goes as deep as its
// columns allow without changing outer-join semantics, where it becomes a
// seek or a residual predicate of a scan, a join key, or a filter.

// fromLeaf is one table source of a FROM clause.
type fromLeaf struct {
	idx     int
	qual    string
	ref     sqlfront.TableRef
	rel     *Relation // its columns
	tbl     *Table    // base table, else nil
	tn      *sqlfront.TableName
	src     Iter // planned source for derived tables, CTEs, functions, views
	applied bool // the right side of an APPLY: planned per join with the left in scope
}

type fromCtx struct {
	leaves []*fromLeaf
	byRef  map[sqlfront.TableRef]*fromLeaf
	all    *Relation // every leaf's columns, for resolving conjuncts
}

// PlanFromWhere plans the FROM clause and the WHERE predicate.
func (p *Planner) PlanFromWhere(s *sqlfront.SelectStmt) (Iter, *sqlfront.SQLError) {
	if s.From == nil {
		var in Iter = &constIter{n: p.newNode("Constant Scan", "Constant Scan", &Relation{}), rows: [][]any{{}}}
		in.Node().EstRows = 1
		if s.Where != nil {
			return p.planWhereRest(in, Conjuncts(s.Where))
		}
		return in, nil
	}
	fc := &fromCtx{byRef: map[sqlfront.TableRef]*fromLeaf{}, all: &Relation{}}
	if err := p.bindFrom(fc, s.From, false); err != nil {
		return nil, err
	}
	where := Conjuncts(s.Where)
	for _, c := range where {
		if len(AggregatesOf(c)) > 0 {
			return nil, ErrAggregateInWhere()
		}
	}
	in, rest, err := p.planRef(fc, s.From, where)
	if err != nil {
		return nil, err
	}
	return p.planWhereRest(in, rest)
}

// planWhereRest applies the conjuncts no table source took: EXISTS and IN
// subqueries become semi joins, the rest a Filter.
func (p *Planner) planWhereRest(in Iter, rest []sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	var plain []sqlfront.Expr
	for _, c := range rest {
		if semi, ok := p.semiJoinFor(c); ok {
			var err *sqlfront.SQLError
			if in, err = semi(in); err != nil {
				return nil, err
			}
			continue
		}
		plain = append(plain, c)
	}
	if len(plain) == 0 {
		return in, nil
	}
	pred := AndAll(plain)
	var err *sqlfront.SQLError
	if in, err = p.planSubqueries(in, []sqlfront.Expr{pred}); err != nil {
		return nil, err
	}
	return p.filterOp(in, pred)
}

// bindFrom creates the leaves of a FROM tree and their column lists.
func (p *Planner) bindFrom(fc *fromCtx, ref sqlfront.TableRef, applied bool) *sqlfront.SQLError {
	switch r := ref.(type) {
	case *sqlfront.JoinRef:
		if err := p.bindFrom(fc, r.Left, applied); err != nil {
			return err
		}
		return p.bindFrom(fc, r.Right, applied || r.Kind == "APPLY" || r.Kind == "OUTER APPLY")
	}
	leaf := &fromLeaf{idx: len(fc.leaves), ref: ref, applied: applied}
	if err := p.bindLeaf(leaf, fc); err != nil {
		return err
	}
	for _, l := range fc.leaves {
		if l.qual == leaf.qual && leaf.qual != "" {
			return sqlfront.NewError(1011, 16, "The correlation name '%s' is specified multiple times in a FROM clause.", leaf.qual)
		}
	}
	fc.leaves = append(fc.leaves, leaf)
	fc.byRef[ref] = leaf
	fc.all.Cols = append(fc.all.Cols, leaf.rel.Cols...)
	return nil
}

// bindLeaf finds what a table source is and its columns.
func (p *Planner) bindLeaf(leaf *fromLeaf, fc *fromCtx) *sqlfront.SQLError {
	switch r := leaf.ref.(type) {
	case *sqlfront.TableName:
		leaf.tn = r
		name := r.Parts[len(r.Parts)-1]
		leaf.qual = strings.ToLower(r.Alias)
		if leaf.qual == "" {
			leaf.qual = strings.ToLower(name)
		}
		if len(r.Parts) == 1 {
			if b := p.lookupCTE(name); b != nil {
				return p.bindCTE(leaf, b)
			}
		}
		t, view, err := p.x.ResolveTable(r.Parts)
		if err != nil {
			return err
		}
		if view != nil {
			n := &PlanNode{Physical: "Constant Scan", Logical: "Constant Scan", Schema: view.Schema, EstRows: float64(max(view.Rows, 1)), EstExecs: 1}
			it := &tvfIter{n: n, schema: view.Schema, view: view.Read}
			n.Details = it.Showplan
			leaf.src = it
			leaf.rel = requalify(view.Schema, leaf.qual)
			return nil
		}
		leaf.tbl = t
		leaf.rel = TableSchema(t, leaf.qual)
		return nil
	case *sqlfront.DerivedTable:
		leaf.qual = strings.ToLower(r.Alias)
		if leaf.applied {
			// planned again at the join, with the left side's row in
			// scope; this plan gives its columns
			left := &Relation{Cols: append([]RelCol{}, fc.all.Cols...)}
			src, err := p.planDerived(r, &PScope{Rel: left, Parent: p.Scope})
			if err != nil {
				return err
			}
			leaf.rel = src.Node().Schema
			return nil
		}
		src, err := p.planDerived(r, p.Scope)
		if err != nil {
			return err
		}
		leaf.src = src
		leaf.rel = src.Node().Schema
		return nil
	case *sqlfront.TableFunc:
		leaf.qual = strings.ToLower(r.Alias)
		if leaf.qual == "" {
			leaf.qual = strings.ToLower(r.Parts[len(r.Parts)-1])
		}
		cols, err := p.x.TableFunctionSchema(r)
		if err != nil {
			return err
		}
		leaf.rel = requalify(cols, leaf.qual)
		return nil
	}
	return sqlfront.ErrUnsupported("table source")
}

// TableSchema is a table's columns under a qualifier.
func TableSchema(t *Table, qual string) *Relation {
	rel := &Relation{}
	base := &ColBase{Db: t.DB.Name, Schema: t.Schema, Table: t.Name, Alias: qual}
	for _, c := range t.Columns {
		rel.Cols = append(rel.Cols, RelCol{Qual: qual, Name: c.Name, Typ: c.Type, Hidden: strings.HasPrefix(c.Name, "%%"), Base: base})
	}
	return rel
}

// requalify copies a schema under another qualifier.
func requalify(r *Relation, qual string) *Relation {
	out := &Relation{}
	for _, c := range r.Cols {
		c.Qual = qual
		out.Cols = append(out.Cols, c)
	}
	return out
}

// leavesOf lists the leaves under a FROM subtree.
func (fc *fromCtx) leavesOf(ref sqlfront.TableRef) []*fromLeaf {
	if j, ok := ref.(*sqlfront.JoinRef); ok {
		return append(fc.leavesOf(j.Left), fc.leavesOf(j.Right)...)
	}
	return []*fromLeaf{fc.byRef[ref]}
}

// refs returns the leaves a conjunct uses (a bit per leaf; outer-scope
// columns and constants use none), or an error for an unknown or ambiguous
// column. A conjunct with a subquery is marked with bit 63.
func (p *Planner) refs(fc *fromCtx, e sqlfront.Expr) (uint64, *sqlfront.SQLError) {
	var mask uint64
	for _, c := range ColRefsOf(e) {
		i, err := fc.all.LookupRef(c)
		if err != nil {
			return 0, err
		}
		if i < 0 {
			if err := p.Resolves(c, nil); err != nil {
				return 0, err
			}
			continue
		}
		mask |= 1 << uint(p.leafOfColumn(fc, i))
	}
	if HasSubquery(e) {
		mask |= 1 << 63
	}
	return mask, nil
}

func (p *Planner) leafOfColumn(fc *fromCtx, col int) int {
	for _, l := range fc.leaves {
		if col < len(l.rel.Cols) {
			return l.idx
		}
		col -= len(l.rel.Cols)
	}
	return 0
}

func maskOf(leaves []*fromLeaf) uint64 {
	var m uint64
	for _, l := range leaves {
		m |= 1 << uint(l.idx)
	}
	return m
}

// split divides conjuncts into those whose columns lie within mask (and
// have no subquery) and the rest.
func (p *Planner) split(fc *fromCtx, conj []sqlfront.Expr, mask uint64) (in, out []sqlfront.Expr, err *sqlfront.SQLError) {
	for _, c := range conj {
		m, err := p.refs(fc, c)
		if err != nil {
			return nil, nil, err
		}
		if m&(1<<63) == 0 && m&^mask == 0 {
			in = append(in, c)
		} else {
			out = append(out, c)
		}
	}
	return in, out, nil
}

// planRef plans a FROM subtree given the conjuncts that may be applied
// within it; it returns the conjuncts it could not use.
func (p *Planner) planRef(fc *fromCtx, ref sqlfront.TableRef, conj []sqlfront.Expr) (Iter, []sqlfront.Expr, *sqlfront.SQLError) {
	j, ok := ref.(*sqlfront.JoinRef)
	if !ok {
		leaf := fc.byRef[ref]
		local, rest, err := p.split(fc, conj, maskOf([]*fromLeaf{leaf}))
		if err != nil {
			return nil, nil, err
		}
		it, err := p.planLeaf(leaf, local)
		return it, rest, err
	}
	leftMask := maskOf(fc.leavesOf(j.Left))
	rightMask := maskOf(fc.leavesOf(j.Right))
	on := Conjuncts(j.On)
	for _, c := range on {
		if len(AggregatesOf(c)) > 0 {
			return nil, nil, ErrAggregateInWhere()
		}
	}
	var leftConj, rightConj, joinConj, rest []sqlfront.Expr
	switch j.Kind {
	case "INNER", "CROSS":
		all := append(append([]sqlfront.Expr{}, conj...), on...)
		all = append(all, p.impliedPredicates(fc, all)...)
		var err *sqlfront.SQLError
		var other []sqlfront.Expr
		if leftConj, other, err = p.split(fc, all, leftMask); err != nil {
			return nil, nil, err
		}
		if rightConj, other, err = p.split(fc, other, rightMask); err != nil {
			return nil, nil, err
		}
		if joinConj, rest, err = p.split(fc, other, leftMask|rightMask); err != nil {
			return nil, nil, err
		}
	case "LEFT", "OUTER APPLY", "APPLY":
		var err *sqlfront.SQLError
		var other []sqlfront.Expr
		// WHERE conjuncts may filter the preserved (left) side only
		if leftConj, rest, err = p.split(fc, conj, leftMask); err != nil {
			return nil, nil, err
		}
		if rightConj, other, err = p.split(fc, on, rightMask); err != nil {
			return nil, nil, err
		}
		joinConj = other
		if j.Kind == "APPLY" {
			// CROSS APPLY filters like an inner join
			var more []sqlfront.Expr
			if more, rest, err = p.split(fc, rest, rightMask); err != nil {
				return nil, nil, err
			}
			rightConj = append(rightConj, more...)
		}
	case "RIGHT":
		var err *sqlfront.SQLError
		var other []sqlfront.Expr
		if rightConj, rest, err = p.split(fc, conj, rightMask); err != nil {
			return nil, nil, err
		}
		if leftConj, other, err = p.split(fc, on, leftMask); err != nil {
			return nil, nil, err
		}
		joinConj = other
	case "FULL":
		rest = conj
		joinConj = on
	}
	left, lrest, err := p.planRef(fc, j.Left, leftConj)
	if err != nil {
		return nil, nil, err
	}
	if j.Kind == "APPLY" || j.Kind == "OUTER APPLY" {
		right, err := p.planApplied(fc, j.Right, left.Node().Schema, rightConj)
		if err != nil {
			return nil, nil, err
		}
		kind := map[string]string{"APPLY": "Inner Join", "OUTER APPLY": "Left Outer Join"}[j.Kind]
		it, err := p.nestedLoops(left, right, kind, AndAll(joinConj), true)
		return it, append(lrest, rest...), err
	}
	right, rrest, err := p.planRef(fc, j.Right, rightConj)
	if err != nil {
		return nil, nil, err
	}
	joinConj = append(joinConj, lrest...)
	joinConj = append(joinConj, rrest...)
	it, err := p.join(fc, j, left, right, rightConj, joinConj)
	return it, rest, err
}

// planApplied plans the right side of an APPLY with the left side's
// columns in scope (a correlated table source).
func (p *Planner) planApplied(fc *fromCtx, ref sqlfront.TableRef, left *Relation, conj []sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	leaf := fc.byRef[ref]
	q := p.child(left)
	var src Iter
	var err *sqlfront.SQLError
	switch r := ref.(type) {
	case *sqlfront.DerivedTable:
		src, err = q.planDerived(r, q.Scope)
	case *sqlfront.TableFunc:
		src = &tvfIter{n: q.newNode("Table-valued function", "Table-valued function", leaf.rel), f: r, schema: leaf.rel}
		src.Node().EstRows = 10
	default:
		src, err = q.planLeaf(leaf, nil)
	}
	if err != nil {
		return nil, err
	}
	if len(conj) > 0 {
		return q.filterOp(src, AndAll(conj))
	}
	return src, nil
}

// planDerived plans a derived table or VALUES constructor.
func (p *Planner) planDerived(d *sqlfront.DerivedTable, scope *PScope) (Iter, *sqlfront.SQLError) {
	q := &Planner{x: p.x, r: p.r, Scope: scope, ctes: p.ctes, Opts: p.Opts, subTypes: p.subTypes, StmtRoot: p.StmtRoot}
	qual := strings.ToLower(d.Alias)
	if d.Sel == nil {
		return q.valuesSource(d, qual)
	}
	it, schema, visible, err := q.PlanQuery(d.Sel)
	if err != nil {
		return nil, err
	}
	if q.correlated {
		p.correlated = true
	}
	out := &Relation{}
	for i := 0; i < visible; i++ {
		c := schema.Cols[i]
		c.Qual = qual
		if i < len(d.Columns) {
			c.Name = d.Columns[i]
		}
		if c.Name == "" {
			return nil, sqlfront.NewError(8155, 16, "No column name was specified for column %d of '%s'.", i+1, d.Alias)
		}
		out.Cols = append(out.Cols, c)
	}
	if len(d.Columns) > 0 && len(d.Columns) != visible {
		return nil, sqlfront.NewError(8158, 16, "'%s' has more columns than were specified in the column list.", d.Alias)
	}
	return &renameIter{in: it, n: it.Node(), schema: out}, nil
}

// valuesSource plans (VALUES …) AS v(cols) as a Constant Scan.
func (p *Planner) valuesSource(d *sqlfront.DerivedTable, qual string) (Iter, *sqlfront.SQLError) {
	out := &Relation{}
	for i := range d.Columns {
		var t sqlfront.SQLType
		for _, row := range d.Values {
			if i < len(row) {
				if err := p.Resolves(row[i], nil); err != nil {
					return nil, err
				}
				t = WiderType(t, p.typeOf(row[i], nil), row[i])
			}
		}
		if t.Kind == 0 {
			t = TInt
		}
		out.Cols = append(out.Cols, RelCol{Qual: qual, Name: d.Columns[i], Typ: t})
	}
	n := p.newNode("Constant Scan", "Constant Scan", out)
	n.EstRows = float64(len(d.Values))
	return &valuesIter{n: n, rows: d.Values, schema: out}, nil
}

// planLeaf plans one table source with the conjuncts that only it uses.
func (p *Planner) planLeaf(leaf *fromLeaf, local []sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	if leaf.tbl != nil {
		return p.accessPath(leaf, local)
	}
	src := leaf.src
	if src == nil {
		switch r := leaf.ref.(type) {
		case *sqlfront.TableFunc:
			src = &tvfIter{n: p.newNode("Table-valued function", "Table-valued function", leaf.rel), f: r, schema: leaf.rel}
			src.Node().EstRows = 10
		case *sqlfront.DerivedTable:
			var err *sqlfront.SQLError
			if src, err = p.planDerived(r, p.Scope); err != nil {
				return nil, err
			}
		case *sqlfront.TableName:
			if b := p.lookupCTE(r.Parts[0]); b != nil {
				var err *sqlfront.SQLError
				if src, err = p.planCTERef(leaf, b); err != nil {
					return nil, err
				}
			}
		}
	}
	if src == nil {
		return nil, sqlfront.ErrUnsupported("table source")
	}
	if !sameSchema(src.Node().Schema, leaf.rel) {
		src = &renameIter{in: src, n: src.Node(), schema: leaf.rel}
	}
	if len(local) > 0 {
		return p.filterOp(src, AndAll(local))
	}
	return src, nil
}

func sameSchema(a, b *Relation) bool {
	if a == b {
		return true
	}
	if len(a.Cols) != len(b.Cols) {
		return false
	}
	for i := range a.Cols {
		if a.Cols[i].Qual != b.Cols[i].Qual || a.Cols[i].Name != b.Cols[i].Name {
			return false
		}
	}
	return true
}

// impliedPredicates derives, for inner joins, a.x op c from b.y op c and
// a.x = b.y (SQL Server's implied predicates), so that both sides of a join
// on the key can seek the same range.
func (p *Planner) impliedPredicates(fc *fromCtx, conj []sqlfront.Expr) []sqlfront.Expr {
	type pair struct{ a, b *sqlfront.ColRef }
	var eqs []pair
	for _, c := range conj {
		if b, ok := c.(*sqlfront.BinaryExpr); ok && b.Op == "=" {
			l, lok := b.L.(*sqlfront.ColRef)
			r, rok := b.R.(*sqlfront.ColRef)
			if lok && rok {
				eqs = append(eqs, pair{l, r})
			}
		}
	}
	var out []sqlfront.Expr
	sameCol := func(x, y *sqlfront.ColRef) bool {
		i, _ := fc.all.LookupRef(x)
		j, _ := fc.all.LookupRef(y)
		return i >= 0 && i == j
	}
	for _, c := range conj {
		col, op, val, ok := sargable(c)
		if !ok || hasColumns(val) {
			continue
		}
		for _, e := range eqs {
			var other *sqlfront.ColRef
			switch {
			case sameCol(col, e.a):
				other = e.b
			case sameCol(col, e.b):
				other = e.a
			default:
				continue
			}
			switch op {
			case "BETWEEN":
				bt := c.(*sqlfront.BetweenExpr)
				out = append(out, &sqlfront.BetweenExpr{E: other, Lo: bt.Lo, Hi: bt.Hi})
			default:
				out = append(out, &sqlfront.BinaryExpr{Op: op, L: other, R: val})
			}
		}
	}
	return out
}

// sargable recognises column op value (or value op column, or BETWEEN)
// where value uses no column at all; op is =, <, <=, >, >= or BETWEEN.
func sargable(e sqlfront.Expr) (*sqlfront.ColRef, string, sqlfront.Expr, bool) {
	return sargableFor(e, func(v sqlfront.Expr) bool { return !hasColumns(v) })
}

// sargableFor is sargable with the test a value must pass.
func sargableFor(e sqlfront.Expr, valueOK func(sqlfront.Expr) bool) (*sqlfront.ColRef, string, sqlfront.Expr, bool) {
	switch x := e.(type) {
	case *sqlfront.BinaryExpr:
		switch x.Op {
		case "=", "<", "<=", ">", ">=":
		default:
			return nil, "", nil, false
		}
		if c, ok := x.L.(*sqlfront.ColRef); ok && valueOK(x.R) {
			return c, x.Op, x.R, true
		}
		if c, ok := x.R.(*sqlfront.ColRef); ok && valueOK(x.L) {
			return c, flipOp(x.Op), x.L, true
		}
	case *sqlfront.BetweenExpr:
		if c, ok := x.E.(*sqlfront.ColRef); ok && !x.Not && valueOK(x.Lo) && valueOK(x.Hi) {
			return c, "BETWEEN", x.Lo, true
		}
	}
	return nil, "", nil, false
}

func flipOp(op string) string {
	switch op {
	case "<":
		return ">"
	case ">":
		return "<"
	case "<=":
		return ">="
	case ">=":
		return "<="
	}
	return op
}

func hasColumns(e sqlfront.Expr) bool { return len(ColRefsOf(e)) > 0 || HasSubquery(e) }
