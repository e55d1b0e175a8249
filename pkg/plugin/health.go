package plugin

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/queryreplay/queryreplay/pkg/frames"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// Health is CheckHealth's report; GET resources/health returns it as JSON.
type Health struct {
	OK            bool          `json:"ok"`
	Message       string        `json:"message"`
	Target        string        `json:"target"`
	Version       string        `json:"version,omitempty"`
	Edition       string        `json:"edition,omitempty"`
	EngineEdition int           `json:"engineEdition,omitempty"`
	Persona       string        `json:"persona,omitempty"`
	Sysadmin      bool          `json:"sysadmin"`
	Permissions   []Requirement `json:"permissions,omitempty"`
	Missing       []string      `json:"missing,omitempty"`
	Warnings      []string      `json:"warnings,omitempty"`
	// Features is queryreplay doctor's report of this server: per feature
	// ok, degraded or unavailable, and why (tracer.Diagnose; it only reads).
	Features   []tracer.Check `json:"features,omitempty"`
	TraceStore string         `json:"traceStore,omitempty"`
	// TraceStoreError says why the trace store cannot be used (health fails).
	TraceStoreError string `json:"traceStoreError,omitempty"`
}

// Requirement is one permission a feature needs.
type Requirement struct {
	Permission string `json:"permission"`
	Why        string `json:"why"`
	Granted    bool   `json:"granted"`
	// Required: without it traces fail; otherwise a feature degrades.
	Required bool `json:"required"`
}

// Health queries. SERVERPROPERTY:
// https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql
// (EngineEdition 5 = Azure SQL Database, 8 = Managed Instance);
// IS_SRVROLEMEMBER:
// https://learn.microsoft.com/en-us/sql/t-sql/functions/is-srvrolemember-transact-sql;
// sys.fn_my_permissions:
// https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-my-permissions-transact-sql.
const (
	sqlHealthIdentity = "SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), CAST(SERVERPROPERTY('Edition') AS nvarchar(128)), " +
		"CAST(SERVERPROPERTY('EngineEdition') AS int), IS_SRVROLEMEMBER('sysadmin')"
	sqlHealthServerPerms   = "SELECT permission_name FROM sys.fn_my_permissions(NULL, 'SERVER')"
	sqlHealthDatabasePerms = "SELECT permission_name FROM sys.fn_my_permissions(NULL, 'DATABASE')"
)

// CheckHealth validates the settings, connects, reports the server's
// version, edition and persona, and checks every permission the enabled
// features need, naming what is missing and why.
func (d *Datasource) CheckHealth(ctx context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	h := d.health(ctx)
	details, _ := json.Marshal(h)
	status := backend.HealthStatusOk
	if !h.OK {
		status = backend.HealthStatusError
	}
	return &backend.CheckHealthResult{Status: status, Message: h.Message, JSONDetails: details}, nil
}

// storeCheckTimeout bounds the trace store's part of CheckHealth.
const storeCheckTimeout = 20 * time.Second

// health checks the server and then the trace store: a store that cannot
// list, write or delete fails the check too, with its own reason.
func (d *Datasource) health(ctx context.Context) Health {
	h := d.serverHealth(ctx)
	if d.store == nil {
		return h
	}
	h.TraceStore = d.store.String()
	sctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	defer cancel()
	if err := d.store.Check(sctx); err != nil {
		h.OK = false
		h.TraceStoreError = err.Error()
		h.Message += "; the trace store is not usable: " + err.Error()
	}
	return h
}

func (d *Datasource) serverHealth(ctx context.Context) Health {
	h := Health{Target: d.settings.Redacted()}
	if d.settingsErr != nil {
		h.Message = d.settingsErr.Error()
		return h
	}
	ctx, cancel := context.WithTimeout(ctx, d.settings.ConnectTimeout())
	defer cancel()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		h.Message = fmt.Sprintf("cannot connect to SQL Server at %s: %s", h.Target, describe(err))
		return h
	}
	defer conn.Close()
	var version, edition sql.NullString
	var engine, sysadmin sql.NullInt64
	if err := conn.QueryRowContext(ctx, sqlHealthIdentity).Scan(&version, &edition, &engine, &sysadmin); err != nil {
		h.Message = fmt.Sprintf("connected to %s, but reading the server's identity failed: %s", h.Target, describe(err))
		return h
	}
	h.Version, h.Edition, h.EngineEdition = version.String, edition.String, int(engine.Int64)
	h.Persona, h.Sysadmin = frames.Persona(h.EngineEdition), sysadmin.Int64 == 1
	q := sqlHealthServerPerms
	if h.EngineEdition == 5 {
		q = sqlHealthDatabasePerms
	}
	perms, err := permissionSet(ctx, conn, q)
	if err != nil {
		h.Message = fmt.Sprintf("connected to %s, but listing the login's permissions failed: %s", h.Target, describe(err))
		return h
	}
	h.Permissions = d.requirements(h, perms)
	for _, r := range h.Permissions {
		switch {
		case r.Granted:
		case r.Required:
			h.Missing = append(h.Missing, r.Permission+" — "+r.Why)
		default:
			h.Warnings = append(h.Warnings, r.Permission+" — "+r.Why)
		}
	}
	if h.EngineEdition == 5 && d.settings.AllowBufferPoolClear {
		h.Warnings = append(h.Warnings, "allowBufferPoolClear has no effect: Azure SQL Database has no DBCC DROPCLEANBUFFERS")
	}
	if diag, err := tracer.Diagnose(ctx, d.opener); err == nil {
		h.Features = diag.Checks
	} else {
		h.Warnings = append(h.Warnings, "the feature check (queryreplay doctor) failed: "+describe(err))
	}
	who := fmt.Sprintf("SQL Server %s (%s, %s) at %s", h.Version, h.Edition, h.Persona, h.Target)
	if len(h.Missing) > 0 {
		h.Message = fmt.Sprintf("connected to %s, but the login lacks: %s", who, strings.Join(h.Missing, "; "))
		return h
	}
	h.OK = true
	h.Message = "connected to " + who + "; every permission the enabled features need is granted"
	if len(h.Warnings) > 0 {
		h.Message += "; degraded: " + strings.Join(h.Warnings, "; ")
	}
	return h
}

