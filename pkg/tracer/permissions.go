package tracer

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// Permission pre-check, so that a trace the login cannot run is refused with
// a message naming what to grant, before any session exists.
//
//   - Event sessions on SQL Server: ALTER ANY EVENT SESSION
//     (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql#permissions);
//     SQL Server 2022 splits it into granular permissions, of which a trace
//     needs CREATE ANY EVENT SESSION, ALTER ANY EVENT SESSION ENABLE and
//     DISABLE, and DROP ANY EVENT SESSION
//     (https://learn.microsoft.com/en-us/sql/relational-databases/security/permissions-database-engine;
//     the exact granular names are unverified against a 2022 server,
//     docs/design/exporter.md §9.3). CONTROL SERVER implies all of them.
//   - Reading session DMVs and the event file: VIEW SERVER STATE, or VIEW
//     SERVER PERFORMANCE STATE on SQL Server 2022
//     (https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql#permissions).
//   - Azure SQL Database: ALTER ANY DATABASE EVENT SESSION (or CONTROL), or
//     the granular CREATE ANY DATABASE EVENT SESSION, ALTER ANY DATABASE
//     EVENT SESSION ENABLE and DISABLE, and DROP ANY DATABASE EVENT SESSION
//     (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql#permissions,
//     https://learn.microsoft.com/en-us/sql/relational-databases/security/permissions-database-engine);
//     and VIEW DATABASE STATE (or VIEW DATABASE PERFORMANCE STATE).
//   - KILL of a traced session that outlives its timeout: ALTER ANY
//     CONNECTION (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/kill-transact-sql#permissions);
//     without it the trace warns, and on a timeout closes the connection
//     instead.
//   - DBCC DROPCLEANBUFFERS, DBCC TRACEON and fn_dblog: sysadmin (without
//     it a modification is traced without its log records, with a warning)
//     (https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-dropcleanbuffers-transact-sql#permissions,
//     https://learn.microsoft.com/en-us/sql/t-sql/database-console-commands/dbcc-traceon-transact-sql#permissions;
//     fn_dblog is undocumented, docs/design/tracing.md §15).

// permissionSet is a login's effective permissions.
type permissionSet map[string]bool

func (p permissionSet) has(names ...string) bool {
	for _, n := range names {
		if !p[n] {
			return false
		}
	}
	return true
}

// missingPermissions returns what a trace lacks, in words, given the
// effective server or database permissions and sysadmin membership.
func missingPermissions(scope Scope, perms permissionSet, sysadmin, needSysadmin bool, why []string) []string {
	var missing []string
	if scope == ScopeServer {
		if !sysadmin && !perms.has("CONTROL SERVER") {
			if !perms.has("ALTER ANY EVENT SESSION") &&
				!perms.has("CREATE ANY EVENT SESSION", "ALTER ANY EVENT SESSION ENABLE", "ALTER ANY EVENT SESSION DISABLE", "DROP ANY EVENT SESSION") {
				missing = append(missing, "ALTER ANY EVENT SESSION (on SQL Server 2022+: CREATE ANY EVENT SESSION, ALTER ANY EVENT SESSION ENABLE, ALTER ANY EVENT SESSION DISABLE and DROP ANY EVENT SESSION) to create, start, stop and drop the trace session")
			}
			if !perms.has("VIEW SERVER STATE") && !perms.has("VIEW SERVER PERFORMANCE STATE") {
				missing = append(missing, "VIEW SERVER STATE (on SQL Server 2022+: VIEW SERVER PERFORMANCE STATE) to read the session's events")
			}
		}
	} else if !perms.has("CONTROL") {
		if !perms.has("ALTER ANY DATABASE EVENT SESSION") &&
			!perms.has("CREATE ANY DATABASE EVENT SESSION", "ALTER ANY DATABASE EVENT SESSION ENABLE", "ALTER ANY DATABASE EVENT SESSION DISABLE", "DROP ANY DATABASE EVENT SESSION") {
			missing = append(missing, "ALTER ANY DATABASE EVENT SESSION (or CONTROL on the database, or CREATE ANY DATABASE EVENT SESSION, ALTER ANY DATABASE EVENT SESSION ENABLE and DISABLE, and DROP ANY DATABASE EVENT SESSION) to create, start, stop and drop the database-scoped trace session")
		}
		if !perms.has("VIEW DATABASE STATE") && !perms.has("VIEW DATABASE PERFORMANCE STATE") {
			missing = append(missing, "VIEW DATABASE STATE (or VIEW DATABASE PERFORMANCE STATE) to read the session's ring buffer")
		}
	}
	if needSysadmin && !sysadmin {
		missing = append(missing, "membership of the sysadmin role, for "+strings.Join(why, ", "))
	}
	return missing
}

// checkPermissions refuses the trace when the login lacks a permission.
func (r *run) checkPermissions(ctx context.Context, scope Scope) error {
	q := sqlServerPermissions
	if scope == ScopeDatabase {
		q = sqlDatabasePermissions
	}
	rows, err := r.conn.QueryContext(ctx, q)
	if err != nil {
		r.noteConnErr(err)
		return fmt.Errorf("check permissions: %w", err)
	}
	perms := permissionSet{}
	for rows.Next() {
		var p sql.NullString
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return fmt.Errorf("check permissions: %w", err)
		}
		perms[strings.ToUpper(strings.TrimSpace(p.String))] = true
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("check permissions: %w", err)
	}
	if err := rows.Err(); err != nil {
		r.noteConnErr(err)
		return fmt.Errorf("check permissions: %w", err)
	}
	var why []string
	if r.o.ClearBufferPool {
		why = append(why, "DBCC DROPCLEANBUFFERS")
	}
	if r.o.DisableReadAhead {
		why = append(why, "DBCC TRACEON(652)")
	}
	if r.class.Modification && !r.ed.fnDblog() {
		r.warn("the log records of a modification are not read on this edition (fn_dblog is undocumented there); the transaction_log events remain")
	}
	sysadmin := false
	if scope == ScopeServer {
		var v sql.NullInt64
		if err := r.queryRow(ctx, "check sysadmin", sqlIsSysadmin, &v); err != nil {
			return err
		}
		sysadmin = v.Int64 == 1
	}
	// fn_dblog needs sysadmin: a least-privilege login traces the
	// modification without the log records (what the doctor reports),
	// rather than being refused
	r.readsLog = r.class.Modification && r.ed.fnDblog() && sysadmin
	if r.class.Modification && r.ed.fnDblog() && !sysadmin {
		r.warn("the log records of a modification are not read: fn_dblog needs membership of the sysadmin role; the transaction_log events remain")
	}
	if missing := missingPermissions(scope, perms, sysadmin, len(why) > 0 && scope == ScopeServer, why); len(missing) > 0 {
		return &tsql.RefusedError{Reason: "the login lacks: " + strings.Join(missing, "; ")}
	}
	if scope == ScopeServer && !sysadmin && !perms.has("CONTROL SERVER") && !perms.has("ALTER ANY CONNECTION") {
		r.warn("the login lacks ALTER ANY CONNECTION: a batch that outlives its timeout cannot be KILLed; its connection is closed instead")
	}
	return nil
}
