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
	stats      map[*engine.Table]*tableStats
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
		s.eng = &engineState{stats: map[*engine.Table]*tableStats{}, nextObject: 1_013_578_649, tables: map[*engine.Table]*tableInfo{}}
	}
	return s.eng
}

// walkSelect calls fn for every expression of s and of every query nested
// in it (subqueries, derived tables, CTEs, set operation branches).
func walkSelect(s *sqlfront.SelectStmt, fn func(sqlfront.Expr)) {
	walkSelectWith(s, fn, nil)
}

func walkSelectWith(s *sqlfront.SelectStmt, fn func(sqlfront.Expr), selFn func(*sqlfront.SelectStmt)) {
	if s == nil {
		return
	}
	if selFn != nil {
		selFn(s)
	}
	for _, c := range s.With {
		walkSelectWith(c.Sel, fn, selFn)
	}
	walkSelectWith(s.Left, fn, selFn)
	walkSelectWith(s.Right, fn, selFn)
	var ex func(e sqlfront.Expr)
	ex = func(e sqlfront.Expr) {
		engine.Visit(e, func(n sqlfront.Expr) bool {
			fn(n)
			switch x := n.(type) {
			case *sqlfront.SubqueryExpr:
				walkSelectWith(x.Sel, fn, selFn)
			case *sqlfront.ExistsExpr:
				walkSelectWith(x.Sel, fn, selFn)
			case *sqlfront.InExpr:
				walkSelectWith(x.Sub, fn, selFn)
			case *sqlfront.QuantifiedExpr:
				walkSelectWith(x.Sel, fn, selFn)
			}
			return true
		})
	}
	for _, it := range s.Items {
		ex(it.Expr)
	}
	var ref func(r sqlfront.TableRef)
	ref = func(r sqlfront.TableRef) {
		switch t := r.(type) {
		case *sqlfront.JoinRef:
			ref(t.Left)
			ref(t.Right)
			ex(t.On)
		case *sqlfront.DerivedTable:
			walkSelectWith(t.Sel, fn, selFn)
			for _, row := range t.Values {
				for _, e := range row {
					ex(e)
				}
			}
		case *sqlfront.TableFunc:
			for _, a := range t.Args {
				ex(a)
			}
		}
	}
	if s.From != nil {
		ref(s.From)
	}
	ex(s.Where)
	for _, g := range s.GroupBy {
		ex(g)
	}
	ex(s.Having)
	for _, o := range s.OrderBy {
		ex(o.Expr)
	}
	ex(s.Top)
	ex(s.Offset)
	ex(s.Fetch)
}

// walkStatement walks every expression of a statement.
func walkStatement(st sqlfront.Stmt, fn func(sqlfront.Expr), selFn func(*sqlfront.SelectStmt)) {
	switch s := st.(type) {
	case *sqlfront.SelectStmt:
		walkSelectWith(s, fn, selFn)
	case *sqlfront.UpdateStmt:
		for _, set := range s.Sets {
			visitAll(set.Expr, fn, selFn)
		}
		visitAll(s.Where, fn, selFn)
		if s.From != nil {
			walkSelectWith(&sqlfront.SelectStmt{From: s.From}, fn, selFn)
		}
		fn(&sqlfront.ColRef{Parts: []string{"*"}})
	case *sqlfront.DeleteStmt:
		visitAll(s.Where, fn, selFn)
		if s.From != nil {
			walkSelectWith(&sqlfront.SelectStmt{From: s.From}, fn, selFn)
		}
	case *sqlfront.InsertStmt:
		walkSelectWith(s.Sel, fn, selFn)
	case *sqlfront.MergeStmt:
		walkSelectWith(&sqlfront.SelectStmt{From: s.Source, Where: s.On}, fn, selFn)
		for _, c := range s.Clauses {
			visitAll(c.Cond, fn, selFn)
			for _, set := range c.Sets {
				visitAll(set.Expr, fn, selFn)
			}
			for _, v := range c.Values {
				visitAll(v, fn, selFn)
			}
		}
	}
}

func visitAll(e sqlfront.Expr, fn func(sqlfront.Expr), selFn func(*sqlfront.SelectStmt)) {
	walkSelectWith(&sqlfront.SelectStmt{Where: e}, fn, selFn)
}

