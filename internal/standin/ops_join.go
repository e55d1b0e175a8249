package standin

import (
	"math"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

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
	n            *planNode
	outer, inner iter
	kind         string // Inner Join, Left Outer Join, Left Semi Join, Left Anti Semi Join
	pred         sqlfront.Expr
	schema       *engine.Relation
	mode         nlMode
	probe        sqlfront.Expr // nlIn/nlQuantify: the outer expression
	qop          string
	qall         bool
	notIn        bool // nlIn used as NOT IN (semi filtering)
	cacheable    bool // the inner side has no outer references: its value is computed once

	env      engine.EvalEnv
	openEnv  *engine.EvalEnv
	cur      *tuple
	active   bool
	matched  bool
	cached   bool
	cacheVal any
}

func (j *nlIter) node() *planNode { return j.n }

// nestedLoops joins outer to inner, re-opening inner for every outer row
// with that row in scope.
func (p *planner) nestedLoops(outer, inner iter, kind string, pred sqlfront.Expr, correlated bool) (iter, *sqlfront.SQLError) {
	schema := &engine.Relation{}
	schema.Cols = append(schema.Cols, outer.node().schema.Cols...)
	if kind != "Left Semi Join" && kind != "Left Anti Semi Join" {
		schema.Cols = append(schema.Cols, inner.node().schema.Cols...)
	}
	if pred != nil {
		if err := p.resolves(pred, schema); err != nil {
			return nil, err
		}
	}
	n := p.newNode("Nested Loops", kind, schema, outer, inner)
	o, i := outer.node(), inner.node()
	n.estRows = math.Max(1, o.estRows*math.Max(i.estRows, 0.01))
	if kind == "Left Semi Join" || kind == "Left Anti Semi Join" {
		n.estRows = math.Max(1, o.estRows*0.5)
	}
	i.estExecs = math.Max(o.estRows, 1)
	n.estCPU = 0.00000418 * n.estRows
	n.subtreeCost = o.subtreeCost + i.subtreeCost*i.estExecs + n.estCPU
	j := &nlIter{n: n, outer: outer, inner: inner, kind: kind, pred: pred, schema: schema}
	n.details = j.showplan
	return j, nil
}

func (j *nlIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	j.openEnv = outer
	j.cur, j.active = nil, false
	j.env = engine.EvalEnv{X: r.x, Rel: j.schema, Outer: outer}
	return r.open(j.outer, outer)
}

func (j *nlIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	for {
		if !j.active {
			t, err := r.next(j.outer)
			if err != nil || t == nil {
				return nil, err
			}
			j.cur, j.matched = t, false
			if j.mode != nlJoin {
				return j.probeValue(r, t)
			}
			if err := r.open(j.inner, j.outerEnv(r, t)); err != nil {
				return nil, err
			}
			j.active = true
		}
		it, err := r.next(j.inner)
		if err != nil {
			return nil, err
		}
		if it == nil {
			r.close(j.inner)
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
			j.env.Row, j.env.Srcs = row.vals, row.srcs
			if j.kind == "Left Semi Join" || j.kind == "Left Anti Semi Join" {
				j.env.Row = append(append([]any{}, j.cur.vals...), it.vals...)
				j.env.Rel = j.semiSchema()
			}
			v, err := j.env.Eval(j.pred)
			j.env.Rel = j.schema
			if err != nil {
				return nil, err
			}
			if b, _ := engine.Truth(v); !b {
				continue
			}
		}
		j.matched = true
		switch j.kind {
		case "Left Semi Join":
			r.close(j.inner)
			j.active = false
			return j.cur, nil
		case "Left Anti Semi Join":
			r.close(j.inner)
			j.active = false
			continue
		}
		return row, nil
	}
}

// semiSchema is the outer and inner columns, for a semi join's predicate.
func (j *nlIter) semiSchema() *engine.Relation {
	rel := &engine.Relation{Cols: append(append([]engine.RelCol{}, j.outer.node().schema.Cols...), j.inner.node().schema.Cols...)}
	return rel
}

func (j *nlIter) outerEnv(r *runCtx, t *tuple) *engine.EvalEnv {
	return &engine.EvalEnv{X: r.x, Rel: j.outer.node().schema, Row: t.vals, Srcs: t.srcs, Outer: j.openEnv}
}

