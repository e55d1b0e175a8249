package engine

import (
	"math"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Join operators: Nested Loops (also APPLY and the subquery forms: semi,
// anti semi, and value-producing probes), Hash Match and Merge Join.

type nlMode int

const (
	nlJoin     nlMode = iota // join rows (inner, left outer, semi, anti semi)
	nlScalar                 // a scalar subquery's value column
	nlExists                 // EXISTS as a probe column
	nlIn                     // x IN (subquery) as a probe column
	nlQuantify               // x op ANY|ALL (subquery) as a probe column
)

type nlIter struct {
	n            *PlanNode
	outer, inner Iter
	kind         string // Inner Join, Left Outer Join, Left Semi Join, Left Anti Semi Join
	pred         sqlfront.Expr
	schema       *Relation
	mode         nlMode
	probe        sqlfront.Expr // nlIn/nlQuantify: the outer expression
	qop          string
	qall         bool
	notIn        bool // nlIn used as NOT IN (semi filtering)
	cacheable    bool // the inner side has no outer references: its value is computed once

	env      EvalEnv
	openEnv  *EvalEnv
	cur      *Tuple
	active   bool
	matched  bool
	cached   bool
	cacheVal any
}

func (j *nlIter) Node() *PlanNode { return j.n }

// nestedLoops joins outer to inner, re-opening inner for every outer row
// with that row in scope.
func (p *Planner) nestedLoops(outer, inner Iter, kind string, pred sqlfront.Expr, correlated bool) (Iter, *sqlfront.SQLError) {
	schema := &Relation{}
	schema.Cols = append(schema.Cols, outer.Node().Schema.Cols...)
	if kind != "Left Semi Join" && kind != "Left Anti Semi Join" {
		schema.Cols = append(schema.Cols, inner.Node().Schema.Cols...)
	}
	if pred != nil {
		if err := p.Resolves(pred, schema); err != nil {
			return nil, err
		}
	}
	n := p.newNode("Nested Loops", kind, schema, outer, inner)
	o, i := outer.Node(), inner.Node()
	n.EstRows = math.Max(1, o.EstRows*math.Max(i.EstRows, 0.01))
	if kind == "Left Semi Join" || kind == "Left Anti Semi Join" {
		n.EstRows = math.Max(1, o.EstRows*0.5)
	}
	i.EstExecs = math.Max(o.EstRows, 1)
	n.EstCPU = 0.00000418 * n.EstRows
	n.SubtreeCost = o.SubtreeCost + i.SubtreeCost*i.EstExecs + n.EstCPU
	j := &nlIter{n: n, outer: outer, inner: inner, kind: kind, pred: pred, schema: schema}
	n.Details = j.Showplan
	return j, nil
}

func (j *nlIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	j.openEnv = outer
	j.cur, j.active = nil, false
	j.env = EvalEnv{X: r.X, Rel: j.schema, Outer: outer}
	return r.Open(j.outer, outer)
}

func (j *nlIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	for {
		if !j.active {
			t, err := r.Next(j.outer)
			if err != nil || t == nil {
				return nil, err
			}
			j.cur, j.matched = t, false
			if j.mode != nlJoin {
				return j.probeValue(r, t)
			}
			if err := r.Open(j.inner, j.outerEnv(r, t)); err != nil {
				return nil, err
			}
			j.active = true
		}
		it, err := r.Next(j.inner)
		if err != nil {
			return nil, err
		}
		if it == nil {
			r.Close(j.inner)
			j.active = false
			if !j.matched {
				switch j.kind {
				case "Left Outer Join":
					return j.combine(j.cur, nil), nil
				case "Left Anti Semi Join":
					return j.cur, nil
				}
			}
			continue
		}
		row := j.combine(j.cur, it)
		if j.pred != nil {
			j.env.Row, j.env.Srcs = row.Vals, row.Srcs
			if j.kind == "Left Semi Join" || j.kind == "Left Anti Semi Join" {
				j.env.Row = append(append([]any{}, j.cur.Vals...), it.Vals...)
				j.env.Rel = j.semiSchema()
			}
			v, err := j.env.Eval(j.pred)
			j.env.Rel = j.schema
			if err != nil {
				return nil, err
			}
			if b, _ := Truth(v); !b {
				continue
			}
		}
		j.matched = true
		switch j.kind {
		case "Left Semi Join":
			r.Close(j.inner)
			j.active = false
			return j.cur, nil
		case "Left Anti Semi Join":
			r.Close(j.inner)
			j.active = false
			continue
		}
		return row, nil
	}
}

// semiSchema is the outer and inner columns, for a semi join's predicate.
func (j *nlIter) semiSchema() *Relation {
	rel := &Relation{Cols: append(append([]RelCol{}, j.outer.Node().Schema.Cols...), j.inner.Node().Schema.Cols...)}
	return rel
}

func (j *nlIter) outerEnv(r *RunCtx, t *Tuple) *EvalEnv {
	return &EvalEnv{X: r.X, Rel: j.outer.Node().Schema, Row: t.Vals, Srcs: t.Srcs, Outer: j.openEnv}
}

func (j *nlIter) combine(o, i *Tuple) *Tuple {
	if i == nil {
		vals := make([]any, len(j.schema.Cols))
		copy(vals, o.Vals)
		return &Tuple{Vals: vals, Srcs: o.Srcs, thread: o.thread}
	}
	vals := make([]any, 0, len(o.Vals)+len(i.Vals))
	vals = append(append(vals, o.Vals...), i.Vals...)
	var srcs []RowSource
	if len(i.Srcs) == 0 {
		srcs = o.Srcs
	} else {
		srcs = append(append(make([]RowSource, 0, len(o.Srcs)+len(i.Srcs)), o.Srcs...), i.Srcs...)
	}
	return &Tuple{Vals: vals, Srcs: srcs, thread: o.thread}
}

// probeValue runs the inner side for a subquery column: the scalar
// value, or EXISTS / IN / ANY / ALL as bit (or NULL for unknown).
func (j *nlIter) probeValue(r *RunCtx, t *Tuple) (*Tuple, *sqlfront.SQLError) {
	var v any
	if j.cacheable && j.cached {
		v = j.cacheVal
		j.n.Counters(r.thread).Executions++
		j.inner.Node().Counters(r.thread).rewinds++
	} else {
		var err *sqlfront.SQLError
		if v, err = j.runInner(r, t); err != nil {
			return nil, err
		}
		if j.cacheable && j.mode == nlScalar {
			j.cached, j.cacheVal = true, v
		}
	}
	vals := make([]any, 0, len(t.Vals)+1)
	vals = append(append(vals, t.Vals...), v)
	return &Tuple{Vals: vals, Srcs: t.Srcs, thread: t.thread}, nil
}

func (j *nlIter) runInner(r *RunCtx, t *Tuple) (any, *sqlfront.SQLError) {
	env := j.outerEnv(r, t)
	var pv any
	if j.probe != nil {
		var err *sqlfront.SQLError
		if pv, err = env.Eval(j.probe); err != nil {
			return nil, err
		}
	}
	if err := r.Open(j.inner, env); err != nil {
		return nil, err
	}
	defer r.Close(j.inner)
	switch j.mode {
	case nlScalar:
		first, err := r.Next(j.inner)
		if err != nil || first == nil {
			return nil, err
		}
		second, err := r.Next(j.inner)
		if err != nil {
			return nil, err
		}
		if second != nil {
			return nil, ErrSubqueryMultipleRows()
		}
		return first.Vals[0], nil
	case nlExists:
		first, err := r.Next(j.inner)
		if err != nil {
			return nil, err
		}
		return first != nil, nil
	}
	// IN / ANY / ALL: three-valued over the inner rows
	sawNull, any := false, false
	result := j.qall // ALL over no rows is true, ANY false
	for {
		it, err := r.Next(j.inner)
		if err != nil {
			return nil, err
		}
		if it == nil {
			break
		}
		any = true
		iv := it.Vals[0]
		if pv == nil || iv == nil {
			sawNull = true
			continue
		}
		c, err := CompareValues(pv, iv)
		if err != nil {
			return nil, err
		}
		op := j.qop
		if j.mode == nlIn {
			op = "="
		}
		hit := xevents.CmpOp(op, c)
		if j.qall && !hit {
			return false, nil
		}
		if !j.qall && hit {
			return true, nil
		}
	}
	if !any {
		return result, nil
	}
	if sawNull {
		return nil, nil
	}
	return result, nil
}

func (j *nlIter) Close(r *RunCtx) {
	if j.active {
		r.Close(j.inner)
		j.active = false
	}
	r.Close(j.outer)
}

// hashJoinIter is Hash Match: build the first input into a hash table,
// probe it with the second.
type hashJoinIter struct {
	n                    *PlanNode
	build, probe         Iter
	buildKeys, probeKeys []sqlfront.Expr
	residual             sqlfront.Expr
	kind                 string // Inner Join, Left/Right/Full Outer Join, Right Semi Join, Right Anti Semi Join
	swapped              bool   // output probe columns first (the SQL order)
	schema               *Relation
	nullsEqual           bool // INTERSECT/EXCEPT compare NULLs as equal
	notIn                bool // NOT IN: a NULL in the build side, or a NULL probe key, excludes rows
	buildNull            bool

	table     map[string][]*buildRow
	order     []*buildRow
	cur       *Tuple
	matches   []*buildRow
	mi        int
	matched   bool
	probeDone bool
	unmatched int
	env       EvalEnv
	held      int64
	heldBytes int64
}

type buildRow struct {
	t       *Tuple
	matched bool
}

func (h *hashJoinIter) Node() *PlanNode { return h.n }

func (p *Planner) hashJoin(build, probe Iter, bk, pk []sqlfront.Expr, residual sqlfront.Expr, kind string, swapped bool) (*hashJoinIter, *sqlfront.SQLError) {
	schema := &Relation{}
	bs, ps := build.Node().Schema.Cols, probe.Node().Schema.Cols
	switch {
	case kind == "Right Semi Join" || kind == "Right Anti Semi Join":
		schema.Cols = append(schema.Cols, ps...)
	case swapped:
		schema.Cols = append(append(schema.Cols, ps...), bs...)
	default:
		schema.Cols = append(append(schema.Cols, bs...), ps...)
	}
	n := p.newNode("Hash Match", kind, schema, build, probe)
	b, pr := build.Node(), probe.Node()
	switch kind {
	case "Right Semi Join", "Right Anti Semi Join":
		n.EstRows = math.Max(1, pr.EstRows*0.5)
	default:
		n.EstRows = math.Max(1, math.Max(b.EstRows, pr.EstRows))
	}
	n.EstCPU = 0.0178 + 0.000004*(b.EstRows+pr.EstRows)
	n.SubtreeCost = b.SubtreeCost + pr.SubtreeCost + n.EstCPU
	n.Memory = true
	n.EstMemKB = int64(b.EstRows*float64(b.rowSize+24)/1024) + 1
	h := &hashJoinIter{n: n, build: build, probe: probe, buildKeys: bk, probeKeys: pk, residual: residual, kind: kind, swapped: swapped, schema: schema}
	n.Details = h.Showplan
	return h, nil
}

func hashKey(env *EvalEnv, keys []sqlfront.Expr, nullsEqual bool) (string, bool, *sqlfront.SQLError) {
	var b strings.Builder
	for _, k := range keys {
		v, err := env.Eval(k)
		if err != nil {
			return "", false, err
		}
		if v == nil {
			if !nullsEqual {
				return "", false, nil
			}
			b.WriteString("\x00N")
		}
		b.WriteString(JoinKey(v))
		b.WriteByte(0)
	}
	return b.String(), true, nil
}

func (h *hashJoinIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	h.table = map[string][]*buildRow{}
	h.order = nil
	h.buildNull = false
	h.cur, h.matches, h.probeDone = nil, nil, false
	h.held, h.heldBytes = 0, 0
	if err := r.Open(h.build, outer); err != nil {
		return err
	}
	benv := &EvalEnv{X: r.X, Rel: h.build.Node().Schema, Outer: outer}
	for {
		t, err := r.Next(h.build)
		if err != nil {
			return err
		}
		if t == nil {
			break
		}
		if err := r.Hold(t); err != nil {
			return err
		}
		h.held++
		h.heldBytes += tupleBytes(t)
		benv.Row, benv.Srcs = t.Vals, t.Srcs
		k, ok, err := hashKey(benv, h.buildKeys, h.nullsEqual)
		if err != nil {
			return err
		}
		br := &buildRow{t: t}
		h.order = append(h.order, br)
		if ok {
			h.table[k] = append(h.table[k], br)
		} else {
			h.buildNull = true
		}
		r.work(1, 150*time.Nanosecond)
	}
	r.Close(h.build)
	memoryUse(r.X, r, h.n, h.held)
	h.env = EvalEnv{X: r.X, Rel: h.schema, Outer: outer}
	return r.Open(h.probe, outer)
}

func (h *hashJoinIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	penv := &EvalEnv{X: r.X, Rel: h.probe.Node().Schema, Outer: h.env.Outer}
	for {
		if h.probeDone {
			// unmatched build rows of a left or full outer join
			for h.unmatched < len(h.order) {
				br := h.order[h.unmatched]
				h.unmatched++
				if !br.matched {
					return h.combine(br.t, nil), nil
				}
			}
			return nil, nil
		}
		if h.cur != nil && h.mi < len(h.matches) {
			br := h.matches[h.mi]
			h.mi++
			out := h.combine(br.t, h.cur)
			if h.residual != nil {
				h.env.Row, h.env.Srcs = out.Vals, out.Srcs
				if h.kind == "Right Semi Join" || h.kind == "Right Anti Semi Join" {
					h.env.Rel = &Relation{Cols: append(append([]RelCol{}, h.probe.Node().Schema.Cols...), h.build.Node().Schema.Cols...)}
					h.env.Row = append(append([]any{}, h.cur.Vals...), br.t.Vals...)
				}
				v, err := h.env.Eval(h.residual)
				h.env.Rel = h.schema
				if err != nil {
					return nil, err
				}
				if b, _ := Truth(v); !b {
					continue
				}
			}
			br.matched = true
			h.matched = true
			switch h.kind {
			case "Right Semi Join":
				h.mi = len(h.matches)
				return h.cur, nil
			case "Right Anti Semi Join":
				h.mi = len(h.matches)
				continue
			}
			return out, nil
		}
		if h.cur != nil && !h.matched {
			cur := h.cur
			h.cur = nil
			switch h.kind {
			case "Right Outer Join", "Full Outer Join":
				return h.combine(nil, cur), nil
			case "Right Anti Semi Join":
				return cur, nil
			}
		}
		t, err := r.Next(h.probe)
		if err != nil {
			return nil, err
		}
		if t == nil {
			r.Close(h.probe)
			h.probeDone = true
			h.cur = nil
			if h.kind != "Left Outer Join" && h.kind != "Full Outer Join" {
				return nil, nil
			}
			continue
		}
		penv.Row, penv.Srcs = t.Vals, t.Srcs
		k, ok, err := hashKey(penv, h.probeKeys, h.nullsEqual)
		if err != nil {
			return nil, err
		}
		h.cur, h.matched, h.mi = t, false, 0
		h.matches = nil
		if ok {
			h.matches = h.table[k]
		}
		if h.notIn && (h.buildNull || !ok && len(h.order) > 0) {
			h.cur = nil // NOT IN is unknown: the row is not returned
			continue
		}
		r.work(1, 100*time.Nanosecond)
	}
}

// combine builds an output row from a build and a probe row (either may
// be nil for the outer joins).
func (h *hashJoinIter) combine(b, p *Tuple) *Tuple {
	bn, pn := len(h.build.Node().Schema.Cols), len(h.probe.Node().Schema.Cols)
	if h.kind == "Right Semi Join" || h.kind == "Right Anti Semi Join" {
		return p
	}
	vals := make([]any, bn+pn)
	var srcs []RowSource
	thread := 0
	put := func(at int, t *Tuple) {
		if t != nil {
			copy(vals[at:], t.Vals)
			srcs = append(srcs, t.Srcs...)
			thread = t.thread
		}
	}
	if h.swapped {
		put(0, p)
		put(pn, b)
	} else {
		put(0, b)
		put(bn, p)
	}
	return &Tuple{Vals: vals, Srcs: srcs, thread: thread}
}

func (h *hashJoinIter) Close(r *RunCtx) {
	if !h.probeDone {
		r.Close(h.probe)
	}
	r.release(h.held, h.heldBytes)
	h.table, h.order = nil, nil
	h.held, h.heldBytes = 0, 0
}

// mergeJoinIter is Merge Join (Inner Join) of two inputs sorted on the
// join keys.
type mergeJoinIter struct {
	n           *PlanNode
	left, right Iter
	lk, rk      []sqlfront.Expr
	residual    sqlfront.Expr
	schema      *Relation

	lenv, renv EvalEnv
	env        EvalEnv
	rcur       *Tuple
	rkey       []any
	group      []*Tuple
	gkey       []any
	lcur       *Tuple
	gi         int
	rdone      bool
}

func (m *mergeJoinIter) Node() *PlanNode { return m.n }

func (p *Planner) mergeJoin(left, right Iter, lk, rk []sqlfront.Expr, residual sqlfront.Expr) *mergeJoinIter {
	schema := &Relation{Cols: append(append([]RelCol{}, left.Node().Schema.Cols...), right.Node().Schema.Cols...)}
	n := p.newNode("Merge Join", "Inner Join", schema, left, right)
	n.EstRows = math.Max(1, math.Max(left.Node().EstRows, right.Node().EstRows))
	n.EstCPU = 0.0056 + 0.000002*(left.Node().EstRows+right.Node().EstRows)
	n.SubtreeCost = left.Node().SubtreeCost + right.Node().SubtreeCost + n.EstCPU
	m := &mergeJoinIter{n: n, left: left, right: right, lk: lk, rk: rk, residual: residual, schema: schema}
	n.Details = m.Showplan
	return m
}

func evalKeys(env *EvalEnv, keys []sqlfront.Expr) ([]any, *sqlfront.SQLError) {
	out := make([]any, len(keys))
	for i, k := range keys {
		v, err := env.Eval(k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func compareKeyLists(a, b []any) int {
	for i := range a {
		switch {
		case a[i] == nil && b[i] == nil:
			continue
		case a[i] == nil:
			return -1
		case b[i] == nil:
			return 1
		}
		c, _ := CompareValues(a[i], b[i])
		if c != 0 {
			return c
		}
	}
	return 0
}

func hasNil(vals []any) bool {
	for _, v := range vals {
		if v == nil {
			return true
		}
	}
	return false
}

func (m *mergeJoinIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	m.lenv = EvalEnv{X: r.X, Rel: m.left.Node().Schema, Outer: outer}
	m.renv = EvalEnv{X: r.X, Rel: m.right.Node().Schema, Outer: outer}
	m.env = EvalEnv{X: r.X, Rel: m.schema, Outer: outer}
	m.rcur, m.group, m.lcur, m.rdone = nil, nil, nil, false
	if err := r.Open(m.left, outer); err != nil {
		return err
	}
	if err := r.Open(m.right, outer); err != nil {
		return err
	}
	return m.advanceRight(r)
}

func (m *mergeJoinIter) advanceRight(r *RunCtx) *sqlfront.SQLError {
	t, err := r.Next(m.right)
	if err != nil {
		return err
	}
	if t == nil {
		m.rcur, m.rdone = nil, true
		return nil
	}
	m.renv.Row, m.renv.Srcs = t.Vals, t.Srcs
	k, err := evalKeys(&m.renv, m.rk)
	if err != nil {
		return err
	}
	m.rcur, m.rkey = t, k
	return nil
}

func (m *mergeJoinIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	for {
		if m.lcur != nil && m.gi < len(m.group) {
			rt := m.group[m.gi]
			m.gi++
			vals := append(append(make([]any, 0, len(m.lcur.Vals)+len(rt.Vals)), m.lcur.Vals...), rt.Vals...)
			out := &Tuple{Vals: vals, Srcs: append(append([]RowSource{}, m.lcur.Srcs...), rt.Srcs...), thread: m.lcur.thread}
			if m.residual != nil {
				m.env.Row, m.env.Srcs = out.Vals, out.Srcs
				v, err := m.env.Eval(m.residual)
				if err != nil {
					return nil, err
				}
				if b, _ := Truth(v); !b {
					continue
				}
			}
			return out, nil
		}
		lt, err := r.Next(m.left)
		if err != nil || lt == nil {
			return nil, err
		}
		m.lenv.Row, m.lenv.Srcs = lt.Vals, lt.Srcs
		lk, err := evalKeys(&m.lenv, m.lk)
		if err != nil {
			return nil, err
		}
		m.lcur, m.gi = lt, 0
		if hasNil(lk) {
			m.group = nil
			continue
		}
		if m.group != nil && compareKeyLists(lk, m.gkey) == 0 {
			continue // same key as the previous left row: reuse the group
		}
		m.group, m.gkey = nil, lk
		for !m.rdone && compareKeyLists(m.rkey, lk) < 0 {
			if err := m.advanceRight(r); err != nil {
				return nil, err
			}
		}
		for !m.rdone && compareKeyLists(m.rkey, lk) == 0 {
			m.group = append(m.group, m.rcur)
			if err := m.advanceRight(r); err != nil {
				return nil, err
			}
		}
		if m.group == nil {
			m.group = []*Tuple{}
		}
	}
}

func (m *mergeJoinIter) Close(r *RunCtx) {
	r.Close(m.left)
	r.Close(m.right)
}
