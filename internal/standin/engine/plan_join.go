package engine

import (
	"math"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Join algorithm choice, and subqueries as joins.

type equiKey struct{ l, r sqlfront.Expr }

// equiKeys splits join conjuncts into equality keys between the two sides
// and the residual predicate.
func (p *Planner) equiKeys(fc *fromCtx, conj []sqlfront.Expr, leftMask, rightMask uint64) ([]equiKey, []sqlfront.Expr, *sqlfront.SQLError) {
	var keys []equiKey
	var rest []sqlfront.Expr
	for _, c := range conj {
		b, ok := c.(*sqlfront.BinaryExpr)
		if ok && b.Op == "=" && !HasSubquery(b) {
			lm, err := p.refs(fc, b.L)
			if err != nil {
				return nil, nil, err
			}
			rm, err := p.refs(fc, b.R)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case lm != 0 && rm != 0 && lm&^leftMask == 0 && rm&^rightMask == 0:
				keys = append(keys, equiKey{b.L, b.R})
				continue
			case lm != 0 && rm != 0 && lm&^rightMask == 0 && rm&^leftMask == 0:
				keys = append(keys, equiKey{b.R, b.L})
				continue
			}
		}
		rest = append(rest, c)
	}
	return keys, rest, nil
}

// join plans one join of two planned inputs.
func (p *Planner) join(fc *fromCtx, j *sqlfront.JoinRef, left, right Iter, rightConj, conj []sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	leftMask := maskOf(fc.leavesOf(j.Left))
	rightMask := maskOf(fc.leavesOf(j.Right))
	keys, rest, err := p.equiKeys(fc, conj, leftMask, rightMask)
	if err != nil {
		return nil, err
	}
	residual := AndAll(rest)
	hint := j.Hint
	if hint == "" {
		hint = p.Opts.Join
	}
	kind := j.Kind
	if kind == "CROSS" {
		kind = "INNER"
	}
	le, re := left.Node().EstRows, right.Node().EstRows
	if len(keys) == 0 {
		if kind == "INNER" || kind == "LEFT" {
			logical := map[string]string{"INNER": "Inner Join", "LEFT": "Left Outer Join"}[kind]
			return p.nestedLoops(left, right, logical, residual, false)
		}
		return p.hashJoinFor(kind, left, right, nil, residual)
	}
	var lk, rk []sqlfront.Expr
	for _, k := range keys {
		lk = append(lk, k.l)
		rk = append(rk, k.r)
	}
	// index nested loops: the right side is a table whose index leads with
	// the join column, and the outer side is small
	if kind == "INNER" || kind == "LEFT" {
		if leaf, ok := j.Right.(*sqlfront.TableName); ok && (hint == "LOOP" || hint == "" && le <= 64) {
			if inner, ok := p.seekableInner(fc, fc.byRef[leaf], left, rightConj, keys); ok {
				logical := map[string]string{"INNER": "Inner Join", "LEFT": "Left Outer Join"}[kind]
				it, err := p.nestedLoops(left, inner, logical, residual, true)
				if err == nil {
					it.Node().EstRows = math.Max(1, math.Min(le*math.Max(inner.Node().EstRows, 1), math.Max(le, re)))
					it.Node().outerRefs = colRefsOfKeys(lk)
				}
				return it, err
			}
		}
		if hint == "LOOP" {
			logical := map[string]string{"INNER": "Inner Join", "LEFT": "Left Outer Join"}[kind]
			return p.nestedLoops(left, right, logical, AndAll(conj), false)
		}
	}
	if kind == "INNER" && (hint == "MERGE" || hint == "" && !p.Parallel && mergeable(left, right, lk, rk)) {
		if hint == "MERGE" && !mergeable(left, right, lk, rk) {
			left = p.sortOp(left, keyCols(left, lk), nil, true)
			right = p.sortOp(right, keyCols(right, rk), nil, true)
		}
		return p.mergeJoin(left, right, lk, rk, residual), nil
	}
	return p.hashJoinFor(kind, left, right, keys, residual)
}

func colRefsOfKeys(es []sqlfront.Expr) []*sqlfront.ColRef {
	var out []*sqlfront.ColRef
	for _, e := range es {
		out = append(out, ColRefsOf(e)...)
	}
	return out
}

// keyCols maps key expressions that are columns of in to sort keys.
func keyCols(in Iter, keys []sqlfront.Expr) []sortKey {
	var out []sortKey
	for _, k := range keys {
		if c, ok := k.(*sqlfront.ColRef); ok {
			if i, _ := in.Node().Schema.LookupRef(c); i >= 0 {
				out = append(out, sortKey{col: i})
			}
		}
	}
	return out
}

