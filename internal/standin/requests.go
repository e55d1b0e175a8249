package standin

import (
	"fmt"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Requests and sessions as the server's DMVs show them while statements
// run and wait: sys.dm_exec_requests (a row per session with a request in
// progress: the caller's own, running, and every session suspended on a
// lock, with the session it waits for, the wait type, how long it has
// waited and the locked resource), sys.dm_exec_sessions (every session,
// "running" while it has a request) and sys.dm_exec_input_buffer (the last
// batch a session sent). A login without VIEW SERVER STATE sees its own
// session only, as the documentation says; here only the sysadmin has it.
//
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-requests-transact-sql
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-input-buffer-transact-sql
//
// Not modelled: a session held by WAITFOR DELAY or a Delay fault has a
// request on SQL Server (status suspended, wait_type WAITFOR); here it
// shows as sleeping with no request row.

// lockWaitState is what a connection's request is waiting for, kept by
// waitWhile (blocking.go) while connState.waitingOn is set.
type lockWaitState struct {
	waitType     string    // LCK_M_S, LCK_M_U, …; "" when not waiting
	since        time.Time // wall clock at the wait's start
	resource     string    // wait_resource, in the documented formats
	lastWaitType string    // the previous wait's type, once one ended
}

// noteWaitResource records, for the waiting connection, the lock resource
// its request waits for, in the wait_resource formats of
// https://learn.microsoft.com/en-us/troubleshoot/sql/database-engine/performance/understand-resolve-blocking
// ("KEY: 5:72057594043236352 (8194443284a0)", "PAGE: 5:1:104",
// "OBJECT: 5:245575913:0").
func (x *execCtx) noteWaitResource(l heldLock) {
	db := int64(0)
	if x.conn.db != nil {
		db = int64(x.conn.db.ID)
	}
	var res string
	switch l.resType {
	case "KEY":
		res = fmt.Sprintf("KEY: %d:%d %s", db, l.hobt, l.desc) // desc is "(hash)"
	case "PAGE":
		res = fmt.Sprintf("PAGE: %d:%s", db, l.desc)
	case "RID":
		res = fmt.Sprintf("RID: %d:%s", db, l.desc)
	case "OBJECT":
		res = fmt.Sprintf("OBJECT: %d:%d:0", db, l.objectID)
	default:
		res = fmt.Sprintf("%s: %d:%s", l.resType, db, l.desc)
	}
	x.conn.lockWait.resource = res
}

// rowLockOf returns the finest exclusive lock c holds on t (a key before a
// page before the table): what an UPDATE or DELETE waiting for c's
// uncommitted change of a row of t waits on.
func rowLockOf(c *connState, t *engine.Table) (heldLock, bool) {
	hobts := map[int64]bool{}
	for _, ix := range t.Indexes {
		hobts[ix.PartitionID] = true
	}
	rank := map[string]int{"KEY": 0, "RID": 0, "PAGE": 1, "OBJECT": 2}
	best, found := heldLock{}, false
	for _, h := range c.txn.locks {
		if h.mode != "X" || !(hobts[h.hobt] || h.resType == "OBJECT" && h.objectID == t.ObjectID) {
			continue
		}
		if r, ok := rank[h.resType]; ok && (!found || r < rank[best.resType]) {
			best, found = h, true
		}
	}
	return best, found
}

// visibleSessions returns the ids of the sessions the caller may see in
// the session DMVs, in order: all of them with VIEW SERVER STATE, else its
// own.
func (x *execCtx) visibleSessions() []int {
	var ids []int
	all := x.checkViewState() == nil
	for _, id := range x.srv.sessionIDs() {
		if all || x.srv.conns[id] == x.conn {
			ids = append(ids, id)
		}
	}
	return ids
}

// hasRequest tells whether c has a request in progress that the DMVs
// show: the caller's own (running) or one suspended on a lock.
func (x *execCtx) hasRequest(c *connState) bool {
	return c == x.conn || c.waitingOn != nil
}

// dmExecRequests is sys.dm_exec_requests.
func dmExecRequests(x *execCtx, _ *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("session_id", engine.TSmallInt, "request_id", engine.TInt, "start_time", engine.TDT2, "status", engine.TNVar(30), "command", engine.TNVar(32),
		"database_id", engine.TSmallInt, "blocking_session_id", engine.TSmallInt, "wait_type", engine.TNVar(60), "wait_time", engine.TInt, "last_wait_type", engine.TNVar(60),
		"wait_resource", engine.TNVar(256), "open_transaction_count", engine.TInt, "transaction_id", engine.TBigInt, "cpu_time", engine.TInt, "total_elapsed_time", engine.TInt)}
	now := time.Now()
	for _, id := range x.visibleSessions() {
		c := x.srv.conns[id]
		if !x.hasRequest(c) {
			continue
		}
		var txn, open int64
		if c.txn != nil {
			txn, open = c.txn.id, int64(c.txn.depth)
		}
		w := c.lockWait
		status, command := "running", "SELECT"
		var blocker, waitType, waitTime, resource any = int64(0), nil, int64(0), ""
		start := now
		if c.waitingOn != nil && w.waitType != "" {
			status = "suspended"
			command = commandOf(c)
			blocker, waitType, resource = int64(c.waitingOn.spid), w.waitType, w.resource
			waitTime = now.Sub(w.since).Milliseconds()
			start = w.since
		}
		last := w.lastWaitType
		if waitType != nil {
			last = w.waitType // last_wait_type is the current wait's type while it lasts
		}
		if last == "" {
			last = "MISCELLANEOUS"
		}
		elapsed := now.Sub(start).Milliseconds()
		r.Rows = append(r.Rows, []any{int64(c.spid), int64(0), start.UTC(), status, command, int64(c.db.ID), blocker, waitType, waitTime, last,
			resource, open, txn, int64(0), elapsed})
	}
	return r, nil
}