func (j *nlIter) combine(o, i *tuple) *tuple {
	if i == nil {
		vals := make([]any, len(j.schema.Cols))
		copy(vals, o.vals)
		return &tuple{vals: vals, srcs: o.srcs, thread: o.thread}
	}
	vals := make([]any, 0, len(o.vals)+len(i.vals))
	vals = append(append(vals, o.vals...), i.vals...)
	var srcs []engine.RowSource
	if len(i.srcs) == 0 {
		srcs = o.srcs
	} else {
		srcs = append(append(make([]engine.RowSource, 0, len(o.srcs)+len(i.srcs)), o.srcs...), i.srcs...)
	}
	return &tuple{vals: vals, srcs: srcs, thread: o.thread}
}

// probeValue runs the inner side for a subquery column: the scalar
// value, or EXISTS / IN / ANY / ALL as bit (or NULL for unknown).
func (j *nlIter) probeValue(r *runCtx, t *tuple) (*tuple, *sqlfront.SQLError) {
	var v any
	if j.cacheable && j.cached {
		v = j.cacheVal
		j.n.counters(r.thread).executions++
		j.inner.node().counters(r.thread).rewinds++
	} else {
		var err *sqlfront.SQLError
		if v, err = j.runInner(r, t); err != nil {
			return nil, err
		}
		if j.cacheable && j.mode == nlScalar {
			j.cached, j.cacheVal = true, v
		}
	}
	vals := make([]any, 0, len(t.vals)+1)
	vals = append(append(vals, t.vals...), v)
	return &tuple{vals: vals, srcs: t.srcs, thread: t.thread}, nil
}

