package standin

import (
	"context"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Blocking. Statements still execute one at a time under the server lock,
// but a statement that needs a lock another transaction holds in an
// incompatible mode waits for it (releasing the server lock meanwhile), as
// SQL Server does: writers wait for writers on the same key, readers under
// READ COMMITTED wait for uncommitted changes of the table they read. Waits
// end when the holder commits or rolls back, when SET LOCK_TIMEOUT expires
// (Msg 1222), when the client cancels, or as a deadlock victim (Msg 1205).
// Lock modes and compatibility:
// https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-transaction-locking-and-row-versioning-guide

// compatible reports whether a lock in mode req may be granted next to one
// held in mode held (the subset of the compatibility matrix the stand-in
// takes: IS, S, U, IU, IX, SIX, X; IU, an UPDATE's intent on the pages
// it scans, is compatible with the intent modes and S).
func compatible(held, req string) bool {
	switch req {
	case "IS":
		return held != "X"
	case "S":
		return held == "IS" || held == "S" || held == "U" || held == "IU"
	case "U":
		return held == "IS" || held == "S"
	case "IU":
		return held == "IS" || held == "S" || held == "IU" || held == "IX"
	case "IX":
		return held == "IS" || held == "IX" || held == "IU"
	case "SIX":
		return held == "IS"
	}
	return false // X
}

func sameResource(a, b heldLock) bool {
	return a.resType == b.resType && a.r0 == b.r0 && a.r1 == b.r1 && a.r2 == b.r2 && a.hobt == b.hobt && a.objectID == b.objectID
}

// lockBlocker returns a connection whose transaction holds l's resource in
// a mode incompatible with l's.
func (x *execCtx) lockBlocker(l heldLock) *connState {
	for _, c := range x.srv.conns {
		if c == x.conn || c.txn == nil {
			continue
		}
		for _, h := range c.txn.locks {
			if sameResource(h, l) && !compatible(h.mode, l.mode) {
				x.noteWaitResource(l)
				return c
			}
		}
	}
	return nil
}

// dmlBlocker returns a connection with an uncommitted change to a row of t
// that an UPDATE/DELETE with this WHERE would touch (its before or after
// image qualifies): the statement's U lock on that row would wait.
func (x *execCtx) dmlBlocker(t *engine.Table, where sqlfront.Expr) *connState {
	rel := &engine.Relation{}
	for _, c := range t.Columns {
		rel.Cols = append(rel.Cols, engine.RelCol{Qual: strings.ToLower(t.Name), Name: c.Name, Typ: c.Type})
	}
	qualifies := func(row []any) bool {
		if row == nil {
			return false
		}
		if where == nil {
			return true
		}
		v, err := (&engine.EvalEnv{X: x, Rel: rel, Row: row}).Eval(where)
		b, _ := engine.Truth(v)
		return err == nil && b
	}
	for _, c := range x.srv.conns {
		if c == x.conn || c.txn == nil {
			continue
		}
		for _, u := range c.txn.undo {
			if u.tbl == t && (qualifies(u.before) || qualifies(u.after)) {
				if h, ok := rowLockOf(c, t); ok {
					x.noteWaitResource(h)
				}
				return c
			}
		}
	}
	return nil
}

// waitWhile blocks while blocker() names a connection, emitting the
// wait_info Begin/End pair of waitType. The caller holds the server lock.
func (x *execCtx) waitWhile(blocker func() *connState, waitType string) *sqlfront.SQLError {
	s := x.srv
	c := x.conn
	b := blocker()
	if b == nil {
		return nil
	}
	ctx := x.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	start := s.now()
	wall := time.Now()
	res := xevents.FPtr("wait_resource", 0)
	c.lockWait.waitType, c.lockWait.since = waitType, wall // sys.dm_exec_requests (requests.go)
	if s.anySessionRunning() {
		s.emit(x.ec, &xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: s.advance(2 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("wait_type", "wait_types", "sqlos", waitType), xevents.FMap("opcode", "event_opcode", "sqlos", "Begin"),
			xevents.FUint("duration", "uint64", 0), xevents.FUint("signal_duration", "uint64", 0), res}})
	}
	defer func() {
		c.waitingOn = nil
		c.lockWait = lockWaitState{lastWaitType: waitType}
		if s.anySessionRunning() {
			now := s.now()
			s.emit(x.ec, &xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: s.advance(2 * time.Microsecond), Fields: []xevents.Field{
				xevents.FMap("wait_type", "wait_types", "sqlos", waitType), xevents.FMap("opcode", "event_opcode", "sqlos", "End"),
				xevents.FUint("duration", "uint64", now.Sub(start).Milliseconds()), xevents.FUint("signal_duration", "uint64", 0), res}})
		}
	}()
	for b != nil {
		// a cycle through the waiters makes this session the deadlock victim
		for w, hops := b, 0; w != nil && hops < 64; w, hops = w.waitingOn, hops+1 {
			if w == c {
				return sqlfront.NewError(1205, 13, "Transaction (Process ID %d) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction.", c.spid)
			}
		}
		if c.lockTimeoutMs >= 0 && time.Since(wall) >= time.Duration(c.lockTimeoutMs)*time.Millisecond {
			return sqlfront.NewError(1222, 16, "Lock request time out period exceeded.")
		}
		if err := ctx.Err(); err != nil || c.killed {
			return sqlfront.NewError(0, 0, "cancelled") // the caller returns ctx.Err() or drops the connection
		}
		c.waitingOn = b
		if b.hold != nil {
			b.hold.noteWait() // a hold may end a while after its first waiter (hold.go)
		}
		done := make(chan struct{})
		go func() {
			var timeout <-chan time.Time
			if c.lockTimeoutMs >= 0 {
				t := time.NewTimer(time.Duration(c.lockTimeoutMs)*time.Millisecond - time.Since(wall))
				defer t.Stop()
				timeout = t.C
			}
			select {
			case <-ctx.Done():
			case <-timeout:
			case <-done:
				return
			}
			s.mu.Lock()
			s.lockCond.Broadcast()
			s.mu.Unlock()
		}()
		thread := s.curThread
		s.curThread = 0
		s.lockCond.Wait()
		s.useClock(c)
		s.notBefore(b.clock.locksFreed) // the wait ends after the blocker let go
		s.curThread = thread
		close(done)
		if c.killed {
			// KILL rolled this session's transaction back while it waited:
			// even if the lock is free now, the request must not go on
			return sqlfront.NewError(0, 0, "killed")
		}
		b = blocker()
	}
	return nil
}

// holds reports whether t already holds l (same resource and mode): a set
// over t.locks, rebuilt when the list changed under it, so a statement
// taking thousands of key locks does not scan its own locks for each.
func (t *transaction) holds(l heldLock) bool {
	if t.heldSet()[l] {
		return true
	}
	t.held[l] = true // acquire appends it next (or fails and ends the statement)
	return false
}

// heldSet is the transaction's locks as a set, rebuilt when stale.
func (t *transaction) heldSet() map[heldLock]bool {
	if t.held == nil || len(t.held) != len(t.locks) {
		t.held = make(map[heldLock]bool, len(t.locks))
		for _, h := range t.locks {
			t.held[h] = true
		}
	}
	return t.held
}
