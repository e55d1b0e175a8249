package standin

import (
	"runtime"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// The server's side of running a plan: cancellation and yielding the
// server latch, streaming a result set to the client, and the locks a read
// takes. The planner and the operators reach these through the Exec
// interface the engine declares.

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

// sendResult streams a result set to the client: rows are produced under
// the server latch in small batches and written without it, so a slow
// client holds up only its own session.
func (x *execCtx) sendResult(r *engine.RunCtx, it engine.Iter, schema *engine.Relation, visible int) (int64, *sqlfront.SQLError, error) {
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
		t, err := r.Next(it)
		if err != nil {
			return n, err, nil
		}
		if t == nil {
			break
		}
		vals := make([]any, visible)
		for i := 0; i < visible; i++ {
			v := t.Vals[i]
			if typ := schema.Cols[i].Typ; modes.textsize > 0 && typ.Size == 0 && (typ.Kind == sqlfront.TypeNVarChar || typ.Kind == sqlfront.TypeVarBinary) {
				if cut, ok := truncateText(v, modes.textsize); ok {
					v = cut // SET TEXTSIZE
				}
			}
			vals[i] = wireValue(v, schema.Cols[i].Typ)
		}
		batch = append(batch, vals)
		n++
		x.srv.advance(engine.RowSendCost)
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

// transientLock takes and at once releases a lock (a READ COMMITTED read).
func (x *execCtx) transientLock(l heldLock) {
	id := int64(0)
	if x.conn.txn != nil {
		id = x.conn.txn.id
	}
	x.lockEvent("lock_acquired", l, id)
	x.lockEvent("lock_released", l, id)
}

// readLock waits until l is compatible with every other transaction's
// locks, then takes and releases it.
func (x *execCtx) readLock(l heldLock) *sqlfront.SQLError {
	if err := x.waitWhile(func() *connState { return x.lockBlocker(l) }, "LCK_M_"+l.mode); err != nil {
		return err
	}
	x.transientLock(l)
	return nil
}

// The request context implements the engine's Exec (exec_iface.go).

// Clock implements Events.
func (x *execCtx) Clock() time.Time { return x.srv.clock }

// Advance implements Events.
func (x *execCtx) Advance(d time.Duration) time.Time { return x.srv.advance(d) }

// Emit implements Events.
func (x *execCtx) Emit(ev *xevents.EventData) { x.srv.emit(x.ec, ev) }

// AnySessionRunning implements Events.
func (x *execCtx) AnySessionRunning() bool { return x.srv.anySessionRunning() }

// EnterOp implements Events.
func (x *execCtx) EnterOp(n *engine.PlanNode) { x.srv.enterOp(n) }

// LeaveOp implements Events.
func (x *execCtx) LeaveOp() { x.srv.leaveOp() }

// SetThread implements Events.
func (x *execCtx) SetThread(thread int) { x.srv.curThread = thread }

// ThreadProfileAtClose implements Events.
func (x *execCtx) ThreadProfileAtClose() bool { return x.srv.opts.ThreadProfileAtClose }

// GuessedColumns implements Events.
func (x *execCtx) GuessedColumns() bool { return x.srv.opts.GuessedColumns }

// PageCached implements Buffers.
func (x *execCtx) PageCached(page int32) bool { _, ok := x.srv.cached[page]; return ok }

// CachePage implements Buffers.
func (x *execCtx) CachePage(page int32) { x.srv.cached[page] = false }

// CountReads implements Buffers.
func (x *execCtx) CountReads(logical, physical int64) {
	x.stats.logicalReads += logical
	x.stats.physicalReads += physical
}

// DatabaseID implements Buffers.
func (x *execCtx) DatabaseID() int { return x.conn.db.ID }

// ReadUncommitted implements Locks.
func (x *execCtx) ReadUncommitted() bool { return x.conn.readUncommitted }

// TransientObjectLock implements Locks.
func (x *execCtx) TransientObjectLock(t *engine.Table, mode string) {
	x.transientLock(objectLock(t, mode))
}

// ReadPageLock implements Locks.
func (x *execCtx) ReadPageLock(ix *engine.Index, page int32) *sqlfront.SQLError {
	return x.readLock(pageLock(ix, page, "S"))
}

// ReadKeyLock implements Locks.
func (x *execCtx) ReadKeyLock(ix *engine.Index, row []any) *sqlfront.SQLError {
	return x.readLock(keyLock(ix, row, "S"))
}

// WaitForGhosts implements Locks.
func (x *execCtx) WaitForGhosts(t *engine.Table, ix *engine.Index, lo, hi any) *sqlfront.SQLError {
	return x.waitForGhosts(t, ix, lo, hi)
}

// UpdTarget implements Locks.
func (x *execCtx) UpdTarget(t *engine.Table) bool { return x.updTarget(t) }

// UpdPageLock implements Locks.
func (x *execCtx) UpdPageLock(ix *engine.Index, page int32) *sqlfront.SQLError {
	return x.updPageLock(ix, page)
}

// UpdRowLock implements Locks.
func (x *execCtx) UpdRowLock(ix *engine.Index, row []any) *sqlfront.SQLError {
	return x.updRowLock(ix, row)
}

// UpdRelease implements Locks.
func (x *execCtx) UpdRelease(ix *engine.Index, row []any) { x.updRelease(ix, row) }

// TraceFlag implements Session.
func (x *execCtx) TraceFlag(n int) bool { return x.conn.traceFlag(n) }

// Yield implements Session.
func (x *execCtx) Yield() *sqlfront.SQLError { return x.yield() }

// YieldDue implements engine.Session: the latch's turn is over (latch.go).
func (x *execCtx) YieldDue() bool { return x.srv.mu.tick() }

// StatementLimits implements Session.
func (x *execCtx) StatementLimits() (maxBytes, maxRows int64) {
	return x.srv.opts.MaxStatementMemory, x.srv.opts.MaxStatementRows
}

// ResolveTable implements Catalog.
func (x *execCtx) ResolveTable(parts []string) (*engine.Table, *engine.SysView, *sqlfront.SQLError) {
	return x.resolveTable(parts)
}

// TableFunction implements Catalog.
func (x *execCtx) TableFunction(f *sqlfront.TableFunc, outer *engine.EvalEnv) (*engine.Relation, *sqlfront.SQLError) {
	return x.tableFunction(f, outer)
}

// TableFunctionSchema implements Catalog.
func (x *execCtx) TableFunctionSchema(f *sqlfront.TableFunc) (*engine.Relation, *sqlfront.SQLError) {
	return x.tableFunctionSchema(f)
}

// VarType implements Catalog.
func (x *execCtx) VarType(name string) (sqlfront.SQLType, bool) { return x.varType(name) }

// StatsCache implements Catalog.
func (x *execCtx) StatsCache() map[*engine.Table]*engine.TableStats { return x.srv.engine().stats }
