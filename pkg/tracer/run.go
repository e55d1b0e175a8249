package tracer

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// run is one trace in progress: its three connections and what must be
// undone.
//
// The control connection (conn) creates, starts, stops, drops and reads
// back the session, checks permissions, sweeps, reads the log, resolves
// names and samples blockers. The traced connection runs the batch inside
// QueryReplay's transaction and nothing else but that transaction's checks,
// so nothing the batch leaves behind on its connection (SET options, an
// open or ended transaction, a hung request) can stop the cleanup. The
// watchdog connection (watch) stays idle until the batch must be given up:
// then it stops the session and KILLs the traced session, whatever the
// control connection is doing (guard.go).
type run struct {
	t     *Tracer
	o     Options
	class tsql.Classification
	began time.Time
	ed    edition
	// readsLog: the modification's log records are read with fn_dblog
	// (an edition that has it, and a sysadmin login; permissions.go)
	readsLog bool

	conn   Conn // control
	traced Conn
	watch  Conn         // the watchdog's
	info   serverInfo   // the traced session
	owner  SessionOwner // the control session, encoded in the session name
	spec   SessionSpec

	created    bool // the session exists on the server
	stopped    bool // STOP was sent
	traceFlag  bool // TRACEON(652) was sent on the traced connection
	inTxn      bool // BEGIN TRANSACTION was sent
	txnID      int64
	rolledBack bool // verified: QueryReplay's transaction was rolled back
	connBad    bool // the control connection failed
	watchBad   bool // the watchdog connection failed (used by the watchdog, then the cleanup: never at once)
	warnings   []string
	rows       atomic.Int64
	blockers   *blockerSampler // who blocked the batch (blocking.go)
	live       *liveReader     // the live producer (livetrace.go); nil unless Options.Live
	// ctlMu: the blocker sampler and the live producer share the control
	// connection while the batch runs, one request at a time
	ctlMu sync.Mutex

	mu         sync.Mutex // the watchdog and the run share these
	tracedBad  bool       // the traced connection failed or was abandoned
	aborted    bool       // abortTraced ran
	abortNote  string     // what abortTraced found, for the error
	abortEnded bool       // abortTraced found QueryReplay's transaction gone from the live session
	killFailed bool       // abortTraced could not make sure the traced session is gone
	abortCause error      // context.DeadlineExceeded or the caller's cancellation, when that was why
}

func (r *run) progress(step string, events int64) {
	if r.o.Progress != nil {
		r.o.Progress(Progress{Step: step, Rows: r.rows.Load(), Events: events, Elapsed: time.Since(r.began)})
	}
}

func (r *run) warn(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// exec runs one statement on the control connection.
func (r *run) exec(ctx context.Context, step, query string) error {
	if _, err := r.conn.ExecContext(ctx, query); err != nil {
		r.noteConnErr(err)
		return fmt.Errorf("%s: %w", step, err)
	}
	return nil
}

// execTraced runs one of QueryReplay's statements on the traced connection.
func (r *run) execTraced(ctx context.Context, step, query string) error {
	if _, err := r.traced.ExecContext(ctx, query); err != nil {
		r.noteTracedErr(err)
		return fmt.Errorf("%s (traced connection): %w", step, err)
	}
	return nil
}

// watchExec runs one statement on the watchdog connection.
func (r *run) watchExec(ctx context.Context, step, query string) error {
	if _, err := r.watch.ExecContext(ctx, query); err != nil {
		if isConnErr(err) {
			r.watchBad = true
		}
		return fmt.Errorf("%s (watchdog connection): %w", step, err)
	}
	return nil
}

func (r *run) noteConnErr(err error) {
	if isConnErr(err) {
		r.connBad = true
	}
}

func (r *run) noteTracedErr(err error) {
	if isConnErr(err) {
		r.mu.Lock()
		r.tracedBad = true
		r.mu.Unlock()
	}
}

func (r *run) tracedIsBad() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tracedBad
}

func isConnErr(err error) bool {
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || isNetErr(err)
}

func isNetErr(err error) bool {
	s := err.Error()
	return strings.Contains(s, "EOF") || strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe") ||
		strings.Contains(s, "use of closed network connection") || strings.Contains(s, "bad connection") ||
		strings.Contains(s, "i/o timeout") || strings.Contains(s, "connection refused")
}

// queryRow runs a one-row query on the control connection and scans it.
func (r *run) queryRow(ctx context.Context, step, query string, dest ...any) error {
	err := queryRow(ctx, r.conn, step, query, dest...)
	if err != nil {
		r.noteConnErr(err)
	}
	return err
}

// errNoRow: a one-row query returned none.
var errNoRow = errors.New("no row")

