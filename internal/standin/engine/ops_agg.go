package engine

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Aggregation: Stream Aggregate (scalar aggregates, input ordered on the
// grouping columns, ROLLUP), Hash Match (Aggregate) otherwise, and
// GROUPING SETS/CUBE as one pass computing every set
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/aggregate-functions-transact-sql).

// aggSpec is one aggregate (or GROUPING()/GROUPING_ID()) an aggregation
// computes.
type aggSpec struct {
	f        *sqlfront.FuncCall
	grouping []int // GROUPING/GROUPING_ID: the group expressions they test
	isGroup  bool
	typ      sqlfront.SQLType
}

type aggAcc struct {
	count    int64
	sumI     int64
	sumF     float64
	isF      bool
	best     any
	seen     map[string]bool
	strs     []strAggItem
	mean, m2 float64
}

type strAggItem struct {
	v    string
	keys []any
}

type aggIter struct {
	n      *PlanNode
	in     Iter
	groups []sqlfront.Expr
	aggs   []*aggSpec
	sets   [][]int // nil: one set of all groups
	schema *Relation
	scalar bool

	out   []*Tuple
	i     int
	bytes int64
}

func (a *aggIter) Node() *PlanNode { return a.n }

// planAggregation plans GROUP BY, the aggregates and HAVING; the result's
// schema maps every grouping expression and aggregate of the select list,
// HAVING and ORDER BY to its column.
func (p *Planner) planAggregation(s *sqlfront.SelectStmt, in Iter, items []outItem) (Iter, *sqlfront.SQLError) {
	src := in.Node().Schema
	for _, g := range s.GroupBy {
		if err := p.Resolves(g, src); err != nil {
			return nil, err
		}
		if len(AggregatesOf(g)) > 0 {
			return nil, sqlfront.NewError(144, 15, "Cannot use an aggregate or a subquery in an expression used for the group by list of a GROUP BY clause.")
		}
	}
	var exprs []sqlfront.Expr
	for _, it := range items {
		exprs = append(exprs, it.e)
	}
	if s.Having != nil {
		exprs = append(exprs, s.Having)
	}
	for _, o := range s.OrderBy {
		exprs = append(exprs, o.Expr)
	}
	out := &Relation{Subst: map[sqlfront.Expr]int{}}
	groupKeys := map[string]int{}
	for i, g := range s.GroupBy {
		col := RelCol{Typ: p.typeOf(g, src)}
		if c, ok := g.(*sqlfront.ColRef); ok {
			if j, _ := src.LookupRef(c); j >= 0 {
				col = src.Cols[j]
			}
		}
		out.Cols = append(out.Cols, col)
		groupKeys[Shape(g, src)] = i
	}
	aggKeys := map[string]int{}
	var aggs []*aggSpec
	var bindErr *sqlfront.SQLError
	for _, e := range exprs {
		Visit(e, func(n sqlfront.Expr) bool {
			if bindErr != nil {
				return false
			}
			if _, isLit := n.(*sqlfront.Literal); !isLit {
				if gi, ok := groupKeys[Shape(n, src)]; ok {
					out.Subst[n] = gi
					return false
				}
			}
			f, ok := n.(*sqlfront.FuncCall)
			if !ok {
				return true
			}
			switch {
			case IsAggregateName(f.Name):
				for _, a := range f.Args {
					if len(AggregatesOf(a)) > 0 || HasSubquery(a) {
						bindErr = sqlfront.NewError(130, 16, "Cannot perform an aggregate function on an expression containing an aggregate or a subquery.")
						return false
					}
					if err := p.Resolves(a, src); err != nil {
						bindErr = err
						return false
					}
				}
				if err := checkAggArgs(f); err != nil {
					bindErr = err
					return false
				}
			case f.Name == "GROUPING" || f.Name == "GROUPING_ID":
			default:
				return true
			}
			k := Shape(f, src)
			if i, ok := aggKeys[k]; ok {
				out.Subst[n] = i
				return false
			}
			spec := &aggSpec{f: f, typ: p.typeOf(f, src)}
			if f.Name == "GROUPING" || f.Name == "GROUPING_ID" {
				spec.isGroup = true
				for _, a := range f.Args {
					gi, ok := groupKeys[Shape(a, src)]
					if !ok {
						bindErr = sqlfront.NewError(8120, 16, "Column '%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.", exprText(a))
						return false
					}
					spec.grouping = append(spec.grouping, gi)
				}
				if f.Name == "GROUPING" {
					spec.typ = TTinyInt
				} else {
					spec.typ = TInt
				}
			}
			idx := len(out.Cols)
			aggKeys[k] = idx
			out.Subst[n] = idx
			aggs = append(aggs, spec)
			out.Cols = append(out.Cols, RelCol{Typ: spec.typ})
			return false
		})
		if bindErr != nil {
			return nil, bindErr
		}
	}
	if err := p.checkGroupedRefs(items, s, out, src); err != nil {
		return nil, err
	}
	it := p.aggregateOp(in, s.GroupBy, aggs, s.GroupingSets, s.GroupKind, out)
	if s.Having != nil {
		var err *sqlfront.SQLError
		if it, err = p.planSubqueries(it, []sqlfront.Expr{s.Having}); err != nil {
			return nil, err
		}
		return p.filterOp(it, s.Having)
	}
	return it, nil
}

