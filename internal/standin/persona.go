package standin

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// A Persona is the SQL Server product the stand-in pretends to be: what
// @@VERSION and SERVERPROPERTY answer, the version in PRELOGIN and LOGINACK,
// which event session DDL forms, actions and targets exist, and which
// permissions fn_my_permissions lists. Everything else (the demo database,
// the events emitted, the wait_types map keys from a real 2017 capture) is
// the same for all personas. Sources, per difference:
//
//   - versions and EngineEdition (2 Standard, 3 Enterprise/Developer,
//     5 SQL Database, 8 Managed Instance):
//     https://learn.microsoft.com/en-us/sql/t-sql/functions/serverproperty-transact-sql
//     and the build lists under
//     https://learn.microsoft.com/en-us/troubleshoot/sql/releases/download-and-install-latest-updates
//   - ON SERVER / ON DATABASE: "ON DATABASE" is the Azure SQL Database form;
//     SQL Server and Managed Instance have server-scoped sessions only
//     (https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql,
//     https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-db-diff-from-svr)
//   - package0.callstack_rva: SQL Server 2022 (CTP 2.0) and later. No
//     learn.microsoft.com page lists it; the source is Microsoft's
//     SQLCallStackResolver (https://github.com/microsoft/SQLCallStackResolver,
//     README and tests) as recorded in docs/design/symbols-and-xel.md §4
//   - event_file targets: local files on SQL Server; Azure Blob Storage URLs
//     only on Managed Instance and SQL Database
//     (https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-code-event-file)
//   - the granular event-session permissions (CREATE ANY EVENT SESSION,
//     ALTER ANY EVENT SESSION ENABLE/DISABLE, DROP ANY EVENT SESSION, ...):
//     SQL Server 2022 and later and Azure
//     (https://learn.microsoft.com/en-us/sql/t-sql/statements/drop-event-session-transact-sql#permissions (and the Permissions sections of the CREATE and ALTER EVENT SESSION pages))
type Persona struct {
	// Name is the --persona value, e.g. "sql2022".
	Name string
	// Product describes it for humans, e.g. "SQL Server 2022 on Linux".
	Product string
	// ProductVersion is SERVERPROPERTY('ProductVersion'), e.g. "16.0.1000.6".
	ProductVersion string
	// Version is sent in PRELOGIN and LOGINACK.
	Version tds.Version
	// VersionString is @@VERSION.
	VersionString string
	// ProductLevel and UpdateLevel are SERVERPROPERTY('ProductLevel') and
	// ('ProductUpdateLevel'); Edition is ('Edition').
	ProductLevel, UpdateLevel, Edition string
	// EngineEdition is SERVERPROPERTY('EngineEdition').
	EngineEdition int64
	// LogDir is the instance log directory (event files with relative names
	// go there); ErrorLog is SERVERPROPERTY('ErrorLogFileName'); DataDir is
	// InstanceDefaultDataPath.
	LogDir, ErrorLog, DataDir string
	// ServerSessions and DatabaseSessions say which of CREATE EVENT SESSION
	// ... ON SERVER / ON DATABASE exist.
	ServerSessions, DatabaseSessions bool
	// CallstackRVA: package0.callstack_rva exists.
	CallstackRVA bool
	// LocalEventFiles: event_file targets may name a local file; false
	// means only https:// (Azure Blob Storage) URLs.
	LocalEventFiles bool
	// GranularXEPermissions: the SQL Server 2022 event-session permissions
	// exist and fn_my_permissions lists them for a sysadmin.
	GranularXEPermissions bool
	// CompatLevel is the default database compatibility level of the
	// product, what sys.databases reports for its databases (the table of
	// products in
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/alter-database-transact-sql-compatibility-level).
	CompatLevel int64
}

const linuxLogDir, linuxErrorLog, linuxDataDir = "/var/opt/mssql/log/", "/var/opt/mssql/log/errorlog", "/var/opt/mssql/data/"

// DefaultPersona is SQL Server 2017 on Linux: the build whose wait_types
// map keys the stand-in's events use (from a real capture).
const DefaultPersona = "sql2017"