// resolveTable finds a table name: a #temp table, a @table variable, a
// system view (returned as a source that reads it when opened), or a
// database table.
func (x *execCtx) resolveTable(parts []string) (*engine.Table, iter, *sqlfront.SQLError) {
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
		schemaRel := &engine.Relation{Cols: rel.Cols}
		n := &planNode{physical: "Constant Scan", logical: "Constant Scan", schema: schemaRel, estRows: float64(max(len(rel.Rows), 1)), estExecs: 1}
		it := &tvfIter{n: n, schema: schemaRel, view: func(x *execCtx) (*engine.Relation, *sqlfront.SQLError) { return view(x, db) }}
		n.details = it.showplan
		return nil, it, nil
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

// memoryUse records what a memory-consuming operator needed for rows rows
// and, past its share of the grant, makes it spill: worktable writes and
// reads in tempdb, IO_COMPLETION waits and sort_warning/hash_warning, as
// SQL Server spills a sort or hash that does not fit its grant.
func (x *execCtx) memoryUse(r *runCtx, n *planNode, rows int64) {
	width := n.rowSize
	if width == 0 {
		width = rowSizeOf(n.schema)
	}
	need := rows*int64(width+16)/1024 + 1
	if need <= n.grantKB || n.grantKB == 0 {
		if need > n.usedKB {
			n.usedKB = need
		}
		return
	}
	n.usedKB = n.grantKB
	pages := (need - n.grantKB + 7) / 8
	n.spillPages += pages
	n.spillLevel = 1
	n.spillThreads = 1
	s := x.srv
	if !s.anySessionRunning() {
		s.advance(time.Duration(pages) * 40 * time.Microsecond)
		return
	}
	waits := min(pages, 256)
	for i := int64(0); i < waits; i++ {
		for _, opcode := range []string{"Begin", "End"} {
			s.emit(x.ec, &xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: s.advance(40 * time.Microsecond), Fields: []xevents.Field{
				xevents.FMap("wait_type", "wait_types", "sqlos", "IO_COMPLETION"), xevents.FMap("opcode", "event_opcode", "sqlos", opcode),
				xevents.FUint("duration", "uint64", 0), xevents.FUint("signal_duration", "uint64", 0), xevents.FPtr("wait_resource", 0)}})
		}
	}
	switch n.physical {
	case "Sort":
		n.spillKind = "sort"
		// Since SQL Server 2016 sort_warning reports the pages of the spill
		// (https://techcommunity.microsoft.com/t5/sql-server-blog/sql-server-2016-8211-added-information-on-tempdb-spill-events/ba-p/384552):
		// the worktable pages written and read back, the same numbers as the
		// plan's SortSpillDetails WritesToTempDb/ReadsFromTempDb (showplan.go).
		s.emit(x.ec, &xevents.EventData{Name: "sort_warning", Pkg: "sqlserver", Time: s.advance(5 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("sort_warning_type", "sort_warning_type", "sqlserver", "Single pass"), xevents.FUint("query_operation_node_id", "uint32", int64(n.id)),
			xevents.FUint("granted_memory_kb", "uint64", n.grantKB), xevents.FUint("used_memory_kb", "uint64", n.grantKB),
			xevents.FUint("worktable_physical_reads", "uint64", pages), xevents.FUint("worktable_physical_writes", "uint64", pages)}})
	default:
		n.spillKind = "hash"
		s.emit(x.ec, &xevents.EventData{Name: "hash_warning", Pkg: "sqlserver", Time: s.advance(5 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("hash_warning_type", "hash_warning_type", "sqlserver", "Recursion"), xevents.FUint("query_operation_node_id", "uint32", int64(n.id)),
			xevents.FUint("recursion_level", "uint32", 0), xevents.FUint("granted_memory_kb", "uint64", n.grantKB),
			xevents.FUint("worktable_physical_writes", "uint64", pages), xevents.FUint("workfile_physical_writes", "uint64", 0)}})
	}
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
func (x *execCtx) acquireGrant(r *runCtx) *sqlfront.SQLError {
	if r.grantKB == 0 {
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
		if eng.grantedKB+ghosts+r.grantKB <= workspaceKB {
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
		r.waitMs = time.Since(start).Milliseconds()
		x.grantWait("End", r.waitMs)
	}
	eng.grantedKB += r.grantKB
	r.reserved = r.grantKB
	return nil
}

func (x *execCtx) releaseGrant(r *runCtx) {
	if r.reserved > 0 {
		x.srv.engine().grantedKB -= r.reserved
		r.reserved = 0
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