// mergeable: both inputs already come ordered on the join keys.
func mergeable(left, right Iter, lk, rk []sqlfront.Expr) bool {
	l, r := keyCols(left, lk), keyCols(right, rk)
	if len(l) != len(lk) || len(r) != len(rk) || len(l) == 0 {
		return false
	}
	return orderedBy(left, l) && orderedBy(right, r)
}

// seekableInner re-plans the right table of a join as the inner side of
// index nested loops: the join columns become seek predicates with outer
// references.
func (p *Planner) seekableInner(fc *fromCtx, leaf *fromLeaf, left Iter, rightConj []sqlfront.Expr, keys []equiKey) (Iter, bool) {
	if leaf == nil || leaf.tbl == nil {
		return nil, false
	}
	seekable := false
	for _, k := range keys {
		c, ok := k.r.(*sqlfront.ColRef)
		if !ok {
			continue
		}
		ci, _ := leaf.rel.LookupRef(c)
		for _, ix := range leaf.tbl.Indexes {
			lead := ix.Tbl.PK[0]
			if ix.ID != 1 {
				lead = ix.KeyCols[0]
			}
			if ci == lead {
				seekable = true
			}
		}
	}
	if !seekable {
		return nil, false
	}
	q := p.child(left.Node().Schema)
	conj := append([]sqlfront.Expr{}, rightConj...)
	for _, k := range keys {
		conj = append(conj, &sqlfront.BinaryExpr{Op: "=", L: k.r, R: k.l})
	}
	it, err := q.accessPath(leaf, conj)
	if err != nil {
		return nil, false
	}
	return it, true
}

// hashJoinFor plans a Hash Match join, building on the smaller input where
// the join type allows.
func (p *Planner) hashJoinFor(kind string, left, right Iter, keys []equiKey, residual sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	var lk, rk []sqlfront.Expr
	for _, k := range keys {
		lk = append(lk, k.l)
		rk = append(rk, k.r)
	}
	if p.Parallel {
		left = p.exchange(left, "Repartition Streams", colPositions(left, lk), nil)
		right = p.exchange(right, "Repartition Streams", colPositions(right, rk), nil)
	}
	buildLeft := left.Node().EstRows <= right.Node().EstRows
	var logical string
	switch kind {
	case "INNER":
		logical = "Inner Join"
	case "LEFT":
		if buildLeft {
			logical = "Left Outer Join"
		} else {
			logical = "Right Outer Join"
		}
	case "RIGHT":
		if buildLeft {
			logical = "Right Outer Join"
		} else {
			logical = "Left Outer Join"
		}
	case "FULL":
		logical = "Full Outer Join"
		buildLeft = true
	}
	var h *hashJoinIter
	var err *sqlfront.SQLError
	if buildLeft {
		h, err = p.hashJoin(left, right, lk, rk, residual, logical, false)
	} else {
		h, err = p.hashJoin(right, left, rk, lk, residual, logical, true)
	}
	if err != nil {
		return nil, err
	}
	if residual != nil {
		if err := p.Resolves(residual, h.schema); err != nil {
			return nil, err
		}
	}
	h.n.parallel = p.Parallel
	return h, nil
}

func colPositions(in Iter, keys []sqlfront.Expr) []int {
	var out []int
	for _, k := range keyCols(in, keys) {
		out = append(out, k.col)
	}
	return out
}

// semiJoinFor turns a WHERE conjunct that is [NOT] EXISTS or [NOT] IN
// (subquery) into a semi or anti semi join over the input.
func (p *Planner) semiJoinFor(c sqlfront.Expr) (func(Iter) (Iter, *sqlfront.SQLError), bool) {
	not := false
	if u, ok := c.(*sqlfront.UnaryExpr); ok && u.Op == "NOT" {
		not = true
		c = u.E
	}
	switch x := c.(type) {
	case *sqlfront.ExistsExpr:
		return func(in Iter) (Iter, *sqlfront.SQLError) {
			if it, ok, err := p.hashSemiJoin(in, x.Sel, not); ok || err != nil {
				return it, err
			}
			q := p.child(in.Node().Schema)
			inner, _, _, err := q.PlanQuery(x.Sel)
			if err != nil {
				return nil, err
			}
			kind := "Left Semi Join"
			if not {
				kind = "Left Anti Semi Join"
			}
			it, err := p.nestedLoops(in, inner, kind, nil, q.correlated)
			if err == nil && q.correlated {
				it.Node().outerRefs = outerRefsOf(x.Sel, in.Node().Schema)
			}
			return it, err
		}, true
	case *sqlfront.InExpr:
		if x.Sub == nil || x.Not != not && not {
			return nil, false
		}
		neg := x.Not != not
		return func(in Iter) (Iter, *sqlfront.SQLError) {
			q := p.child(in.Node().Schema)
			inner, schema, visible, err := q.PlanQuery(x.Sub)
			if err != nil {
				return nil, err
			}
			if visible != 1 {
				return nil, errSubqueryColumns()
			}
			if err := p.Resolves(x.E, in.Node().Schema); err != nil {
				return nil, err
			}
			if q.correlated {
				// correlated IN: a probe column per outer row, then a filter
				return p.planWhereRestValue(in, c, not)
			}
			kind := "Right Semi Join"
			if neg {
				kind = "Right Anti Semi Join"
			}
			bk := []sqlfront.Expr{&sqlfront.ColRef{Parts: []string{schema.Cols[0].Qual, schema.Cols[0].Name}}}
			if schema.Cols[0].Name == "" {
				inner = &renameIter{in: inner, n: inner.Node(), schema: &Relation{Cols: []RelCol{{Name: "%%in", Typ: schema.Cols[0].Typ}}}}
				bk = []sqlfront.Expr{&sqlfront.ColRef{Parts: []string{"%%in"}}}
			}
			h, err := p.hashJoin(inner, in, bk, []sqlfront.Expr{x.E}, nil, kind, false)
			if err != nil {
				return nil, err
			}
			h.notIn = neg
			return h, nil
		}, true
	}
	return nil, false
}

