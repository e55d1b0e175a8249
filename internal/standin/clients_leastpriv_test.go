package standin

import (
	"errors"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"
)

// The go-mssqldb client as a least-privilege login: the persona's event
// session permissions decide what its DDL and DMV reads do, and a refusal
// reaches the driver with SQL Server's error number. Stand-in only: a real
// server's logins are its own (QUERYREPLAY_TEST_DSN gives one login).
func TestGoMssqldbLeastPrivilege(t *testing.T) {
	for _, c := range []struct {
		persona, scope, dmv string
		server, database    []string
		dmvDenied           int32 // what the login without the grants gets for the DMV
	}{
		{"sql2019", "SERVER", "sys.dm_xe_sessions", []string{"ALTER ANY EVENT SESSION", "VIEW SERVER STATE"}, nil, 300},
		{"sql2022", "SERVER", "sys.dm_xe_sessions", []string{"CREATE ANY EVENT SESSION", "ALTER ANY EVENT SESSION ENABLE", "ALTER ANY EVENT SESSION DISABLE",
			"DROP ANY EVENT SESSION", "VIEW SERVER PERFORMANCE STATE"}, nil, 300},
		{"azure-sql-database", "DATABASE", "sys.dm_xe_database_sessions", nil, []string{"ALTER ANY DATABASE EVENT SESSION", "VIEW DATABASE STATE"}, 262},
	} {
		t.Run(c.persona, func(t *testing.T) {
			r, _ := startStandin(t, Options{Persona: c.persona, ExtraLogins: map[string]string{"tracer": "Tracer-Pass1", "reader": "Reader-Pass1"},
				ServerPermissions: map[string][]string{"tracer": c.server}, DatabasePermissions: map[string][]string{"tracer": c.database}})
			tracer := openClient(t, DSN("tracer", "Tracer-Pass1", r.Addr, demoDBName))
			for _, q := range []string{
				"CREATE EVENT SESSION lp ON " + c.scope + " ADD EVENT sqlserver.sql_batch_completed ADD TARGET package0.ring_buffer",
				"ALTER EVENT SESSION lp ON " + c.scope + " STATE = START",
				"SELECT COUNT(*) FROM " + c.dmv,
				"ALTER EVENT SESSION lp ON " + c.scope + " STATE = STOP",
				"DROP EVENT SESSION lp ON " + c.scope,
			} {
				if _, err := tracer.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			reader := openClient(t, DSN("reader", "Reader-Pass1", r.Addr, demoDBName))
			_, err := reader.Exec("CREATE EVENT SESSION lp ON " + c.scope + " ADD EVENT sqlserver.sql_batch_completed")
			var me mssql.Error
			if !errors.As(err, &me) || me.Number != 297 {
				t.Fatalf("reader's CREATE EVENT SESSION: %v, want Msg 297", err)
			}
			if _, err := reader.Exec("SELECT COUNT(*) FROM " + c.dmv); !errors.As(err, &me) || me.Number != c.dmvDenied {
				t.Fatalf("reader's %s: %v, want Msg %d", c.dmv, err, c.dmvDenied)
			}
		})
	}
}
