package tracer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SweepReport is what a sweep found.
type SweepReport struct {
	// Dropped are the sessions dropped: their owner was gone, or (for
	// sessions that name no owner, or when the login cannot see other
	// sessions) they were older than the grace period.
	Dropped []string
	// Kept are this package's sessions left alone: their owner is alive, or
	// they are younger than the grace period.
	Kept []string
	// ByAgeOnly: the login cannot see other sessions (it lacks VIEW SERVER
	// STATE), so owners could not be checked and only age counted.
	ByAgeOnly bool
	// Ignored are sessions whose names start like this package's but that
	// it could not have written (IsGeneratedSessionName): left alone, never
	// put into SQL, and logged, since someone made a look-alike.
	Ignored []string
}

// SweepOrphans drops the trace sessions left behind by tracers that are
// gone, from a fresh connection, and returns how many it dropped. A session
// whose name records its owner (every session a trace creates) is dropped
// as soon as the owner's connection is gone, never while it is alive;
// grace applies only to sessions that name no owner, or to all when the
// login cannot see other sessions. It never touches a session this package
// did not name, the exporter's queryreplay_exporter_* among them. Call it at
// startup (the datasource and the exporter do); Trace sweeps before each
// trace.
func (t *Tracer) SweepOrphans(ctx context.Context, grace time.Duration) (int, error) {
	rep, err := t.Sweep(ctx, grace)
	return len(rep.Dropped), err
}

// Sweep is SweepOrphans with the full report.
func (t *Tracer) Sweep(ctx context.Context, grace time.Duration) (SweepReport, error) {
	c, err := t.open.Open(ctx)
	if err != nil {
		return SweepReport{}, fmt.Errorf("sweep orphans: connect: %w", err)
	}
	defer discard(c)
	setNetLimits(c, controlIdle, time.Time{})
	var ed sql.NullInt64
	if err := queryRow(ctx, c, "sweep orphans: read the edition", "SELECT CAST(SERVERPROPERTY('EngineEdition') AS int)", &ed); err != nil {
		return SweepReport{}, err
	}
	return t.sweepReport(ctx, c, edition{id: int(ed.Int64)}.scope(), grace)
}

// sweep is Sweep on an open connection (the trace's control connection).
func (t *Tracer) sweep(ctx context.Context, c Conn, scope Scope, grace time.Duration) (int, error) {
	rep, err := t.sweepReport(ctx, c, scope, grace)
	return len(rep.Dropped), err
}

func (t *Tracer) sweepReport(ctx context.Context, c Conn, scope Scope, grace time.Duration) (SweepReport, error) {
	var rep SweepReport
	names, ignored, err := listTraceSessions(ctx, c, scope)
	if err != nil {
		return rep, err
	}
	rep.Ignored = ignored
	for _, name := range ignored {
		t.log.Warn("left alone an event session that imitates QueryReplay's names", "session", fmt.Sprintf("%.160q", name))
	}
	if len(names) == 0 {
		return rep, nil
	}
	live, canSee, err := liveSessions(ctx, c, scope)
	if err != nil {
		return rep, err
	}
	rep.ByAgeOnly = !canSee
	now := time.Now()
	var errs []error
	for _, name := range names {
		created, ok := SessionCreated(name)
		if !ok { // listTraceSessions lets no other name through
			continue
		}
		spid, login, owned := SessionOwnerOf(name)
		var drop bool
		if owned && canSee {
			drop = !live[ownerKey(spid, login)]
		} else {
			drop = now.Sub(created) >= grace
		}
		if !drop {
			rep.Kept = append(rep.Kept, name)
			continue
		}
		if _, err := c.ExecContext(ctx, dropSessionSQL(name, scope)); err != nil {
			errs = append(errs, fmt.Errorf("drop %s: %w", name, err))
			continue
		}
		rep.Dropped = append(rep.Dropped, name)
		t.log.Info("dropped an orphaned trace session", "session", name, "owner_gone", owned && canSee)
	}
	return rep, errors.Join(errs...)
}

// listTraceSessions lists the sessions this package named, and apart from
// them the names that start like them but do not follow the generated
// grammar exactly
// (sys.server_event_sessions,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-server-event-sessions-transact-sql;
// sys.database_event_sessions on Azure SQL Database).
func listTraceSessions(ctx context.Context, c Conn, scope Scope) (names, ignored []string, err error) {
	view := "sys.server_event_sessions"
	if scope == ScopeDatabase {
		view = "sys.database_event_sessions"
	}
	rows, err := c.QueryContext(ctx, "SELECT name FROM "+view+" WHERE name LIKE N'queryreplay[_]%'")
	if err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, nil, fmt.Errorf("list sessions: %w", err)
		}
		switch {
		case IsGeneratedSessionName(name):
			names = append(names, name)
		case strings.HasPrefix(name, SessionPrefix) && !strings.HasPrefix(name, exporterSessionPrefix):
			ignored = append(ignored, name) // a look-alike: never acted on
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	return names, ignored, nil
}

func ownerKey(spid int, login string) string { return fmt.Sprintf("%d_%s", spid, login) }

// liveSessions lists the sessions connected now, by id and login time. A
// login without VIEW SERVER STATE (VIEW DATABASE STATE on Azure SQL
// Database; VIEW SERVER PERFORMANCE STATE on SQL Server 2022) sees only its
// own session in sys.dm_exec_sessions, so canSee is false and no owner may
// be judged gone.
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql#permissions
// https://learn.microsoft.com/en-us/sql/t-sql/functions/has-perms-by-name-transact-sql
func liveSessions(ctx context.Context, c Conn, scope Scope) (map[string]bool, bool, error) {
	q := "SELECT HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE'), HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER PERFORMANCE STATE')"
	if scope == ScopeDatabase {
		q = "SELECT HAS_PERMS_BY_NAME(DB_NAME(), N'DATABASE', N'VIEW DATABASE STATE'), HAS_PERMS_BY_NAME(DB_NAME(), N'DATABASE', N'VIEW DATABASE PERFORMANCE STATE')"
	}
	var state, perf sql.NullInt64
	if err := queryRow(ctx, c, "sweep: check VIEW SERVER STATE", q, &state, &perf); err != nil {
		return nil, false, err
	}
	if state.Int64 != 1 && perf.Int64 != 1 {
		return nil, false, nil
	}
	rows, err := c.QueryContext(ctx, "SELECT session_id, login_time FROM sys.dm_exec_sessions")
	if err != nil {
		return nil, false, fmt.Errorf("sweep: list sessions: %w", err)
	}
	defer rows.Close()
	live := map[string]bool{}
	for rows.Next() {
		var id sql.NullInt64
		var login sql.NullTime
		if err := rows.Scan(&id, &login); err != nil {
			return nil, false, fmt.Errorf("sweep: list sessions: %w", err)
		}
		if login.Valid {
			live[ownerKey(int(id.Int64), loginKey(login.Time))] = true
		}
	}
	return live, true, rows.Err()
}
