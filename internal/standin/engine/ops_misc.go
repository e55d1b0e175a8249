package engine

import (
	"math"
	"sort"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Row-at-a-time operators: Filter, Compute Scalar, Constant Scan,
// table-valued functions, Sort, Top, Parallelism.

type filterIter struct {
	n    *PlanNode
	in   Iter
	pred sqlfront.Expr
	env  EvalEnv
}

func (f *filterIter) Node() *PlanNode { return f.n }

func (p *Planner) filterOp(in Iter, pred sqlfront.Expr) (Iter, *sqlfront.SQLError) {
	schema := in.Node().Schema
	if err := p.Resolves(pred, schema); err != nil {
		return nil, err
	}
	n := p.newNode("Filter", "Filter", schema, in)
	n.EstRows = math.Max(1, in.Node().EstRows*0.3)
	n.EstCPU = 0.00000048 * in.Node().EstRows
	n.SubtreeCost = in.Node().SubtreeCost + n.EstCPU
	f := &filterIter{n: n, in: in, pred: pred}
	n.Details = f.Showplan
	return f, nil
}

func (f *filterIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	f.env = EvalEnv{X: r.X, Rel: f.in.Node().Schema, Outer: outer}
	return r.Open(f.in, outer)
}

func (f *filterIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	for {
		t, err := r.Next(f.in)
		if err != nil || t == nil {
			return nil, err
		}
		f.env.Row, f.env.Srcs = t.Vals, t.Srcs
		v, err := f.env.Eval(f.pred)
		if err != nil {
			return nil, err
		}
		if b, _ := Truth(v); b {
			return t, nil
		}
	}
}

func (f *filterIter) Close(r *RunCtx) { r.Close(f.in) }

// projectIter computes its output columns from each input row.
type projectIter struct {
	n     *PlanNode
	in    Iter
	exprs []sqlfront.Expr
	env   EvalEnv
}

func (c *projectIter) Node() *PlanNode { return c.n }

func (c *projectIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	c.env = EvalEnv{X: r.X, Rel: c.in.Node().Schema, Outer: outer}
	if c.n.Details == nil {
		c.n.Details = c.Showplan
	}
	return r.Open(c.in, outer)
}

func (c *projectIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	t, err := r.Next(c.in)
	if err != nil || t == nil {
		return nil, err
	}
	c.env.Row, c.env.Srcs = t.Vals, t.Srcs
	vals := make([]any, len(c.exprs))
	for i, e := range c.exprs {
		v, err := c.env.Eval(e)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return &Tuple{Vals: vals, Srcs: t.Srcs, thread: t.thread}, nil
}

func (c *projectIter) Close(r *RunCtx) { r.Close(c.in) }

// renameIter gives its input's rows another schema (a derived table's
// alias and column names); it is not an operator of its own.
type renameIter struct {
	in     Iter
	n      *PlanNode
	schema *Relation
	shown  *PlanNode
}

func (x *renameIter) Node() *PlanNode {
	if x.shown == nil {
		cp := *x.n
		cp.Schema = x.schema
		x.shown = &cp
		x.shown.Hidden = true
		x.shown.Children = []*PlanNode{x.n}
	}
	return x.shown
}
func (x *renameIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	return r.Open(x.in, outer)
}
func (x *renameIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) { return r.Next(x.in) }
func (x *renameIter) Close(r *RunCtx)                             { r.Close(x.in) }

// constIter returns fixed rows (SELECT without FROM: one empty row).
type constIter struct {
	n    *PlanNode
	rows [][]any
	i    int
}

func (c *constIter) Node() *PlanNode                                   { return c.n }
func (c *constIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError { c.i = 0; return nil }
func (c *constIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if c.i >= len(c.rows) {
		return nil, nil
	}
	c.i++
	return &Tuple{Vals: c.rows[c.i-1]}, nil
}
func (c *constIter) Close(r *RunCtx) {}

// valuesIter is a Constant Scan of a VALUES constructor.
type valuesIter struct {
	n      *PlanNode
	rows   [][]sqlfront.Expr
	schema *Relation
	i      int
	env    EvalEnv
}

func (v *valuesIter) Node() *PlanNode { return v.n }
func (v *valuesIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	v.i = 0
	v.env = EvalEnv{X: r.X, Outer: outer}
	return nil
}
func (v *valuesIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
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
		if x, err = ConvertValue(x, v.schema.Cols[i].Typ); err != nil {
			return nil, err
		}
		vals[i] = x
	}
	return &Tuple{Vals: vals}, nil
}
func (v *valuesIter) Close(r *RunCtx) {}

// tvfIter evaluates a table-valued function (or a system view, when f is
// nil and view is set) when opened, with the outer row in scope.
type tvfIter struct {
	n      *PlanNode
	f      *sqlfront.TableFunc
	view   func(x Exec) (*Relation, *sqlfront.SQLError)
	schema *Relation
	rel    *Relation
	i      int
}

func (t *tvfIter) Node() *PlanNode { return t.n }
func (t *tvfIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	var err *sqlfront.SQLError
	if t.view != nil {
		t.rel, err = t.view(r.X)
	} else {
		t.rel, err = r.X.TableFunction(t.f, outer)
	}
	t.i = 0
	return err
}
func (t *tvfIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if t.rel == nil || t.i >= len(t.rel.Rows) {
		return nil, nil
	}
	i := t.i
	t.i++
	var srcs []RowSource
	if i < len(t.rel.Srcs) {
		srcs = t.rel.Srcs[i]
	}
	return &Tuple{Vals: t.rel.Rows[i], Srcs: srcs}, nil
}
func (t *tvfIter) Close(r *RunCtx) { t.rel = nil }

// sortKey is one ORDER BY column of an operator's input.
type sortKey struct {
	col  int
	desc bool
}

// sortIter is Sort (or Distinct Sort): it reads its whole input, sorts
// it and returns it; rows that do not fit its memory grant spill to
// tempdb (sort_warning, tempdb I/O).
type sortIter struct {
	n        *PlanNode
	in       Iter
	keys     []sortKey
	distinct bool
	topN     int64 // > 0: keep only the first n rows (Top N Sort)
	topExpr  sqlfront.Expr
	rows     []*Tuple
	i        int
	bytes    int64
}

func (s *sortIter) Node() *PlanNode { return s.n }

func (p *Planner) sortOp(in Iter, keys []sortKey, top sqlfront.Expr, noTopN bool) Iter {
	schema := in.Node().Schema
	logical := "Sort"
	s := &sortIter{in: in, keys: keys}
	if top != nil && !noTopN {
		logical = "TopN Sort"
		s.topExpr = top
	}
	n := p.newNode("Sort", logical, schema, in)
	n.EstRows = in.Node().EstRows
	n.rowSize = rowSizeOf(schema)
	n.EstIO = 0.0112613
	n.EstCPU = 0.000100 + 0.0000013*n.EstRows*math.Log2(math.Max(n.EstRows, 2))
	n.SubtreeCost = in.Node().SubtreeCost + n.EstIO + n.EstCPU
	n.Memory = true
	n.EstMemKB = int64(n.EstRows*float64(n.rowSize+16)/1024) + 1
	s.n = n
	n.Details = s.Showplan
	return s
}

func (s *sortIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	s.rows, s.i, s.bytes = nil, 0, 0
	if s.topExpr != nil {
		v, err := (&EvalEnv{X: r.X, Outer: outer}).Eval(s.topExpr)
		if err != nil {
			return err
		}
		if n, ok := v.(int64); ok {
			s.topN = n
		}
	}
	rows, err := r.Drain(s.in, outer, 0, true)
	if err != nil {
		return err
	}
	s.rows = rows
	for _, t := range rows {
		s.bytes += tupleBytes(t)
	}
	sort.SliceStable(s.rows, func(a, b int) bool { return lessRows(s.rows[a], s.rows[b], s.keys) < 0 })
	r.work(len(s.rows), 250*time.Nanosecond)
	memoryUse(r.X, r, s.n, int64(len(s.rows)))
	if s.distinct {
		var kept []*Tuple
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
func lessRows(a, b *Tuple, keys []sortKey) int {
	for _, k := range keys {
		va, vb := a.Vals[k.col], b.Vals[k.col]
		var c int
		switch {
		case va == nil && vb == nil:
		case va == nil:
			c = -1
		case vb == nil:
			c = 1
		default:
			c, _ = CompareValues(va, vb)
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

func sameVisible(a, b *Tuple, n int) bool {
	for i := 0; i < n && i < len(a.Vals); i++ {
		if (a.Vals[i] == nil) != (b.Vals[i] == nil) {
			return false
		}
		if a.Vals[i] != nil {
			if c, err := CompareValues(a.Vals[i], b.Vals[i]); err != nil || c != 0 {
				return false
			}
		}
	}
	return true
}

func (s *sortIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if s.i >= len(s.rows) {
		return nil, nil
	}
	s.i++
	return s.rows[s.i-1], nil
}

func (s *sortIter) Close(r *RunCtx) {
	r.release(int64(len(s.rows)), s.bytes)
	s.rows = nil
}

// orderedBy tells whether in already returns rows in keys order (a scan
// of an index in its key order, with the key columns in the output).
func orderedBy(in Iter, keys []sortKey) bool {
	var s *scanIter
	switch x := in.(type) {
	case *scanIter:
		s = x
	case *nlIter:
		// Nested Loops returns rows in its outer input's order, and the
		// outer columns come first
		for _, k := range keys {
			if k.col >= len(x.outer.Node().Schema.Cols) {
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
			j, _ := inner.Node().Schema.LookupRef(c)
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
	n                  *PlanNode
	in                 Iter
	count, offset      sqlfront.Expr
	fetch              sqlfront.Expr
	percent, ties      bool
	keys               []sortKey
	limit, skip, taken int64
	last               *Tuple
	buffered           []*Tuple
	bi                 int
	done               bool
}

func (t *topIter) Node() *PlanNode { return t.n }

func (p *Planner) topOp(in Iter, count sqlfront.Expr, percent, ties bool, keys []sortKey, offset, fetch sqlfront.Expr) Iter {
	n := p.newNode("Top", "Top", in.Node().Schema, in)
	n.EstRows = in.Node().EstRows
	if lit, ok := count.(*sqlfront.Literal); ok {
		if v, ok := lit.V.(int64); ok && !percent {
			n.EstRows = math.Min(n.EstRows, float64(v))
		}
	}
	n.EstCPU = 0.0000001 * n.EstRows
	n.SubtreeCost = in.Node().SubtreeCost + n.EstCPU
	t := &topIter{n: n, in: in, count: count, percent: percent, ties: ties, keys: keys, offset: offset, fetch: fetch}
	n.Details = t.Showplan
	return t
}

func (t *topIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	env := &EvalEnv{X: r.X, Outer: outer}
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
	if err := r.Open(t.in, outer); err != nil {
		return err
	}
	if t.percent {
		// TOP PERCENT needs the row count first (SQL Server spools the input)
		for {
			row, err := r.Next(t.in)
			if err != nil {
				return err
			}
			if row == nil {
				break
			}
			if err := r.Hold(row); err != nil {
				return err
			}
			t.buffered = append(t.buffered, row)
		}
		t.limit = int64(math.Ceil(float64(len(t.buffered)) * pct / 100))
	}
	return nil
}

func (t *topIter) pull(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	if t.buffered != nil {
		if t.bi >= len(t.buffered) {
			return nil, nil
		}
		t.bi++
		return t.buffered[t.bi-1], nil
	}
	return r.Next(t.in)
}

func (t *topIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
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

func (t *topIter) Close(r *RunCtx) {
	if t.buffered != nil {
		r.release(int64(len(t.buffered)), 0)
	}
	t.buffered = nil
	r.Close(t.in)
}

// exchangeIter is Parallelism: Gather Streams (to the coordinator thread),
// Repartition Streams (rows to threads by hash of the partitioning keys)
// or Distribute Streams. The plan runs in one goroutine; every row carries
// the worker thread that would have produced it, so the per-thread
// counters and events are those of the parallel plan.
type exchangeIter struct {
	n     *PlanNode
	in    Iter
	kind  string
	keys  []int
	dop   int
	order []sortKey
	first bool
}

func (e *exchangeIter) Node() *PlanNode { return e.n }

func (p *Planner) exchange(in Iter, kind string, keys []int, order []sortKey) Iter {
	n := p.newNode("Parallelism", kind, in.Node().Schema, in)
	n.EstRows = in.Node().EstRows
	n.EstCPU = 0.0285 + 0.0000001*n.EstRows
	n.SubtreeCost = in.Node().SubtreeCost + n.EstCPU
	n.parallel = kind != "Gather Streams"
	e := &exchangeIter{n: n, in: in, kind: kind, keys: keys, dop: p.Opts.MaxDOP, order: order}
	n.Details = e.Showplan
	return e
}

func (e *exchangeIter) Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError {
	e.first = true
	return r.Open(e.in, outer)
}

func (e *exchangeIter) Next(r *RunCtx) (*Tuple, *sqlfront.SQLError) {
	t, err := r.Next(e.in)
	if err != nil || t == nil {
		if t == nil && err == nil {
			exchangeSpill(r.X, r, e)
			exchangeWaits(r.X, r, e)
		}
		return nil, err
	}
	if e.first {
		e.first = false
		exchangeWaits(r.X, r, e)
	}
	out := *t
	switch e.kind {
	case "Gather Streams":
		out.thread = 0
	case "Repartition Streams", "Distribute Streams":
		h := uint32(2166136261)
		for _, k := range e.keys {
			for _, c := range JoinKey(t.Vals[k]) {
				h = (h ^ uint32(c)) * 16777619
			}
		}
		out.thread = 1 + int(h%uint32(max(e.dop, 1)))
	}
	r.X.SetThread(out.thread)
	return &out, nil
}

func (e *exchangeIter) Close(r *RunCtx) {
	r.Close(e.in)
	r.X.SetThread(0)
}

// exchangeWaits emits the CXPACKET/CXCONSUMER waits an exchange's
// consumers and producers see at its start and end.
func exchangeWaits(x Exec, r *RunCtx, e *exchangeIter) {
	if !x.AnySessionRunning() {
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
			x.Emit(&xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: x.Advance(150 * time.Microsecond), Thread: th, Fields: []xevents.Field{
				xevents.FMap("wait_type", "wait_types", "sqlos", wt), xevents.FMap("opcode", "event_opcode", "sqlos", opcode),
				xevents.FUint("duration", "uint64", dur), xevents.FUint("signal_duration", "uint64", 0), xevents.FPtr("wait_resource", 0x000001E4B0A0C000+uint64(e.n.ID)*0x100)}})
		}
	}
	for th := 1; th <= max(e.dop, 1); th++ {
		wait(th, "CXPACKET")
	}
	for _, th := range consumers {
		wait(th, "CXCONSUMER")
	}
}