func (j *nlIter) runInner(r *runCtx, t *tuple) (any, *sqlfront.SQLError) {
	env := j.outerEnv(r, t)
	var pv any
	if j.probe != nil {
		var err *sqlfront.SQLError
		if pv, err = env.Eval(j.probe); err != nil {
			return nil, err
		}
	}
	if err := r.open(j.inner, env); err != nil {
		return nil, err
	}
	defer r.close(j.inner)
	switch j.mode {
	case nlScalar:
		first, err := r.next(j.inner)
		if err != nil || first == nil {
			return nil, err
		}
		second, err := r.next(j.inner)
		if err != nil {
			return nil, err
		}
		if second != nil {
			return nil, engine.ErrSubqueryMultipleRows()
		}
		return first.vals[0], nil
	case nlExists:
		first, err := r.next(j.inner)
		if err != nil {
			return nil, err
		}
		return first != nil, nil
	}
	// IN / ANY / ALL: three-valued over the inner rows
	sawNull, any := false, false
	result := j.qall // ALL over no rows is true, ANY false
	for {
		it, err := r.next(j.inner)
		if err != nil {
			return nil, err
		}
		if it == nil {
			break
		}
		any = true
		iv := it.vals[0]
		if pv == nil || iv == nil {
			sawNull = true
			continue
		}
		c, err := engine.CompareValues(pv, iv)
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

func (j *nlIter) close(r *runCtx) {
	if j.active {
		r.close(j.inner)
		j.active = false
	}
	r.close(j.outer)
}

// hashJoinIter is Hash Match: build the first input into a hash table,
// probe it with the second.
type hashJoinIter struct {
	n                    *planNode
	build, probe         iter
	buildKeys, probeKeys []sqlfront.Expr
	residual             sqlfront.Expr
	kind                 string // Inner Join, Left/Right/Full Outer Join, Right Semi Join, Right Anti Semi Join
	swapped              bool   // output probe columns first (the SQL order)
	schema               *engine.Relation
	nullsEqual           bool // INTERSECT/EXCEPT compare NULLs as equal
	notIn                bool // NOT IN: a NULL in the build side, or a NULL probe key, excludes rows
	buildNull            bool

	table     map[string][]*buildRow
	order     []*buildRow
	cur       *tuple
	matches   []*buildRow
	mi        int
	matched   bool
	probeDone bool
	unmatched int
	env       engine.EvalEnv
	held      int64
	heldBytes int64
}

type buildRow struct {
	t       *tuple
	matched bool
}

func (h *hashJoinIter) node() *planNode { return h.n }

func (p *planner) hashJoin(build, probe iter, bk, pk []sqlfront.Expr, residual sqlfront.Expr, kind string, swapped bool) (*hashJoinIter, *sqlfront.SQLError) {
	schema := &engine.Relation{}
	bs, ps := build.node().schema.Cols, probe.node().schema.Cols
	switch {
	case kind == "Right Semi Join" || kind == "Right Anti Semi Join":
		schema.Cols = append(schema.Cols, ps...)
	case swapped:
		schema.Cols = append(append(schema.Cols, ps...), bs...)
	default:
		schema.Cols = append(append(schema.Cols, bs...), ps...)
	}
	n := p.newNode("Hash Match", kind, schema, build, probe)
	b, pr := build.node(), probe.node()
	switch kind {
	case "Right Semi Join", "Right Anti Semi Join":
		n.estRows = math.Max(1, pr.estRows*0.5)
	default:
		n.estRows = math.Max(1, math.Max(b.estRows, pr.estRows))
	}
	n.estCPU = 0.0178 + 0.000004*(b.estRows+pr.estRows)
	n.subtreeCost = b.subtreeCost + pr.subtreeCost + n.estCPU
	n.memory = true
	n.estMemKB = int64(b.estRows*float64(b.rowSize+24)/1024) + 1
	h := &hashJoinIter{n: n, build: build, probe: probe, buildKeys: bk, probeKeys: pk, residual: residual, kind: kind, swapped: swapped, schema: schema}
	n.details = h.showplan
	return h, nil
}

func hashKey(env *engine.EvalEnv, keys []sqlfront.Expr, nullsEqual bool) (string, bool, *sqlfront.SQLError) {
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
		b.WriteString(engine.JoinKey(v))
		b.WriteByte(0)
	}
	return b.String(), true, nil
}

func (h *hashJoinIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	h.table = map[string][]*buildRow{}
	h.order = nil
	h.buildNull = false
	h.cur, h.matches, h.probeDone = nil, nil, false
	h.held, h.heldBytes = 0, 0
	if err := r.open(h.build, outer); err != nil {
		return err
	}
	benv := &engine.EvalEnv{X: r.x, Rel: h.build.node().schema, Outer: outer}
	for {
		t, err := r.next(h.build)
		if err != nil {
			return err
		}
		if t == nil {
			break
		}
		if err := r.hold(t); err != nil {
			return err
		}
		h.held++
		h.heldBytes += tupleBytes(t)
		benv.Row, benv.Srcs = t.vals, t.srcs
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
	r.close(h.build)
	r.x.memoryUse(r, h.n, h.held)
	h.env = engine.EvalEnv{X: r.x, Rel: h.schema, Outer: outer}
	return r.open(h.probe, outer)
}

func (h *hashJoinIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	penv := &engine.EvalEnv{X: r.x, Rel: h.probe.node().schema, Outer: h.env.Outer}
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
				h.env.Row, h.env.Srcs = out.vals, out.srcs
				if h.kind == "Right Semi Join" || h.kind == "Right Anti Semi Join" {
					h.env.Rel = &engine.Relation{Cols: append(append([]engine.RelCol{}, h.probe.node().schema.Cols...), h.build.node().schema.Cols...)}
					h.env.Row = append(append([]any{}, h.cur.vals...), br.t.vals...)
				}
				v, err := h.env.Eval(h.residual)
				h.env.Rel = h.schema
				if err != nil {
					return nil, err
				}
				if b, _ := engine.Truth(v); !b {
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
		t, err := r.next(h.probe)
		if err != nil {
			return nil, err
		}
		if t == nil {
			r.close(h.probe)
			h.probeDone = true
			h.cur = nil
			if h.kind != "Left Outer Join" && h.kind != "Full Outer Join" {
				return nil, nil
			}
			continue
		}
		penv.Row, penv.Srcs = t.vals, t.srcs
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
func (h *hashJoinIter) combine(b, p *tuple) *tuple {
	bn, pn := len(h.build.node().schema.Cols), len(h.probe.node().schema.Cols)
	if h.kind == "Right Semi Join" || h.kind == "Right Anti Semi Join" {
		return p
	}
	vals := make([]any, bn+pn)
	var srcs []engine.RowSource
	thread := 0
	put := func(at int, t *tuple) {
		if t != nil {
			copy(vals[at:], t.vals)
			srcs = append(srcs, t.srcs...)
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
	return &tuple{vals: vals, srcs: srcs, thread: thread}
}

func (h *hashJoinIter) close(r *runCtx) {
	if !h.probeDone {
		r.close(h.probe)
	}
	r.release(h.held, h.heldBytes)
	h.table, h.order = nil, nil
	h.held, h.heldBytes = 0, 0
}

// mergeJoinIter is Merge Join (Inner Join) of two inputs sorted on the
// join keys.
type mergeJoinIter struct {
	n           *planNode
	left, right iter
	lk, rk      []sqlfront.Expr
	residual    sqlfront.Expr
	schema      *engine.Relation

	lenv, renv engine.EvalEnv
	env        engine.EvalEnv
	rcur       *tuple
	rkey       []any
	group      []*tuple
	gkey       []any
	lcur       *tuple
	gi         int
	rdone      bool
}

func (m *mergeJoinIter) node() *planNode { return m.n }

func (p *planner) mergeJoin(left, right iter, lk, rk []sqlfront.Expr, residual sqlfront.Expr) *mergeJoinIter {
	schema := &engine.Relation{Cols: append(append([]engine.RelCol{}, left.node().schema.Cols...), right.node().schema.Cols...)}
	n := p.newNode("Merge Join", "Inner Join", schema, left, right)
	n.estRows = math.Max(1, math.Max(left.node().estRows, right.node().estRows))
	n.estCPU = 0.0056 + 0.000002*(left.node().estRows+right.node().estRows)
	n.subtreeCost = left.node().subtreeCost + right.node().subtreeCost + n.estCPU
	m := &mergeJoinIter{n: n, left: left, right: right, lk: lk, rk: rk, residual: residual, schema: schema}
	n.details = m.showplan
	return m
}

func evalKeys(env *engine.EvalEnv, keys []sqlfront.Expr) ([]any, *sqlfront.SQLError) {
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
		c, _ := engine.CompareValues(a[i], b[i])
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

func (m *mergeJoinIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	m.lenv = engine.EvalEnv{X: r.x, Rel: m.left.node().schema, Outer: outer}
	m.renv = engine.EvalEnv{X: r.x, Rel: m.right.node().schema, Outer: outer}
	m.env = engine.EvalEnv{X: r.x, Rel: m.schema, Outer: outer}
	m.rcur, m.group, m.lcur, m.rdone = nil, nil, nil, false
	if err := r.open(m.left, outer); err != nil {
		return err
	}
	if err := r.open(m.right, outer); err != nil {
		return err
	}
	return m.advanceRight(r)
}

func (m *mergeJoinIter) advanceRight(r *runCtx) *sqlfront.SQLError {
	t, err := r.next(m.right)
	if err != nil {
		return err
	}
	if t == nil {
		m.rcur, m.rdone = nil, true
		return nil
	}
	m.renv.Row, m.renv.Srcs = t.vals, t.srcs
	k, err := evalKeys(&m.renv, m.rk)
	if err != nil {
		return err
	}
	m.rcur, m.rkey = t, k
	return nil
}

func (m *mergeJoinIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	for {
		if m.lcur != nil && m.gi < len(m.group) {
			rt := m.group[m.gi]
			m.gi++
			vals := append(append(make([]any, 0, len(m.lcur.vals)+len(rt.vals)), m.lcur.vals...), rt.vals...)
			out := &tuple{vals: vals, srcs: append(append([]engine.RowSource{}, m.lcur.srcs...), rt.srcs...), thread: m.lcur.thread}
			if m.residual != nil {
				m.env.Row, m.env.Srcs = out.vals, out.srcs
				v, err := m.env.Eval(m.residual)
				if err != nil {
					return nil, err
				}
				if b, _ := engine.Truth(v); !b {
					continue
				}
			}
			return out, nil
		}
		lt, err := r.next(m.left)
		if err != nil || lt == nil {
			return nil, err
		}
		m.lenv.Row, m.lenv.Srcs = lt.vals, lt.srcs
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
			m.group = []*tuple{}
		}
	}
}

func (m *mergeJoinIter) close(r *runCtx) {
	r.close(m.left)
	r.close(m.right)
}
