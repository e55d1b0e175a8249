package tracer

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/microsoft/go-mssqldb" // registers the "sqlserver" driver
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
// connections are kept.
func OpenDSN(dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", redactDSN(dsn), err)
	}
	db.SetMaxIdleConns(0)
	return db, nil
}

// redactDSN drops the password from a DSN for messages.
func redactDSN(dsn string) string {
	dsn = urlPassword.ReplaceAllString(dsn, "${1}***@")
	return keyPassword.ReplaceAllString(dsn, "${1}***")
}

var (
	urlPassword = regexp.MustCompile(`(://[^:/@]*:)[^@]*@`)
	keyPassword = regexp.MustCompile(`(?i)((?:password|pwd)\s*=\s*)[^;&]*`)
)

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

// serverInfo is what the first statement learns.
type serverInfo struct {
	spid          int
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
	// fails as a whole on Azure SQL Database (exporter-anchors.md §9.1).
	sqlServerInfo = "SELECT @@SPID, CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), " +
		"CAST(SERVERPROPERTY('EngineEdition') AS int), CAST(SERVERPROPERTY('ErrorLogFileName') AS nvarchar(4000)), DB_NAME(), DB_ID()"
	// sys.fn_my_permissions lists effective permissions, including the SQL
	// Server 2022 granular ones where they exist:
	// https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-my-permissions-transact-sql
	sqlServerPermissions   = "SELECT permission_name FROM sys.fn_my_permissions(NULL, 'SERVER')"
	sqlDatabasePermissions = "SELECT permission_name FROM sys.fn_my_permissions(NULL, 'DATABASE')"
	// IS_SRVROLEMEMBER: https://learn.microsoft.com/en-us/sql/t-sql/functions/is-srvrolemember-transact-sql
	sqlIsSysadmin = "SELECT IS_SRVROLEMEMBER('sysadmin')"
	// CHECKPOINT (current database only):
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
	// fn_dblog is undocumented (sysadmin); xe-tracing.md §13.
	sqlLogEnd = "SELECT MAX([Current LSN]) FROM fn_dblog(NULL, NULL)"
	// ROLLBACK without a name rolls back to the outermost BEGIN; guarded so
	// it never raises Msg 3903 when nothing is open:
	// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/rollback-transaction-transact-sql
	sqlRollback = "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION"
)

// Trace runs o.SQL traced and returns the bundle. A refused trace returns a
// *RefusedError before anything runs. On failure the bundle may be nil; the
// session is dropped and any modification rolled back on every path, and an
// error in that cleanup is joined to the returned error.
func (t *Tracer) Trace(ctx context.Context, o Options) (*Bundle, error) {
	o = o.withDefaults()
	class, err := o.Validate(t.policy)
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
	}
	return b, err
}

// run is one trace in progress: what must be undone.
type run struct {
	t     *Tracer
	o     Options
	class Classification
	began time.Time
	conn  Conn
	info  serverInfo
	spec  SessionSpec

	created    bool // the session exists on the server
	traceFlag  bool // TRACEON(652) was sent
	inTxn      bool // BEGIN TRANSACTION was sent
	rolledBack bool
	connBad    bool
	rows       atomic.Int64
}

func (r *run) progress(step string, events int64) {
	if r.o.Progress != nil {
		r.o.Progress(Progress{Step: step, Rows: r.rows.Load(), Events: events, Elapsed: time.Since(r.began)})
	}
}

// exec runs one auxiliary statement on the trace connection.
func (r *run) exec(ctx context.Context, step, query string) error {
	if _, err := r.conn.ExecContext(ctx, query); err != nil {
		r.noteConnErr(err)
		return fmt.Errorf("%s: %w", step, err)
	}
	return nil
}

func (r *run) noteConnErr(err error) {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || isNetErr(err) {
		r.connBad = true
	}
}

func isNetErr(err error) bool {
	s := err.Error()
	return strings.Contains(s, "EOF") || strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe") ||
		strings.Contains(s, "use of closed network connection") || strings.Contains(s, "bad connection")
}