// commandOf names what a waiting request runs (dm_exec_requests.command):
// a writer waiting for a lock is UPDATE/DELETE, a reader SELECT.
func commandOf(c *connState) string {
	switch c.lockWait.waitType {
	case "LCK_M_U", "LCK_M_X", "LCK_M_IX":
		return "UPDATE"
	}
	return "SELECT"
}

// dmExecSessions is sys.dm_exec_sessions.
func dmExecSessions(x *execCtx, _ *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("session_id", engine.TSmallInt, "login_name", engine.TSysname, "program_name", engine.TSysname, "host_name", engine.TSysname,
		"database_id", engine.TSmallInt, "open_transaction_count", engine.TInt, "status", engine.TNVar(30), "login_time", engine.TDT2)}
	for _, id := range x.visibleSessions() {
		c := x.srv.conns[id]
		open := int64(0)
		if c.txn != nil {
			open = int64(c.txn.depth)
		}
		status := "sleeping"
		if x.hasRequest(c) {
			status = "running"
		}
		r.Rows = append(r.Rows, []any{int64(id), c.user, c.app, c.host, int64(c.db.ID), open, status, c.loginAt})
	}
	return r, nil
}

// inputBufferFunction is sys.dm_exec_input_buffer(session_id, request_id):
// the last batch the session sent, as a Language Event; no row for a
// session the caller may not see or that sent none.
func (x *execCtx) inputBufferFunction(args []any) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("event_type", engine.TNVar(256), "parameters", engine.TSmallInt, "event_info", engine.TNMax)}
	switch {
	case len(args) < 2:
		return nil, sqlfront.NewError(313, 16, "An insufficient number of arguments were supplied for the procedure or function sys.dm_exec_input_buffer.")
	case len(args) > 2:
		return nil, sqlfront.NewError(8144, 16, "Procedure or function dm_exec_input_buffer has too many arguments specified.")
	}
	id, ok := args[0].(int64)
	if !ok {
		return r, nil
	}
	c := x.srv.conns[int(id)]
	if c == nil || c.lastBatch == "" || !x.conn.sysadmin && c != x.conn {
		return r, nil
	}
	r.Rows = append(r.Rows, []any{"Language Event", int64(0), c.lastBatch})
	return r, nil
}

func init() {
	extraSysViews["dm_exec_requests"] = dmExecRequests
	extraSysViews["dm_exec_sessions"] = dmExecSessions
	extraTableFunctions["dm_exec_input_buffer"] = (*execCtx).inputBufferFunction
}
