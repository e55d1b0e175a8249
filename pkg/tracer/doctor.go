package tracer

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// Diagnose is `queryreplay doctor`: it reads what a server offers a trace
// and says, feature by feature, what will work, what will be left out and
// why — the report a user pastes into a bug report. It only reads:
// SERVERPROPERTY, catalog views, sys.fn_my_permissions and sys.dm_xe_*;
// it creates no session, runs no DBCC and no fn_dblog, and sends no text
// of the user's.

// Check states: a feature works, works with less, or does not work.
const (
	CheckOK          = "ok"
	CheckDegraded    = "degraded"
	CheckUnavailable = "unavailable"
)

// Check is one feature of a trace on this server.
type Check struct {
	Feature string `json:"feature"`
	Status  string `json:"status"`
	// Detail says what was found and, when not ok, why and what to do.
	Detail string `json:"detail"`
}

// Diagnosis is the doctor's report: the server, then one check per feature.
type Diagnosis struct {
	Version            string  `json:"version"`
	Major              int     `json:"major"`
	Edition            string  `json:"edition"`
	EngineEdition      int     `json:"engineEdition"`
	Database           string  `json:"database"`
	CompatibilityLevel int     `json:"compatibilityLevel"`
	Sysadmin           bool    `json:"sysadmin"`
	Checks             []Check `json:"checks"`
}

// Worst is the worst status among the checks.
func (d *Diagnosis) Worst() string {
	worst := CheckOK
	for _, c := range d.Checks {
		switch {
		case c.Status == CheckUnavailable:
			return CheckUnavailable
		case c.Status == CheckDegraded:
			worst = CheckDegraded
		}
	}
	return worst
}

// The doctor's statements. SERVERPROPERTY and DATABASEPROPERTYEX:
// https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql
// sys.databases (compatibility_level):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-databases-transact-sql
// sys.dm_xe_objects and sys.dm_xe_packages (the events, actions and
// targets this server has):
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-objects-transact-sql
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-packages-transact-sql
const (
	sqlDoctorIdentity = "SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), CAST(SERVERPROPERTY('Edition') AS nvarchar(128)), " +
		"CAST(SERVERPROPERTY('EngineEdition') AS int), CAST(SERVERPROPERTY('ErrorLogFileName') AS nvarchar(4000)), DB_NAME()"
	sqlDoctorCompat = "SELECT compatibility_level FROM sys.databases WHERE database_id = DB_ID()"
	sqlDoctorXE     = "SELECT p.name, o.name, o.object_type FROM sys.dm_xe_objects AS o " +
		"JOIN sys.dm_xe_packages AS p ON o.package_guid = p.guid WHERE o.object_type IN (N'event', N'action', N'target')"
)

// maxPredicateChars is the documented limit on an event predicate
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql,
// "Predicates are limited to 3,000 characters").
const maxPredicateChars = 3000

// Diagnose connects once through open and reads what the server offers.
// A failure to connect or to read the server's identity is an error; every
// later read that fails becomes a check saying so.
func Diagnose(ctx context.Context, open Opener) (*Diagnosis, error) {
	conn, err := open.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("doctor: connect: %w", err)
	}
	defer conn.Close()
	d := &Diagnosis{}
	var version, ed, errLog, db sql.NullString
	var engine sql.NullInt64
	if err := queryRow(ctx, conn, "doctor: read the server's identity", sqlDoctorIdentity, &version, &ed, &engine, &errLog, &db); err != nil {
		return nil, err
	}
	d.Version, d.Edition, d.EngineEdition, d.Database = version.String, ed.String, int(engine.Int64), db.String
	if i := strings.IndexByte(d.Version, '.'); i > 0 {
		d.Major, _ = strconv.Atoi(d.Version[:i])
	}
	var compat sql.NullInt64
	if err := queryRow(ctx, conn, "compatibility level", sqlDoctorCompat, &compat); err == nil {
		d.CompatibilityLevel = int(compat.Int64)
	}
	e := edition{d.EngineEdition}
	scope := e.scope()
	d.add(e.check(Options{}) == nil, "server", d.serverDetail(), "")
	perms, sysadmin, permErr := doctorPermissions(ctx, conn, scope)
	d.Sysadmin = sysadmin
	d.checkSessions(scope, perms, sysadmin, permErr)
	xe, xeErr := doctorXEObjects(ctx, conn)
	d.checkEvents(xe, xeErr, e)
	d.checkCallStacks(xe, xeErr)
	d.checkReadBack(e, errLog)
	d.checkPredicate(scope)
	d.checkServerFeatures(e, perms, sysadmin, permErr)
	d.Checks = append(d.Checks, Check{Feature: "profiling", Status: CheckOK, Detail: "while a trace runs, its " +
		"query_post_execution_showplan event turns on the standard query profiling infrastructure for every session " +
		"on the server, not only the traced one (docs/security.md, \"What a trace does to the server\")"})
	return d, nil
}

