package standin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Holds: what a demo or a test sets up on the running stand-in so that a
// statement meets another session's work — a session holding locks in an
// open transaction (HoldLocks), or queries holding workspace memory
// (HoldWorkspaceMemory). They are explicit control calls, never triggered
// by the text of the statement that will meet them: any statement that
// needs the held lock or memory waits, whatever its spelling, and no
// statement waits when nothing is held. Each returns a Hold, which ends
// (the transaction rolls back, the memory returns) at whichever comes
// first: Release, the end of the context given, AfterWait after another
// session first waited on it, or Max.

// HoldOptions bound a hold's life.
type HoldOptions struct {
	// AfterWait ends the hold this long after another session first waits
	// on it, so that a demo shows a wait of about AfterWait without the
	// caller timing anything. 0: no such end.
	AfterWait time.Duration
	// Max is the hard upper bound from the call; 0 is DefaultHoldMax and
	// no hold lasts longer than MaxHold.
	Max time.Duration
}

const (
	// DefaultHoldMax bounds a hold whose options give no Max.
	DefaultHoldMax = 2 * time.Minute
	// MaxHold bounds every hold.
	MaxHold = 10 * time.Minute
	// maxHoldBatch bounds the T-SQL a lock hold runs.
	maxHoldBatch = 64 << 10
)

func (o HoldOptions) max() time.Duration {
	if o.Max <= 0 {
		return DefaultHoldMax
	}
	return min(o.Max, MaxHold)
}

// holdSPID is the session id of the session a lock hold runs: an id no
// TDS session gets (they count from 51 up to the listener's bound), shown
// by sys.dm_exec_sessions and sys.dm_exec_requests like any session.
const holdSPID = 999

// Hold is one held resource; Release ends it.
type Hold struct {
	spid       int
	stop       chan struct{} // closed by Release
	stopOnce   sync.Once
	waited     chan struct{} // closed when another session first waits on it
	waitedOnce sync.Once
	done       chan struct{} // closed once released
}

func newHold(spid int) *Hold {
	return &Hold{spid: spid, stop: make(chan struct{}), waited: make(chan struct{}), done: make(chan struct{})}
}

// Release ends the hold and returns once it has ended (the lock holder's
// transaction rolled back, the memory returned). It may be called more
// than once, also after the hold ended by itself.
func (h *Hold) Release() {
	h.stopOnce.Do(func() { close(h.stop) })
	<-h.done
}

// Released is closed once the hold has ended.
func (h *Hold) Released() <-chan struct{} { return h.done }

// Waited is closed once another session has begun to wait on the hold.
func (h *Hold) Waited() <-chan struct{} { return h.waited }

// SessionID is the session that holds the locks (0 for held memory).
func (h *Hold) SessionID() int { return h.spid }

// noteWait records that a session waits on the hold (the caller holds the
// server latch; it never blocks).
func (h *Hold) noteWait() { h.waitedOnce.Do(func() { close(h.waited) }) }

// run waits for the hold's end and then calls end once, on its own
// goroutine, with the server latch held; Released is closed under the same
// latch, so a statement the hold blocked cannot finish before it.
func (h *Hold) run(ctx context.Context, latch sync.Locker, o HoldOptions, end func()) {
	defer func() {
		latch.Lock()
		defer latch.Unlock()
		end()
		close(h.done)
	}()
	limit := time.NewTimer(o.max())
	defer limit.Stop()
	waited := h.waited
	var after <-chan time.Time
	for {
		select {
		case <-h.stop:
		case <-ctx.Done():
		case <-limit.C:
		case <-after:
		case <-waited:
			waited = nil
			if o.AfterWait > 0 {
				t := time.NewTimer(o.AfterWait)
				defer t.Stop()
				after = t.C
			}
			continue
		}
		return
	}
}

