package engine

import (
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Exec is what planning and running a statement ask of the server. The
// engine knows no session, lock manager, buffer pool or event session;
// the server's request context implements these small interfaces, one per
// concern, and the engine declares them because it is the one that needs
// them.
type Exec interface {
	Host
	Events
	Buffers
	Locks
	Session
	Catalog
}

// Events is the event clock and the Extended Events that an operator's
// work causes.
type Events interface {
	// Clock is the event clock now; Advance moves it by d (work done) and
	// returns the new time.
	Clock() time.Time
	Advance(d time.Duration) time.Time
	// Emit raises ev (stamped ev.Time) in the event sessions that capture
	// it, with the request's actions.
	Emit(ev *xevents.EventData)
	// AnySessionRunning says whether an event session runs: work whose
	// only effect is events (waits, file reads) then only takes time.
	AnySessionRunning() bool
	// EnterOp and LeaveOp bracket a call into an operator, for the call
	// stacks events carry.
	EnterOp(n *PlanNode)
	LeaveOp()
	// SetThread says which worker thread of a parallel plan the following
	// events belong to (0: the coordinator).
	SetThread(thread int)
	// ThreadProfileAtClose and GuessedColumns are the server's choices for
	// query_thread_profile (Options).
	ThreadProfileAtClose() bool
	GuessedColumns() bool
}

// Buffers is the buffer pool and the request's I/O counters.
type Buffers interface {
	// PageCached says whether a page of the demo database is in the
	// buffer pool; CachePage puts it there (clean).
	PageCached(page int32) bool
	CachePage(page int32)
	// CountReads adds to the request's logical and physical reads.
	CountReads(logical, physical int64)
	// DatabaseID is the session's current database (file_read's
	// database_id).
	DatabaseID() int
}

// Locks is the lock manager as a read sees it.
type Locks interface {
	// ReadUncommitted says whether the session reads without shared
	// locks (READ UNCOMMITTED).
	ReadUncommitted() bool
	// TransientObjectLock takes and at once releases an object lock.
	TransientObjectLock(t *Table, mode string)
	// ReadPageLock and ReadKeyLock wait until an S lock on the page or
	// key is compatible with other transactions' locks, then take and
	// release it (READ COMMITTED).
	ReadPageLock(ix *Index, page int32) *sqlfront.SQLError
	ReadKeyLock(ix *Index, row []any) *sqlfront.SQLError
	// WaitForGhosts waits for other transactions' uncommitted deletes of
	// keys of t in [lo, hi] (nil: unbounded).
	WaitForGhosts(t *Table, ix *Index, lo, hi any) *sqlfront.SQLError
	// UpdTarget says whether t's rows are read by an UPDATE or DELETE
	// (U locks, not S); UpdPageLock, UpdRowLock and UpdRelease take and
	// release them.
	UpdTarget(t *Table) bool
	UpdPageLock(ix *Index, page int32) *sqlfront.SQLError
	UpdRowLock(ix *Index, row []any) *sqlfront.SQLError
	UpdRelease(ix *Index, row []any)
}

// Session is the session state a running statement consults.
type Session interface {
	// TraceFlag says whether trace flag n is on (652: no read-ahead).
	TraceFlag(n int) bool
	// Yield lets other sessions run and returns an error when the request
	// was cancelled or the session killed.
	Yield() *sqlfront.SQLError
	// YieldDue counts one row of the statement's turn and tells whether
	// it should yield now, before YieldEvery rows: another session waits
	// and the turn has lasted long enough.
	YieldDue() bool
	// StatementLimits are the memory and rows a statement's blocking
	// operators may hold (0: the defaults).
	StatementLimits() (maxBytes, maxRows int64)
}

// Catalog is name resolution and what the planner reads about tables.
type Catalog interface {
	// ResolveTable finds a table name: a table (temporary, variable or
	// database) or a system view.
	ResolveTable(parts []string) (*Table, *SysView, *sqlfront.SQLError)
	// TableFunction runs a table-valued function with outer in scope;
	// TableFunctionSchema returns its columns without running it.
	TableFunction(f *sqlfront.TableFunc, outer *EvalEnv) (*Relation, *sqlfront.SQLError)
	TableFunctionSchema(f *sqlfront.TableFunc) (*Relation, *sqlfront.SQLError)
	// VarType is a declared variable's type.
	VarType(name string) (sqlfront.SQLType, bool)
	// StatsCache holds the statistics built per table, kept by the server
	// across statements.
	StatsCache() map[*Table]*TableStats
}

// SysView is a system view as the planner sees it: its columns, its rows
// now (for the estimate) and how to read it when the plan runs.
type SysView struct {
	Schema *Relation
	Rows   int
	Read   func(x Exec) (*Relation, *sqlfront.SQLError)
}