func (d *Diagnosis) serverDetail() string {
	s := fmt.Sprintf("SQL Server %s, %s (EngineEdition %d), database %s", d.Version, d.Edition, d.EngineEdition, d.Database)
	if d.CompatibilityLevel > 0 {
		s += fmt.Sprintf(" at compatibility level %d", d.CompatibilityLevel)
	}
	if err := (edition{d.EngineEdition}).check(Options{}); err != nil {
		s += ": " + err.Error()
	}
	return s
}

// add appends a check that is ok when ok holds, else unavailable with why.
func (d *Diagnosis) add(ok bool, feature, detail, why string) {
	c := Check{Feature: feature, Status: CheckOK, Detail: detail}
	if !ok {
		c.Status = CheckUnavailable
		if why != "" {
			c.Detail = why
		}
	}
	d.Checks = append(d.Checks, c)
}

func doctorPermissions(ctx context.Context, conn Conn, scope Scope) (permissionSet, bool, error) {
	q := sqlServerPermissions
	if scope == ScopeDatabase {
		q = sqlDatabasePermissions
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, false, err
	}
	perms := permissionSet{}
	for rows.Next() {
		var p sql.NullString
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, false, err
		}
		perms[strings.ToUpper(strings.TrimSpace(p.String))] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if scope == ScopeDatabase {
		return perms, false, nil
	}
	var v sql.NullInt64
	if err := queryRow(ctx, conn, "sysadmin", sqlIsSysadmin, &v); err != nil {
		return nil, false, err
	}
	return perms, v.Int64 == 1, nil
}

func (d *Diagnosis) checkSessions(scope Scope, perms permissionSet, sysadmin bool, permErr error) {
	if permErr != nil {
		d.add(false, "trace sessions", "", "could not read the login's permissions: "+permErr.Error())
		return
	}
	missing := missingPermissions(scope, perms, sysadmin, false, nil)
	where := "server-scoped (CREATE EVENT SESSION … ON SERVER)"
	if scope == ScopeDatabase {
		where = "database-scoped (CREATE EVENT SESSION … ON DATABASE, Azure SQL Database)"
	}
	d.add(len(missing) == 0, "trace sessions", "the login may create, start, read and drop a "+where+" session",
		"the login lacks: "+strings.Join(missing, "; "))
}

// xeObjects is what sys.dm_xe_objects lists, as package.name per type.
type xeObjects map[string]map[string]bool

func doctorXEObjects(ctx context.Context, conn Conn) (xeObjects, error) {
	rows, err := conn.QueryContext(ctx, sqlDoctorXE)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := xeObjects{}
	for rows.Next() {
		var pkg, name, typ sql.NullString
		if err := rows.Scan(&pkg, &name, &typ); err != nil {
			return nil, err
		}
		if out[typ.String] == nil {
			out[typ.String] = map[string]bool{}
		}
		out[typ.String][pkg.String+"."+name.String] = true
	}
	return out, rows.Err()
}

