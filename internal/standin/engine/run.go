package engine

import (
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// The query engine. A statement is planned into a tree of physical
// operators (PlanNode) — the operators SQL Server would choose for it on
// the demo database — and executed as iterators: every operator pulls rows
// from its children one at a time, so a scan or join streams with bounded
// memory and only blocking operators (sort, hash, spool, window partitions)
// hold rows, against the statement's memory budget. Each operator counts
// what it did (rows per thread, executions, rebinds, logical and physical
// reads, read-aheads, memory grant use and spills), emits the events its
// work causes (page reads, locks, waits, spills) while it runs, and is
// rendered afterwards as the actual showplan.
//
// Execution runs under the server's latch, which the engine does not see:
// every YieldEvery rows it calls Exec.Yield, where the server gives the
// latch to other sessions and reports ATTENTION and KILL, so a long
// statement never blocks other sessions' logins, queries or cancels.

// Tuple is one row flowing between operators: its values, the base-table
// rows it came from (for %%lockres%% and %%physloc%%), and the worker
// thread of a parallel plan that produced it.
type Tuple struct {
	Vals   []any
	Srcs   []RowSource
	thread int
}

// Iter is a physical operator at run time; the server implements it for
// its own sources (INSERT ... VALUES).
type Iter interface {
	Node() *PlanNode
	Open(r *RunCtx, outer *EvalEnv) *sqlfront.SQLError
	Next(r *RunCtx) (*Tuple, *sqlfront.SQLError)
	Close(r *RunCtx)
}

// ThreadCounters are one thread's runtime counters of an operator, as
// RunTimeCountersPerThread reports them.
type ThreadCounters struct {
	Rows, rowsRead, Executions, rebinds, rewinds, endOfScans int64
	scans, logical, physical, readAheads                     int64
	threadTimes
}

// PlanNode is one operator of a plan: what the showplan says about it, and
// what it did.
type PlanNode struct {
	ID                int
	Physical, Logical string
	Children          []*PlanNode
	Schema            *Relation // output columns
	EstRows           float64   // per execution
	EstExecs          float64
	estRowsRead       float64
	EstIO, EstCPU     float64
	SubtreeCost       float64
	rowSize           int
	parallel          bool
	Index             *Index // data access and DML operators
	Objects           []*Index
	alias             string

	// runtime
	threads         map[int]*ThreadCounters
	Start, End      time.Time             // event clock: first open, last row or end of data
	closed          time.Time             // event clock: last close
	profiled        map[int]time.Duration // active time already reported per thread by query_thread_profile
	Opened          bool
	GrantKB, UsedKB int64 // memory-consuming operators
	spillPages      int64
	spillLevel      int
	spillKind       string // sort, hash, exchange
	spillThreads    int
	EstMemKB        int64
	outerRefs       []*sqlfront.ColRef
	Details         func(b *XMLBuilder) // the operator element (with children)
	forced          bool                // an index hint chose this access path
	lookup          bool                // a key lookup
	Hidden          bool                // a column selection SQL Server does not show: render its child instead
	Memory          bool                // a memory-consuming operator (sort, hash)
	probe           bool                // a Nested Loops whose inner side yields a probe column
	stack           bool                // a recursive CTE's stack spool
	exchangeSpill   int64               // pages an order-preserving exchange spilled
	primary         *recursiveWork      // a spool read: the spool that writes its rows
}

// Counters are n's runtime counters on a thread, created on first use.
func (n *PlanNode) Counters(thread int) *ThreadCounters {
	if n.threads == nil {
		n.threads = map[int]*ThreadCounters{}
	}
	c := n.threads[thread]
	if c == nil {
		c = &ThreadCounters{}
		n.threads[thread] = c
	}
	return c
}

func (n *PlanNode) total() ThreadCounters {
	var t ThreadCounters
	for _, c := range n.threads {
		t.Rows += c.Rows
		t.rowsRead += c.rowsRead
		t.Executions += c.Executions
		t.rebinds += c.rebinds
		t.rewinds += c.rewinds
		t.logical += c.logical
		t.physical += c.physical
		t.readAheads += c.readAheads
		t.scans += c.scans
	}
	return t
}

// Walk calls fn for n and every operator below it, parents first.
func (n *PlanNode) Walk(fn func(*PlanNode)) {
	fn(n)
	for _, c := range n.Children {
		c.Walk(fn)
	}
}

// Statement limits. A statement whose blocking operators would hold more
// rows or bytes than these fails with Msg 701, as SQL Server fails a query
// its resource pool cannot serve, instead of growing the process without
// bound. Options.MaxStatementMemory and Options.MaxStatementRows override
// them.
const (
	DefaultMaxStatementMemory = 256 << 20
	DefaultMaxStatementRows   = 4_000_000
	YieldEvery                = 256
)

func errInsufficientMemory() *sqlfront.SQLError { // Msg 701, severity 17
	return sqlfront.NewError(701, 17, "There is insufficient system memory in resource pool 'default' to run this query.")
}

// RunCtx is one statement's execution.
type RunCtx struct {
	X        Exec
	ticks    int
	memBytes int64
	memRows  int64
	maxBytes int64
	maxRows  int64
	thread   int // worker thread of the row being processed (parallel zones)
	DOP      int
	root     *PlanNode
	nextID   int
	GrantKB  int64 // the statement's memory grant
	UsedKB   int64
	WaitMs   int64 // RESOURCE_SEMAPHORE wait for the grant
	Reserved int64 // KB reserved in the server's grant pool
}

// NewRunCtx starts running a statement for x, with x's statement limits
// (the defaults when they are 0).
func NewRunCtx(x Exec) *RunCtx {
	r := &RunCtx{X: x, DOP: 1}
	r.maxBytes, r.maxRows = x.StatementLimits()
	if r.maxBytes <= 0 {
		r.maxBytes = DefaultMaxStatementMemory
	}
	if r.maxRows <= 0 {
		r.maxRows = DefaultMaxStatementRows
	}
	return r
}

// Hold accounts rows kept by a blocking operator; past the statement's
// limits it fails with Msg 701.
func (r *RunCtx) Hold(t *Tuple) *sqlfront.SQLError {
	r.memRows++
	r.memBytes += tupleBytes(t)
	if r.memRows > r.maxRows || r.memBytes > r.maxBytes {
		return errInsufficientMemory()
	}
	return nil
}

// release gives back what hold accounted for rows an operator dropped.
func (r *RunCtx) release(rows, bytes int64) {
	r.memRows -= rows
	r.memBytes -= bytes
}

func tupleBytes(t *Tuple) int64 {
	n := int64(48 + 16*len(t.Vals) + 32*len(t.Srcs))
	for _, v := range t.Vals {
		switch x := v.(type) {
		case string:
			n += int64(len(x))
		case []byte:
			n += int64(len(x))
		}
	}
	return n
}

// tick is called for every row an operator handles: every YieldEvery rows,
// or sooner when another session waits (Exec.YieldDue), it yields
// (Exec.Yield: the server gives its latch to other sessions) and stops the
// statement when the client cancelled or the session was killed.
func (r *RunCtx) tick() *sqlfront.SQLError {
	r.ticks++
	if due := r.X.YieldDue(); !due && r.ticks%YieldEvery != 0 {
		return nil
	}
	return r.X.Yield()
}

// Operator bookkeeping: every operator is driven through these, so the
// counters and times are kept the same way for all of them (optiming.go
// says what each time means).

// Open opens an operator with outer in scope, counting the execution
// (a rebind with new outer values, else a rewind) and its time.
func (r *RunCtx) Open(it Iter, outer *EvalEnv) *sqlfront.SQLError {
	n := it.Node()
	now := r.X.Clock()
	th := r.thread
	if !n.Opened {
		n.Opened = true
		n.Start = now
	}
	c := n.Counters(th)
	if c.opened.IsZero() {
		c.opened = now
	}
	c.Executions++
	if c.Executions > 1 {
		// a re-execution: with new outer values (a rebind) or the same (a rewind)
		if outer != nil {
			c.rebinds++
		} else {
			c.rewinds++
		}
	}
	r.X.EnterOp(n)
	err := it.Open(r, outer)
	r.X.LeaveOp()
	c.active += r.X.Clock().Sub(now)
	return err
}

// Next returns an operator's next row (nil at the end of data), counting
// it and its time, and yields to other sessions every YieldEvery rows.
func (r *RunCtx) Next(it Iter) (*Tuple, *sqlfront.SQLError) {
	began, th := r.X.Clock(), r.thread
	r.X.Advance(callCost)
	n := it.Node()
	r.X.EnterOp(n)
	t, err := it.Next(r)
	r.X.LeaveOp()
	now := r.X.Clock()
	if err != nil {
		n.Counters(th).active += now.Sub(began)
		return nil, err
	}
	if t == nil {
		c := n.Counters(r.thread)
		c.endOfScans++
		c.exhausted = now
		c.active += now.Sub(began)
		n.End = now
		return nil, nil
	}
	c := n.Counters(t.thread)
	c.Rows++
	if c.firstRow.IsZero() {
		c.firstRow = now
	}
	c.lastRow = now
	c.active += now.Sub(began)
	n.End = now
	if err := r.tick(); err != nil {
		return nil, err
	}
	return t, nil
}

// Close closes an operator; it no longer extends the operator's end (its
// last row or end of data), and query_thread_profile may fire for it
// (optiming.go).
func (r *RunCtx) Close(it Iter) {
	began, th := r.X.Clock(), r.thread
	n := it.Node()
	r.X.EnterOp(n)
	it.Close(r)
	r.X.LeaveOp()
	now := r.X.Clock()
	c := n.Counters(th)
	c.active += now.Sub(began)
	c.closed = now
	n.closed = now
	operatorClosed(r.X, n)
}

// work advances the event clock for CPU work on n rows (d per row).
func (r *RunCtx) work(rows int, d time.Duration) {
	r.X.Advance(time.Duration(rows) * d)
}

// Drain opens it with outer in scope and returns its rows (at most limit
// when limit > 0), holding them against the statement's limits when hold.
func (r *RunCtx) Drain(it Iter, outer *EvalEnv, limit int, hold bool) ([]*Tuple, *sqlfront.SQLError) {
	if err := r.Open(it, outer); err != nil {
		return nil, err
	}
	defer r.Close(it)
	var out []*Tuple
	for limit <= 0 || len(out) < limit {
		t, err := r.Next(it)
		if err != nil {
			return nil, err
		}
		if t == nil {
			break
		}
		if hold {
			if err := r.Hold(t); err != nil {
				return nil, err
			}
		}
		out = append(out, t)
	}
	return out, nil
}
