package standin

import (
	"math"
	"sort"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Row-at-a-time operators: Filter, Compute Scalar, Constant Scan,
// table-valued functions, Sort, Top, Parallelism.

type filterIter struct {
	n    *planNode
	in   iter
	pred sqlfront.Expr
	env  engine.EvalEnv
}

func (f *filterIter) node() *planNode { return f.n }

func (p *planner) filterOp(in iter, pred sqlfront.Expr) (iter, *sqlfront.SQLError) {
	schema := in.node().schema
	if err := p.resolves(pred, schema); err != nil {
		return nil, err
	}
	n := p.newNode("Filter", "Filter", schema, in)
	n.estRows = math.Max(1, in.node().estRows*0.3)
	n.estCPU = 0.00000048 * in.node().estRows
	n.subtreeCost = in.node().subtreeCost + n.estCPU
	f := &filterIter{n: n, in: in, pred: pred}
	n.details = f.showplan
	return f, nil
}

func (f *filterIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	f.env = engine.EvalEnv{X: r.x, Rel: f.in.node().schema, Outer: outer}
	return r.open(f.in, outer)
}

func (f *filterIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	for {
		t, err := r.next(f.in)
		if err != nil || t == nil {
			return nil, err
		}
		f.env.Row, f.env.Srcs = t.vals, t.srcs
		v, err := f.env.Eval(f.pred)
		if err != nil {
			return nil, err
		}
		if b, _ := engine.Truth(v); b {
			return t, nil
		}
	}
}

func (f *filterIter) close(r *runCtx) { r.close(f.in) }

// projectIter computes its output columns from each input row.
type projectIter struct {
	n     *planNode
	in    iter
	exprs []sqlfront.Expr
	env   engine.EvalEnv
}

func (c *projectIter) node() *planNode { return c.n }

func (c *projectIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	c.env = engine.EvalEnv{X: r.x, Rel: c.in.node().schema, Outer: outer}
	if c.n.details == nil {
		c.n.details = c.showplan
	}
	return r.open(c.in, outer)
}

func (c *projectIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	t, err := r.next(c.in)
	if err != nil || t == nil {
		return nil, err
	}
	c.env.Row, c.env.Srcs = t.vals, t.srcs
	vals := make([]any, len(c.exprs))
	for i, e := range c.exprs {
		v, err := c.env.Eval(e)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return &tuple{vals: vals, srcs: t.srcs, thread: t.thread}, nil
}

func (c *projectIter) close(r *runCtx) { r.close(c.in) }

// renameIter gives its input's rows another schema (a derived table's
// alias and column names); it is not an operator of its own.
type renameIter struct {
	in     iter
	n      *planNode
	schema *engine.Relation
	shown  *planNode
}

func (x *renameIter) node() *planNode {
	if x.shown == nil {
		cp := *x.n
		cp.schema = x.schema
		x.shown = &cp
		x.shown.hidden = true
		x.shown.children = []*planNode{x.n}
	}
	return x.shown
}
func (x *renameIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	return r.open(x.in, outer)
}
func (x *renameIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) { return r.next(x.in) }
func (x *renameIter) close(r *runCtx)                             { r.close(x.in) }

// constIter returns fixed rows (SELECT without FROM: one empty row).
type constIter struct {
	n    *planNode
	rows [][]any
	i    int
}

func (c *constIter) node() *planNode                                          { return c.n }
func (c *constIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError { c.i = 0; return nil }
func (c *constIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	if c.i >= len(c.rows) {
		return nil, nil
	}
	c.i++
	return &tuple{vals: c.rows[c.i-1]}, nil
}
func (c *constIter) close(r *runCtx) {}

// valuesIter is a Constant Scan of a VALUES constructor.
type valuesIter struct {
	n      *planNode
	rows   [][]sqlfront.Expr
	schema *engine.Relation
	i      int
	env    engine.EvalEnv
}

func (v *valuesIter) node() *planNode { return v.n }
func (v *valuesIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	v.i = 0
	v.env = engine.EvalEnv{X: r.x, Outer: outer}
	return nil
}
func (v *valuesIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	if v.i >= len(v.rows) {
		return nil, nil
	}
	row := v.rows[v.i]
	v.i++
	vals := make([]any, len(row))
	for i, e := range row {
		x, err := v.env.Eval(e)
		if err != nil {
			return nil, err
		}
		if x, err = engine.ConvertValue(x, v.schema.Cols[i].Typ); err != nil {
			return nil, err
		}
		vals[i] = x
	}
	return &tuple{vals: vals}, nil
}
func (v *valuesIter) close(r *runCtx) {}

// tvfIter evaluates a table-valued function (or a system view, when f is
// nil and view is set) when opened, with the outer row in scope.
type tvfIter struct {
	n      *planNode
	f      *sqlfront.TableFunc
	view   func(x *execCtx) (*engine.Relation, *sqlfront.SQLError)
	schema *engine.Relation
	rel    *engine.Relation
	i      int
}

func (t *tvfIter) node() *planNode { return t.n }
func (t *tvfIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	var err *sqlfront.SQLError
	if t.view != nil {
		t.rel, err = t.view(r.x)
	} else {
		t.rel, err = r.x.tableFunction(t.f, outer)
	}
	t.i = 0
	return err
}
func (t *tvfIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	if t.rel == nil || t.i >= len(t.rel.Rows) {
		return nil, nil
	}
	i := t.i
	t.i++
	var srcs []engine.RowSource
	if i < len(t.rel.Srcs) {
		srcs = t.rel.Srcs[i]
	}
	return &tuple{vals: t.rel.Rows[i], srcs: srcs}, nil
}
func (t *tvfIter) close(r *runCtx) { t.rel = nil }

// sortKey is one ORDER BY column of an operator's input.
type sortKey struct {
	col  int
	desc bool
}

// sortIter is Sort (or Distinct Sort): it reads its whole input, sorts
// it and returns it; rows that do not fit its memory grant spill to
// tempdb (sort_warning, tempdb I/O).
type sortIter struct {
	n        *planNode
	in       iter
	keys     []sortKey
	distinct bool
	topN     int64 // > 0: keep only the first n rows (Top N Sort)
	topExpr  sqlfront.Expr
	rows     []*tuple
	i        int
	bytes    int64
}

func (s *sortIter) node() *planNode { return s.n }

func (p *planner) sortOp(in iter, keys []sortKey, top sqlfront.Expr, noTopN bool) iter {
	schema := in.node().schema
	logical := "Sort"
	s := &sortIter{in: in, keys: keys}
	if top != nil && !noTopN {
		logical = "TopN Sort"
		s.topExpr = top
	}
	n := p.newNode("Sort", logical, schema, in)
	n.estRows = in.node().estRows
	n.rowSize = rowSizeOf(schema)
	n.estIO = 0.0112613
	n.estCPU = 0.000100 + 0.0000013*n.estRows*math.Log2(math.Max(n.estRows, 2))
	n.subtreeCost = in.node().subtreeCost + n.estIO + n.estCPU
	n.memory = true
	n.estMemKB = int64(n.estRows*float64(n.rowSize+16)/1024) + 1
	s.n = n
	n.details = s.showplan
	return s
}

func (s *sortIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	s.rows, s.i, s.bytes = nil, 0, 0
	if s.topExpr != nil {
		v, err := (&engine.EvalEnv{X: r.x, Outer: outer}).Eval(s.topExpr)
		if err != nil {
			return err
		}
		if n, ok := v.(int64); ok {
			s.topN = n
		}
	}
	rows, err := r.drain(s.in, outer, 0, true)
	if err != nil {
		return err
	}
	s.rows = rows
	for _, t := range rows {
		s.bytes += tupleBytes(t)
	}
	sort.SliceStable(s.rows, func(a, b int) bool { return lessRows(s.rows[a], s.rows[b], s.keys) < 0 })
	r.work(len(s.rows), 250*time.Nanosecond)
	r.x.memoryUse(r, s.n, int64(len(s.rows)))
	if s.distinct {
		var kept []*tuple
		for i, t := range s.rows {
			if i == 0 || !sameVisible(t, s.rows[i-1], len(s.keys)) {
				kept = append(kept, t)
			}
		}
		s.rows = kept
	}
	if s.topN > 0 && int64(len(s.rows)) > s.topN {
		// a Top N Sort keeps only what its Top needs (ties are the Top's job)
		keep := s.topN
		for keep < int64(len(s.rows)) && lessRows(s.rows[keep], s.rows[keep-1], s.keys) == 0 {
			keep++
		}
		s.rows = s.rows[:keep]
	}
	return nil
}

// lessRows orders two rows by sort keys, NULLs first as SQL Server sorts.
func lessRows(a, b *tuple, keys []sortKey) int {
	for _, k := range keys {
		va, vb := a.vals[k.col], b.vals[k.col]
		var c int
		switch {
		case va == nil && vb == nil:
		case va == nil:
			c = -1
		case vb == nil:
			c = 1
		default:
			c, _ = engine.CompareValues(va, vb)
		}
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func sameVisible(a, b *tuple, n int) bool {
	for i := 0; i < n && i < len(a.vals); i++ {
		if (a.vals[i] == nil) != (b.vals[i] == nil) {
			return false
		}
		if a.vals[i] != nil {
			if c, err := engine.CompareValues(a.vals[i], b.vals[i]); err != nil || c != 0 {
				return false
			}
		}
	}
	return true
}

func (s *sortIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	if s.i >= len(s.rows) {
		return nil, nil
	}
	s.i++
	return s.rows[s.i-1], nil
}

func (s *sortIter) close(r *runCtx) {
	r.release(int64(len(s.rows)), s.bytes)
	s.rows = nil
}

// orderedBy tells whether in already returns rows in keys order (a scan
// of an index in its key order, with the key columns in the output).
func orderedBy(in iter, keys []sortKey) bool {
	var s *scanIter
	switch x := in.(type) {
	case *scanIter:
		s = x
	case *nlIter:
		// Nested Loops returns rows in its outer input's order, and the
		// outer columns come first
		for _, k := range keys {
			if k.col >= len(x.outer.node().schema.Cols) {
				return false
			}
		}
		return orderedBy(x.outer, keys)
	case *projectIter:
		// a projection keeps its input's order: map keys through it
		inner := x.in
		mapped := make([]sortKey, len(keys))
		for i, k := range keys {
			c, ok := x.exprs[k.col].(*sqlfront.ColRef)
			if !ok {
				return false
			}
			j, _ := inner.node().schema.LookupRef(c)
			if j < 0 {
				return false
			}
			mapped[i] = sortKey{col: j, desc: k.desc}
		}
		return orderedBy(inner, mapped)
	default:
		return false
	}
	if s.lookup || s.dop > 1 || s.seek != nil && len(s.seek.ranges) > 1 {
		return false
	}
	order := s.t.PK
	if s.ix.ID != 1 {
		order = append(append([]int{}, s.ix.KeyCols...), s.t.PK...)
	}
	if len(keys) > len(order) {
		return false
	}
	for i, k := range keys {
		if k.desc || s.colMap[k.col] != order[i] {
			return false
		}
	}
	return true
}

// topIter is Top: TOP (n) [PERCENT] [WITH TIES], and OFFSET … FETCH.
type topIter struct {
	n                  *planNode
	in                 iter
	count, offset      sqlfront.Expr
	fetch              sqlfront.Expr
	percent, ties      bool
	keys               []sortKey
	limit, skip, taken int64
	last               *tuple
	buffered           []*tuple
	bi                 int
	done               bool
}

func (t *topIter) node() *planNode { return t.n }

func (p *planner) topOp(in iter, count sqlfront.Expr, percent, ties bool, keys []sortKey, offset, fetch sqlfront.Expr) iter {
	n := p.newNode("Top", "Top", in.node().schema, in)
	n.estRows = in.node().estRows
	if lit, ok := count.(*sqlfront.Literal); ok {
		if v, ok := lit.V.(int64); ok && !percent {
			n.estRows = math.Min(n.estRows, float64(v))
		}
	}
	n.estCPU = 0.0000001 * n.estRows
	n.subtreeCost = in.node().subtreeCost + n.estCPU
	t := &topIter{n: n, in: in, count: count, percent: percent, ties: ties, keys: keys, offset: offset, fetch: fetch}
	n.details = t.showplan
	return t
}

func (t *topIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	env := &engine.EvalEnv{X: r.x, Outer: outer}
	t.limit, t.skip, t.taken, t.last, t.done = -1, 0, 0, nil, false
	t.buffered, t.bi = nil, 0
	num := func(e sqlfront.Expr) (float64, *sqlfront.SQLError) {
		v, err := env.Eval(e)
		if err != nil {
			return 0, err
		}
		switch n := v.(type) {
		case int64:
			if n < 0 {
				return 0, sqlfront.NewError(1014, 15, "A TOP or FETCH clause contains an invalid value.")
			}
			return float64(n), nil
		case float64:
			if n < 0 || !t.percent {
				return 0, sqlfront.NewError(1014, 15, "A TOP or FETCH clause contains an invalid value.")
			}
			return n, nil
		}
		return 0, sqlfront.NewError(1014, 15, "A TOP or FETCH clause contains an invalid value.")
	}
	var pct float64
	if t.count != nil {
		v, err := num(t.count)
		if err != nil {
			return err
		}
		if t.percent {
			if v > 100 {
				return sqlfront.NewError(1006, 15, "Percent values must be between 0 and 100.")
			}
			pct = v
		} else {
			t.limit = int64(v)
		}
	}
	if t.offset != nil {
		v, err := num(t.offset)
		if err != nil {
			return sqlfront.NewError(10742, 15, "The offset specified in a OFFSET clause may not be negative.")
		}
		t.skip = int64(v)
		if t.fetch != nil {
			f, err := num(t.fetch)
			if err != nil || f == 0 {
				return sqlfront.NewError(10744, 15, "The number of rows provided for a FETCH clause must be greater then zero.")
			}
			t.limit = int64(f)
		}
	}
	if err := r.open(t.in, outer); err != nil {
		return err
	}
	if t.percent {
		// TOP PERCENT needs the row count first (SQL Server spools the input)
		for {
			row, err := r.next(t.in)
			if err != nil {
				return err
			}
			if row == nil {
				break
			}
			if err := r.hold(row); err != nil {
				return err
			}
			t.buffered = append(t.buffered, row)
		}
		t.limit = int64(math.Ceil(float64(len(t.buffered)) * pct / 100))
	}
	return nil
}

func (t *topIter) pull(r *runCtx) (*tuple, *sqlfront.SQLError) {
	if t.buffered != nil {
		if t.bi >= len(t.buffered) {
			return nil, nil
		}
		t.bi++
		return t.buffered[t.bi-1], nil
	}
	return r.next(t.in)
}

func (t *topIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	if t.done {
		return nil, nil
	}
	for t.skip > 0 {
		row, err := t.pull(r)
		if err != nil || row == nil {
			return nil, err
		}
		t.skip--
	}
	if t.limit >= 0 && t.taken >= t.limit && !t.ties {
		// SQL Server's Top stops asking its input once it has its rows
		t.done = true
		return nil, nil
	}
	row, err := t.pull(r)
	if err != nil || row == nil {
		return nil, err
	}
	if t.limit >= 0 && t.taken >= t.limit {
		if t.ties && t.last != nil && lessRows(row, t.last, t.keys) == 0 {
			return row, nil
		}
		t.done = true
		return nil, nil
	}
	t.taken++
	t.last = row
	return row, nil
}

func (t *topIter) close(r *runCtx) {
	if t.buffered != nil {
		r.release(int64(len(t.buffered)), 0)
	}
	t.buffered = nil
	r.close(t.in)
}

// exchangeIter is Parallelism: Gather Streams (to the coordinator thread),
// Repartition Streams (rows to threads by hash of the partitioning keys)
// or Distribute Streams. The plan runs in one goroutine; every row carries
// the worker thread that would have produced it, so the per-thread
// counters and events are those of the parallel plan.
type exchangeIter struct {
	n     *planNode
	in    iter
	kind  string
	keys  []int
	dop   int
	order []sortKey
	first bool
}

func (e *exchangeIter) node() *planNode { return e.n }

func (p *planner) exchange(in iter, kind string, keys []int, order []sortKey) iter {
	n := p.newNode("Parallelism", kind, in.node().schema, in)
	n.estRows = in.node().estRows
	n.estCPU = 0.0285 + 0.0000001*n.estRows
	n.subtreeCost = in.node().subtreeCost + n.estCPU
	n.parallel = kind != "Gather Streams"
	e := &exchangeIter{n: n, in: in, kind: kind, keys: keys, dop: p.opts.MaxDOP, order: order}
	n.details = e.showplan
	return e
}

func (e *exchangeIter) open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError {
	e.first = true
	return r.open(e.in, outer)
}

func (e *exchangeIter) next(r *runCtx) (*tuple, *sqlfront.SQLError) {
	t, err := r.next(e.in)
	if err != nil || t == nil {
		if t == nil && err == nil {
			r.x.exchangeSpill(r, e)
			r.x.exchangeWaits(r, e)
		}
		return nil, err
	}
	if e.first {
		e.first = false
		r.x.exchangeWaits(r, e)
	}
	out := *t
	switch e.kind {
	case "Gather Streams":
		out.thread = 0
	case "Repartition Streams", "Distribute Streams":
		h := uint32(2166136261)
		for _, k := range e.keys {
			for _, c := range engine.JoinKey(t.vals[k]) {
				h = (h ^ uint32(c)) * 16777619
			}
		}
		out.thread = 1 + int(h%uint32(max(e.dop, 1)))
	}
	r.x.srv.curThread = out.thread
	return &out, nil
}

func (e *exchangeIter) close(r *runCtx) {
	r.close(e.in)
	r.x.srv.curThread = 0
}

// exchangeWaits emits the CXPACKET/CXCONSUMER waits an exchange's
// consumers and producers see at its start and end.
func (x *execCtx) exchangeWaits(r *runCtx, e *exchangeIter) {
	s := x.srv
	if !s.anySessionRunning() {
		return
	}
	// producers wait CXPACKET for room in the exchange, consumers
	// CXCONSUMER for rows (SQL Server 2017 CU3 and later)
	consumers := []int{0}
	if e.kind != "Gather Streams" {
		consumers = nil
		for th := 1; th <= max(e.dop, 1); th++ {
			consumers = append(consumers, th)
		}
	}
	wait := func(th int, wt string) {
		for _, opcode := range []string{"Begin", "End"} {
			dur := int64(0)
			if opcode == "End" {
				dur = 1
			}
			s.emit(x.ec, &xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: s.advance(150 * time.Microsecond), Thread: th, Fields: []xevents.Field{
				xevents.FMap("wait_type", "wait_types", "sqlos", wt), xevents.FMap("opcode", "event_opcode", "sqlos", opcode),
				xevents.FUint("duration", "uint64", dur), xevents.FUint("signal_duration", "uint64", 0), xevents.FPtr("wait_resource", 0x000001E4B0A0C000+uint64(e.n.id)*0x100)}})
		}
	}
	for th := 1; th <= max(e.dop, 1); th++ {
		wait(th, "CXPACKET")
	}
	for _, th := range consumers {
		wait(th, "CXCONSUMER")
	}
}
