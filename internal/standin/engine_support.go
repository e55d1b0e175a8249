package standin

import (
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Support for the planner and operators: statement walkers, name
// resolution of tables, the server-wide engine state (statistics, the
// memory grant pool), memory grants and spills, waits for uncommitted
// deletes.

// engineState is the query engine's part of the server (under Server.mu).
type engineState struct {
	stats      map[*engine.Table]*engine.TableStats
	grantedKB  int64                        // workspace memory granted to running queries
	ghosts     []ghostGrant                 // workspace memory held by HoldWorkspaceMemory (hold.go)
	nextObject int64                        // object ids of tables created at run time
	tables     map[*engine.Table]*tableInfo // tables created at run time
}

type ghostGrant struct {
	kb   int64
	hold *Hold
}

// The emulated instance's query memory: 1.5 GB may be granted to one
// query, 6 GB to all running queries together (the resource semaphore).
const (
	maxQueryMemoryKB = 1572864
	workspaceKB      = 6291456
	minGrantKB       = 1024
)

func (s *Server) engine() *engineState {
	if s.eng == nil {
		s.eng = &engineState{stats: map[*engine.Table]*engine.TableStats{}, nextObject: 1_013_578_649, tables: map[*engine.Table]*tableInfo{}}
	}
	return s.eng
}

// resolveTable finds a table name: a #temp table, a @table variable, a
// system view (returned as a source that reads it when opened), or a
// database table.
func (x *execCtx) resolveTable(parts []string) (*engine.Table, *engine.SysView, *sqlfront.SQLError) {
	display := strings.Join(parts, ".")
	if len(parts) == 1 && strings.HasPrefix(parts[0], "#") {
		if t := x.conn.sqlState().temps[strings.ToLower(parts[0])]; t != nil {
			return t, nil, nil
		}
		return nil, nil, engine.ErrInvalidObject(display)
	}
	if len(parts) == 1 && strings.HasPrefix(parts[0], "@") {
		if t := x.conn.sqlState().tableVars[strings.ToLower(parts[0])]; t != nil {
			return t, nil, nil
		}
		return nil, nil, sqlfront.NewError(1087, 15, "Must declare the table variable \"%s\".", parts[0])
	}
	db := x.conn.db
	if len(parts) == 3 {
		if db = x.srv.dbByName(parts[0]); db == nil {
			return nil, nil, engine.ErrDatabaseMissing(parts[0])
		}
	}
	if len(parts) > 3 {
		return nil, nil, engine.ErrInvalidObject(display)
	}
	name := parts[len(parts)-1]
	schema := ""
	if len(parts) >= 2 {
		schema = parts[len(parts)-2]
	}
	if strings.EqualFold(schema, "sys") || schema == "" && strings.HasPrefix(strings.ToLower(name), "dm_") {
		view, ok := sysViews[strings.ToLower(name)]
		if !ok {
			view, ok = extraSysViews[strings.ToLower(name)]
		}
		if !ok {
			return nil, nil, engine.ErrInvalidObject(display)
		}
		rel, err := view(x, db)
		if err != nil {
			return nil, nil, err
		}
		// the view is read when the plan runs, by the request that runs it:
		// the engine hands back this server's own request context
		read := func(h engine.Exec) (*engine.Relation, *sqlfront.SQLError) { return view(h.(*execCtx), db) }
		return nil, &engine.SysView{Schema: &engine.Relation{Cols: rel.Cols}, Rows: len(rel.Rows), Read: read}, nil
	}
	t := db.Table(schema, name)
	if t == nil {
		return nil, nil, engine.ErrInvalidObject(display)
	}
	return t, nil, nil
}

// tableFunctionSchema returns a table-valued function's columns without
// running it.
func (x *execCtx) tableFunctionSchema(f *sqlfront.TableFunc) (*engine.Relation, *sqlfront.SQLError) {
	x.schemaOnly = true
	defer func() { x.schemaOnly = false }()
	rel, err := x.tableFunction(f, &engine.EvalEnv{X: x})
	if err != nil {
		return nil, err
	}
	return &engine.Relation{Cols: rel.Cols}, nil
}

// waitForGhosts waits for other transactions' uncommitted deletes of keys
// of t in [lo, hi] (nil: unbounded): a real seek meets their ghost records
// and waits for the X key lock on them.
func (x *execCtx) waitForGhosts(t *engine.Table, ix *engine.Index, lo, hi any) *sqlfront.SQLError {
	lead := t.PK[0]
	if ix.ID != 1 {
		lead = ix.KeyCols[0]
	}
	for {
		var ghost []any
		for _, c := range x.srv.conns {
			if c == x.conn || c.txn == nil {
				continue
			}
			for _, u := range c.txn.undo {
				if u.tbl != t || u.op != "delete" || u.before == nil {
					continue
				}
				v := u.before[lead]
				if lo != nil {
					if cmp, err := engine.CompareValues(v, lo); err != nil || cmp < 0 {
						continue
					}
				}
				if hi != nil {
					if cmp, err := engine.CompareValues(v, hi); err != nil || cmp > 0 {
						continue
					}
				}
				ghost = u.before
			}
		}
		if ghost == nil {
			return nil
		}
		if err := x.readLock(keyLock(ix, ghost, "S")); err != nil {
			return err
		}
		// the lock was free or has been released: look again, the holder
		// committed (the ghost is gone) or rolled back (the row is back)
		if x.lockBlocker(keyLock(ix, ghost, "S")) == nil {
			stillGhost := false
			for _, c := range x.srv.conns {
				if c != x.conn && c.txn != nil {
					for _, u := range c.txn.undo {
						if u.tbl == t && u.op == "delete" && sameRow(u.before, ghost) {
							stillGhost = true
						}
					}
				}
			}
			if !stillGhost {
				continue
			}
			return nil
		}
	}
}

func sameRow(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// acquireGrant takes the statement's memory grant from the instance's
// workspace memory, waiting (RESOURCE_SEMAPHORE) while running queries —
// and memory holds (HoldWorkspaceMemory) — hold too much of it.
func (x *execCtx) acquireGrant(r *engine.RunCtx) *sqlfront.SQLError {
	if r.GrantKB == 0 {
		return nil
	}
	eng := x.srv.engine()
	start := time.Now()
	waited := false
	for {
		var ghosts int64
		for _, g := range eng.ghosts {
			ghosts += g.kb
		}
		if eng.grantedKB+ghosts+r.GrantKB <= workspaceKB {
			break
		}
		for _, g := range eng.ghosts {
			g.hold.noteWait()
		}
		if !waited {
			waited = true
			x.grantWait("Begin", 0)
		}
		if err := x.sleepUnlocked(5 * time.Millisecond); err != nil {
			x.grantWait("End", time.Since(start).Milliseconds())
			return err
		}
	}
	if waited {
		r.WaitMs = time.Since(start).Milliseconds()
		x.grantWait("End", r.WaitMs)
	}
	eng.grantedKB += r.GrantKB
	r.Reserved = r.GrantKB
	return nil
}

func (x *execCtx) releaseGrant(r *engine.RunCtx) {
	if r.Reserved > 0 {
		x.srv.engine().grantedKB -= r.Reserved
		r.Reserved = 0
	}
}

func (x *execCtx) grantWait(opcode string, ms int64) {
	s := x.srv
	if !s.anySessionRunning() {
		return
	}
	s.emit(x.ec, &xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: s.advance(2 * time.Microsecond), Fields: []xevents.Field{
		xevents.FMap("wait_type", "wait_types", "sqlos", "RESOURCE_SEMAPHORE"), xevents.FMap("opcode", "event_opcode", "sqlos", opcode),
		xevents.FUint("duration", "uint64", ms), xevents.FUint("signal_duration", "uint64", 0), xevents.FPtr("wait_resource", 0x000001E4C0F6A0C0)}})
}

// sleepUnlocked waits d without the server latch, or returns the
// cancellation.
func (x *execCtx) sleepUnlocked(d time.Duration) *sqlfront.SQLError {
	s := x.srv
	s.mu.Unlock()
	t := time.NewTimer(d)
	var cancelled bool
	var done <-chan struct{}
	if x.ctx != nil {
		done = x.ctx.Done()
	}
	select {
	case <-t.C:
	case <-done:
		cancelled = true
	case <-x.conn.killCh:
		cancelled = true
	}
	t.Stop()
	s.mu.Lock()
	s.useClock(x.conn)
	s.now() // the wait took real time
	if cancelled || x.cancelled() {
		return errCancelled()
	}
	return nil
}
