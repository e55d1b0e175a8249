package tracer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// droppedEvents reads the session's dropped-event count before STOP (a
// stopped session leaves sys.dm_xe_sessions):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql
// A failure is not fatal: event_sequence gaps still reveal losses.
func (r *run) droppedEvents(ctx context.Context) int64 {
	var n sql.NullInt64
	q := r.spec.Marker() + "SELECT dropped_event_count FROM sys.dm_xe_sessions WHERE name = " + tsql.QuoteString(r.spec.Name)
	if err := r.queryRow(ctx, "read dropped events", q, &n); err != nil {
		r.t.log.Warn("could not read the dropped event count", "err", err)
	}
	return n.Int64
}

// readRingBuffer reads a ring_buffer's target_data: of a database-scoped
// session on Azure SQL Database
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-database-session-targets-azure-sql-database),
// of a server session on Managed Instance
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql).
func (r *run) readRingBuffer(ctx context.Context) (string, error) {
	var data sql.NullString
	if err := r.queryRow(ctx, "read ring buffer", r.ringBufferQuery(), &data); err != nil {
		return "", err
	}
	return data.String, nil
}

// ringBufferQuery reads the session's ring_buffer target_data (the
// database-scoped views for a database-scoped session).
func (r *run) ringBufferQuery() string {
	view, sessions := "sys.dm_xe_database_session_targets", "sys.dm_xe_database_sessions"
	if r.spec.Scope == ScopeServer {
		view, sessions = "sys.dm_xe_session_targets", "sys.dm_xe_sessions"
	}
	return r.spec.Marker() + "SELECT CAST(t.target_data AS nvarchar(max)) FROM " + view + " AS t JOIN " + sessions +
		" AS s ON s.address = t.event_session_address WHERE s.name = " + tsql.QuoteString(r.spec.Name) + " AND t.target_name = N'ring_buffer'"
}

var (
	lsnPattern   = regexp.MustCompile(`^[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{4}$`)
	xactIDFormat = regexp.MustCompile(`^[0-9A-Fa-f]{4}:[0-9A-Fa-f]{8}$`)
)

// maxLogRows bounds the one read of the log a modification's trace makes:
// its own transaction's records and whatever other sessions write in the
// same window. Past it the records are cut, with a warning.
const maxLogRows = 100000

// logEnd is where the log ends before QueryReplay's transaction begins:
// sys.dm_db_log_stats(DB_ID()).log_end_lsn (SQL Server 2016 SP2 and later,
// documented:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-db-log-stats-transact-sql).
// The page does not show log_end_lsn's format; QueryReplay expects
// fn_dblog's "vlf:block:slot" hexadecimal form, and when the DMV is missing
// (2016 before SP2) or answers another form, it falls back to the
// undocumented MAX([Current LSN]) over fn_dblog(NULL, NULL), which reads the
// whole active log but is known to give that form.
func (r *run) logEnd(ctx context.Context) (string, error) {
	m := r.spec.Marker()
	var lsn sql.NullString
	err := r.queryRow(ctx, "read log end", m+sqlLogStatsEnd, &lsn)
	if err == nil && lsnPattern.MatchString(lsn.String) {
		return lsn.String, nil
	}
	if r.connBad {
		return "", err
	}
	r.t.log.Info("sys.dm_db_log_stats gave no usable log end; reading it from fn_dblog", "err", err)
	if err := r.queryRow(ctx, "read log end", m+sqlLogEnd, &lsn); err != nil {
		return "", err
	}
	return lsn.String, nil
}

// readLog reads the log records of QueryReplay's transaction and of no
// other session, in ONE bounded read from where the log ended before the
// transaction began: fn_dblog(start, NULL) (undocumented;
// docs/design/tracing.md §13). Its start argument is nvarchar(25); public
// write-ups agree that "0x" followed by the hexadecimal parts as
// [Current LSN] shows them is accepted, while the same parts without 0x
// are read as decimal — a silent misread — so the 0x form is sent. Because
// that form is not documented, when the read fails, or finds no
// LOP_BEGIN_XACT of this trace's transaction (named after the trace, so
// unique), the records are read as before: filtered by transaction on the
// server from fn_dblog(NULL, NULL), the whole active log, still bounded.
// It runs on the control connection, before the rollback, so the batch's
// SET ROWCOUNT or TEXTSIZE cannot cut it.
func (r *run) readLog(ctx context.Context, startLSN string) ([]bundle.LogRecord, error) {
	if startLSN != "" && !lsnPattern.MatchString(startLSN) {
		return nil, fmt.Errorf("read log: unexpected LSN format %q", startLSN)
	}
	if startLSN != "" {
		recs, found, err := r.readLogFrom(ctx, startLSN)
		if err == nil && found {
			return recs, nil
		}
		if r.connBad {
			return nil, err
		}
		r.t.log.Info("reading the log from the start LSN gave nothing; reading the whole log", "err", err)
	}
	return r.readLogWhole(ctx, startLSN)
}