// checkAggArgs checks an aggregate's argument count.
func checkAggArgs(f *sqlfront.FuncCall) *sqlfront.SQLError {
	want := 1
	if f.Name == "STRING_AGG" {
		want = 2
	}
	if f.Star {
		if f.Name != "COUNT" && f.Name != "COUNT_BIG" {
			return sqlfront.ErrSyntaxNear("*")
		}
		return nil
	}
	if len(f.Args) != want {
		return sqlfront.NewError(174, 15, "The %s function requires %d argument(s).", strings.ToLower(f.Name), want)
	}
	return nil
}

// checkGroupedRefs rejects columns used outside aggregates that are not
// grouped (Msg 8120, or 8121 in HAVING).
func (p *Planner) checkGroupedRefs(items []outItem, s *sqlfront.SelectStmt, out, src *Relation) *sqlfront.SQLError {
	check := func(e sqlfront.Expr, having bool) *sqlfront.SQLError {
		var bad *sqlfront.ColRef
		Visit(e, func(n sqlfront.Expr) bool {
			if _, ok := out.Subst[n]; ok {
				return false
			}
			if _, ok := n.(*sqlfront.WindowExpr); ok {
				// a window function's own columns are checked as select items
				for _, pe := range n.(*sqlfront.WindowExpr).PartitionBy {
					Visit(pe, func(m sqlfront.Expr) bool {
						if _, ok := out.Subst[m]; ok {
							return false
						}
						if c, ok := m.(*sqlfront.ColRef); ok && bad == nil {
							if i, _ := src.LookupRef(c); i >= 0 {
								bad = c
							}
						}
						return true
					})
				}
				return false
			}
			if c, ok := n.(*sqlfront.ColRef); ok && bad == nil {
				if i, _ := src.LookupRef(c); i >= 0 {
					bad = c
				}
			}
			return true
		})
		if bad == nil {
			return nil
		}
		name := strings.Join(bad.Parts, ".")
		if having {
			return sqlfront.NewError(8121, 16, "Column '%s' is invalid in the HAVING clause because it is not contained in either an aggregate function or the GROUP BY clause.", name)
		}
		return ErrNotInGroupBy(name)
	}
	for _, it := range items {
		if err := check(it.e, false); err != nil {
			return err
		}
	}
	if s.Having != nil {
		if err := check(s.Having, true); err != nil {
			return err
		}
	}
	return nil
}

