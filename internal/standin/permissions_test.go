package standin

import (
	"context"
	"slices"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// loginAs logs a granted login in under a persona.
func loginAs(t *testing.T, persona string, server, database []string) (*Server, *connState) {
	t.Helper()
	srv := New(Options{Persona: persona, ExtraLogins: map[string]string{"tracer": "pw"},
		ServerPermissions: map[string][]string{"tracer": server}, DatabasePermissions: map[string][]string{"tracer": database}})
	res, err := srv.Login(context.Background(), &tds.Session{SPID: 60, User: "tracer"}, &tds.LoginRequest{User: "tracer", Password: "pw", AppName: "unit-test"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, res.Session.(*connState)
}

func wantMsg(t *testing.T, c *connState, sql string, number int32) {
	t.Helper()
	if _, err := run(c, sql); number == 0 && err != nil || number != 0 && (err == nil || err.Number != number) {
		t.Fatalf("%s: %v, want Msg %d", sql, err, number)
	}
}

func permNames(t *testing.T, c *connState, class string) []string {
	t.Helper()
	var out []string
	for _, row := range mustRun(t, c, "SELECT permission_name FROM sys.fn_my_permissions(NULL, '"+class+"')").sets[0].rows {
		out = append(out, row[0].(string))
	}
	return out
}

// sessionCycle runs what a trace does with its session: create, start,
// read the running-session DMV, stop, drop; want holds the Msg number of
// each step (0: accepted).
func sessionCycle(t *testing.T, c *connState, scope string, want [5]int32) {
	t.Helper()
	dmv := "sys.dm_xe_sessions"
	if scope == "DATABASE" {
		dmv = "sys.dm_xe_database_sessions"
	}
	steps := []string{
		"CREATE EVENT SESSION lp ON " + scope + " ADD EVENT sqlserver.sql_batch_completed ADD TARGET package0.ring_buffer",
		"ALTER EVENT SESSION lp ON " + scope + " STATE = START",
		"SELECT name FROM " + dmv,
		"ALTER EVENT SESSION lp ON " + scope + " STATE = STOP",
		"DROP EVENT SESSION lp ON " + scope,
	}
	for i, sql := range steps {
		wantMsg(t, c, sql, want[i])
	}
}

func TestLeastPrivilege2019(t *testing.T) {
	srv, c := loginAs(t, "sql2019", []string{"ALTER ANY EVENT SESSION", "VIEW SERVER STATE", "CREATE ANY EVENT SESSION"}, nil)
	sessionCycle(t, c, "SERVER", [5]int32{})
	r := mustRun(t, c, "SELECT HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY EVENT SESSION'), HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE'), "+
		"HAS_PERMS_BY_NAME(NULL, NULL, 'CREATE ANY EVENT SESSION'), HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER TRACE'), IS_SRVROLEMEMBER('sysadmin')")
	if got := r.sets[0].rows[0]; got[0] != int64(1) || got[1] != int64(1) || got[2] != nil || got[3] != int64(0) || got[4] != int64(0) {
		t.Fatalf("HAS_PERMS_BY_NAME on 2019: %v, want 1 1 NULL 0 0", got)
	}
	perms := permNames(t, c, "SERVER")
	if !slices.Contains(perms, "ALTER ANY EVENT SESSION") || !slices.Contains(perms, "VIEW SERVER STATE") || slices.Contains(perms, "CREATE ANY EVENT SESSION") || slices.Contains(perms, "CONTROL SERVER") {
		t.Fatalf("fn_my_permissions on 2019: %v", perms)
	}
	wantMsg(t, c, "SELECT * FROM fn_dblog(NULL, NULL)", 229) // still sysadmin only
	_ = srv

	// without VIEW SERVER STATE the session can be made but not read
	_, c = loginAs(t, "sql2019", []string{"ALTER ANY EVENT SESSION"}, nil)
	sessionCycle(t, c, "SERVER", [5]int32{0, 0, 300, 0, 0})
	wantMsg(t, c, "SELECT * FROM sys.fn_xe_file_target_read_file('x*.xel', NULL, NULL, NULL)", 300)
	// a 2022 permission cannot have been granted on 2019
	_, c = loginAs(t, "sql2019", []string{"CREATE ANY EVENT SESSION", "VIEW SERVER STATE"}, nil)
	wantMsg(t, c, "CREATE EVENT SESSION lp ON SERVER ADD EVENT sqlserver.sql_batch_completed", 297)
}

var granular2022 = []string{"CREATE ANY EVENT SESSION", "ALTER ANY EVENT SESSION ENABLE", "ALTER ANY EVENT SESSION DISABLE", "DROP ANY EVENT SESSION", "VIEW SERVER PERFORMANCE STATE"}

func TestLeastPrivilege2022Granular(t *testing.T) {
	_, c := loginAs(t, "sql2022", granular2022, nil)
	sessionCycle(t, c, "SERVER", [5]int32{})
	r := mustRun(t, c, "SELECT HAS_PERMS_BY_NAME(NULL, NULL, 'CREATE ANY EVENT SESSION'), HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY EVENT SESSION'), "+
		"HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER PERFORMANCE STATE'), HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE')")
	if got := r.sets[0].rows[0]; got[0] != int64(1) || got[1] != int64(0) || got[2] != int64(1) || got[3] != int64(0) {
		t.Fatalf("HAS_PERMS_BY_NAME on 2022: %v, want 1 0 1 0", got)
	}
	// an ALTER that adds an event needs ALTER ANY EVENT SESSION ADD EVENT
	mustRun(t, c, "CREATE EVENT SESSION lp2 ON SERVER ADD EVENT sqlserver.sql_batch_completed")
	wantMsg(t, c, "ALTER EVENT SESSION lp2 ON SERVER ADD EVENT sqlserver.rpc_completed", 15151)
	wantMsg(t, c, "DROP EVENT SESSION lp2 ON SERVER", 0)
	// each granular permission is needed for its step
	for i, want := range [][5]int32{
		{297, 15151, 0, 15151, 15151}, // no CREATE: nothing exists to start or drop
		{0, 15151, 0, 25704, 0},       // no ENABLE: never started, so STOP says so
		{0, 0, 0, 15151, 0},           // no DISABLE: DROP still stops and drops it
		{0, 0, 0, 0, 15151},           // no DROP
	} {
		missing := granular2022[i]
		_, c := loginAs(t, "sql2022", slices.DeleteFunc(slices.Clone(granular2022), func(p string) bool { return p == missing }), nil)
		t.Run(missing, func(t *testing.T) { sessionCycle(t, c, "SERVER", want) })
	}
	// ALTER ANY EVENT SESSION implies the granular ones; VIEW SERVER STATE
	// implies VIEW SERVER PERFORMANCE STATE
	_, c = loginAs(t, "sql2022", []string{"ALTER ANY EVENT SESSION", "VIEW SERVER STATE"}, nil)
	sessionCycle(t, c, "SERVER", [5]int32{})
	if perms := permNames(t, c, "SERVER"); !slices.Contains(perms, "CREATE ANY EVENT SESSION") || !slices.Contains(perms, "VIEW SERVER PERFORMANCE STATE") {
		t.Fatalf("fn_my_permissions with the parent permissions: %v", perms)
	}
	// CONTROL SERVER holds everything
	_, c = loginAs(t, "sql2022", []string{"CONTROL SERVER"}, nil)
	sessionCycle(t, c, "SERVER", [5]int32{})
	wantMsg(t, c, "SELECT name FROM sys.dm_os_loaded_modules", 0)
}

func TestLeastPrivilegeAzureDatabase(t *testing.T) {
	_, c := loginAs(t, "azure-sql-database", []string{"CONTROL SERVER"}, []string{"ALTER ANY DATABASE EVENT SESSION", "VIEW DATABASE STATE"})
	sessionCycle(t, c, "DATABASE", [5]int32{})
	if perms := permNames(t, c, "SERVER"); slices.Contains(perms, "CONTROL SERVER") {
		t.Fatalf("Azure SQL Database granted a server permission: %v", perms)
	}
	if perms := permNames(t, c, "DATABASE"); !slices.Contains(perms, "ALTER ANY DATABASE EVENT SESSION") || !slices.Contains(perms, "CREATE ANY DATABASE EVENT SESSION") || !slices.Contains(perms, "VIEW DATABASE STATE") {
		t.Fatalf("fn_my_permissions(DATABASE) on Azure: %v", perms)
	}
	_, c = loginAs(t, "azure-sql-database", nil, []string{"CREATE ANY DATABASE EVENT SESSION", "ALTER ANY DATABASE EVENT SESSION ENABLE",
		"ALTER ANY DATABASE EVENT SESSION DISABLE", "DROP ANY DATABASE EVENT SESSION", "VIEW DATABASE PERFORMANCE STATE"})
	sessionCycle(t, c, "DATABASE", [5]int32{})
	_, c = loginAs(t, "azure-sql-database", nil, []string{"ALTER ANY DATABASE EVENT SESSION"})
	sessionCycle(t, c, "DATABASE", [5]int32{0, 0, 262, 0, 0})
	_, c = loginAs(t, "azure-sql-database", nil, []string{"CONTROL"})
	sessionCycle(t, c, "DATABASE", [5]int32{})
	_, c = loginAs(t, "azure-sql-database", nil, []string{"VIEW DATABASE STATE"})
	sessionCycle(t, c, "DATABASE", [5]int32{297, 15151, 0, 15151, 15151})
}