var personas = []*Persona{
	{
		Name: "sql2016", CompatLevel: 130, Product: "SQL Server 2016 SP3 on Windows", ProductVersion: "13.0.6300.2", Version: tds.Version{Major: 13, Build: 6300},
		VersionString: "Microsoft SQL Server 2016 (SP3) (KB5003279) - 13.0.6300.2 (X64) \n\tAug  7 2021 01:20:37 \n\tCopyright (c) Microsoft Corporation\n\tDeveloper Edition (64-bit) on Windows Server 2019 Datacenter 10.0 <X64> (Build 17763: ) (Hypervisor)\n",
		ProductLevel:  "SP3", Edition: "Developer Edition (64-bit)", EngineEdition: 3,
		LogDir:         `C:\Program Files\Microsoft SQL Server\MSSQL13.MSSQLSERVER\MSSQL\Log\`,
		ErrorLog:       `C:\Program Files\Microsoft SQL Server\MSSQL13.MSSQLSERVER\MSSQL\Log\ERRORLOG`,
		DataDir:        `C:\Program Files\Microsoft SQL Server\MSSQL13.MSSQLSERVER\MSSQL\DATA\`,
		ServerSessions: true, LocalEventFiles: true,
	},
	{
		Name: "sql2017", CompatLevel: 140, Product: "SQL Server 2017 CU15 on Linux", ProductVersion: productVersion, Version: tds.Version{Major: 14, Build: 3192},
		VersionString: versionString, ProductLevel: "RTM", UpdateLevel: "CU15", Edition: "Developer Edition (64-bit)", EngineEdition: 3,
		LogDir: linuxLogDir, ErrorLog: linuxErrorLog, DataDir: linuxDataDir, ServerSessions: true, LocalEventFiles: true,
	},
	{
		Name: "sql2019", CompatLevel: 150, Product: "SQL Server 2019 CU8 on Linux", ProductVersion: "15.0.4073.23", Version: tds.Version{Major: 15, Build: 4073},
		VersionString: "Microsoft SQL Server 2019 (RTM-CU8) (KB4577194) - 15.0.4073.23 (X64) \n\tSep 23 2020 16:03:08 \n\tCopyright (C) 2019 Microsoft Corporation\n\tDeveloper Edition (64-bit) on Linux (Ubuntu 20.04.1 LTS) <X64>",
		ProductLevel:  "RTM", UpdateLevel: "CU8", Edition: "Developer Edition (64-bit)", EngineEdition: 3,
		LogDir: linuxLogDir, ErrorLog: linuxErrorLog, DataDir: linuxDataDir, ServerSessions: true, LocalEventFiles: true,
	},
	{
		Name: "sql2022", CompatLevel: 160, Product: "SQL Server 2022 RTM on Linux", ProductVersion: "16.0.1000.6", Version: tds.Version{Major: 16, Build: 1000},
		VersionString: "Microsoft SQL Server 2022 (RTM) - 16.0.1000.6 (X64) \n\tOct  8 2022 05:58:25 \n\tCopyright (C) 2022 Microsoft Corporation\n\tDeveloper Edition (64-bit) on Linux (Ubuntu 22.04.1 LTS) <X64>",
		ProductLevel:  "RTM", Edition: "Developer Edition (64-bit)", EngineEdition: 3,
		LogDir: linuxLogDir, ErrorLog: linuxErrorLog, DataDir: linuxDataDir, ServerSessions: true, LocalEventFiles: true,
		CallstackRVA: true, GranularXEPermissions: true,
	},
	{
		Name: "sql2025", CompatLevel: 170, Product: "SQL Server 2025 CU1 on Linux", ProductVersion: "17.0.4006.2", Version: tds.Version{Major: 17, Build: 4006},
		VersionString: "Microsoft SQL Server 2025 (RTM-CU1) (KB5078298) - 17.0.4006.2 (X64) \n\tCopyright (C) 2025 Microsoft Corporation\n\tEnterprise Developer Edition (64-bit) on Linux (Ubuntu 24.04 LTS) <X64>",
		ProductLevel:  "RTM", UpdateLevel: "CU1", Edition: "Enterprise Developer Edition (64-bit)", EngineEdition: 3,
		LogDir: linuxLogDir, ErrorLog: linuxErrorLog, DataDir: linuxDataDir, ServerSessions: true, LocalEventFiles: true,
		CallstackRVA: true, GranularXEPermissions: true,
	},
	{
		Name: "azure-sql-database", CompatLevel: 160, Product: "Azure SQL Database", ProductVersion: "12.0.2000.8", Version: tds.Version{Major: 12, Build: 2000},
		VersionString: "Microsoft SQL Azure (RTM) - 12.0.2000.8 \n\tCopyright (C) 2022 Microsoft Corporation\n",
		ProductLevel:  "RTM", Edition: "SQL Azure", EngineEdition: 5,
		DatabaseSessions: true, CallstackRVA: true, GranularXEPermissions: true,
	},
	{
		Name: "azure-sql-managed-instance", CompatLevel: 150, Product: "Azure SQL Managed Instance", ProductVersion: "12.0.2000.8", Version: tds.Version{Major: 12, Build: 2000},
		VersionString: "Microsoft SQL Azure (RTM) - 12.0.2000.8 \n\tCopyright (C) 2022 Microsoft Corporation\n",
		ProductLevel:  "RTM", Edition: "SQL Azure", EngineEdition: 8,
		LogDir: `C:\WFRoot\DB16C.2\Fabric\work\Applications\Worker.CL_App15\work\data\`, ErrorLog: `C:\WFRoot\DB16C.2\Fabric\work\Applications\Worker.CL_App15\work\data\ERRORLOG`,
		DataDir:        `C:\WFRoot\DB16C.2\Fabric\work\Applications\Worker.CL_App15\work\data\`,
		ServerSessions: true, CallstackRVA: true, GranularXEPermissions: true,
	},
}

// Personas lists the personas in a stable order (box versions by age, then
// Azure).
func Personas() []*Persona { return append([]*Persona(nil), personas...) }

// LookupPersona returns the named persona ("" means DefaultPersona).
func LookupPersona(name string) (*Persona, error) {
	if name == "" {
		name = DefaultPersona
	}
	for _, p := range personas {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	names := make([]string, len(personas))
	for i, p := range personas {
		names[i] = p.Name
	}
	return nil, fmt.Errorf("unknown persona %q (known: %s)", name, strings.Join(names, ", "))
}

// property answers the SERVERPROPERTY names a persona decides.
func (p *Persona) property(name string) (any, bool) {
	switch strings.ToLower(name) {
	case "productversion":
		return p.ProductVersion, true
	case "productmajorversion":
		return fmt.Sprint(p.Version.Major), true
	case "productminorversion":
		return fmt.Sprint(p.Version.Minor), true
	case "productbuild":
		return fmt.Sprint(p.Version.Build), true
	case "productlevel":
		return p.ProductLevel, true
	case "productupdatelevel":
		if p.UpdateLevel == "" {
			return nil, true
		}
		return p.UpdateLevel, true
	case "edition":
		return p.Edition, true
	case "engineedition":
		return p.EngineEdition, true
	case "errorlogfilename":
		if p.ErrorLog == "" { // not exposed on Azure SQL Database
			return nil, true
		}
		return p.ErrorLog, true
	case "instancedefaultlogpath", "instancedefaultdatapath":
		if p.DataDir == "" {
			return nil, true
		}
		return p.DataDir, true
	}
	return nil, false
}

// serverProperty answers SERVERPROPERTY: the persona's properties first,
// then the common ones.
func (s *Server) serverProperty(name string) any {
	if v, ok := s.persona.property(name); ok {
		return v
	}
	return serverProperty(name)
}

func (p *Persona) LogDirOrDefault() string {
	if p == nil || p.LogDir == "" {
		return linuxLogDir
	}
	return p.LogDir
}

// logDir is the instance log directory of the persona ("" on Azure SQL
// Database, which has none).
func (s *Server) logDir() string { return s.persona.LogDirOrDefault() }

// checkSessionScope refuses the event session scope the persona lacks. The
// grammar (ON { SERVER | DATABASE }) is shared by every product, so this is
// a semantic refusal; SQL Server's exact message for it is not documented,
// and the stand-in answers with the syntax error Msg 102 naming the keyword
// [unverified number].
func (s *Server) checkSessionScope(database bool) *sqlfront.SQLError {
	switch {
	case database && !s.persona.DatabaseSessions:
		return sqlfront.ErrSyntaxNear("DATABASE")
	case !database && !s.persona.ServerSessions:
		return sqlfront.ErrSyntaxNear("SERVER")
	}
	return nil
}

// HasAction reports whether the persona knows the action (package0.
// callstack_rva only from SQL Server 2022).
func (p *Persona) HasAction(name string) bool {
	if strings.EqualFold(name, "callstack_rva") {
		return p.CallstackRVA
	}
	_, ok := xevents.Actions[strings.ToLower(name)]
	return ok
}

// databaseScopedUnavailable are the events and actions Azure SQL Database
// refuses in a database-scoped session (Msg 25743, 25744): the lock events
// (the sample the CREATE EVENT SESSION documentation stopped claiming for
// Azure SQL Database, MicrosoftDocs/sql-docs pull request 3155), logout
// and xml_deadlock_report (refused with Msg 25743 in public reports,
// microsoft/azuredatastudio issue 6353) and the action
// server_principal_name. What else is unavailable (physical_page_read,
// query_thread_profile, transaction_log, package0.callstack,
// sqlos.task_address, ...) is not documented; the stand-in accepts them.
// https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-db-diff-from-svr
var databaseScopedUnavailable = map[string]bool{
	"event sqlserver.lock_acquired": true, "event sqlserver.lock_released": true, "event sqlserver.logout": true,
	"event sqlserver.xml_deadlock_report": true, "action sqlserver.server_principal_name": true,
}

// DatabaseScopedUnavailable reports whether kind ("event" or "action")
// name (package.name) is refused in a database-scoped session: on Azure
// SQL Database, the objects listed above.
func (p *Persona) DatabaseScopedUnavailable(kind, name string) bool {
	return p.EngineEdition == 5 && databaseScopedUnavailable[kind+" "+strings.ToLower(name)]
}

// EnumerateFilesystem reports whether sys.dm_os_enumerate_filesystem
// exists: from SQL Server 2017. The function has no page on
// learn.microsoft.com (it is absent from the DMV reference), so on 2016 it
// is an unknown object, Msg 208.
func (p *Persona) EnumerateFilesystem() bool {
	return p.Version.Major >= 14 || p.EngineEdition == 5 || p.EngineEdition == 8
}

// KnowsPermission reports whether the product knows a permission name:
// the SQL Server 2022 permissions (the granular event-session ones, VIEW
// SERVER PERFORMANCE STATE, ...) do not exist before 2022, and
// HAS_PERMS_BY_NAME returns NULL for a permission it does not know
// (https://learn.microsoft.com/en-us/sql/t-sql/functions/has-perms-by-name-transact-sql,
// "Returns NULL when the query fails").
func (p *Persona) KnowsPermission(perm string) bool {
	if p.GranularXEPermissions {
		return true
	}
	perm = strings.ToUpper(strings.TrimSpace(perm))
	return !slices.Contains(granularXEPermissions, perm) && !slices.Contains(granularDatabaseXEPermissions, perm)
}

// Azure SQL Database errors for what a database-scoped server refuses.
const (
	// errNumUseOtherDatabase: USE names a database other than the
	// connection's: "USE statement is not supported to switch between
	// databases" (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/use-transact-sql).
	errNumUseOtherDatabase = 40508
	// errNumXEInMaster: CREATE EVENT SESSION in master, which Azure SQL
	// Database refuses
	// (https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-db-diff-from-svr).
	// The number is not documented [unverified number]: 40510, Azure SQL
	// Database's "Statement ... is not supported" message, is the
	// stand-in's choice.
	errNumXEInMaster = 40510
	// errNumPredicateTooLong: see xevents.ErrNumPredicateTooLong.
	errNumPredicateTooLong = xevents.ErrNumPredicateTooLong
)

// checkUse refuses USE of another database on Azure SQL Database.
func (s *Server) checkUse(current, target string) *sqlfront.SQLError {
	if s.persona.EngineEdition == 5 && !strings.EqualFold(current, target) {
		return sqlfront.NewError(errNumUseOtherDatabase, 16, "USE statement is not supported to switch between databases. Use a new connection to connect to a different database.")
	}
	return nil
}

// checkSessionDatabase refuses an event session created in master on
// Azure SQL Database.
func (s *Server) checkSessionDatabase(db string) *sqlfront.SQLError {
	if s.persona.EngineEdition == 5 && strings.EqualFold(db, "master") {
		return sqlfront.NewError(errNumXEInMaster, 16, "Statement 'CREATE EVENT SESSION' is not supported in this version of SQL Server.")
	}
	return nil
}

// EventFileAllowed reports whether an event_file target may write to
// filename: local paths on SQL Server, https:// blob URLs on Azure.
func (p *Persona) EventFileAllowed(filename string) bool {
	isURL := strings.HasPrefix(strings.ToLower(filename), "https://")
	if p.LocalEventFiles {
		return !isURL
	}
	return isURL
}

// granularXEPermissions are the SQL Server 2022 server permissions for
// event sessions
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/drop-event-session-transact-sql#permissions (and the Permissions sections of the CREATE and ALTER EVENT SESSION pages)).
var granularXEPermissions = []string{"CREATE ANY EVENT SESSION", "DROP ANY EVENT SESSION", "ALTER ANY EVENT SESSION OPTION",
	"ALTER ANY EVENT SESSION ADD EVENT", "ALTER ANY EVENT SESSION DROP EVENT", "ALTER ANY EVENT SESSION ENABLE",
	"ALTER ANY EVENT SESSION DISABLE", "ALTER ANY EVENT SESSION ADD TARGET", "ALTER ANY EVENT SESSION DROP TARGET",
	"VIEW SERVER PERFORMANCE STATE", "VIEW SERVER SECURITY STATE"}

// granularDatabaseXEPermissions are their Azure SQL Database equivalents.
var granularDatabaseXEPermissions = []string{"CREATE ANY DATABASE EVENT SESSION", "DROP ANY DATABASE EVENT SESSION",
	"ALTER ANY DATABASE EVENT SESSION OPTION", "ALTER ANY DATABASE EVENT SESSION ADD EVENT", "ALTER ANY DATABASE EVENT SESSION DROP EVENT",
	"ALTER ANY DATABASE EVENT SESSION ENABLE", "ALTER ANY DATABASE EVENT SESSION DISABLE", "ALTER ANY DATABASE EVENT SESSION ADD TARGET",
	"ALTER ANY DATABASE EVENT SESSION DROP TARGET", "VIEW DATABASE PERFORMANCE STATE", "VIEW DATABASE SECURITY STATE"}

// adjustPermissions edits the permission list fn_my_permissions returns for
// a sysadmin (or the database owner) under the persona: the granular
// event-session permissions from SQL Server 2022; no server permissions on
// Azure SQL Database, where a login's power is in its database.
func (p *Persona) adjustPermissions(class string, perms []string, sysadmin bool) []string {
	if !sysadmin {
		return perms
	}
	switch class {
	case "SERVER":
		if p.EngineEdition == 5 {
			return []string{"CONNECT SQL"}
		}
		if p.GranularXEPermissions {
			perms = append(perms, granularXEPermissions...)
		}
	case "DATABASE":
		if p.EngineEdition == 5 && p.GranularXEPermissions {
			perms = append(perms, granularDatabaseXEPermissions...)
		}
	}
	sort.Strings(perms)
	return perms
}

// ProductName is the product the persona reports (its Product), for the
// event-session messages that name it.
func (p *Persona) ProductName() string { return p.Product }
