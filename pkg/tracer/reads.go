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
	view, sessions := "sys.dm_xe_database_session_targets", "sys.dm_xe_database_sessions"
	if r.spec.Scope == ScopeServer {
		view, sessions = "sys.dm_xe_session_targets", "sys.dm_xe_sessions"
	}
	q := r.spec.Marker() + "SELECT CAST(t.target_data AS nvarchar(max)) FROM " + view + " AS t JOIN " + sessions +
		" AS s ON s.address = t.event_session_address WHERE s.name = " + tsql.QuoteString(r.spec.Name) + " AND t.target_name = N'ring_buffer'"
	var data sql.NullString
	if err := r.queryRow(ctx, "read ring buffer", q, &data); err != nil {
		return "", err
	}
	return data.String, nil
}

var (
	lsnPattern   = regexp.MustCompile(`^[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{4}$`)
	xactIDFormat = regexp.MustCompile(`^[0-9A-Fa-f]{4}:[0-9A-Fa-f]{8}$`)
)

// readLog reads the log records of QueryReplay's transaction and of no
// other session: fn_dblog (undocumented; docs/design/tracing.md §13) returns the
// whole active log, so the records are filtered to the [Transaction ID] of
// the LOP_BEGIN_XACT named after this trace (the name is unique), written
// after startLSN (LSNs compare as fixed-width hex strings). It runs on the
// control connection, before the rollback, so the batch's SET ROWCOUNT or
// TEXTSIZE cannot cut it.
func (r *run) readLog(ctx context.Context, startLSN string) ([]bundle.LogRecord, error) {
	after := ""
	if startLSN != "" {
		if !lsnPattern.MatchString(startLSN) {
			return nil, fmt.Errorf("read log: unexpected LSN format %q", startLSN)
		}
		after = " AND [Current LSN] > N'" + startLSN + "'"
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
	q = m + "SELECT [Current LSN], [Operation], [Context], [Transaction ID], [AllocUnitId], [Page ID], [Slot ID] FROM fn_dblog(NULL, NULL) WHERE [Transaction ID] = N'" +
		xact.String + "'" + after
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
