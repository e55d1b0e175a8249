package engine

import (
	"math"
	"sort"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Access paths and cardinality estimates. Statistics are what SQL Server
// keeps per column (row count, density, a histogram — here a sorted sample
// of up to 200 values); predicates the statistics cannot answer get the
// optimizer's fixed guesses (30% for an inequality, 10% for an equality on
// an expression, 9% for LIKE), which is what makes a sort or hash join on a
// non-sargable filter underestimate its memory grant and spill.
// https://learn.microsoft.com/en-us/sql/relational-databases/statistics/statistics

// TableStats are a table's statistics: row count, distinct values and a
// sorted sample per column.
type TableStats struct {
	rows     int
	distinct []float64
	sample   [][]any // per column, sorted
}

// stats returns t's statistics, rebuilt when the row count changed.
func tableStats(x Exec, t *Table) *TableStats {
	cache := x.StatsCache()
	if st, ok := cache[t]; ok && st.rows == len(t.Rows) {
		return st
	}
	st := &TableStats{rows: len(t.Rows)}
	step := 1
	if len(t.Rows) > 2000 {
		step = len(t.Rows) / 2000
	}
	for c := range t.Columns {
		seen := map[string]bool{}
		var sample []any
		for i := 0; i < len(t.Rows); i += step {
			v := t.Rows[i][c]
			if v != nil {
				sample = append(sample, v)
				seen[JoinKey(v)] = true
			}
		}
		sort.SliceStable(sample, func(a, b int) bool { c, _ := CompareValues(sample[a], sample[b]); return c < 0 })
		d := float64(len(seen))
		if step > 1 && d > float64(len(sample))*0.9 {
			d = float64(len(t.Rows)) // nearly unique in the sample: unique
		}
		if d < 1 {
			d = 1
		}
		st.distinct = append(st.distinct, d)
		st.sample = append(st.sample, sample)
	}
	cache[t] = st
	return st
}

// selectivity estimates the fraction of t's rows a conjunct keeps.
func (p *Planner) selectivity(t *Table, rel *Relation, e sqlfront.Expr) float64 {
	st := tableStats(p.x, t)
	local := func(v sqlfront.Expr) bool {
		for _, c := range ColRefsOf(v) {
			if i, _ := rel.LookupRef(c); i >= 0 {
				return false
			}
		}
		return !HasSubquery(v)
	}
	if col, op, val, ok := sargableFor(e, local); ok {
		ci, _ := rel.LookupRef(col)
		if ci >= 0 && ci < len(st.distinct) {
			v, known := p.constValue(val)
			switch {
			case op == "=":
				return 1 / st.distinct[ci]
			case !known:
				return 0.3
			case op == "BETWEEN":
				hi, hk := p.constValue(e.(*sqlfront.BetweenExpr).Hi)
				if !hk {
					return 0.3 * 0.3
				}
				return fractionBetween(st.sample[ci], v, hi)
			default:
				return fractionCompare(st.sample[ci], op, v)
			}
		}
	}
	switch x := e.(type) {
	case *sqlfront.BinaryExpr:
		switch x.Op {
		case "AND":
			return p.selectivity(t, rel, x.L) * p.selectivity(t, rel, x.R)
		case "OR":
			a, b := p.selectivity(t, rel, x.L), p.selectivity(t, rel, x.R)
			return math.Min(1, a+b-a*b)
		case "=":
			return 0.1
		}
		return 0.3
	case *sqlfront.InExpr:
		if c, ok := x.E.(*sqlfront.ColRef); ok && x.Sub == nil {
			if ci, _ := rel.LookupRef(c); ci >= 0 && ci < len(st.distinct) {
				s := float64(len(x.List)) / st.distinct[ci]
				if x.Not {
					return math.Max(0, 1-s)
				}
				return math.Min(1, s)
			}
		}
		return 0.3
	case *sqlfront.LikeExpr:
		return 0.09
	case *sqlfront.IsNullExpr:
		if x.Not {
			return 0.9
		}
		return 0.1
	case *sqlfront.UnaryExpr:
		if x.Op == "NOT" {
			return 1 - p.selectivity(t, rel, x.E)
		}
	case *sqlfront.BetweenExpr:
		return 0.09
	}
	return 0.3
}

// constValue evaluates a value expression that needs no row (literals,
// variables, parameters) for the estimate.
func (p *Planner) constValue(e sqlfront.Expr) (any, bool) {
	if hasColumns(e) {
		return nil, false
	}
	v, err := (&EvalEnv{X: p.x}).Eval(e)
	if err != nil || v == nil {
		return nil, false
	}
	return v, true
}

func fractionCompare(sample []any, op string, v any) float64 {
	if len(sample) == 0 {
		return 0.3
	}
	n := 0
	for _, s := range sample {
		c, err := CompareValues(s, v)
		if err != nil {
			return 0.3
		}
		if xevents.CmpOp(op, c) {
			n++
		}
	}
	return math.Max(float64(n), 0.5) / float64(len(sample))
}

func fractionBetween(sample []any, lo, hi any) float64 {
	if len(sample) == 0 {
		return 0.09
	}
	n := 0
	for _, s := range sample {
		a, err1 := CompareValues(s, lo)
		b, err2 := CompareValues(s, hi)
		if err1 != nil || err2 != nil {
			return 0.09
		}
		if a >= 0 && b <= 0 {
			n++
		}
	}
	return math.Max(float64(n), 0.5) / float64(len(sample))
}

// keyRange is one seek range on an index's leading key column.
type keyRange struct {
	lo, hi         sqlfront.Expr // nil: unbounded
	loIncl, hiIncl bool
}

// seekSpec is how a scan seeks: ranges on the leading key, and the
// conjuncts they replace.
type seekSpec struct {
	ranges []keyRange
	used   []sqlfront.Expr
	col    int // table column of the leading key
}

// seekFor finds the seek ranges local conjuncts give on ix's leading key.
func (p *Planner) seekFor(ix *Index, rel *Relation, local []sqlfront.Expr) *seekSpec {
	lead := ix.KeyCols[0]
	if ix.ID == 1 {
		lead = ix.Tbl.PK[0]
	}
	isLocal := func(v sqlfront.Expr) bool {
		for _, c := range ColRefsOf(v) {
			if i, _ := rel.LookupRef(c); i >= 0 {
				return false
			}
		}
		return !HasSubquery(v)
	}
	spec := &seekSpec{col: lead}
	var eq, lo, hi, between sqlfront.Expr
	var eqVal, loVal, hiVal sqlfront.Expr
	loIncl, hiIncl := false, false
	var inList []sqlfront.Expr
	var inConj sqlfront.Expr
	for _, c := range local {
		if in, ok := c.(*sqlfront.InExpr); ok && in.Sub == nil && !in.Not && len(in.List) <= 64 {
			if col, ok := in.E.(*sqlfront.ColRef); ok {
				if ci, _ := rel.LookupRef(col); ci == lead && inList == nil {
					all := true
					for _, v := range in.List {
						all = all && isLocal(v)
					}
					if all {
						inList, inConj = in.List, c
					}
				}
			}
			continue
		}
		col, op, val, ok := sargableFor(c, isLocal)
		if !ok {
			continue
		}
		if ci, _ := rel.LookupRef(col); ci != lead {
			continue
		}
		switch op {
		case "=":
			if eq == nil {
				eq, eqVal = c, val
			}
		case ">", ">=":
			if lo == nil && between == nil {
				lo, loVal, loIncl = c, val, op == ">="
			}
		case "<", "<=":
			if hi == nil && between == nil {
				hi, hiVal, hiIncl = c, val, op == "<="
			}
		case "BETWEEN":
			if between == nil && lo == nil && hi == nil {
				between = c
			}
		}
	}
	switch {
	case eq != nil:
		// the narrowest: an equality seek; range predicates stay residual
		spec.ranges = []keyRange{{lo: eqVal, hi: eqVal, loIncl: true, hiIncl: true}}
		spec.used = []sqlfront.Expr{eq}
	case inList != nil:
		for _, v := range inList {
			spec.ranges = append(spec.ranges, keyRange{lo: v, hi: v, loIncl: true, hiIncl: true})
		}
		spec.used = []sqlfront.Expr{inConj}
	case between != nil:
		b := between.(*sqlfront.BetweenExpr)
		spec.ranges = []keyRange{{lo: b.Lo, hi: b.Hi, loIncl: true, hiIncl: true}}
		spec.used = []sqlfront.Expr{between}
	case lo != nil || hi != nil:
		r := keyRange{lo: loVal, hi: hiVal, loIncl: loIncl, hiIncl: hiIncl}
		spec.ranges = []keyRange{r}
		for _, u := range []sqlfront.Expr{lo, hi} {
			if u != nil {
				spec.used = append(spec.used, u)
			}
		}
	default:
		return nil
	}
	return spec
}

// neededColumns lists the table columns (positions) the query uses of a
// leaf; nil means all (a star, or anything unresolvable).
func (p *Planner) covering(ix *Index, need map[int]bool) bool {
	if need == nil {
		return false
	}
	have := map[int]bool{}
	for _, k := range ix.KeyCols {
		have[k] = true
	}
	for _, k := range ix.Tbl.PK {
		have[k] = true
	}
	for c := range need {
		if !have[c] {
			return false
		}
	}
	return true
}

// accessPath chooses how to read a base table: a seek on the clustered
// index, a seek on a nonclustered index (with key lookups unless it
// covers), a covering nonclustered scan, or a clustered index scan; index
// hints (WITH (INDEX(…)), FORCESEEK, FORCESCAN) override the choice.
func (p *Planner) accessPath(leaf *fromLeaf, local []sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	t := leaf.tbl
	rel := leaf.rel
	for _, c := range local {
		if err := p.Resolves(c, rel); err != nil {
			return nil, err
		}
	}
	need := p.neededColumns(leaf)
	rows := float64(len(t.Rows))
	sel := 1.0
	for _, c := range local {
		sel *= p.selectivity(t, rel, c)
	}
	est := math.Max(rows*sel, 1)
	if len(t.Rows) == 0 {
		est = 1
	}
	hint := ""
	forceSeek, forceScan := false, false
	if leaf.tn != nil {
		hint = leaf.tn.IndexHint
		forceSeek = xevents.HasString(leaf.tn.Hints, "FORCESEEK")
		forceScan = xevents.HasString(leaf.tn.Hints, "FORCESCAN")
	}
	clustered := t.Indexes[0]
	if hint != "" {
		ix := t.IndexByName(hint)
		if hint == "0" || hint == "1" {
			ix = clustered
		}
		if ix == nil {
			return nil, sqlfront.NewError(308, 16, "Index '%s' on table '%s' (specified in the FROM clause) does not exist.", hint, strings.Join(leaf.tn.Parts, "."))
		}
		return p.indexAccess(leaf, ix, local, est, need, !forceScan, true), nil
	}
	if !forceScan {
		if spec := p.seekFor(clustered, rel, local); spec != nil {
			return p.buildScan(leaf, clustered, spec, local, est, false), nil
		}
		for _, ix := range t.Indexes[1:] {
			spec := p.seekFor(ix, rel, local)
			if spec == nil {
				continue
			}
			covers := p.covering(ix, need)
			lookups := est
			if covers || forceSeek || lookups < float64(len(clustered.LeafPages))/3 {
				return p.indexAccess(leaf, ix, local, est, need, true, false), nil
			}
		}
	}
	if !forceSeek {
		for _, ix := range t.Indexes[1:] {
			if p.covering(ix, need) && len(ix.LeafPages) < len(clustered.LeafPages) {
				return p.buildScan(leaf, ix, nil, local, est, false), nil
			}
		}
	}
	return p.buildScan(leaf, clustered, nil, local, est, false), nil
}

// indexAccess reads through ix: a seek (or scan) of it, plus key lookups
// into the clustered index when ix does not cover the query.
func (p *Planner) indexAccess(leaf *fromLeaf, ix *Index, local []sqlfront.Expr, est float64, need map[int]bool, seek, forced bool) Iter {
	var spec *seekSpec
	if seek {
		spec = p.seekFor(ix, leaf.rel, local)
	}
	if ix.ID == 1 || p.covering(ix, need) {
		return p.buildScan(leaf, ix, spec, local, est, forced)
	}
	// the nonclustered part takes the predicates on its own columns; the
	// lookup the rest
	have := map[int]bool{}
	for _, k := range ix.KeyCols {
		have[k] = true
	}
	for _, k := range ix.Tbl.PK {
		have[k] = true
	}
	var onIndex, onLookup []sqlfront.Expr
	for _, c := range local {
		ok := true
		for _, r := range ColRefsOf(c) {
			if i, _ := leaf.rel.LookupRef(r); i >= 0 && !have[i] {
				ok = false
			}
		}
		if ok {
			onIndex = append(onIndex, c)
		} else {
			onLookup = append(onLookup, c)
		}
	}
	estIx := est
	if len(onLookup) > 0 {
		estIx = est / 0.3
	}
	outer := p.buildScan(leaf, ix, spec, onIndex, estIx, forced)
	lk := p.buildLookup(leaf, outer.(*scanIter), onLookup, est)
	it, _ := p.nestedLoops(outer, lk, "Inner Join", nil, true)
	it.Node().EstRows = est
	return it
}

// neededColumns lists the leaf's table columns the query uses (nil: all).
func (p *Planner) neededColumns(leaf *fromLeaf) map[int]bool {
	if p.StmtRoot == nil {
		return nil
	}
	need := map[int]bool{}
	all := false
	walkStatement(p.StmtRoot, func(e sqlfront.Expr) {
		c, ok := e.(*sqlfront.ColRef)
		if !ok {
			return
		}
		name := c.Parts[len(c.Parts)-1]
		if len(c.Parts) > 1 && !strings.EqualFold(c.Parts[len(c.Parts)-2], leaf.qual) {
			return
		}
		if i := leaf.tbl.Column(name); i >= 0 {
			need[i] = true
		}
	}, func(s *sqlfront.SelectStmt) {
		for _, it := range s.Items {
			if it.Star && (it.StarQual == "" || strings.EqualFold(it.StarQual, leaf.qual)) {
				all = true
			}
		}
	})
	if all {
		return nil
	}
	return need
}
