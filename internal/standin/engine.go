package standin

import (
	"runtime"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// The query engine. A statement is planned into a tree of physical
// operators (planNode) — the operators SQL Server would choose for it on
// the demo database — and executed as iterators: every operator pulls rows
// from its children one at a time, so a scan or join streams with bounded
// memory and only blocking operators (sort, hash, spool, window partitions)
// hold rows, against the statement's memory budget. Each operator counts
// what it did (rows per thread, executions, rebinds, logical and physical
// reads, read-aheads, memory grant use and spills), emits the events its
// work causes (page reads, locks, waits, spills) while it runs, and is
// rendered afterwards as the actual showplan.
//
// Execution holds the server latch (Server.mu) but gives it up every
// yieldEvery rows and around every network write, checking for ATTENTION
// and KILL each time: a long statement never blocks other sessions'
// logins, queries or cancels.

// tuple is one row flowing between operators: its values, the base-table
// rows it came from (for %%lockres%% and %%physloc%%), and the worker
// thread of a parallel plan that produced it.
type tuple struct {
	vals   []any
	srcs   []engine.RowSource
	thread int
}

// iter is a physical operator at run time.
type iter interface {
	node() *planNode
	open(r *runCtx, outer *engine.EvalEnv) *sqlfront.SQLError
	next(r *runCtx) (*tuple, *sqlfront.SQLError)
	close(r *runCtx)
}

// threadCounters are one thread's runtime counters of an operator, as
// RunTimeCountersPerThread reports them.
type threadCounters struct {
	rows, rowsRead, executions, rebinds, rewinds, endOfScans int64
	scans, logical, physical, readAheads                     int64
	threadTimes
}

// planNode is one operator of a plan: what the showplan says about it, and
// what it did.
type planNode struct {
	id                int
	physical, logical string
	children          []*planNode
	schema            *engine.Relation // output columns
	estRows           float64          // per execution
	estExecs          float64
	estRowsRead       float64
	estIO, estCPU     float64
	subtreeCost       float64
	rowSize           int
	parallel          bool
	ix                *index // data access and DML operators
	objects           []*index
	alias             string

	// runtime
	threads         map[int]*threadCounters
	start, end      time.Time             // event clock: first open, last row or end of data
	closed          time.Time             // event clock: last close
	profiled        map[int]time.Duration // active time already reported per thread by query_thread_profile
	opened          bool
	grantKB, usedKB int64 // memory-consuming operators
	spillPages      int64
	spillLevel      int
	spillKind       string // sort, hash, exchange
	spillThreads    int
	estMemKB        int64
	outerRefs       []*sqlfront.ColRef
	details         func(b *xmlBuilder) // the operator element (with children)
	forced          bool                // an index hint chose this access path
	lookup          bool                // a key lookup
	hidden          bool                // a column selection SQL Server does not show: render its child instead
	memory          bool                // a memory-consuming operator (sort, hash)
	probe           bool                // a Nested Loops whose inner side yields a probe column
	stack           bool                // a recursive CTE's stack spool
	exchangeSpill   int64               // pages an order-preserving exchange spilled
	primary         *recursiveWork      // a spool read: the spool that writes its rows
}

func (n *planNode) counters(thread int) *threadCounters {
	if n.threads == nil {
		n.threads = map[int]*threadCounters{}
	}
	c := n.threads[thread]
	if c == nil {
		c = &threadCounters{}
		n.threads[thread] = c
	}
	return c
}

func (n *planNode) total() threadCounters {
	var t threadCounters
	for _, c := range n.threads {
		t.rows += c.rows
		t.rowsRead += c.rowsRead
		t.executions += c.executions
		t.rebinds += c.rebinds
		t.rewinds += c.rewinds
		t.logical += c.logical
		t.physical += c.physical
		t.readAheads += c.readAheads
		t.scans += c.scans
	}
	return t
}

func (n *planNode) walk(fn func(*planNode)) {
	fn(n)
	for _, c := range n.children {
		c.walk(fn)
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
	yieldEvery                = 256
)

func errInsufficientMemory() *sqlfront.SQLError { // Msg 701, severity 17
	return sqlfront.NewError(701, 17, "There is insufficient system memory in resource pool 'default' to run this query.")
}

// runCtx is one statement's execution.
type runCtx struct {
	x        *execCtx
	ticks    int
	memBytes int64
	memRows  int64
	maxBytes int64
	maxRows  int64
	thread   int // worker thread of the row being processed (parallel zones)
	dop      int
	root     *planNode
	nextID   int
	grantKB  int64 // the statement's memory grant
	usedKB   int64
	waitMs   int64 // RESOURCE_SEMAPHORE wait for the grant
	reserved int64 // KB reserved in the server's grant pool
}

func newRunCtx(x *execCtx) *runCtx {
	r := &runCtx{x: x, maxBytes: x.srv.opts.MaxStatementMemory, maxRows: x.srv.opts.MaxStatementRows, dop: 1}
	if r.maxBytes <= 0 {
		r.maxBytes = DefaultMaxStatementMemory
	}
	if r.maxRows <= 0 {
		r.maxRows = DefaultMaxStatementRows
	}
	return r
}

// hold accounts rows kept by a blocking operator; past the statement's
// limits it fails with Msg 701.
func (r *runCtx) hold(t *tuple) *sqlfront.SQLError {
	r.memRows++
	r.memBytes += tupleBytes(t)
	if r.memRows > r.maxRows || r.memBytes > r.maxBytes {
		return errInsufficientMemory()
	}
	return nil
}

// release gives back what hold accounted for rows an operator dropped.
func (r *runCtx) release(rows, bytes int64) {
	r.memRows -= rows
	r.memBytes -= bytes
}

func tupleBytes(t *tuple) int64 {
	n := int64(48 + 16*len(t.vals) + 32*len(t.srcs))
	for _, v := range t.vals {
		switch x := v.(type) {
		case string:
			n += int64(len(x))
		case []byte:
			n += int64(len(x))
		}
	}
	return n
}

// tick is called for every row an operator handles: every yieldEvery rows
// it gives the server latch to other sessions and stops the statement when
// the client cancelled or the session was killed.
func (r *runCtx) tick() *sqlfront.SQLError {
	r.ticks++
	if r.ticks%yieldEvery != 0 {
		return nil
	}
	return r.x.yield()
}

// errCancelled is what a statement returns when its request was cancelled
// (ATTENTION) or its session KILLed; run() turns it into the right answer.
func errCancelled() *sqlfront.SQLError { return sqlfront.NewError(0, 0, "cancelled") }

// yield checks for cancellation and lets other sessions run.
func (x *execCtx) yield() *sqlfront.SQLError {
	if x.cancelled() {
		return errCancelled()
	}
	s := x.srv
	thread := s.curThread // other sessions' events are not this plan's thread's
	s.curThread = 0
	ops := s.swapOps(nil)  // nor its operators' call stacks
	ahead := s.paceDelay() // Options.PaceToWallClock (clock.go)
	s.mu.Unlock()
	runtime.Gosched()
	x.waitPace(ahead)
	s.mu.Lock()
	s.useClock(x.conn)
	s.curThread = thread
	s.swapOps(ops)
	if x.cancelled() {
		return errCancelled()
	}
	return nil
}

func (x *execCtx) cancelled() bool {
	if x.conn.killed {
		return true
	}
	return x.ctx != nil && x.ctx.Err() != nil
}

// unlocked runs fn (network I/O) without the server latch.
func (x *execCtx) unlocked(fn func() error) error {
	s := x.srv
	thread := s.curThread
	s.curThread = 0
	ops := s.swapOps(nil)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.useClock(x.conn)
		s.curThread = thread
		s.swapOps(ops)
	}()
	return fn()
}

// Operator bookkeeping: every operator is driven through these, so the
// counters and times are kept the same way for all of them (optiming.go
// says what each time means).

func (r *runCtx) open(it iter, outer *engine.EvalEnv) *sqlfront.SQLError {
	n := it.node()
	now := r.x.srv.clock
	th := r.thread
	if !n.opened {
		n.opened = true
		n.start = now
	}
	c := n.counters(th)
	if c.opened.IsZero() {
		c.opened = now
	}
	c.executions++
	if c.executions > 1 {
		// a re-execution: with new outer values (a rebind) or the same (a rewind)
		if outer != nil {
			c.rebinds++
		} else {
			c.rewinds++
		}
	}
	s := r.x.srv
	s.enterOp(n)
	err := it.open(r, outer)
	s.leaveOp()
	c.active += s.clock.Sub(now)
	return err
}

func (r *runCtx) next(it iter) (*tuple, *sqlfront.SQLError) {
	began, th := r.x.srv.clock, r.thread
	r.x.srv.advance(callCost)
	n := it.node()
	r.x.srv.enterOp(n)
	t, err := it.next(r)
	r.x.srv.leaveOp()
	now := r.x.srv.clock
	if err != nil {
		n.counters(th).active += now.Sub(began)
		return nil, err
	}
	if t == nil {
		c := n.counters(r.thread)
		c.endOfScans++
		c.exhausted = now
		c.active += now.Sub(began)
		n.end = now
		return nil, nil
	}
	c := n.counters(t.thread)
	c.rows++
	if c.firstRow.IsZero() {
		c.firstRow = now
	}
	c.lastRow = now
	c.active += now.Sub(began)
	n.end = now
	if err := r.tick(); err != nil {
		return nil, err
	}
	return t, nil
}

// close closes an operator; it no longer extends the operator's end (its
// last row or end of data), and query_thread_profile may fire for it
// (optiming.go).
func (r *runCtx) close(it iter) {
	began, th := r.x.srv.clock, r.thread
	n := it.node()
	r.x.srv.enterOp(n)
	it.close(r)
	r.x.srv.leaveOp()
	now := r.x.srv.clock
	c := n.counters(th)
	c.active += now.Sub(began)
	c.closed = now
	n.closed = now
	r.x.operatorClosed(n)
}

// work advances the event clock for CPU work on n rows (d per row).
func (r *runCtx) work(rows int, d time.Duration) {
	r.x.srv.advance(time.Duration(rows) * d)
}

// sendResult streams a result set to the client: rows are produced under
// the server latch in small batches and written without it, so a slow
// client holds up only its own session.
func (x *execCtx) sendResult(r *runCtx, it iter, schema *engine.Relation, visible int) (int64, *sqlfront.SQLError, error) {
	cols := make([]tds.Column, visible)
	for i := 0; i < visible; i++ {
		c := schema.Cols[i]
		cols[i] = tds.Column{Name: c.Name, TypeInfo: tdsType(c.Typ)}
	}
	if err := x.unlocked(func() error { return x.w.Columns(cols...) }); err != nil {
		return 0, nil, err
	}
	modes := x.conn.modes
	if modes.fmtonly {
		return 0, nil, nil // metadata only (SET FMTONLY ON)
	}
	var n int64
	batch := make([][]any, 0, 64)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		b := batch
		err := x.unlocked(func() error {
			for _, vals := range b {
				if err := x.w.Row(vals...); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	for {
		t, err := r.next(it)
		if err != nil {
			return n, err, nil
		}
		if t == nil {
			break
		}
		vals := make([]any, visible)
		for i := 0; i < visible; i++ {
			v := t.vals[i]
			if typ := schema.Cols[i].Typ; modes.textsize > 0 && typ.Size == 0 && (typ.Kind == sqlfront.TypeNVarChar || typ.Kind == sqlfront.TypeVarBinary) {
				if cut, ok := truncateText(v, modes.textsize); ok {
					v = cut // SET TEXTSIZE
				}
			}
			vals[i] = wireValue(v, schema.Cols[i].Typ)
		}
		batch = append(batch, vals)
		n++
		r.x.srv.advance(rowSendCost)
		if modes.rowcount > 0 && n >= modes.rowcount {
			break // SET ROWCOUNT stops the query
		}
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return n, nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return n, nil, err
	}
	return n, nil, nil
}

// drain opens it with outer in scope and returns its rows (at most limit
// when limit > 0), holding them against the statement's limits when hold.
func (r *runCtx) drain(it iter, outer *engine.EvalEnv, limit int, hold bool) ([]*tuple, *sqlfront.SQLError) {
	if err := r.open(it, outer); err != nil {
		return nil, err
	}
	defer r.close(it)
	var out []*tuple
	for limit <= 0 || len(out) < limit {
		t, err := r.next(it)
		if err != nil {
			return nil, err
		}
		if t == nil {
			break
		}
		if hold {
			if err := r.hold(t); err != nil {
				return nil, err
			}
		}
		out = append(out, t)
	}
	return out, nil
}
