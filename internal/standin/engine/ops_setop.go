package engine

import (
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Set operations (UNION [ALL], INTERSECT, EXCEPT) and common table
// expressions, including recursive ones
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/set-operators-union-transact-sql,
// https://learn.microsoft.com/en-us/sql/t-sql/queries/with-common-table-expression-transact-sql).

// concatIter is Concatenation: its inputs one after another, converted to
// the combined column types.
type concatIter struct {
	n      *PlanNode
	ins    []Iter
	schema *Relation
	cur    int
	outer  *EvalEnv
}

func (c *concatIter) Node() *PlanNode { return c.n }

func (c *concatIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	c.cur, c.outer = 0, outer
	if len(c.ins) == 0 {
		return nil
	}
	return r.Open(c.ins[0], outer)
}

func (c *concatIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	for c.cur < len(c.ins) {
		t, err := r.Next(c.ins[c.cur])
		if err != nil {
			return nil, err
		}
		if t != nil {
			vals := make([]any, len(c.schema.Cols))
			for i := range vals {
				v, err := ConvertValue(t.Vals[i], c.schema.Cols[i].Typ)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			return &Tuple{Vals: vals, Srcs: t.Srcs, thread: t.thread}, nil
		}
		r.Close(c.ins[c.cur])
		c.cur++
		if c.cur < len(c.ins) {
			if err := r.Open(c.ins[c.cur], c.outer); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

func (c *concatIter) Close(r *RunCtx) {
	if c.cur < len(c.ins) {
		r.Close(c.ins[c.cur])
		c.cur = len(c.ins)
	}
}

// branch is one planned input of a set operation.
type branch struct {
	it      Iter
	schema  *Relation
	visible int
}

func (p *Planner) planBranch(s *sqlfront.SelectStmt) (branch, *sqlfront.SQLError) {
	if s.Op == "" && len(s.OrderBy) > 0 && s.Top == nil && s.Offset == nil {
		return branch{}, sqlfront.NewError(1033, 15, "The ORDER BY clause is invalid in views, inline functions, derived tables, subqueries, and common table expressions, unless TOP, OFFSET or FOR XML is also specified.")
	}
	it, schema, visible, err := p.PlanQuery(s)
	if err != nil {
		return branch{}, err
	}
	if visible < len(schema.Cols) {
		// drop the sort keys a TOP … ORDER BY branch carried
		cols := &Relation{Cols: schema.Cols[:visible]}
		exprs := make([]sqlfront.Expr, visible)
		for i := range exprs {
			exprs[i] = &sqlfront.ColRef{Parts: []string{"%%" + string(rune('a'+i))}}
		}
		n := p.projectNode(it, cols, false)
		it = &positionIter{n: n, in: it, width: visible}
		schema = cols
	}
	return branch{it: it, schema: schema, visible: visible}, nil
}

// positionIter keeps the first width columns of its input.
type positionIter struct {
	n     *PlanNode
	in    Iter
	width int
}

func (x *positionIter) Node() *PlanNode { return x.n }
func (x *positionIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	return r.Open(x.in, outer)
}
func (x *positionIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	t, err := r.Next(x.in)
	if err != nil || t == nil {
		return nil, err
	}
	return &Tuple{Vals: t.Vals[:x.width], Srcs: t.Srcs, thread: t.thread}, nil
}
func (x *positionIter) Close(r *RunCtx) { r.Close(x.in) }

// flattenSet lists the inputs of a chain of the same set operation.
func flattenSet(s *sqlfront.SelectStmt, op string, all bool) []*sqlfront.SelectStmt {
	if s.Op == op && s.All == all && len(s.OrderBy) == 0 && s.Top == nil && len(s.With) == 0 {
		return append(flattenSet(s.Left, op, all), flattenSet(s.Right, op, all)...)
	}
	return []*sqlfront.SelectStmt{s}
}

// planSetOp plans UNION [ALL], INTERSECT and EXCEPT, then the ORDER BY,
// OFFSET and TOP that apply to the whole.
func (p *Planner) planSetOp(s *sqlfront.SelectStmt) (Iter, *Relation, int, *sqlfront.SQLError) {
	var parts []*sqlfront.SelectStmt
	if s.Op == "UNION" {
		parts = append(flattenSet(s.Left, "UNION", s.All), flattenSet(s.Right, "UNION", s.All)...)
	} else {
		parts = []*sqlfront.SelectStmt{s.Left, s.Right}
	}
	var bs []branch
	for _, part := range parts {
		b, err := p.planBranch(part)
		if err != nil {
			return nil, nil, 0, err
		}
		if len(bs) > 0 && b.visible != bs[0].visible {
			return nil, nil, 0, sqlfront.NewError(205, 16, "All queries combined using a UNION, INTERSECT or EXCEPT operator must have an equal number of expressions in their target lists.")
		}
		bs = append(bs, b)
	}
	schema := &Relation{}
	for i, c := range bs[0].schema.Cols {
		col := RelCol{Name: c.Name, Typ: c.Typ}
		for _, b := range bs[1:] {
			col.Typ = WiderType(col.Typ, b.schema.Cols[i].Typ, nil)
		}
		schema.Cols = append(schema.Cols, col)
	}
	var it Iter
	switch s.Op {
	case "UNION":
		c := &concatIter{schema: schema}
		var ins []Iter
		for _, b := range bs {
			ins = append(ins, b.it)
		}
		c.ins = ins
		n := p.newNode("Concatenation", "Concatenation", schema, ins...)
		for _, in := range ins {
			n.EstRows += in.Node().EstRows
			n.SubtreeCost += in.Node().SubtreeCost
		}
		c.n = n
		n.Details = c.Showplan
		it = c
		if !s.All {
			it = p.distinctOp(it, len(schema.Cols))
			it.Node().Logical = "Aggregate"
		}
	case "INTERSECT", "EXCEPT":
		left := bs[0].it
		if !uniqueRows(left) {
			left = p.distinctOp(left, len(schema.Cols))
			left.Node().Logical = "Aggregate"
		}
		var lk, rk []sqlfront.Expr
		for i := range schema.Cols {
			lk = append(lk, &sqlfront.ColRef{Parts: []string{bs[0].schema.Cols[i].Qual, bs[0].schema.Cols[i].Name}})
			rk = append(rk, &sqlfront.ColRef{Parts: []string{bs[1].schema.Cols[i].Qual, bs[1].schema.Cols[i].Name}})
		}
		right := bs[1].it
		if unnamed(bs[0].schema) {
			left = &renameIter{in: left, n: left.Node(), schema: positional(bs[0].schema)}
			lk = positionalRefs(len(schema.Cols))
		}
		if unnamed(bs[1].schema) {
			right = &renameIter{in: right, n: right.Node(), schema: positional(bs[1].schema)}
			rk = positionalRefs(len(schema.Cols))
		}
		kind := "Right Semi Join"
		if s.Op == "EXCEPT" {
			kind = "Right Anti Semi Join"
		}
		h, err := p.hashJoin(right, left, rk, lk, nil, kind, false)
		if err != nil {
			return nil, nil, 0, err
		}
		h.nullsEqual = true
		h.schema = schema
		h.n.Schema = schema
		it = h
	}
	out, err := p.planOrderTop(s, it, len(schema.Cols))
	if err != nil {
		return nil, nil, 0, err
	}
	return out, out.Node().Schema, len(schema.Cols), nil
}

// unnamed: a column without a name or two columns of the same name, which
// a set operation's keys cannot refer to by name.
func unnamed(r *Relation) bool {
	seen := map[string]bool{}
	for _, c := range r.Cols {
		k := c.Qual + "." + strings.ToLower(c.Name)
		if c.Name == "" || seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

func positional(r *Relation) *Relation {
	out := &Relation{}
	for i, c := range r.Cols {
		c.Qual, c.Name = "", "%%"+itoaInt(i)
		out.Cols = append(out.Cols, c)
	}
	return out
}

func positionalRefs(n int) []sqlfront.Expr {
	out := make([]sqlfront.Expr, n)
	for i := range out {
		out[i] = &sqlfront.ColRef{Parts: []string{"%%" + itoaInt(i)}}
	}
	return out
}

func itoaInt(i int) string { return ValueString(int64(i)) }

// Common table expressions.

// bindCTE binds a FROM reference to a CTE: its columns come from a plan
// of its query made now (every reference is planned on its own, as SQL
// Server inlines a CTE at each reference).
func (p *Planner) bindCTE(leaf *fromLeaf, b *cteBinding) *sqlfront.SQLError {
	src, err := p.planCTERef(leaf, b)
	if err != nil {
		return err
	}
	leaf.src = src
	leaf.rel = src.Node().Schema
	return nil
}

func (p *Planner) planCTERef(leaf *fromLeaf, b *cteBinding) (Iter, *sqlfront.SQLError) {
	if b.working != nil {
		// the recursive member's reference to its own CTE: the rows of the
		// previous recursion level
		schema := requalify(b.working.schema, leaf.qual)
		n := p.newNode("Table Spool", "Lazy Spool", schema)
		n.EstRows = 10
		n.primary = b.working
		return &spoolReadIter{n: n, work: b.working}, nil
	}
	q := &Planner{x: p.x, r: p.r, Scope: p.Scope, Opts: p.Opts, subTypes: p.subTypes, StmtRoot: p.StmtRoot}
	q.ctes = p.ctesUpTo(b)
	var it Iter
	var schema *Relation
	var visible int
	var err *sqlfront.SQLError
	if b.recursive {
		it, schema, visible, err = q.planRecursive(b)
	} else {
		it, schema, visible, err = q.PlanQuery(b.def.Sel)
	}
	if err != nil {
		return nil, err
	}
	if q.correlated {
		p.correlated = true
	}
	out := &Relation{}
	if len(b.def.Columns) > 0 && len(b.def.Columns) != visible {
		return nil, sqlfront.NewError(8158, 16, "'%s' has more columns than were specified in the column list.", b.def.Name)
	}
	for i := 0; i < visible; i++ {
		c := schema.Cols[i]
		c.Qual = leaf.qual
		if i < len(b.def.Columns) {
			c.Name = b.def.Columns[i]
		}
		if c.Name == "" {
			return nil, sqlfront.NewError(8155, 16, "No column name was specified for column %d of '%s'.", i+1, b.def.Name)
		}
		c.Hidden = false
		out.Cols = append(out.Cols, c)
	}
	if visible < len(schema.Cols) {
		n := p.projectNode(it, out, false)
		return &positionIter{n: n, in: it, width: visible}, nil
	}
	return &renameIter{in: it, n: it.Node(), schema: out}, nil
}

// ctesUpTo is the CTE scope a CTE's own query sees: the CTEs defined
// before it in its WITH clause (and itself, when recursive).
func (p *Planner) ctesUpTo(b *cteBinding) []map[string]*cteBinding {
	var out []map[string]*cteBinding
	for _, scope := range p.ctes {
		if _, ok := scope[strings.ToLower(b.def.Name)]; !ok {
			out = append(out, scope)
			continue
		}
		visible := map[string]*cteBinding{}
		for k, v := range scope {
			visible[k] = v
		}
		out = append(out, visible)
		break
	}
	return out
}

// recursiveWork holds the rows of one recursion level.
type recursiveWork struct {
	schema *Relation
	rows   []*Tuple
	spool  *PlanNode // the Index Spool that owns the rows (showplan PrimaryNodeId)
}

// spoolReadIter reads the working rows (the stack spool's read side).
type spoolReadIter struct {
	n    *PlanNode
	work *recursiveWork
	i    int
}

func (s *spoolReadIter) Node() *PlanNode { return s.n }
func (s *spoolReadIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	s.i = 0
	return nil
}
func (s *spoolReadIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if s.i >= len(s.work.rows) {
		return nil, nil
	}
	s.i++
	return s.work.rows[s.i-1], nil
}
func (s *spoolReadIter) Close(r *RunCtx) {}

// recursiveIter evaluates a recursive CTE: the anchor rows, then the
// recursive member over the previous level's rows until a level is empty;
// more levels than MAXRECURSION (default 100; 0 = no limit) is Msg 530.
type recursiveIter struct {
	n         *PlanNode
	anchors   []Iter
	recursive []Iter
	work      *recursiveWork
	schema    *Relation
	maxLevels int

	level   int
	cur     []*Tuple
	pending []*Tuple
	phase   int // 0 anchors, 1 recursion
	ai      int
	outer   *EvalEnv
	active  Iter
	held    int64
	bytes   int64
	concat  *PlanNode
}

func (c *recursiveIter) Node() *PlanNode { return c.n }

func (p *Planner) planRecursive(b *cteBinding) (Iter, *Relation, int, *sqlfront.SQLError) {
	body := b.def.Sel
	if body.Op != "UNION" || !body.All {
		return nil, nil, 0, sqlfront.NewError(252, 16, "Recursive common table expression '%s' does not contain a top-level UNION ALL operator.", b.def.Name)
	}
	parts := append(flattenSet(body.Left, "UNION", true), flattenSet(body.Right, "UNION", true)...)
	var anchorParts, recParts []*sqlfront.SelectStmt
	for _, part := range parts {
		if referencesTable(part, b.def.Name) {
			recParts = append(recParts, part)
		} else {
			if len(recParts) > 0 {
				return nil, nil, 0, sqlfront.NewError(246, 16, "No anchor member was specified for recursive query \"%s\".", b.def.Name)
			}
			anchorParts = append(anchorParts, part)
		}
	}
	if len(anchorParts) == 0 {
		return nil, nil, 0, sqlfront.NewError(246, 16, "No anchor member was specified for recursive query \"%s\".", b.def.Name)
	}
	var anchors []branch
	for _, part := range anchorParts {
		br, err := p.planBranch(part)
		if err != nil {
			return nil, nil, 0, err
		}
		anchors = append(anchors, br)
	}
	schema := &Relation{}
	for i, c := range anchors[0].schema.Cols[:anchors[0].visible] {
		name := c.Name
		if i < len(b.def.Columns) {
			name = b.def.Columns[i]
		}
		schema.Cols = append(schema.Cols, RelCol{Name: name, Typ: c.Typ})
	}
	work := &recursiveWork{schema: schema}
	b.working = work
	defer func() { b.working = nil }()
	var recs []Iter
	for _, part := range recParts {
		br, err := p.planBranch(part)
		if err != nil {
			return nil, nil, 0, err
		}
		if br.visible != len(schema.Cols) {
			return nil, nil, 0, sqlfront.NewError(205, 16, "All queries combined using a UNION, INTERSECT or EXCEPT operator must have an equal number of expressions in their target lists.")
		}
		for i, c := range br.schema.Cols[:br.visible] {
			want := schema.Cols[i].Typ
			if c.Typ.Kind != want.Kind || c.Typ.Kind == sqlfront.TypeNVarChar && c.Typ.Size != want.Size {
				return nil, nil, 0, sqlfront.NewError(240, 16, "Types don't match between the anchor and the recursive part in column \"%s\" of recursive query \"%s\".", schema.Cols[i].Name, b.def.Name)
			}
		}
		recs = append(recs, br.it)
	}
	maxLevels := 100
	if p.Opts.MaxRecursion >= 0 {
		maxLevels = p.Opts.MaxRecursion
	}
	ins := []Iter{}
	for _, a := range anchors {
		ins = append(ins, a.it)
	}
	ins = append(ins, recs...)
	concat := p.newNode("Concatenation", "Concatenation", schema, ins...)
	spool := &PlanNode{Physical: "Index Spool", Logical: "Lazy Spool", Schema: schema, EstExecs: 1, Children: []*PlanNode{concat}}
	spool.stack = true
	concat.EstRows = 10
	spool.EstRows = 10
	c := &recursiveIter{n: spool, work: work, schema: schema, maxLevels: maxLevels, recursive: recs}
	for _, a := range anchors {
		c.anchors = append(c.anchors, a.it)
	}
	c.concat = concat
	spool.Details = c.Showplan
	concat.Details = c.concatShowplan
	work.spool = spool
	return c, schema, len(schema.Cols), nil
}

func (c *recursiveIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	c.level, c.cur, c.pending, c.phase, c.ai, c.outer, c.active = 0, nil, nil, 0, 0, outer, nil
	c.concat.Opened = true
	c.concat.Start = r.X.Clock()
	c.concat.Counters(0).Executions++
	return nil
}

func (c *recursiveIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	for {
		if c.active != nil {
			t, err := r.Next(c.active)
			if err != nil {
				return nil, err
			}
			if t != nil {
				row := &Tuple{Vals: make([]any, len(c.schema.Cols)), thread: t.thread}
				for i := range row.Vals {
					v, err := ConvertValue(t.Vals[i], c.schema.Cols[i].Typ)
					if err != nil {
						return nil, err
					}
					row.Vals[i] = v
				}
				if err := r.Hold(row); err != nil {
					return nil, err
				}
				c.held++
				c.bytes += tupleBytes(row)
				c.pending = append(c.pending, row)
				c.concat.Counters(0).Rows++
				return row, nil
			}
			r.Close(c.active)
			c.active = nil
		}
		if c.phase == 0 {
			if c.ai < len(c.anchors) {
				c.active = c.anchors[c.ai]
				c.ai++
				if err := r.Open(c.active, c.outer); err != nil {
					return nil, err
				}
				continue
			}
			c.phase, c.ai = 1, len(c.recursive)
		}
		if c.ai < len(c.recursive) {
			c.active = c.recursive[c.ai]
			c.ai++
			if err := r.Open(c.active, c.outer); err != nil {
				return nil, err
			}
			continue
		}
		// the level is complete: recurse over the rows it produced
		if len(c.pending) == 0 {
			c.concat.End = r.X.Clock()
			return nil, nil
		}
		if c.maxLevels > 0 && c.level >= c.maxLevels {
			return nil, sqlfront.NewError(530, 16, "The statement terminated. The maximum recursion %d has been exhausted before statement completion.", c.maxLevels)
		}
		c.level++
		var freed int64
		for _, t := range c.cur {
			freed += tupleBytes(t)
		}
		r.release(int64(len(c.cur)), freed)
		c.held -= int64(len(c.cur))
		c.bytes -= freed
		c.cur, c.pending = c.pending, nil
		c.work.rows = c.cur
		c.ai = 0
	}
}

func (c *recursiveIter) Close(r *RunCtx) {
	if c.active != nil {
		r.Close(c.active)
		c.active = nil
	}
	r.release(c.held, c.bytes)
	c.held, c.bytes = 0, 0
	c.cur, c.pending = nil, nil
}