func permissionSet(ctx context.Context, conn *sql.Conn, q string) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p sql.NullString
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out[strings.ToUpper(strings.TrimSpace(p.String))] = true
	}
	return out, rows.Err()
}

// requirements lists what the enabled features need (the permissions
// pages are cited in pkg/tracer/permissions.go):
//   - event sessions: ALTER ANY EVENT SESSION (SQL Server 2022 splits it
//     into CREATE/ALTER … ENABLE/DISABLE/DROP ANY EVENT SESSION), or ALTER ANY
//     DATABASE EVENT SESSION on Azure SQL Database;
//   - reading events: VIEW SERVER STATE, on SQL Server 2022 VIEW SERVER
//     PERFORMANCE STATE (VIEW DATABASE STATE on Azure SQL Database);
//   - binary read-back: ADMINISTER BULK OPERATIONS for OPENROWSET(BULK)
//     (https://learn.microsoft.com/en-us/sql/t-sql/functions/openrowset-bulk-transact-sql#permissions);
//   - DBCC DROPCLEANBUFFERS, DBCC TRACEON(652) and fn_dblog: sysadmin.
func (d *Datasource) requirements(h Health, perms map[string]bool) []Requirement {
	has := func(names ...string) bool {
		for _, n := range names {
			if !perms[n] {
				return false
			}
		}
		return true
	}
	major := 0
	if i := strings.IndexByte(h.Version, '.'); i > 0 {
		major, _ = strconv.Atoi(h.Version[:i])
	}
	var out []Requirement
	add := func(perm, why string, granted, required bool) {
		out = append(out, Requirement{Permission: perm, Why: why, Granted: granted, Required: required})
	}
	if h.EngineEdition == 5 {
		add("ALTER ANY DATABASE EVENT SESSION", "needed to create, start, stop and drop the trace's database-scoped event session",
			has("CONTROL") || has("ALTER ANY DATABASE EVENT SESSION"), true)
		add("VIEW DATABASE STATE", "needed to read the trace's ring buffer (sys.dm_xe_database_session_targets)",
			has("CONTROL") || has("VIEW DATABASE STATE") || has("VIEW DATABASE PERFORMANCE STATE"), true)
		return out
	}
	super := h.Sysadmin || has("CONTROL SERVER")
	session := "ALTER ANY EVENT SESSION"
	if major >= 16 {
		session = "CREATE ANY EVENT SESSION, ALTER ANY EVENT SESSION ENABLE, ALTER ANY EVENT SESSION DISABLE and DROP ANY EVENT SESSION (or ALTER ANY EVENT SESSION)"
	}
	add(session, "needed to create, start, stop and drop the trace's event session", super || has("ALTER ANY EVENT SESSION") ||
		has("CREATE ANY EVENT SESSION", "ALTER ANY EVENT SESSION ENABLE", "ALTER ANY EVENT SESSION DISABLE", "DROP ANY EVENT SESSION"), true)
	view, where := "VIEW SERVER STATE", "needed to read the event file (sys.fn_xe_file_target_read_file) and sys.dm_xe_sessions"
	if major >= 16 {
		view, where = "VIEW SERVER PERFORMANCE STATE", "needed to read the event file on SQL Server 2022 (sys.fn_xe_file_target_read_file)"
	}
	add(view, where, super || has("VIEW SERVER STATE") || has("VIEW SERVER PERFORMANCE STATE"), true)
	add("ADMINISTER BULK OPERATIONS", "lets the tracer fetch the binary .xel files with OPENROWSET(BULK); without it events are read back as XML, which is slower",
		h.Sysadmin || has("ADMINISTER BULK OPERATIONS"), false)
	if d.settings.AllowBufferPoolClear {
		add("sysadmin", "needed for DBCC DROPCLEANBUFFERS, because allowBufferPoolClear is on", h.Sysadmin, true)
	}
	if d.settings.AllowModifications {
		// the tracer traces a modification without them when the login is
		// not sysadmin (pkg/tracer/permissions.go)
		add("sysadmin", "lets the tracer read a modification's log records with fn_dblog (allowModifications is on); without it a modification's trace keeps its transaction_log events only", h.Sysadmin, false)
	}
	add("sysadmin", "needed for options.disableReadAhead (DBCC TRACEON(652)); other traces work without it", h.Sysadmin, false)
	return out
}

// describe shortens a driver error for people.
func describe(err error) string {
	if se, ok := sqlServerError(err); ok {
		return SQLServerErrorText(se)
	}
	return err.Error()
}