// HoldLocks runs batch as another session (its own SPID, login
// demo_blocker, program "QueryReplay demo blocker") inside a transaction
// it leaves open: the locks the batch takes stay held until the hold ends,
// when the transaction rolls back — the batch changes no data for good.
// A batch that fails is rolled back and reported. One lock hold at a time.
func (s *Server) HoldLocks(ctx context.Context, batch string, o HoldOptions) (*Hold, error) {
	if len(batch) > maxHoldBatch {
		return nil, fmt.Errorf("standin: hold locks: batch of %d bytes is over %d", len(batch), maxHoldBatch)
	}
	stmts, perr := sqlfront.ParseBatch(batch)
	if perr != nil {
		return nil, fmt.Errorf("standin: hold locks: %w", perr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.conns[holdSPID]; busy {
		return nil, errors.New("standin: hold locks: another lock hold is in place")
	}
	c := &connState{srv: s, spid: holdSPID, db: s.demo, loginDB: s.demo, user: "demo_blocker", app: "QueryReplay demo blocker",
		host: serverName, lastBatch: batch, vars: map[string]any{}, loginAt: s.now(), lockTimeoutMs: -1, killCh: make(chan struct{})}
	h := newHold(holdSPID)
	c.hold = h
	s.conns[holdSPID] = c
	c.clock.at = s.clock // it starts now, on its own clock (clock.go)
	s.useClock(c)
	defer s.useClock(nil)
	x := &execCtx{ctx: ctx, srv: s, conn: c, w: discardWriter{}, sql: batch}
	x.ec = c.eventCtx()
	x.beginTxn("demo_blocker", false)
	for _, st := range stmts {
		x.stmtText = batch
		if err := x.exec(st); err != nil {
			x.endLockHold(c)
			return nil, fmt.Errorf("standin: hold locks: %w", err)
		}
	}
	go h.run(ctx, &s.mu, o, func() {
		s.useClock(c)
		defer s.useClock(nil)
		s.now() // it rolls back once its time has passed on the wall clock
		x.endLockHold(c)
	})
	return h, nil
}

// endLockHold rolls the hold's transaction back and ends its session (the
// caller holds the latch). A restart or KILL may have done either already.
func (x *execCtx) endLockHold(c *connState) {
	s := x.srv
	if c.txn != nil {
		x.rollbackAll()
	}
	if s.conns[c.spid] == c {
		delete(s.conns, c.spid)
	}
	s.lockCond.Broadcast()
}

// HoldWorkspaceMemory takes kb of the instance's workspace memory (the
// resource semaphore's pool, as running queries' grants do): a statement
// whose grant does not fit in what is left waits RESOURCE_SEMAPHORE until
// the hold ends.
func (s *Server) HoldWorkspaceMemory(ctx context.Context, kb int64, o HoldOptions) (*Hold, error) {
	if kb <= 0 || kb > workspaceKB {
		return nil, fmt.Errorf("standin: hold workspace memory: %d KB is outside 1-%d", kb, workspaceKB)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := newHold(0)
	eng := s.engine()
	eng.ghosts = append(eng.ghosts, ghostGrant{kb: kb, hold: h})
	go h.run(ctx, &s.mu, o, func() {
		kept := eng.ghosts[:0]
		for _, g := range eng.ghosts {
			if g.hold != h {
				kept = append(kept, g)
			}
		}
		eng.ghosts = kept
	})
	return h, nil
}

// HoldLocks is Server.HoldLocks on the running stand-in.
func (r *Running) HoldLocks(ctx context.Context, batch string, o HoldOptions) (*Hold, error) {
	return r.Server.HoldLocks(ctx, batch, o)
}

// HoldWorkspaceMemory is Server.HoldWorkspaceMemory on the running
// stand-in.
func (r *Running) HoldWorkspaceMemory(ctx context.Context, kb int64, o HoldOptions) (*Hold, error) {
	return r.Server.HoldWorkspaceMemory(ctx, kb, o)
}

// PrepareScenario sets up what sc needs besides its statement — the
// blocker's locks (Blocker), held workspace memory (GrantHoldKB) — each
// ending Hold after the traced statement begins to wait on it. Call it
// immediately before tracing sc.SQL and release after; release is safe to
// call more than once. Whichever session waits first starts a hold's
// AfterWait, so a caller that reads the blocked rows itself in between
// (a checksum of dbo.Orders) ends the hold before the trace. A scenario
// that needs nothing returns a no-op release.
func PrepareScenario(ctx context.Context, s *Server, sc Scenario) (release func(), err error) {
	var holds []*Hold
	release = func() {
		for _, h := range holds {
			h.Release()
		}
	}
	o := HoldOptions{AfterWait: sc.Hold}
	if sc.GrantHoldKB > 0 {
		h, err := s.HoldWorkspaceMemory(ctx, sc.GrantHoldKB, o)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		holds = append(holds, h)
	}
	if sc.Blocker != "" {
		h, err := s.HoldLocks(ctx, sc.Blocker, o)
		if err != nil {
			release()
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		holds = append(holds, h)
	}
	return release, nil
}

// discardWriter is the result writer of the stand-in's own sessions.
type discardWriter struct{}

func (discardWriter) Columns(...tds.Column) error       { return nil }
func (discardWriter) Row(...any) error                  { return nil }
func (discardWriter) Done(tds.Done) error               { return nil }
func (discardWriter) Error(*tds.Error) error            { return nil }
func (discardWriter) Info(*tds.Error) error             { return nil }
func (discardWriter) SetDatabase(string) error          { return nil }
func (discardWriter) BeginTransaction() (uint64, error) { return 1, nil }
func (discardWriter) CommitTransaction() error          { return nil }
func (discardWriter) RollbackTransaction() error        { return nil }
func (discardWriter) ReturnStatus(int32) error          { return nil }
func (discardWriter) ReturnValue(tds.Param) error       { return nil }
func (discardWriter) Flush() error                      { return nil }