// readLogFrom is the one read from startLSN, filtered here: found says
// whether this trace's LOP_BEGIN_XACT was among the records.
func (r *run) readLogFrom(ctx context.Context, startLSN string) (recs []bundle.LogRecord, found bool, err error) {
	q := r.spec.Marker() + fmt.Sprintf("SELECT TOP (%d) [Current LSN], [Operation], [Context], [Transaction ID], [AllocUnitId], [Page ID], [Slot ID], [Transaction Name] FROM fn_dblog(%s, NULL)",
		maxLogRows+1, tsql.QuoteString("0x"+startLSN))
	rows, err := r.conn.QueryContext(ctx, q)
	if err != nil {
		r.noteConnErr(err)
		return nil, false, fmt.Errorf("read log: %w", err)
	}
	defer rows.Close()
	name, xact, n := r.spec.TransactionName(), "", 0
	for rows.Next() {
		if n++; n > maxLogRows {
			r.warn("the log records were cut at %d rows read from the transaction's start; the trace's last records are missing", maxLogRows)
			break
		}
		var lsn, op, cx, tid, page, tname sql.NullString
		var au, slot sql.NullInt64
		if err := rows.Scan(&lsn, &op, &cx, &tid, &au, &page, &slot, &tname); err != nil {
			return nil, false, fmt.Errorf("read log: %w", err)
		}
		if lsn.String <= startLSN {
			continue // the start itself belongs to what came before
		}
		if xact == "" && op.String == "LOP_BEGIN_XACT" && tname.String == name {
			xact = tid.String
		}
		if xact != "" && tid.String == xact {
			recs = append(recs, bundle.LogRecord{LSN: lsn.String, Operation: op.String, Context: cx.String, TransactionID: tid.String,
				AllocUnitID: au.Int64, PageID: page.String, SlotID: slot.Int64})
		}
	}
	if err := rows.Err(); err != nil {
		r.noteConnErr(err)
		return nil, false, fmt.Errorf("read log: %w", err)
	}
	return recs, xact != "", nil
}

// readLogWhole is the fallback: the transaction's id from its named
// LOP_BEGIN_XACT, then its records, each from the whole active log
// filtered on the server, at most maxLogRows.
func (r *run) readLogWhole(ctx context.Context, startLSN string) ([]bundle.LogRecord, error) {
	after := ""
	if startLSN != "" {
		after = " AND [Current LSN] > " + tsql.QuoteString(startLSN)
	}
	m := r.spec.Marker()
	q := m + "SELECT [Transaction ID] FROM fn_dblog(NULL, NULL) WHERE [Operation] = N'LOP_BEGIN_XACT' AND [Transaction Name] = " +
		tsql.QuoteString(r.spec.TransactionName()) + after
	var xact sql.NullString
	if err := r.queryRow(ctx, "read log", q, &xact); err != nil {
		if errors.Is(err, errNoRow) {
			return nil, nil // the transaction wrote nothing
		}
		return nil, err
	}
	if !xactIDFormat.MatchString(xact.String) {
		return nil, fmt.Errorf("read log: unexpected transaction id format %q", xact.String)
	}
	q = m + fmt.Sprintf("SELECT TOP (%d) [Current LSN], [Operation], [Context], [Transaction ID], [AllocUnitId], [Page ID], [Slot ID] FROM fn_dblog(NULL, NULL) WHERE [Transaction ID] = %s%s",
		maxLogRows, tsql.QuoteString(xact.String), after)
	rows, err := r.conn.QueryContext(ctx, q)
	if err != nil {
		r.noteConnErr(err)
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer rows.Close()
	var out []bundle.LogRecord
	for rows.Next() {
		var lsn, op, cx, tid, page sql.NullString
		var au, slot sql.NullInt64
		if err := rows.Scan(&lsn, &op, &cx, &tid, &au, &page, &slot); err != nil {
			return nil, fmt.Errorf("read log: %w", err)
		}
		out = append(out, bundle.LogRecord{LSN: lsn.String, Operation: op.String, Context: cx.String, TransactionID: tid.String,
			AllocUnitID: au.Int64, PageID: page.String, SlotID: slot.Int64})
	}
	if err := rows.Err(); err != nil {
		r.noteConnErr(err)
		return nil, fmt.Errorf("read log: %w", err)
	}
	return out, nil
}
