package engine

import (
	"sort"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Window functions (OVER): ranking functions (ROW_NUMBER, RANK,
// DENSE_RANK, NTILE), offset functions (LAG, LEAD, FIRST_VALUE,
// LAST_VALUE), distribution functions (PERCENT_RANK, CUME_DIST) and
// aggregates over ROWS or RANGE frames
// (https://learn.microsoft.com/en-us/sql/t-sql/queries/select-over-clause-transact-sql).
// One operator per distinct PARTITION BY/ORDER BY: it sorts its input when
// needed, then computes every function of that window a partition at a
// time. The showplan shows what SQL Server runs for it: Segment and
// Sequence Project for ranking functions, Segment, Window Spool and Stream
// Aggregate for framed aggregates and offset functions.

type windowIter struct {
	n      *PlanNode
	in     Iter
	spec   *sqlfront.WindowExpr // partition and order of every function here
	funcs  []*sqlfront.WindowExpr
	schema *Relation
	parts  []*PlanNode // the nodes shown for the computation, top first
	sortN  *PlanNode

	out   []*Tuple
	i     int
	bytes int64
}

func (w *windowIter) Node() *PlanNode { return w.n }

// planWindows adds the window operators the select list and ORDER BY need.
func (p *Planner) planWindows(in Iter, items []outItem, order []sqlfront.OrderItem) (Iter, *sqlfront.SQLError) {
	var all []*sqlfront.WindowExpr
	for _, it := range items {
		all = append(all, WindowsOf(it.e)...)
	}
	for _, o := range order {
		all = append(all, WindowsOf(o.Expr)...)
	}
	if len(all) == 0 {
		return in, nil
	}
	type group struct {
		key   string
		spec  *sqlfront.WindowExpr
		funcs []*sqlfront.WindowExpr
	}
	var groups []*group
	src := in.Node().Schema
	for _, w := range all {
		if err := p.checkWindow(w, src); err != nil {
			return nil, err
		}
		var kb strings.Builder
		for _, e := range w.PartitionBy {
			kb.WriteString(Shape(e, src) + ",")
		}
		kb.WriteString("|")
		for _, o := range w.OrderBy {
			kb.WriteString(Shape(o.Expr, src))
			if o.Desc {
				kb.WriteString(" desc")
			}
			kb.WriteString(",")
		}
		k := kb.String()
		var g *group
		for _, have := range groups {
			if have.key == k {
				g = have
			}
		}
		if g == nil {
			g = &group{key: k, spec: w}
			groups = append(groups, g)
		}
		g.funcs = append(g.funcs, w)
	}
	for _, g := range groups {
		in = p.windowOp(in, g.spec, g.funcs)
	}
	return in, nil
}

func (p *Planner) checkWindow(w *sqlfront.WindowExpr, src *Relation) *sqlfront.SQLError {
	name := w.F.Name
	switch name {
	case "ROW_NUMBER", "RANK", "DENSE_RANK", "NTILE", "LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "PERCENT_RANK", "CUME_DIST":
		if len(w.OrderBy) == 0 {
			return sqlfront.NewError(4112, 15, "The function '%s' must have an OVER clause with ORDER BY.", strings.ToLower(name))
		}
		if w.Frame != nil && (name == "ROW_NUMBER" || name == "RANK" || name == "DENSE_RANK" || name == "NTILE" || name == "LAG" || name == "LEAD") {
			return sqlfront.NewError(10752, 15, "The function '%s' may not have a window frame.", strings.ToLower(name))
		}
	default:
		if !IsAggregateName(name) {
			return sqlfront.NewError(4113, 15, "The function '%s' is not a valid windowing function, and cannot be used with the OVER clause.", strings.ToLower(name))
		}
		if w.F.Distinct {
			return sqlfront.NewError(10759, 15, "Use of DISTINCT is not allowed with the OVER clause.")
		}
	}
	for _, e := range append(append([]sqlfront.Expr{}, w.F.Args...), w.PartitionBy...) {
		if err := p.Resolves(e, src); err != nil {
			return err
		}
	}
	for _, o := range w.OrderBy {
		if err := p.Resolves(o.Expr, src); err != nil {
			return err
		}
	}
	return nil
}

func isRanking(name string) bool {
	switch name {
	case "ROW_NUMBER", "RANK", "DENSE_RANK", "NTILE":
		return true
	}
	return false
}

// windowOp builds one window operator with its showplan nodes.
func (p *Planner) windowOp(in Iter, spec *sqlfront.WindowExpr, funcs []*sqlfront.WindowExpr) Iter {
	src := in.Node().Schema
	out := &Relation{Cols: append([]RelCol{}, src.Cols...), Subst: map[sqlfront.Expr]int{}}
	for k, v := range src.Subst {
		out.Subst[k] = v
	}
	for _, f := range funcs {
		out.Subst[f] = len(out.Cols)
		out.Cols = append(out.Cols, RelCol{Typ: p.windowType(f, src)})
	}
	w := &windowIter{in: in, spec: spec, funcs: funcs, schema: out}
	ranking := true
	for _, f := range funcs {
		ranking = ranking && isRanking(f.F.Name)
	}
	rows := in.Node().EstRows
	var bottom Iter = in
	if needsSort(in, spec) {
		s := p.sortOp(in, nil, nil, true)
		w.sortN = s.Node()
		bottom = s
	}
	seg := p.newNode("Segment", "Segment", out, bottom)
	seg.EstRows = rows
	var top *PlanNode
	if ranking {
		top = &PlanNode{Physical: "Sequence Project", Logical: "Compute Scalar", Schema: out, EstRows: rows, EstExecs: 1, Children: []*PlanNode{seg}}
		w.parts = []*PlanNode{top, seg}
	} else {
		spool := &PlanNode{Physical: "Window Spool", Logical: "Window Spool", Schema: out, EstRows: rows, EstExecs: 1, Children: []*PlanNode{seg}}
		top = &PlanNode{Physical: "Stream Aggregate", Logical: "Aggregate", Schema: out, EstRows: rows, EstExecs: 1, Children: []*PlanNode{spool}}
		w.parts = []*PlanNode{top, spool, seg}
	}
	cost := in.Node().SubtreeCost
	if w.sortN != nil {
		cost = w.sortN.SubtreeCost
	}
	for i := len(w.parts) - 1; i >= 0; i-- {
		w.parts[i].EstCPU = 0.0000001 * rows
		cost += w.parts[i].EstCPU
		w.parts[i].SubtreeCost = cost
		w.parts[i].Details = w.partShowplan(w.parts[i])
	}
	if w.sortN != nil {
		w.sortN.Memory = true
		w.sortN.EstMemKB = int64(rows*float64(rowSizeOf(src)+16)/1024) + 1
		w.sortN.Details = w.sortShowplan
	}
	w.n = top
	return w
}

// needsSort: the input is not already ordered by partition and order keys.
func needsSort(in Iter, spec *sqlfront.WindowExpr) bool {
	var keys []sortKey
	schema := in.Node().Schema
	for _, e := range spec.PartitionBy {
		c, ok := e.(*sqlfront.ColRef)
		if !ok {
			return true
		}
		i, _ := schema.LookupRef(c)
		if i < 0 {
			return true
		}
		keys = append(keys, sortKey{col: i})
	}
	for _, o := range spec.OrderBy {
		c, ok := o.Expr.(*sqlfront.ColRef)
		if !ok {
			return true
		}
		i, _ := schema.LookupRef(c)
		if i < 0 {
			return true
		}
		keys = append(keys, sortKey{col: i, desc: o.Desc})
	}
	return !orderedBy(in, keys)
}

// winRow is an input row with its partition and order keys.
type winRow struct {
	t     *Tuple
	part  []any
	order []any
}

func (w *windowIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	w.out, w.i, w.bytes = nil, 0, 0
	now := r.X.Clock()
	for _, n := range w.parts[1:] {
		n.Opened, n.Start = true, now
		n.Counters(0).Executions++
	}
	if w.sortN != nil {
		w.sortN.Opened, w.sortN.Start = true, now
		w.sortN.Counters(0).Executions++
	}
	if err := r.Open(w.in, outer); err != nil {
		return err
	}
	env := &EvalEnv{X: r.X, Rel: w.in.Node().Schema, Outer: outer}
	var rows []*winRow
	for {
		t, err := r.Next(w.in)
		if err != nil {
			return err
		}
		if t == nil {
			break
		}
		if err := r.Hold(t); err != nil {
			return err
		}
		w.bytes += tupleBytes(t)
		env.Row, env.Srcs = t.Vals, t.Srcs
		wr := &winRow{t: t}
		for _, e := range w.spec.PartitionBy {
			v, err := env.Eval(e)
			if err != nil {
				return err
			}
			wr.part = append(wr.part, v)
		}
		for _, o := range w.spec.OrderBy {
			v, err := env.Eval(o.Expr)
			if err != nil {
				return err
			}
			wr.order = append(wr.order, v)
		}
		rows = append(rows, wr)
	}
	r.Close(w.in)
	if w.sortN != nil {
		sort.SliceStable(rows, func(a, b int) bool { return w.compareRows(rows[a], rows[b]) < 0 })
		r.work(len(rows), 250*time.Nanosecond)
		memoryUse(r.X, r, w.sortN, int64(len(rows)))
		c := w.sortN.Counters(0)
		c.Rows += int64(len(rows))
		c.endOfScans++
		w.sortN.End = r.X.Clock()
	}
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && compareKeyLists(rows[end].part, rows[start].part) == 0 {
			end++
		}
		if err := w.partition(r, env, rows[start:end]); err != nil {
			return err
		}
		start = end
	}
	for _, n := range w.parts[1:] {
		c := n.Counters(0)
		c.Rows += int64(len(w.out))
		c.endOfScans++
		n.End = r.X.Clock()
	}
	return nil
}

func (w *windowIter) compareRows(a, b *winRow) int {
	if c := compareKeyLists(a.part, b.part); c != 0 {
		return c
	}
	for i, o := range w.spec.OrderBy {
		c := compareNullsFirst(a.order[i], b.order[i])
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// partition computes every window function over one partition.
func (w *windowIter) partition(r *RunCtx, env *EvalEnv, rows []*winRow) *sqlfront.SQLError {
	n := len(rows)
	// peer groups: rows with equal ORDER BY values
	peerStart := make([]int, n)
	peerEnd := make([]int, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && compareKeyLists(rows[j].order, rows[i].order) == 0 {
			j++
		}
		for k := i; k < j; k++ {
			peerStart[k], peerEnd[k] = i, j-1
		}
		i = j
	}
	results := make([][]any, len(w.funcs))
	for fi, f := range w.funcs {
		vals, err := w.compute(r, env, f, rows, peerStart, peerEnd)
		if err != nil {
			return err
		}
		results[fi] = vals
	}
	for i, wr := range rows {
		vals := make([]any, len(w.schema.Cols))
		copy(vals, wr.t.Vals)
		for fi := range w.funcs {
			vals[len(wr.t.Vals)+fi] = results[fi][i]
		}
		w.out = append(w.out, &Tuple{Vals: vals, Srcs: wr.t.Srcs, thread: wr.t.thread})
	}
	r.work(n, 150*time.Nanosecond)
	return nil
}

// compute returns one function's value for every row of a partition.
func (w *windowIter) compute(r *RunCtx, env *EvalEnv, f *sqlfront.WindowExpr, rows []*winRow, peerStart, peerEnd []int) ([]any, *sqlfront.SQLError) {
	n := len(rows)
	out := make([]any, n)
	arg := func(k int) ([]any, *sqlfront.SQLError) {
		vals := make([]any, n)
		if k >= len(f.F.Args) {
			return vals, nil
		}
		for i, wr := range rows {
			env.Row, env.Srcs = wr.t.Vals, wr.t.Srcs
			v, err := env.Eval(f.F.Args[k])
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return vals, nil
	}
	constArg := func(k int, def int64) (int64, *sqlfront.SQLError) {
		if k >= len(f.F.Args) {
			return def, nil
		}
		v, err := (&EvalEnv{X: r.X, Outer: env.Outer}).Eval(f.F.Args[k])
		if err != nil {
			return 0, err
		}
		n, ok := v.(int64)
		if !ok || n < 0 {
			return 0, sqlfront.NewError(8730, 16, "Offset parameter for Lag and Lead functions cannot be a negative value.")
		}
		return n, nil
	}
	switch f.F.Name {
	case "ROW_NUMBER":
		for i := range out {
			out[i] = int64(i + 1)
		}
	case "RANK":
		for i := range out {
			out[i] = int64(peerStart[i] + 1)
		}
	case "DENSE_RANK":
		rank := int64(0)
		for i := range out {
			if i == 0 || peerStart[i] == i {
				rank++
			}
			out[i] = rank
		}
	case "NTILE":
		buckets, err := constArg(0, 1)
		if err != nil {
			return nil, err
		}
		if buckets <= 0 {
			return nil, sqlfront.NewError(4111, 16, "The argument for NTILE must be a positive integer.")
		}
		size, extra := int64(n)/buckets, int64(n)%buckets
		i := 0
		for b := int64(1); b <= buckets && i < n; b++ {
			cnt := size
			if b <= extra {
				cnt++
			}
			for k := int64(0); k < cnt && i < n; k++ {
				out[i] = b
				i++
			}
		}
	case "PERCENT_RANK":
		for i := range out {
			if n == 1 {
				out[i] = 0.0
			} else {
				out[i] = float64(peerStart[i]) / float64(n-1)
			}
		}
	case "CUME_DIST":
		for i := range out {
			out[i] = float64(peerEnd[i]+1) / float64(n)
		}
	case "LAG", "LEAD":
		vals, err := arg(0)
		if err != nil {
			return nil, err
		}
		off, err := constArg(1, 1)
		if err != nil {
			return nil, err
		}
		defs, err := arg(2)
		if err != nil {
			return nil, err
		}
		for i := range out {
			j := i - int(off)
			if f.F.Name == "LEAD" {
				j = i + int(off)
			}
			if j >= 0 && j < n {
				out[i] = vals[j]
			} else {
				out[i] = defs[i]
			}
		}
	default:
		vals, err := arg(0)
		if err != nil {
			return nil, err
		}
		return w.framed(f, vals, peerStart, peerEnd)
	}
	return out, nil
}

// frameOf gives the frame [a, b] of row i (b < a: empty).
func frameOf(f *sqlfront.WindowExpr, i, n int, peerStart, peerEnd []int) (int, int) {
	if len(f.OrderBy) == 0 {
		return 0, n - 1
	}
	fr := f.Frame
	if fr == nil {
		return 0, peerEnd[i] // RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
	}
	bound := func(b sqlfront.FrameBound, start bool) int {
		switch b.Kind {
		case -2:
			return 0
		case 2:
			return n - 1
		case 0:
			if fr.Rows {
				return i
			}
			if start {
				return peerStart[i]
			}
			return peerEnd[i]
		case -1:
			return i - int(b.N)
		}
		return i + int(b.N)
	}
	a, b := bound(fr.Start, true), bound(fr.End, false)
	if a < 0 {
		a = 0
	}
	if b > n-1 {
		b = n - 1
	}
	return a, b
}

// framed computes an aggregate or FIRST_VALUE/LAST_VALUE over each row's
// frame; frames that start at the partition start are accumulated as they
// grow.
func (w *windowIter) framed(f *sqlfront.WindowExpr, vals []any, peerStart, peerEnd []int) ([]any, *sqlfront.SQLError) {
	n := len(vals)
	out := make([]any, n)
	spec := &aggSpec{f: f.F, typ: w.schema.Cols[w.schema.Subst[f]].Typ}
	var run *aggAcc
	runEnd := -1
	for i := 0; i < n; i++ {
		a, b := frameOf(f, i, n, peerStart, peerEnd)
		switch f.F.Name {
		case "FIRST_VALUE":
			if a <= b {
				out[i] = vals[a]
			}
			continue
		case "LAST_VALUE":
			if a <= b {
				out[i] = vals[b]
			}
			continue
		}
		if b < a {
			acc := &aggAcc{}
			v, err := acc.result(spec)
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
		}
		if a == 0 && b >= runEnd {
			if run == nil {
				run = &aggAcc{}
			}
			for k := runEnd + 1; k <= b; k++ {
				if err := run.addValue(vals[k], f.F, nil); err != nil {
					return nil, err
				}
			}
			runEnd = b
			v, err := run.result(spec)
			if err != nil {
				return nil, err
			}
			out[i] = v
			continue
		}
		acc := &aggAcc{}
		for k := a; k <= b; k++ {
			if err := acc.addValue(vals[k], f.F, nil); err != nil {
				return nil, err
			}
		}
		v, err := acc.result(spec)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (w *windowIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if w.i >= len(w.out) {
		return nil, nil
	}
	w.i++
	return w.out[w.i-1], nil
}

func (w *windowIter) Close(r *RunCtx) {
	r.release(int64(len(w.out)), w.bytes)
	w.out = nil
}
