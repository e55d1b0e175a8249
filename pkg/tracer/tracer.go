package tracer

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	_ "github.com/microsoft/go-mssqldb" // registers the "sqlserver" driver
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// Conn is the part of *sql.Conn the tracer uses: one dedicated connection.
type Conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	Close() error
}

// Opener opens a fresh dedicated connection.
type Opener interface {
	Open(ctx context.Context) (Conn, error)
}

// DBOpener opens connections from a *sql.DB. Each one is discarded after
// use, never handed back to the pool, so no session setting of a trace
// (trace flag 652, an open transaction, USE) can reach another user.
type DBOpener struct{ DB *sql.DB }

// Open implements Opener.
func (o DBOpener) Open(ctx context.Context) (Conn, error) {
	c, err := o.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// OpenDSN opens a go-mssqldb database handle for tracing: no idle
// connections are kept. Prefer NewDSNOpener, whose connections carry network
// deadlines (a silent network cannot hang a trace); a DBOpener over this
// handle relies on contexts alone.
func OpenDSN(dsn string) (*sql.DB, error) {
	dsn = sqlconn.DefaultPacketSize(sqlconn.DefaultApp(dsn, sqlconn.TraceApp), sqlconn.TracePacketSize) // as NewDSNOpener
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", RedactDSN(dsn), redactErr(err, dsn))
	}
	db.SetMaxIdleConns(0)
	return db, nil
}

// discard closes c so that it is not reused: a *sql.Conn is marked bad
// (Raw returning driver.ErrBadConn) before Close, which makes database/sql
// close the network connection instead of pooling it; the server then ends
// the session, rolling back anything still open.
func discard(c Conn) {
	if r, ok := c.(interface {
		Raw(func(any) error) error
	}); ok {
		_ = r.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = c.Close()
}

// Tracer runs traces against one server.
type Tracer struct {
	open   Opener
	policy Policy
	log    *slog.Logger
	names  *nameCache

	mapsMu sync.Mutex
	maps   *xe.MapTable
}

// New returns a tracer opening connections with open under policy. log may be
// nil. It never logs query text or results.
func New(open Opener, policy Policy, log *slog.Logger) *Tracer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Tracer{open: open, policy: policy, log: log, names: newNameCache(100_000)}
}

// serverInfo is what the first statements learn.
type serverInfo struct {
	spid          int
	loginTime     time.Time // sys.dm_exec_sessions.login_time of the traced session
	version       string
	major         int
	engineEdition int
	errorLog      string
	database      string
	databaseID    int
}

// Statements the tracer runs, named so tests can find them.
const (
	// SERVERPROPERTY:
	// https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql
	// @@SPID: https://learn.microsoft.com/en-us/sql/t-sql/functions/spid-transact-sql
	// It selects SERVERPROPERTY only (no DMV), because a SELECT mixing them
	// fails as a whole on Azure SQL Database (docs/design/exporter.md §9.1).
	sqlServerInfo = "SELECT @@SPID, CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), " +
		"CAST(SERVERPROPERTY('EngineEdition') AS int), CAST(SERVERPROPERTY('ErrorLogFileName') AS nvarchar(4000)), DB_NAME(), DB_ID()"
	// A session's identity is its id and login time: an id is handed to the
	// next connection once a session ends, a (session_id, login_time) pair
	// is not
	// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql).
	sqlSessionIdentity = "SELECT @@SPID, login_time FROM sys.dm_exec_sessions WHERE session_id = @@SPID"
	// sys.fn_my_permissions lists effective permissions, including the SQL
	// Server 2022 granular ones where they exist:
	// https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-my-permissions-transact-sql
	sqlServerPermissions   = "SELECT permission_name FROM sys.fn_my_permissions(NULL, 'SERVER')"
	sqlDatabasePermissions = "SELECT permission_name FROM sys.fn_my_permissions(NULL, 'DATABASE')"
	// IS_SRVROLEMEMBER: https://learn.microsoft.com/en-us/sql/t-sql/functions/is-srvrolemember-transact-sql
	sqlIsSysadmin = "SELECT IS_SRVROLEMEMBER('sysadmin')"
	// CHECKPOINT (current database only), run only to clear the buffer pool
	// (DBCC DROPCLEANBUFFERS drops clean pages only):
	// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/checkpoint-transact-sql
	sqlCheckpoint = "CHECKPOINT"
	// DBCC DROPCLEANBUFFERS (instance-wide; sysadmin):
	// https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-dropcleanbuffers-transact-sql
	sqlDropCleanBuffers = "DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS"
	// Trace flag 652 disables page pre-fetching (read-ahead); session scope
	// without -1:
	// https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-traceon-trace-flags-transact-sql
	// https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-traceon-transact-sql
	sqlTraceOn  = "DBCC TRACEON(652) WITH NO_INFOMSGS"
	sqlTraceOff = "DBCC TRACEOFF(652) WITH NO_INFOMSGS"
	// fn_dblog is undocumented (sysadmin); docs/design/tracing.md §13.
	sqlLogEnd = "SELECT MAX([Current LSN]) FROM fn_dblog(NULL, NULL)"
	// sys.dm_db_log_stats (2016 SP2+, documented; reads.go logEnd).
	sqlLogStatsEnd = "SELECT log_end_lsn FROM sys.dm_db_log_stats(DB_ID())"
	// @@TRANCOUNT and the current transaction's id
	// (https://learn.microsoft.com/en-us/sql/t-sql/functions/trancount-transact-sql,
	// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-tran-current-transaction-transact-sql):
	// read after BEGIN, again after the batch (unchanged, or the batch ended
	// QueryReplay's transaction) and after the ROLLBACK (0).
	sqlTransactionState = "SELECT @@TRANCOUNT, (SELECT transaction_id FROM sys.dm_tran_current_transaction)"
	// The SET options a batch could leave on that would stop the tracer's
	// own statements on its connection from running or from returning all
	// rows (the classifier refuses NOEXEC, PARSEONLY and FMTONLY ON; this is
	// the second line). PARSEONLY first: it acts at parse time.
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-parseonly-transact-sql
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-noexec-transact-sql
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-fmtonly-transact-sql
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-rowcount-transact-sql
	sqlResetOptions = "SET PARSEONLY OFF; SET NOEXEC OFF; SET FMTONLY OFF; SET ROWCOUNT 0"
	// ROLLBACK without a name rolls back to the outermost BEGIN; guarded so
	// it never raises Msg 3903 when nothing is open:
	// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/rollback-transaction-transact-sql
	sqlRollback = "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION"
)

// Trace runs o.SQL traced and returns the bundle. A refused trace returns a
// *RefusedError before anything runs. The batch runs inside a transaction
// of QueryReplay's that is verified and rolled back; a batch that ended or
// replaced it returns a *TransactionEndedError (with the bundle, whose
// RolledBack is false). On other failures the bundle may be nil; the session
// is dropped and the transaction rolled back on every path, and an error in
// that cleanup is joined to the returned error.
func (t *Tracer) Trace(ctx context.Context, o Options) (*bundle.Bundle, error) {
	o = asParameterized(o.withDefaults())
	class, err := o.Validate(t.policy)
	if o.skipClassifier {
		class, err = tsql.Classification{Modification: true}, nil
	}
	if err != nil {
		return nil, err
	}
	r := &run{t: t, o: o, class: class, began: time.Now()}
	b, err := r.do(ctx)
	if cerr := r.cleanup(ctx); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if b != nil {
		b.Result.RolledBack = r.rolledBack
		b.Result.Warnings = append(b.Result.Warnings, r.warnings...)
	}
	return b, err
}