// coreEvents are the events without which a trace has no timeline.
var coreEvents = []string{"sqlserver.sql_batch_starting", "sqlserver.sql_batch_completed", "sqlserver.query_post_execution_showplan"}

func (d *Diagnosis) checkEvents(xe xeObjects, xeErr error, e edition) {
	if xeErr != nil {
		d.add(false, "events", "", "could not read sys.dm_xe_objects: "+xeErr.Error())
		return
	}
	spec := SessionSpec{Events: bundle.AllEventGroups(), Modification: true}
	var missingCore, missingOther []string
	for _, name := range spec.EventNames() {
		if !xe["event"][name] {
			if slices.Contains(coreEvents, name) {
				missingCore = append(missingCore, name)
			} else {
				missingOther = append(missingOther, name)
			}
		}
	}
	actions := append(slices.Clone(baseActions), "package0.callstack")
	if d.Major >= 16 {
		actions = append(actions, "package0.callstack_rva")
	}
	var missingActions []string
	for _, a := range actions {
		if !xe["action"][a] {
			missingActions = append(missingActions, a)
		}
	}
	c := Check{Feature: "events", Status: CheckOK, Detail: fmt.Sprintf("all %d events and %d actions a trace uses are on this server", len(spec.EventNames()), len(actions))}
	switch {
	case len(missingCore) > 0 || len(missingActions) > 0:
		c.Status = CheckUnavailable
		c.Detail = "the server lacks " + strings.Join(append(missingCore, missingActions...), ", ") + ": the session cannot be created"
	case len(missingOther) > 0:
		c.Status = CheckDegraded
		c.Detail = "the server lacks " + strings.Join(missingOther, ", ") + ": traces run without them (leave their event groups out)"
	}
	if e.scope() == ScopeDatabase && c.Status == CheckOK {
		c.Status = CheckDegraded
		c.Detail += "; Azure SQL Database refuses a database-scoped session whole when one event or action is not available " +
			"to database-scoped sessions (Msg 25743, 25744; the lock events are not), which sys.dm_xe_objects does not tell: " +
			"a trace leaves out each one the server refuses and names it in the bundle's warnings"
	}
	d.Checks = append(d.Checks, c)
}

// checkCallStacks says which call-stack action --call-stacks will get:
// package0.callstack_rva (SQL Server 2022+: frames with their module's PDB
// identity) or only package0.callstack (addresses resolved through
// sys.dm_os_loaded_modules).
func (d *Diagnosis) checkCallStacks(xe xeObjects, xeErr error) {
	if xeErr != nil {
		return // the events check already says sys.dm_xe_objects could not be read
	}
	c := Check{Feature: "call stacks", Status: CheckOK, Detail: "package0.callstack_rva is on this server: call stack frames carry their module's PDB identity"}
	if !xe["action"]["package0.callstack_rva"] {
		c.Status = CheckDegraded
		c.Detail = "package0.callstack_rva (SQL Server 2022 and later) is not on this server: --call-stacks takes package0.callstack " +
			"addresses and resolves them through sys.dm_os_loaded_modules"
	}
	d.Checks = append(d.Checks, c)
}

func (d *Diagnosis) checkReadBack(e edition, errLog sql.NullString) {
	switch {
	case e.ringBuffer():
		d.Checks = append(d.Checks, Check{Feature: "read-back", Status: CheckDegraded, Detail: "events are read from a " +
			"ring_buffer target (this edition's event_file writes only to Azure Blob Storage): its target_data is capped near " +
			"4 MB and leaves out the newest events, so a long trace can lose its plan"})
	case errLog.String == "" || logDirectory(errLog.String) == "":
		d.Checks = append(d.Checks, Check{Feature: "read-back", Status: CheckDegraded, Detail: "SERVERPROPERTY('ErrorLogFileName') " +
			"is empty for this login, so the event file's directory cannot be taken from the error log: traces read a ring_buffer " +
			"target instead (capped near 4 MB, so a long trace can lose its newest events); pass a trace directory " +
			"(queryreplay trace --trace-dir) to use an event file"})
	default:
		d.Checks = append(d.Checks, Check{Feature: "read-back", Status: CheckOK, Detail: "event files go to " +
			logDirectory(errLog.String) + " (the error log's directory) unless a trace directory is given"})
	}
}