func (r *run) do(ctx context.Context) (*Bundle, error) {
	o := r.o
	c, err := r.t.open.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	r.conn = c
	if o.Database != "" {
		// USE: https://learn.microsoft.com/en-us/sql/t-sql/language-elements/use-transact-sql
		if err := r.exec(ctx, "use database", "USE "+QuoteName(o.Database)); err != nil {
			return nil, err
		}
	}
	if err := r.readInfo(ctx); err != nil {
		return nil, err
	}
	scope := ScopeServer
	if r.info.engineEdition == 5 {
		scope = ScopeDatabase
	}
	if err := r.checkPermissions(ctx, scope); err != nil {
		return nil, err
	}
	if n, err := r.t.sweep(ctx, r.conn, scope, o.GracePeriod); err != nil {
		r.noteConnErr(err)
		r.t.log.Warn("orphan sweep failed", "err", err)
	} else if n > 0 {
		r.t.log.Info("dropped orphaned trace sessions", "count", n)
	}
	dir := o.TraceDirectory
	if dir == "" && scope == ScopeServer {
		dir = logDirectory(r.info.errorLog)
		if dir == "" {
			return nil, fmt.Errorf("cannot tell the server's log directory from ErrorLogFileName %q; pass a trace directory", r.info.errorLog)
		}
	}
	name, err := NewSessionName()
	if err != nil {
		return nil, err
	}
	r.spec = SessionSpec{
		Name: name, SPID: r.info.spid, Scope: scope, Events: o.Events, Modification: r.class.Modification,
		CallStacks: o.CallStacks, CallstackRVA: r.info.major >= 16, Directory: dir,
		MaxFileSizeMB: o.MaxFileSizeMB, MaxEvents: o.MaxEvents,
	}
	if o.scopeOverride != nil {
		r.spec.Scope = *o.scopeOverride
	}
	m := r.spec.Marker()
	// CREATE EVENT SESSION:
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql
	r.created = true // from here on cleanup drops it, even if CREATE's reply is lost
	if err := r.exec(ctx, "create event session", m+r.spec.CreateDDL()); err != nil {
		return nil, err
	}
	if o.ClearBufferPool {
		if err := r.exec(ctx, "checkpoint", m+sqlCheckpoint); err != nil {
			return nil, err
		}
		if err := r.exec(ctx, "drop clean buffers", m+sqlDropCleanBuffers); err != nil {
			return nil, err
		}
	}
	if o.DisableReadAhead {
		r.traceFlag = true
		if err := r.exec(ctx, "disable read-ahead", m+sqlTraceOn); err != nil {
			return nil, err
		}
	}
	startLSN := ""
	if r.class.Modification {
		if !o.ClearBufferPool {
			// Harden the log so the records after startLSN are the query's.
			if err := r.exec(ctx, "checkpoint", m+sqlCheckpoint); err != nil {
				return nil, err
			}
		}
		var lsn sql.NullString
		if err := r.queryRow(ctx, "read log end", m+sqlLogEnd, &lsn); err != nil {
			return nil, err
		}
		startLSN = lsn.String
	}
	// ALTER EVENT SESSION … STATE = START:
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/alter-event-session-transact-sql
	if err := r.exec(ctx, "start event session", r.spec.StartDDL()); err != nil {
		if r.spec.Scope == ScopeServer && strings.Contains(err.Error(), "25602") {
			// The event file could not be created (SQL Server Msg 25602).
			return nil, fmt.Errorf("%w (check that the directory %s exists on the server and that the SQL Server service account can write to it)", err, dir)
		}
		return nil, err
	}
	if r.class.Modification {
		r.inTxn = true
		if err := r.exec(ctx, "begin transaction", m+"BEGIN TRANSACTION "+r.spec.TransactionName()); err != nil {
			return nil, err
		}
	}
	b := &Bundle{Format: BundleFormat, Version: BundleVersion, SQL: o.SQL,
		Server: ServerInfo{ProductVersion: r.info.version, EngineEdition: r.info.engineEdition, Database: r.info.database, SPID: r.info.spid},
		Run: RunInfo{Session: name, StartedAt: r.began.UTC(), Events: r.spec.EventNames(), ClearBufferPool: o.ClearBufferPool,
			DisableReadAhead: o.DisableReadAhead, Modification: r.class.Modification, CallStacks: o.CallStacks, Groups: o.Events},
	}
	b.Result.Warnings = append(b.Result.Warnings, r.class.Warnings...)
	if r.spec.Scope == ScopeServer {
		b.Run.Target = r.spec.ReadPattern()
	} else {
		b.Run.Target = "ring_buffer"
	}

	rowCounts, dur, qerr := r.runQuery(ctx)
	b.Result.Rows, b.Result.DurationUs = rowCounts, dur.Microseconds()
	if qerr != nil {
		return nil, qerr
	}
	r.progress("stopping", 0)
	var ring string
	if r.spec.Scope == ScopeServer {
		b.Result.DroppedEvents = r.droppedEvents(ctx)
	} else {
		// A ring_buffer's events vanish at STOP: read them while the session
		// runs, after the dispatch latency has passed.
		select {
		case <-time.After(1100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var err error
		ring, err = r.readRingBuffer(ctx)
		if err != nil {
			return nil, err
		}
	}
	if err := r.exec(ctx, "stop event session", r.spec.StopDDL()); err != nil {
		return nil, err
	}
	if r.class.Modification {
		recs, err := r.readLog(ctx, startLSN)
		if err != nil {
			return nil, err
		}
		b.Result.LogRecords = recs
		if err := r.exec(ctx, "roll back", m+sqlRollback); err != nil {
			return nil, err
		}
		r.inTxn, r.rolledBack = false, true
	}
	if r.traceFlag {
		if err := r.exec(ctx, "re-enable read-ahead", m+sqlTraceOff); err != nil {
			return nil, err
		}
		r.traceFlag = false
	}
	if err := r.exec(ctx, "drop event session", r.spec.DropDDL()); err != nil {
		return nil, err
	}
	r.created = false

	r.progress("reading events", 0)
	if err := r.readBack(ctx, b, ring); err != nil {
		return b, err
	}
	if o.readBackAgain != nil {
		// tests: read the same events again the other way
		again := &Bundle{Format: b.Format, Version: b.Version, SQL: b.SQL, Server: b.Server, Run: b.Run}
		again.Run.ReadBack, again.Run.ReadBackFallback = "", ""
		r.o.ReadBack = o.readBackAgain.mode
		err := r.readBack(ctx, again, ring)
		o.readBackAgain.got(again, err)
	}
	return b, nil
}

// queryRow runs a one-row query and scans it.
func (r *run) queryRow(ctx context.Context, step, query string, dest ...any) error {
	rows, err := r.conn.QueryContext(ctx, query)
	if err != nil {
		r.noteConnErr(err)
		return fmt.Errorf("%s: %w", step, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			r.noteConnErr(err)
			return fmt.Errorf("%s: %w", step, err)
		}
		return fmt.Errorf("%s: no row", step)
	}
	if err := rows.Scan(dest...); err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	return rows.Close()
}

func (r *run) readInfo(ctx context.Context) error {
	var spid, edition sql.NullInt64
	var version, errLog, db sql.NullString
	var dbID sql.NullInt64
	if err := r.queryRow(ctx, "read server identity", sqlServerInfo, &spid, &version, &edition, &errLog, &db, &dbID); err != nil {
		return err
	}
	if !spid.Valid || spid.Int64 <= 0 {
		return errors.New("read server identity: @@SPID is missing")
	}
	r.info = serverInfo{spid: int(spid.Int64), version: version.String, engineEdition: int(edition.Int64), errorLog: errLog.String, database: db.String, databaseID: int(dbID.Int64)}
	if i := strings.IndexByte(version.String, '.'); i > 0 {
		r.info.major, _ = strconv.Atoi(version.String[:i])
	}
	return nil
}

// logDirectory returns the directory of the error log file, for Windows
// (\) and Linux (/) paths (xe-tracing.md §1.2).
func logDirectory(errorLog string) string {
	i := strings.LastIndexAny(errorLog, `\/`)
	if i <= 0 {
		return ""
	}
	return errorLog[:i]
}

// runQuery runs the user's batch and drains every result set, counting rows
// and discarding values.
func (r *run) runQuery(ctx context.Context) ([]int64, time.Duration, error) {
	qctx := ctx
	if r.o.Timeout > 0 {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeout(ctx, r.o.Timeout)
		defer cancel()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if r.o.Progress != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					r.progress("running", 0)
				case <-stop:
					return
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	r.progress("running", 0)
	start := time.Now()
	rows, err := r.conn.QueryContext(qctx, r.o.SQL)
	if err != nil {
		r.noteConnErr(err)
		return nil, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	defer rows.Close()
	var counts []int64
	for {
		var n int64
		for rows.Next() {
			n++
			r.rows.Add(1)
		}
		counts = append(counts, n)
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		r.noteConnErr(err)
		return counts, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	if err := rows.Close(); err != nil {
		r.noteConnErr(err)
		return counts, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	if err := qctx.Err(); err != nil {
		return counts, time.Since(start), fmt.Errorf("run query: %w", err)
	}
	return counts, time.Since(start), nil
}

// droppedEvents reads the session's dropped-event count before STOP (a
// stopped session leaves sys.dm_xe_sessions):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql
// A failure is not fatal: event_sequence gaps still reveal losses.
func (r *run) droppedEvents(ctx context.Context) int64 {
	var n sql.NullInt64
	q := r.spec.Marker() + "SELECT dropped_event_count FROM sys.dm_xe_sessions WHERE name = " + QuoteString(r.spec.Name)
	if err := r.queryRow(ctx, "read dropped events", q, &n); err != nil {
		r.t.log.Warn("could not read the dropped event count", "err", err)
	}
	return n.Int64
}

// readRingBuffer reads the ring_buffer target_data of a database-scoped
// session:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-database-session-targets-azure-sql-database
func (r *run) readRingBuffer(ctx context.Context) (string, error) {
	view, sessions := "sys.dm_xe_database_session_targets", "sys.dm_xe_database_sessions"
	if r.spec.Scope == ScopeServer {
		view, sessions = "sys.dm_xe_session_targets", "sys.dm_xe_sessions"
	}
	q := r.spec.Marker() + "SELECT CAST(t.target_data AS nvarchar(max)) FROM " + view + " AS t JOIN " + sessions +
		" AS s ON s.address = t.event_session_address WHERE s.name = " + QuoteString(r.spec.Name) + " AND t.target_name = N'ring_buffer'"
	var data sql.NullString
	if err := r.queryRow(ctx, "read ring buffer", q, &data); err != nil {
		return "", err
	}
	return data.String, nil
}

var lsnPattern = regexp.MustCompile(`^[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{4}$`)

// readLog reads the log records written after startLSN (fn_dblog; LSNs
// compare as fixed-width hex strings, xe-tracing.md §13).
func (r *run) readLog(ctx context.Context, startLSN string) ([]LogRecord, error) {
	q := r.spec.Marker() + "SELECT [Current LSN], [Operation], [Context], [Transaction ID], [AllocUnitId], [Page ID], [Slot ID] FROM fn_dblog(NULL, NULL)"
	if startLSN != "" {
		if !lsnPattern.MatchString(startLSN) {
			return nil, fmt.Errorf("read log: unexpected LSN format %q", startLSN)
		}
		q += " WHERE [Current LSN] > N'" + startLSN + "'"
	}
	rows, err := r.conn.QueryContext(ctx, q)
	if err != nil {
		r.noteConnErr(err)
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer rows.Close()
	var out []LogRecord
	for rows.Next() {
		var lsn, op, cx, tid, page sql.NullString
		var au, slot sql.NullInt64
		if err := rows.Scan(&lsn, &op, &cx, &tid, &au, &page, &slot); err != nil {
			return nil, fmt.Errorf("read log: %w", err)
		}
		out = append(out, LogRecord{LSN: lsn.String, Operation: op.String, Context: cx.String, TransactionID: tid.String,
			AllocUnitID: au.Int64, PageID: page.String, SlotID: slot.Int64})
	}
	if err := rows.Err(); err != nil {
		r.noteConnErr(err)
		return nil, fmt.Errorf("read log: %w", err)
	}
	return out, nil
}

// cleanupTimeout bounds the cleanup, which ignores the caller's
// cancellation: a cancelled trace must still drop its session.
const cleanupTimeout = 30 * time.Second

// cleanup undoes whatever the run left: ROLLBACK, TRACEOFF, DROP — on the
// trace connection while it works, else by closing it (the server then rolls
// back and the session-scoped trace flag goes) and dropping the session from
// a fresh connection.
func (r *run) cleanup(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	if r.conn != nil && !r.connBad {
		m := r.spec.Marker()
		if r.inTxn {
			if _, err := r.conn.ExecContext(cctx, m+sqlRollback); err != nil {
				r.connBad = true
			} else {
				r.inTxn, r.rolledBack = false, true
			}
		}
		if r.traceFlag && !r.connBad {
			if _, err := r.conn.ExecContext(cctx, m+sqlTraceOff); err != nil {
				r.connBad = true
			} else {
				r.traceFlag = false
			}
		}
		for attempt := 0; attempt < 2 && r.created && !r.connBad; attempt++ {
			if _, err := r.conn.ExecContext(cctx, r.spec.DropDDL()); err == nil {
				r.created = false
			} else {
				r.noteConnErr(err)
			}
		}
	}
	if r.conn != nil {
		// Always discarded: never pooled, and closing a connection whose
		// transaction is still open makes the server roll it back.
		discard(r.conn)
		if r.inTxn {
			r.inTxn, r.rolledBack = false, true
		}
		r.conn = nil
	}
	if r.created {
		var err error
		// A few attempts with backoff: the server may be restarting or the
		// network flapping; the orphan sweep is the last resort.
		for attempt := 0; attempt < 5; attempt++ {
			if err = r.dropFresh(cctx); err == nil {
				r.created = false
				break
			}
			select {
			case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
			case <-cctx.Done():
			}
		}
		if r.created {
			errs = append(errs, fmt.Errorf("drop event session %s from a fresh connection: %w (the next trace's orphan sweep will drop it)", r.spec.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (r *run) dropFresh(ctx context.Context) error {
	c, err := r.t.open.Open(ctx)
	if err != nil {
		return err
	}
	defer discard(c)
	_, err = c.ExecContext(ctx, r.spec.DropDDL())
	return err
}

// SweepOrphans drops queryreplay_* sessions older than grace, from a fresh
// connection; it returns how many it dropped. Call it at startup; Trace also
// sweeps before each trace.
func (t *Tracer) SweepOrphans(ctx context.Context, grace time.Duration) (int, error) {
	c, err := t.open.Open(ctx)
	if err != nil {
		return 0, fmt.Errorf("sweep orphans: connect: %w", err)
	}
	defer discard(c)
	scope := ScopeServer
	var edition sql.NullInt64
	if rows, err := c.QueryContext(ctx, "SELECT CAST(SERVERPROPERTY('EngineEdition') AS int)"); err == nil {
		if rows.Next() {
			_ = rows.Scan(&edition)
		}
		rows.Close()
	}
	if edition.Int64 == 5 {
		scope = ScopeDatabase
	}
	return t.sweep(ctx, c, scope, grace)
}

// sweep lists the sessions named queryreplay_* (sys.server_event_sessions,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-server-event-sessions-transact-sql)
// and drops those whose name-encoded creation time is older than grace.
// Names this package did not make are left alone.
func (t *Tracer) sweep(ctx context.Context, c Conn, scope Scope, grace time.Duration) (int, error) {
	view := "sys.server_event_sessions"
	if scope == ScopeDatabase {
		view = "sys.database_event_sessions"
	}
	rows, err := c.QueryContext(ctx, "SELECT name FROM "+view+" WHERE name LIKE N'queryreplay[_]%'")
	if err != nil {
		return 0, fmt.Errorf("list sessions: %w", err)
	}
	var old []string
	now := time.Now()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return 0, fmt.Errorf("list sessions: %w", err)
		}
		if created, ok := SessionCreated(name); ok && now.Sub(created) >= grace {
			old = append(old, name)
		}
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("list sessions: %w", err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("list sessions: %w", err)
	}
	n := 0
	var errs []error
	for _, name := range old {
		if _, err := c.ExecContext(ctx, dropSessionSQL(name, scope)); err != nil {
			errs = append(errs, fmt.Errorf("drop %s: %w", name, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