func queryRow(ctx context.Context, c Conn, step, query string, dest ...any) error {
	rows, err := c.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
		return fmt.Errorf("%s: %w", step, errNoRow)
	}
	if err := rows.Scan(dest...); err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	return rows.Close()
}

// do runs the trace sequence; cleanup runs after it whatever it returns.
func (r *run) do(ctx context.Context) (*bundle.Bundle, error) {
	if err := r.connect(ctx); err != nil {
		return nil, err
	}
	if err := r.checkModules(ctx); err != nil {
		return nil, err
	}
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	startLSN, err := r.beforeStart(ctx)
	if err != nil {
		return nil, err
	}
	// ALTER EVENT SESSION … STATE = START:
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/alter-event-session-transact-sql
	if err := r.exec(ctx, "start event session", r.spec.StartDDL()); err != nil {
		if !r.spec.UsesRingBuffer() && strings.Contains(err.Error(), "25602") {
			// The event file could not be created (SQL Server Msg 25602).
			return nil, fmt.Errorf("%w (check that the directory %s exists on the server and that the SQL Server service account can write to it)", err, r.spec.Directory)
		}
		return nil, err
	}
	b := r.newBundle()
	defer func() { r.live.end() }() // the last live update, however the trace ends
	rowCounts, dur, qerr := r.runBatch(ctx)
	b.Result.Rows, b.Result.DurationUs = rowCounts, dur.Microseconds()
	r.blockers.finish(b)
	if r.aborted || r.tracedIsBad() {
		return nil, r.abortError(qerr)
	}
	ring, err := r.stop(ctx, b)
	if err != nil {
		return nil, errors.Join(qerr, err)
	}
	verr := r.verifyTransaction(ctx)
	var ended *TransactionEndedError
	var se mssql.Error
	if errors.As(verr, &ended) && errors.As(qerr, &se) && se.Number == 1205 {
		ended.Detail += "; the server reported error 1205 (deadlock victim), which rolls the transaction back"
	}
	if r.readsLog {
		recs, err := r.readLog(ctx, startLSN)
		if err != nil {
			return nil, errors.Join(qerr, verr, err)
		}
		b.Result.LogRecords = recs
	}
	if err := r.rollback(ctx, verr == nil); err != nil {
		return nil, errors.Join(qerr, verr, err)
	}
	if err := r.afterRollback(ctx); err != nil {
		return nil, errors.Join(qerr, verr, err)
	}
	if qerr != nil {
		return nil, errors.Join(qerr, verr)
	}
	if verr != nil && !errors.As(verr, &ended) {
		return nil, verr
	}
	r.progress("reading events", 0)
	if err := r.readBack(ctx, b, ring); err != nil {
		return b, errors.Join(verr, err)
	}
	if r.o.readBackAgain != nil {
		// tests: read the same events again the other way
		again := &bundle.Bundle{Format: b.Format, Version: b.Version, SQL: b.SQL, Server: b.Server, Run: b.Run}
		again.Run.ReadBack, again.Run.ReadBackFallback = "", ""
		r.o.ReadBack = r.o.readBackAgain.mode
		err := r.readBack(ctx, again, ring)
		r.o.readBackAgain.got(again, err)
	}
	return b, verr
}

