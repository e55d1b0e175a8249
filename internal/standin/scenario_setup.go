package standin

import (
	"context"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// What some scenarios need besides their statement: another session
// holding locks (a blocking demo) or holding workspace memory (a memory
// grant wait). The stand-in plays that other session itself when the
// scenario's statement starts, so that a single traced batch shows the
// wait: the blocker is a real session (its own SPID, transaction and
// locks, executing real T-SQL), which rolls back after Hold.

// ghostSPID is the session id the stand-in's own demo sessions use.
const ghostSPID = 999

// startScenario prepares a scenario's other session. The caller holds the
// server latch.
func (x *execCtx) startScenario(sc *Scenario) {
	s := x.srv
	if sc.GrantHoldKB > 0 {
		eng := s.engine()
		eng.ghosts = append(eng.ghosts, ghostGrant{kb: sc.GrantHoldKB, until: time.Now().Add(sc.Hold)})
	}
	if sc.Blocker == "" {
		return
	}
	if _, busy := s.conns[ghostSPID]; busy {
		return // a previous run's blocker still holds its locks
	}
	ghost := &connState{srv: s, spid: ghostSPID, db: s.demo, loginDB: s.demo, user: "demo_blocker", app: "QueryReplay demo blocker",
		host: serverName, lastBatch: sc.Blocker, vars: map[string]any{}, loginAt: s.now(), lockTimeoutMs: -1, killCh: make(chan struct{})}
	s.conns[ghostSPID] = ghost
	ghost.clock.at = s.clock // it starts now, on its own clock (clock.go)
	s.useClock(ghost)
	defer s.useClock(x.conn)
	gx := &execCtx{ctx: context.Background(), srv: s, conn: ghost, w: discardWriter{}, sql: sc.Blocker}
	gx.ec = ghost.eventCtx()
	gx.beginTxn("demo_blocker", false)
	stmts, err := parseBatch(sc.Blocker)
	if err == nil {
		for _, st := range stmts {
			gx.stmtText = sc.Blocker
			if e := gx.exec(st); e != nil {
				break
			}
		}
	}
	go func() {
		time.Sleep(sc.Hold)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.useClock(ghost)
		defer s.useClock(nil)
		s.now() // it rolls back once Hold has passed on the wall clock
		if ghost.txn != nil {
			gx.rollbackAll()
		}
		delete(s.conns, ghostSPID)
		s.lockCond.Broadcast()
	}()
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

// exchangeSpill makes an order-preserving Gather Streams spill when its
// producers are skewed: a merging exchange must take rows from every
// producer in order, so one producer's rows back up in its buffers and
// go to tempdb (exchange_spill, ExchangeSpillDetails), as SQL Server's
// exchanges do under skew.
func (x *execCtx) exchangeSpill(r *runCtx, e *exchangeIter) {
	if len(e.order) == 0 || e.kind != "Gather Streams" {
		return
	}
	in := e.in.node()
	var most, total int64
	for t, c := range in.threads {
		if t == 0 {
			continue
		}
		total += c.rows
		most = max(most, c.rows)
	}
	const bufferRows = 2048 // rows the exchange buffers per producer
	if total == 0 || most*4 < total*3 || most <= bufferRows {
		return
	}
	pages := (most - bufferRows) / 100
	if pages < 1 {
		return
	}
	e.n.exchangeSpill = pages
	s := x.srv
	if !s.anySessionRunning() {
		s.advance(time.Duration(pages) * 30 * time.Microsecond)
		return
	}
	for _, opcode := range []string{"Begin", "End"} {
		s.emit(x.ec, &xeEventData{name: "exchange_spill", pkg: "sqlserver", ts: s.advance(time.Duration(pages) * 15 * time.Microsecond), fields: []xeField{
			fMap("opcode", "event_opcode", "sqlos", opcode), fUint("query_operation_node_id", "uint32", int64(e.n.id))}})
	}
}