// planWhereRestValue applies a subquery predicate as probe columns and a
// Filter.
func (p *Planner) planWhereRestValue(in Iter, c sqlfront.Expr, not bool) (Iter, *sqlfront.SQLError) {
	pred := c
	if not {
		pred = &sqlfront.UnaryExpr{Op: "NOT", E: c}
	}
	in, err := p.planSubqueries(in, []sqlfront.Expr{pred})
	if err != nil {
		return nil, err
	}
	return p.filterOp(in, pred)
}

func errSubqueryColumns() *sqlfront.SQLError { // Msg 116
	return sqlfront.NewError(116, 16, "Only one expression can be specified in the select list when the subquery is not introduced with EXISTS.")
}

// outerRefsOf lists the columns of outer a subquery uses (showplan
// OuterReferences).
func outerRefsOf(s *sqlfront.SelectStmt, outer *Relation) []*sqlfront.ColRef {
	var out []*sqlfront.ColRef
	walkSelect(s, func(e sqlfront.Expr) {
		if c, ok := e.(*sqlfront.ColRef); ok {
			if i, _ := outer.LookupRef(c); i >= 0 {
				out = append(out, c)
			}
		}
	})
	return out
}

// planSubqueries adds, below the operator that evaluates exprs, a Nested
// Loops probe for every subquery in them; the subquery's value becomes a
// column the expression reads.
func (p *Planner) planSubqueries(in Iter, exprs []sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	for _, e := range exprs {
		for _, sq := range SubqueriesOf(e) {
			if _, done := in.Node().Schema.Subst[sq]; done {
				continue
			}
			var err *sqlfront.SQLError
			if in, err = p.probeFor(in, sq); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

func (p *Planner) probeFor(in Iter, sq sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	src := in.Node().Schema
	q := p.child(src)
	var sel *sqlfront.SelectStmt
	mode := nlScalar
	var probe sqlfront.Expr
	var j *nlIter
	switch x := sq.(type) {
	case *sqlfront.SubqueryExpr:
		sel = x.Sel
	case *sqlfront.ExistsExpr:
		sel, mode = x.Sel, nlExists
	case *sqlfront.InExpr:
		sel, mode, probe = x.Sub, nlIn, x.E
	case *sqlfront.QuantifiedExpr:
		sel, mode, probe = x.Sel, nlQuantify, x.E
	}
	inner, schema, visible, err := q.PlanQuery(sel)
	if err != nil {
		return nil, err
	}
	if mode != nlExists && visible != 1 {
		return nil, errSubqueryColumns()
	}
	p.subTypes[sel] = schema
	if probe != nil {
		if err := p.Resolves(probe, src); err != nil {
			return nil, err
		}
	}
	out := &Relation{Cols: append(append([]RelCol{}, src.Cols...), RelCol{Name: "", Typ: TBit}), Subst: map[sqlfront.Expr]int{}}
	for k, v := range src.Subst {
		out.Subst[k] = v
	}
	if mode == nlScalar {
		out.Cols[len(out.Cols)-1].Typ = schema.Cols[0].Typ
	}
	out.Subst[sq] = len(out.Cols) - 1
	logical := "Left Outer Join"
	if mode == nlExists || mode == nlIn || mode == nlQuantify {
		logical = "Left Semi Join"
	}
	n := p.newNode("Nested Loops", logical, out, in, inner)
	n.EstRows = in.Node().EstRows
	inner.Node().EstExecs = math.Max(1, in.Node().EstRows)
	n.SubtreeCost = in.Node().SubtreeCost + inner.Node().SubtreeCost
	j = &nlIter{n: n, outer: in, inner: inner, kind: logical, schema: out, mode: mode, probe: probe, cacheable: !q.correlated}
	if x, ok := sq.(*sqlfront.QuantifiedExpr); ok {
		j.qop, j.qall = x.Op, x.All
	}
	if q.correlated {
		n.outerRefs = outerRefsOf(sel, src)
	}
	n.probe = mode != nlScalar
	n.Details = j.Showplan
	return j, nil
}

// hashSemiJoin decorrelates [NOT] EXISTS (SELECT … WHERE inner.col =
// outer.col AND …) into a hash semi (anti semi) join when the inner side
// has no index to seek on the correlated column, as the optimizer does
// when re-running the subquery per outer row would scan it every time.
func (p *Planner) hashSemiJoin(in Iter, sel *sqlfront.SelectStmt, not bool) (Iter, bool, *sqlfront.SQLError) {
	if sel.Op != "" || sel.From == nil || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Top != nil || len(sel.With) > 0 {
		return nil, false, nil
	}
	inner := map[string]*sqlfront.TableName{}
	var collect func(r sqlfront.TableRef) bool
	collect = func(r sqlfront.TableRef) bool {
		switch t := r.(type) {
		case *sqlfront.TableName:
			q := strings.ToLower(t.Alias)
			if q == "" {
				q = strings.ToLower(t.Parts[len(t.Parts)-1])
			}
			inner[q] = t
			return true
		case *sqlfront.JoinRef:
			return t.Kind != "APPLY" && t.Kind != "OUTER APPLY" && collect(t.Left) && collect(t.Right)
		}
		return false
	}
	if !collect(sel.From) {
		return nil, false, nil
	}
	outer := in.Node().Schema
	var innerKeys, outerKeys, rest []sqlfront.Expr
	for _, c := range Conjuncts(sel.Where) {
		b, ok := c.(*sqlfront.BinaryExpr)
		if ok && b.Op == "=" {
			l, lok := b.L.(*sqlfront.ColRef)
			r, rok := b.R.(*sqlfront.ColRef)
			if lok && rok && len(l.Parts) > 1 && len(r.Parts) > 1 {
				lq, rq := strings.ToLower(l.Parts[len(l.Parts)-2]), strings.ToLower(r.Parts[len(r.Parts)-2])
				li, _ := outer.LookupRef(l)
				ri, _ := outer.LookupRef(r)
				switch {
				case inner[lq] != nil && inner[rq] == nil && ri >= 0:
					innerKeys, outerKeys = append(innerKeys, l), append(outerKeys, r)
					continue
				case inner[rq] != nil && inner[lq] == nil && li >= 0:
					innerKeys, outerKeys = append(innerKeys, r), append(outerKeys, l)
					continue
				}
			}
		}
		rest = append(rest, c)
	}
	if len(innerKeys) == 0 {
		return nil, false, nil
	}
	if key := innerKeys[0].(*sqlfront.ColRef); p.seekableKey(inner, key) &&
		(in.Node().EstRows <= lookupOuterRows || !p.seekNeedsLookups(inner, key, rest)) {
		return nil, false, nil
	}
	rewritten := *sel
	rewritten.Where = AndAll(rest)
	rewritten.Items = nil
	for _, k := range innerKeys {
		rewritten.Items = append(rewritten.Items, sqlfront.SelectItem{Expr: k})
	}
	q := p.child(outer)
	it, schema, _, err := q.PlanQuery(&rewritten)
	if err != nil {
		return nil, false, err
	}
	if q.correlated {
		return nil, false, nil // other outer references: nested loops
	}
	named := &Relation{}
	var bk []sqlfront.Expr
	for i, c := range schema.Cols[:len(innerKeys)] {
		c.Qual, c.Name = "", "%%semi"+itoaInt(i)
		named.Cols = append(named.Cols, c)
		bk = append(bk, &sqlfront.ColRef{Parts: []string{c.Name}})
	}
	build := &renameIter{in: it, n: it.Node(), schema: named}
	kind := "Right Semi Join"
	if not {
		kind = "Right Anti Semi Join"
	}
	h, err := p.hashJoin(build, in, bk, outerKeys, nil, kind, false)
	if err != nil {
		return nil, false, err
	}
	return h, true, nil
}

// seekableKey tells whether an inner table has an index leading with the
// column c.
func (p *Planner) seekableKey(inner map[string]*sqlfront.TableName, c *sqlfront.ColRef) bool {
	t, ci := p.innerColumn(inner, c)
	if t == nil {
		return false
	}
	for _, ix := range t.Indexes {
		lead := t.PK[0]
		if ix.ID != 1 {
			lead = ix.KeyCols[0]
		}
		if lead == ci {
			return true
		}
	}
	return false
}