// aggregateOp chooses the aggregate operator.
func (p *Planner) aggregateOp(in Iter, groups []sqlfront.Expr, aggs []*aggSpec, sets [][]int, kind string, out *Relation) Iter {
	a := &aggIter{in: in, groups: groups, aggs: aggs, sets: sets, schema: out, scalar: len(groups) == 0 && sets == nil}
	src := in.Node().Schema
	stream := a.scalar
	if !stream && sets == nil {
		var keys []sortKey
		ok := true
		for _, g := range groups {
			c, isCol := g.(*sqlfront.ColRef)
			if !isCol {
				ok = false
				break
			}
			j, _ := src.LookupRef(c)
			if j < 0 {
				ok = false
				break
			}
			keys = append(keys, sortKey{col: j})
		}
		stream = ok && orderedBy(in, keys)
		if !stream && ok && hasStringAgg(aggs) {
			// STRING_AGG has no hash implementation in SQL Server: its plans
			// sort on the groups and use a Stream Aggregate
			in = p.sortOp(in, keys, nil, false)
			a.in = in
			stream = true
		}
	}
	if kind == "ROLLUP" {
		var keys []sortKey
		for _, g := range groups {
			if c, ok := g.(*sqlfront.ColRef); ok {
				if j, _ := src.LookupRef(c); j >= 0 {
					keys = append(keys, sortKey{col: j})
				}
			}
		}
		if len(keys) == len(groups) && !orderedBy(in, keys) {
			in = p.sortOp(in, keys, nil, false)
			a.in = in
		}
		stream = true
	}
	if p.Parallel && !stream {
		var keys []int
		for _, g := range groups {
			if c, ok := g.(*sqlfront.ColRef); ok {
				if j, _ := src.LookupRef(c); j >= 0 {
					keys = append(keys, j)
				}
			}
		}
		in = p.exchange(in, "Repartition Streams", keys, nil)
		a.in = in
	}
	phys := "Hash Match"
	if stream {
		phys = "Stream Aggregate"
	}
	n := p.newNode(phys, "Aggregate", out, in)
	inRows := in.Node().EstRows
	switch {
	case a.scalar:
		n.EstRows = 1
	default:
		n.EstRows = math.Max(1, p.groupEstimate(in, groups))
		if sets != nil {
			n.EstRows *= float64(len(sets))
		}
	}
	n.EstCPU = 0.0000011*inRows + 0.00001
	if !stream {
		n.EstCPU += 0.0178
		n.Memory = true
		n.EstMemKB = int64(n.EstRows*float64(rowSizeOf(out)+32)/1024) + 1
	}
	n.SubtreeCost = in.Node().SubtreeCost + n.EstCPU
	n.parallel = p.Parallel && !stream
	a.n = n
	n.Details = a.Showplan
	return a
}

// groupEstimate guesses the number of groups: the product of the grouping
// columns' distinct counts, capped by the input rows.
func (p *Planner) groupEstimate(in Iter, groups []sqlfront.Expr) float64 {
	est := 1.0
	inRows := math.Max(in.Node().EstRows, 1)
	for _, g := range groups {
		d := math.Sqrt(inRows)
		if c, ok := g.(*sqlfront.ColRef); ok {
			if base := p.baseDistinct(in, c); base > 0 {
				d = base
			}
		}
		est *= d
	}
	return math.Min(est, inRows)
}