// connect opens the traced connection, then the control connection, and
// reads who they are; then the watchdog connection.
func (r *run) connect(ctx context.Context) error {
	c, err := r.t.open.Open(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	r.traced = c
	setNetLimits(r.traced, controlIdle, time.Time{})
	if r.o.Database != "" {
		// USE: https://learn.microsoft.com/en-us/sql/t-sql/language-elements/use-transact-sql
		if err := r.execTraced(ctx, "use database", "USE "+tsql.QuoteName(r.o.Database)); err != nil {
			return useError(err, r.o.Database)
		}
	}
	if err := r.readInfo(ctx); err != nil {
		return err
	}
	if c, err = r.t.open.Open(ctx); err != nil {
		return fmt.Errorf("connect the control connection: %w", err)
	}
	r.conn = c
	setNetLimits(r.conn, controlIdle, time.Time{})
	if r.o.Database != "" {
		if err := r.exec(ctx, "use database", "USE "+tsql.QuoteName(r.o.Database)); err != nil {
			return useError(err, r.o.Database)
		}
	}
	owner, err := sessionIdentity(ctx, r.conn)
	if err != nil {
		r.noteConnErr(err)
		return fmt.Errorf("control connection: %w", err)
	}
	r.owner = owner
	return r.connectWatchdog(ctx)
}

// connectWatchdog opens the watchdog's connection before anything is
// created. Without it the trace does not start: a watchdog sharing the
// control connection cannot stop the session or KILL the batch while that
// connection is busy or hung, and then a KILL-less batch keeps its locks
// for as long as a middlebox keeps its socket open.
// whyNoWatchdog is why a trace refuses to start without its watchdog.
const whyNoWatchdog = "a trace does not run without a connection of its own that can stop the session and KILL the batch"

func (r *run) connectWatchdog(ctx context.Context) error {
	c, err := r.t.open.Open(ctx)
	if err != nil {
		return fmt.Errorf("connect the watchdog connection: %w ("+whyNoWatchdog+")", err)
	}
	r.watch = c
	// Nothing is sent until it must act: STOP, the session lookups and KILL
	// are server-wide, and a database-scoped session (Azure SQL Database)
	// lives in the login's database, the only one a connection there can use.
	setNetLimits(r.watch, controlIdle, time.Time{})
	return nil
}

// readInfo reads the traced session's id and login time and the server's
// identity.
func (r *run) readInfo(ctx context.Context) error {
	var spid, engineEdition, dbID sql.NullInt64
	var version, errLog, db sql.NullString
	if err := queryRow(ctx, r.traced, "read server identity", sqlServerInfo, &spid, &version, &engineEdition, &errLog, &db, &dbID); err != nil {
		r.noteTracedErr(err)
		return err
	}
	if !spid.Valid || spid.Int64 <= 0 {
		return errors.New("read server identity: @@SPID is missing")
	}
	r.info = serverInfo{spid: int(spid.Int64), version: version.String, engineEdition: int(engineEdition.Int64), errorLog: errLog.String, database: db.String, databaseID: int(dbID.Int64)}
	if i := strings.IndexByte(version.String, '.'); i > 0 {
		r.info.major, _ = strconv.Atoi(version.String[:i])
	}
	id, err := sessionIdentity(ctx, r.traced)
	if err != nil {
		r.noteTracedErr(err)
		return err
	}
	r.info.loginTime = id.LoginTime
	r.ed = edition{id: r.info.engineEdition}
	return nil
}

// sessionIdentity reads a connection's session id and login time.
func sessionIdentity(ctx context.Context, c Conn) (SessionOwner, error) {
	var spid sql.NullInt64
	var login sql.NullTime
	if err := queryRow(ctx, c, "read the session's login time", sqlSessionIdentity, &spid, &login); err != nil {
		return SessionOwner{}, err
	}
	if !spid.Valid || !login.Valid {
		return SessionOwner{}, errors.New("read the session's login time: sys.dm_exec_sessions has no row for @@SPID")
	}
	return SessionOwner{SPID: int(spid.Int64), LoginTime: login.Time}, nil
}

// prepare checks edition and permissions, sweeps orphans and creates the
// session.
func (r *run) prepare(ctx context.Context) error {
	if err := r.ed.check(r.o); err != nil {
		return err
	}
	scope := r.ed.scope()
	if err := r.checkPermissions(ctx, scope); err != nil {
		return err
	}
	if n, err := r.t.sweep(ctx, r.conn, scope, r.o.GracePeriod); err != nil {
		r.noteConnErr(err)
		r.t.log.Warn("orphan sweep failed", "err", err)
	} else if n > 0 {
		r.t.log.Info("dropped orphaned trace sessions", "count", n)
	}
	dir := r.o.TraceDirectory
	ring := r.ed.ringBuffer()
	if dir == "" && scope == ScopeServer && !ring {
		// SERVERPROPERTY('ErrorLogFileName') can be NULL for a login
		// without the permission to see it; the ring_buffer target needs no
		// directory, so the trace goes on with it and says what it costs.
		if dir = logDirectory(r.info.errorLog); dir == "" {
			ring = true
			r.warnings = append(r.warnings, ErrorLogUnknownNote)
		}
	}
	name, err := NewOwnedSessionName(r.owner)
	if err != nil {
		return err
	}
	r.spec = SessionSpec{
		Name: name, SPID: r.info.spid, Scope: scope, RingBuffer: ring, Events: r.o.Events, Modification: r.class.Modification,
		CallStacks: r.o.CallStacks, CallstackRVA: r.info.major >= 16, Directory: dir,
		MaxFileSizeMB: r.o.MaxFileSizeMB, MaxEvents: r.o.MaxEvents,
	}
	if r.o.scopeOverride != nil {
		r.spec.Scope = *r.o.scopeOverride
	}
	// CREATE EVENT SESSION:
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql
	r.created = true // from here on cleanup drops it, even if CREATE's reply is lost
	return r.createSession(ctx)
}

// beforeStart clears the buffer pool (when asked), turns read-ahead off on
// the traced connection, notes the log's end for a modification, and opens
// QueryReplay's transaction on the traced connection, reading its id.
func (r *run) beforeStart(ctx context.Context) (startLSN string, err error) {
	m := r.spec.Marker()
	if r.o.ClearBufferPool {
		if err := r.exec(ctx, "checkpoint", m+sqlCheckpoint); err != nil {
			return "", err
		}
		if err := r.exec(ctx, "drop clean buffers", m+sqlDropCleanBuffers); err != nil {
			return "", err
		}
	}
	if r.o.DisableReadAhead {
		r.traceFlag = true
		if err := r.execTraced(ctx, "disable read-ahead", m+sqlTraceOn); err != nil {
			return "", err
		}
	}
	if r.readsLog {
		if startLSN, err = r.logEnd(ctx); err != nil {
			return "", err
		}
	}
	r.inTxn = true
	// BEGIN TRANSACTION:
	// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/begin-transaction-transact-sql
	count, id, err := r.transactionState(ctx, m+"BEGIN TRANSACTION "+r.spec.TransactionName()+"; "+sqlTransactionState)
	if err != nil {
		return "", fmt.Errorf("begin transaction: %w", err)
	}
	if count != 1 || id == 0 {
		return "", fmt.Errorf("begin transaction: @@TRANCOUNT is %d and the transaction id %d after BEGIN TRANSACTION", count, id)
	}
	r.txnID = id
	return startLSN, nil
}

// transactionState runs q (ending in sqlTransactionState) on the traced
// connection and returns @@TRANCOUNT and the transaction id.
func (r *run) transactionState(ctx context.Context, q string) (int, int64, error) {
	var count, id sql.NullInt64
	if err := queryRow(ctx, r.traced, "read the transaction state", q, &count, &id); err != nil {
		r.noteTracedErr(err)
		return 0, 0, err
	}
	return int(count.Int64), id.Int64, nil
}

func (r *run) newBundle() *bundle.Bundle {
	o := r.o
	b := &bundle.Bundle{Format: bundle.Format, Version: bundle.Version, SQL: o.SQL,
		Server: bundle.ServerInfo{ProductVersion: r.info.version, EngineEdition: r.info.engineEdition, Database: r.info.database, SPID: r.info.spid},
		Run: bundle.RunInfo{Session: r.spec.Name, StartedAt: r.began.UTC(), Events: r.spec.TracedEvents(), ClearBufferPool: o.ClearBufferPool,
			DisableReadAhead: o.DisableReadAhead, Modification: r.class.Modification, CallStacks: o.CallStacks, Groups: o.Events,
			TimeoutSeconds: o.Timeout.Seconds(), MaxEvents: o.MaxEvents},
	}
	b.Result.Warnings = append(b.Result.Warnings, r.class.Warnings...)
	if r.spec.UsesRingBuffer() {
		b.Run.Target = "ring_buffer"
	} else {
		b.Run.Target = r.spec.ReadPattern()
	}
	return b
}

// stop reads what must be read while the session runs (the dropped-event
// count; a ring_buffer, whose events vanish at STOP), then stops it.
func (r *run) stop(ctx context.Context, b *bundle.Bundle) (string, error) {
	r.progress("stopping", 0)
	ring := ""
	if r.spec.UsesRingBuffer() {
		// read while the session runs, after the dispatch latency has passed
		select {
		case <-time.After(1100 * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		var err error
		if ring, err = r.readRingBuffer(ctx); err != nil {
			return "", err
		}
	} else {
		b.Result.DroppedEvents = r.droppedEvents(ctx)
	}
	r.stopped = true
	return ring, r.exec(ctx, "stop event session", r.spec.StopDDL())
}

// rollback rolls QueryReplay's transaction back on the traced connection
// and checks that none is left; verified says the transaction was found
// intact after the batch, so a clean rollback means the batch's changes are
// undone.
func (r *run) rollback(ctx context.Context, verified bool) error {
	m := r.spec.Marker()
	if err := r.execTraced(ctx, "roll back", m+sqlRollback); err != nil {
		return err
	}
	count, _, err := r.transactionState(ctx, m+sqlTransactionState)
	if err != nil {
		return fmt.Errorf("roll back: %w", err)
	}
	if count != 0 {
		return fmt.Errorf("roll back: @@TRANCOUNT is still %d after ROLLBACK", count)
	}
	r.inTxn = false
	r.rolledBack = verified
	return nil
}

// afterRollback turns read-ahead back on and drops the session.
func (r *run) afterRollback(ctx context.Context) error {
	if r.traceFlag {
		if err := r.execTraced(ctx, "re-enable read-ahead", r.spec.Marker()+sqlTraceOff); err != nil {
			return err
		}
		r.traceFlag = false
	}
	if err := r.exec(ctx, "drop event session", r.spec.DropDDL()); err != nil {
		return err
	}
	r.created = false
	return nil
}

// logDirectory returns the directory of the error log file, for Windows
// (\) and Linux (/) paths (docs/design/tracing.md §1.2).
func logDirectory(errorLog string) string {
	i := strings.LastIndexAny(errorLog, `\/`)
	if i <= 0 {
		return ""
	}
	return errorLog[:i]
}