// checkPredicate measures the longest predicate a trace session carries.
func (d *Diagnosis) checkPredicate(scope Scope) {
	spec := SessionSpec{Name: SessionPrefix + strings.Repeat("f", 32) + "_2147483647_99991231235959999", SPID: 32767, Scope: scope,
		Events: bundle.AllEventGroups(), Modification: true, MaxEvents: 1, MaxFileSizeMB: 2, Directory: `C:\`}
	longest := 0
	for _, line := range strings.Split(spec.CreateDDL(), "\n") {
		if i := strings.Index(line, " WHERE "); i >= 0 {
			longest = max(longest, len(line)-i-len(" WHERE ")-1)
		}
	}
	d.add(longest <= maxPredicateChars, "predicate", fmt.Sprintf("the longest event predicate is %d characters (limit %d)", longest, maxPredicateChars),
		fmt.Sprintf("the event predicate is %d characters, over the documented %d", longest, maxPredicateChars))
}

func (d *Diagnosis) checkServerFeatures(e edition, perms permissionSet, sysadmin bool, permErr error) {
	pages := Check{Feature: "page names and headers", Status: CheckOK, Detail: "through sys.dm_db_page_info, one page per lookup"}
	if !(d.Major >= 15 || e.id == editionAzureSQLDatabase || e.id == editionManagedInstance) {
		pages = Check{Feature: "page names and headers", Status: CheckDegraded, Detail: "sys.dm_db_page_info needs SQL Server 2019; " +
			"pages stay unnamed unless --page-allocations-dmv allows the undocumented sys.dm_db_database_page_allocations, which walks the whole database"}
	}
	d.Checks = append(d.Checks, pages)
	if permErr != nil {
		return
	}
	switch {
	case e.id == editionAzureSQLDatabase:
		d.Checks = append(d.Checks, Check{Feature: "cold cache and read-ahead", Status: CheckUnavailable,
			Detail: "Azure SQL Database has no DBCC DROPCLEANBUFFERS or trace flags: traces run on a warm cache"},
			Check{Feature: "log records of a modification", Status: CheckDegraded,
				Detail: "fn_dblog is not used on Azure SQL Database; the transaction_log events remain"})
	case !sysadmin:
		d.Checks = append(d.Checks, Check{Feature: "cold cache and read-ahead", Status: CheckDegraded,
			Detail: "DBCC DROPCLEANBUFFERS and DBCC TRACEON(652) need sysadmin: traces run on a warm cache with read-ahead"},
			Check{Feature: "log records of a modification", Status: CheckDegraded,
				Detail: "fn_dblog needs sysadmin: a modification's trace keeps its transaction_log events only"})
	default:
		d.Checks = append(d.Checks, Check{Feature: "cold cache and read-ahead", Status: CheckOK, Detail: "allowed (sysadmin), when the policy allows it"},
			Check{Feature: "log records of a modification", Status: CheckOK, Detail: "read with fn_dblog (sysadmin)"})
	}
	if e.scope() == ScopeServer {
		d.add(sysadmin || perms.has("CONTROL SERVER") || perms.has("ALTER ANY CONNECTION"), "kill on timeout",
			"a batch that outlives its timeout is KILLed (ALTER ANY CONNECTION)",
			"the login lacks ALTER ANY CONNECTION: a batch that outlives its timeout has its connection closed instead of being KILLed")
		if c := &d.Checks[len(d.Checks)-1]; c.Status == CheckUnavailable {
			c.Status = CheckDegraded
		}
	}
}