// baseDistinct finds a column's distinct count when it comes straight
// from a base table scan below.
func (p *Planner) baseDistinct(in Iter, c *sqlfront.ColRef) float64 {
	var found float64
	var walk func(it *PlanNode)
	walk = func(n *PlanNode) {
		if n.Index != nil && found == 0 {
			if i, _ := n.Schema.LookupRef(c); i >= 0 {
				if ti := n.Index.Tbl.Column(n.Schema.Cols[i].Name); ti >= 0 {
					found = tableStats(p.x, n.Index.Tbl).distinct[ti]
				}
			}
		}
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(in.Node())
	return found
}

// aggGroup is one group of one grouping set, with its accumulators.
type aggGroup struct {
	set    int
	keys   []any
	accs   []*aggAcc
	thread int
}

func (a *aggIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	a.out, a.i, a.bytes = nil, 0, 0
	sets := a.sets
	if sets == nil {
		all := make([]int, len(a.groups))
		for i := range all {
			all[i] = i
		}
		sets = [][]int{all}
	}
	order, err := a.consume(r, outer, sets)
	if err != nil {
		return err
	}
	memoryUse(r.X, r, a.n, int64(len(order)))
	return a.emit(order, sets)
}

// consume reads the input into groups of every grouping set.
func (a *aggIter) consume(r *RunCtx, outer *EvalEnv, sets [][]int) ([]*aggGroup, *sqlfront.SQLError) {
	if err := r.Open(a.in, outer); err != nil {
		return nil, err
	}
	defer r.Close(a.in)
	src := a.in.Node().Schema
	env := &EvalEnv{X: r.X, Rel: src, Outer: outer}
	index := map[string]*aggGroup{}
	var order []*aggGroup
	gvals := make([]any, len(a.groups))
	for {
		t, err := r.Next(a.in)
		if err != nil {
			return nil, err
		}
		if t == nil {
			break
		}
		env.Row, env.Srcs = t.Vals, t.Srcs
		for i, g := range a.groups {
			v, err := env.Eval(g)
			if err != nil {
				return nil, err
			}
			gvals[i] = v
		}
		for si, set := range sets {
			setVals := make([]any, len(set))
			for i, gi := range set {
				setVals[i] = gvals[gi]
			}
			k := string(rune('0'+si%10)) + groupKey(setVals)
			g := index[k]
			if g == nil {
				g = &aggGroup{set: si, keys: append([]any{}, gvals...), accs: make([]*aggAcc, len(a.aggs)), thread: t.thread}
				for i := range g.accs {
					g.accs[i] = &aggAcc{}
				}
				index[k] = g
				order = append(order, g)
				kt := &Tuple{Vals: g.keys}
				if err := r.Hold(kt); err != nil {
					return nil, err
				}
				a.bytes += tupleBytes(kt)
			}
			for i, spec := range a.aggs {
				if spec.isGroup {
					continue
				}
				if err := g.accs[i].add(env, spec.f); err != nil {
					return nil, err
				}
			}
		}
		r.work(1, 120*time.Nanosecond)
	}
	if len(order) == 0 {
		// aggregates over no rows: one row for a scalar aggregate and for
		// an empty grouping set
		for si, set := range sets {
			if len(set) == 0 && (a.scalar || a.sets != nil) {
				g := &aggGroup{set: si, keys: make([]any, len(a.groups)), accs: make([]*aggAcc, len(a.aggs))}
				for i := range g.accs {
					g.accs[i] = &aggAcc{}
				}
				order = append(order, g)
			}
		}
	}
	return order, nil
}

// emit turns the groups into output rows: grouping columns not in a
// row's set are NULL, GROUPING()/GROUPING_ID() give the bits.
func (a *aggIter) emit(order []*aggGroup, sets [][]int) *sqlfront.SQLError {
	for _, g := range order {
		set := sets[g.set]
		inSet := map[int]bool{}
		for _, gi := range set {
			inSet[gi] = true
		}
		vals := make([]any, len(a.schema.Cols))
		for i := range a.groups {
			if inSet[i] {
				vals[i] = g.keys[i]
			}
		}
		for i, spec := range a.aggs {
			col := len(a.groups) + i
			if spec.isGroup {
				var bits int64
				for _, gi := range spec.grouping {
					bits <<= 1
					if !inSet[gi] {
						bits |= 1
					}
				}
				vals[col] = bits
				continue
			}
			v, err := g.accs[i].result(spec)
			if err != nil {
				return err
			}
			vals[col] = v
		}
		a.out = append(a.out, &Tuple{Vals: vals, thread: g.thread})
	}
	return nil
}

func (a *aggIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if a.i >= len(a.out) {
		return nil, nil
	}
	a.i++
	return a.out[a.i-1], nil
}

func (a *aggIter) Close(r *RunCtx) {
	r.release(int64(len(a.out)), a.bytes)
	a.out = nil
}

// add folds one input row into the accumulator.
func (acc *aggAcc) add(env *EvalEnv, f *sqlfront.FuncCall) *sqlfront.SQLError {
	if f.Star {
		acc.count++
		return nil
	}
	v, err := env.Eval(f.Args[0])
	if err != nil {
		return err
	}
	var keys []any
	if f.Name == "STRING_AGG" && v != nil {
		for _, o := range f.Within {
			k, err := env.Eval(o.Expr)
			if err != nil {
				return err
			}
			keys = append(keys, k)
		}
	}
	return acc.addValue(v, f, keys)
}

// addValue folds one argument value (with STRING_AGG's order keys).
func (acc *aggAcc) addValue(v any, f *sqlfront.FuncCall, keys []any) *sqlfront.SQLError {
	if f.Star {
		acc.count++
		return nil
	}
	if v == nil {
		return nil
	}
	if f.Distinct {
		k := strings.ToUpper(JoinKey(v))
		if acc.seen == nil {
			acc.seen = map[string]bool{}
		}
		if acc.seen[k] {
			return nil
		}
		acc.seen[k] = true
	}
	acc.count++
	switch f.Name {
	case "SUM", "AVG", "STDEV", "STDEVP", "VAR", "VARP":
		var x float64
		switch n := v.(type) {
		case int64:
			acc.sumI += n
			x = float64(n)
		case float64:
			acc.isF = true
			x = n
		case bool:
			return sqlfront.NewError(8117, 16, "Operand data type bit is invalid for %s operator.", strings.ToLower(f.Name))
		default:
			return sqlfront.NewError(8117, 16, "Operand data type %s is invalid for %s operator.", TypeOfValue(v), strings.ToLower(f.Name))
		}
		acc.sumF += x
		d := x - acc.mean
		acc.mean += d / float64(acc.count)
		acc.m2 += d * (x - acc.mean)
	case "MIN", "MAX":
		if acc.best == nil {
			acc.best = v
			return nil
		}
		c, err := CompareValues(v, acc.best)
		if err != nil {
			return err
		}
		if f.Name == "MIN" && c < 0 || f.Name == "MAX" && c > 0 {
			acc.best = v
		}
	case "STRING_AGG":
		acc.strs = append(acc.strs, strAggItem{v: ValueString(v), keys: keys})
	}
	return nil
}

// result is the aggregate's value for its group.
func (acc *aggAcc) result(spec *aggSpec) (any, *sqlfront.SQLError) {
	f := spec.f
	switch f.Name {
	case "COUNT", "COUNT_BIG":
		if f.Name == "COUNT" && acc.count > math.MaxInt32 {
			return nil, sqlfront.NewError(8115, 16, "Arithmetic overflow error converting expression to data type int.")
		}
		return acc.count, nil
	case "SUM":
		if acc.count == 0 {
			return nil, nil
		}
		if acc.isF || spec.typ.Kind == sqlfront.TypeFloat || spec.typ.Kind == sqlfront.TypeDecimal {
			if spec.typ.Kind == sqlfront.TypeDecimal {
				return RoundHalfAway(acc.sumF, spec.typ.Scale), nil
			}
			return acc.sumF, nil
		}
		if spec.typ.Kind == sqlfront.TypeInt && (acc.sumI > math.MaxInt32 || acc.sumI < math.MinInt32) {
			return nil, sqlfront.NewError(8115, 16, "Arithmetic overflow error converting expression to data type int.")
		}
		return acc.sumI, nil
	case "AVG":
		if acc.count == 0 {
			return nil, nil
		}
		if acc.isF || spec.typ.Kind == sqlfront.TypeFloat {
			return acc.sumF / float64(acc.count), nil
		}
		if spec.typ.Kind == sqlfront.TypeDecimal {
			return RoundHalfAway(acc.sumF/float64(acc.count), spec.typ.Scale), nil
		}
		return acc.sumI / acc.count, nil
	case "STDEV", "VAR":
		if acc.count < 2 {
			return nil, nil
		}
		v := acc.m2 / float64(acc.count-1)
		if f.Name == "STDEV" {
			return math.Sqrt(v), nil
		}
		return v, nil
	case "STDEVP", "VARP":
		if acc.count == 0 {
			return nil, nil
		}
		v := acc.m2 / float64(acc.count)
		if f.Name == "STDEVP" {
			return math.Sqrt(v), nil
		}
		return v, nil
	case "STRING_AGG":
		if len(acc.strs) == 0 {
			return nil, nil
		}
		if len(f.Within) > 0 {
			sort.SliceStable(acc.strs, func(i, j int) bool {
				for k, o := range f.Within {
					a, b := acc.strs[i].keys[k], acc.strs[j].keys[k]
					c := compareNullsFirst(a, b)
					if o.Desc {
						c = -c
					}
					if c != 0 {
						return c < 0
					}
				}
				return false
			})
		}
		sep := ""
		if lit, ok := f.Args[1].(*sqlfront.Literal); ok {
			sep = ValueString(lit.V)
		}
		parts := make([]string, len(acc.strs))
		for i, s := range acc.strs {
			parts[i] = s.v
		}
		return strings.Join(parts, sep), nil
	}
	return acc.best, nil
}

func compareNullsFirst(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	c, _ := CompareValues(a, b)
	return c
}

// distinctIter returns each distinct row of its first n columns once, as
// rows arrive (Hash Match Flow Distinct).
type distinctIter struct {
	n     *PlanNode
	in    Iter
	width int
	seen  map[string]bool
	bytes int64
}

func (d *distinctIter) Node() *PlanNode { return d.n }

func (p *Planner) planDistinct(in Iter, visible int) (Iter, *sqlfront.SQLError) {
	for _, c := range in.Node().Schema.Cols[visible:] {
		if c.Hidden {
			return nil, sqlfront.NewError(145, 15, "ORDER BY items must appear in the select list if SELECT DISTINCT is specified.")
		}
	}
	return p.distinctOp(in, visible), nil
}

func (p *Planner) distinctOp(in Iter, width int) Iter {
	n := p.newNode("Hash Match", "Flow Distinct", in.Node().Schema, in)
	n.EstRows = math.Max(1, in.Node().EstRows*0.5)
	n.EstCPU = 0.0178 + 0.0000011*in.Node().EstRows
	n.SubtreeCost = in.Node().SubtreeCost + n.EstCPU
	n.Memory = true
	n.EstMemKB = int64(n.EstRows*float64(rowSizeOf(in.Node().Schema)+24)/1024) + 1
	d := &distinctIter{n: n, in: in, width: width}
	n.Details = d.Showplan
	return d
}

func (d *distinctIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	d.seen, d.bytes = map[string]bool{}, 0
	return r.Open(d.in, outer)
}

func (d *distinctIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	for {
		t, err := r.Next(d.in)
		if err != nil || t == nil {
			if t == nil && err == nil {
				memoryUse(r.X, r, d.n, int64(len(d.seen)))
			}
			return nil, err
		}
		k := groupKey(t.Vals[:d.width])
		if d.seen[k] {
			continue
		}
		d.seen[k] = true
		if err := r.Hold(t); err != nil {
			return nil, err
		}
		d.bytes += tupleBytes(t)
		return t, nil
	}
}

func (d *distinctIter) Close(r *RunCtx) {
	r.release(int64(len(d.seen)), d.bytes)
	d.seen = nil
	r.Close(d.in)
}

// groupKey is the grouping key of values: equal as GROUP BY and DISTINCT
// compare them (NULLs together, strings case-insensitively).
func groupKey(vals []any) string {
	var kb strings.Builder
	for _, v := range vals {
		if v == nil {
			kb.WriteString("\x01")
		} else {
			kb.WriteString(strings.ToUpper(JoinKey(v)))
		}
		kb.WriteByte(0)
	}
	return kb.String()
}

// hasStringAgg reports whether any aggregate is STRING_AGG.
func hasStringAgg(aggs []*aggSpec) bool {
	for _, a := range aggs {
		if a.f != nil && a.f.Name == "STRING_AGG" {
			return true
		}
	}
	return false
}
