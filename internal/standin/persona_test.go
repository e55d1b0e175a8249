package standin

import (
	"strings"
	"testing"
)

// Each persona answers as its product does: version, EngineEdition, the
// event session DDL forms, actions, targets and permissions it has.
func TestPersonas(t *testing.T) {
	type want struct {
		major, edition          string
		engine                  int64
		server, database, rva   bool
		localFile, granularPerm bool
	}
	cases := map[string]want{
		"sql2016":                    {"13", "Developer Edition (64-bit)", 3, true, false, false, true, false},
		"sql2017":                    {"14", "Developer Edition (64-bit)", 3, true, false, false, true, false},
		"sql2019":                    {"15", "Developer Edition (64-bit)", 3, true, false, false, true, false},
		"sql2022":                    {"16", "Developer Edition (64-bit)", 3, true, false, true, true, true},
		"sql2025":                    {"17", "Enterprise Developer Edition (64-bit)", 3, true, false, true, true, true},
		"azure-sql-database":         {"12", "SQL Azure", 5, false, true, true, false, true},
		"azure-sql-managed-instance": {"12", "SQL Azure", 8, true, false, true, false, true},
	}
	if len(cases) != len(Personas()) {
		t.Fatalf("%d personas, %d tested", len(Personas()), len(cases))
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := LookupPersona(name)
			if err != nil {
				t.Fatal(err)
			}
			c := session(t, New(Options{Persona: name}), 51)
			r := mustRun(t, c, "SELECT @@VERSION, CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), CAST(SERVERPROPERTY('ProductMajorVersion') AS nvarchar(10)), CAST(SERVERPROPERTY('EngineEdition') AS int), CAST(SERVERPROPERTY('Edition') AS nvarchar(128))")
			row := r.sets[0].rows[0]
			if row[0] != p.VersionString || !strings.Contains(p.VersionString, p.ProductVersion) {
				t.Errorf("@@VERSION %q (product version %s)", row[0], p.ProductVersion)
			}
			if row[1] != p.ProductVersion || row[2] != w.major || row[3] != w.engine || row[4] != w.edition {
				t.Errorf("SERVERPROPERTY: %v; want %s, %s, %d, %s", row[1:], p.ProductVersion, w.major, w.engine, w.edition)
			}
			file := `N'trace.xel'`
			if !w.localFile {
				file = `N'https://acct.blob.core.windows.net/xe/trace.xel'`
			}
			scopes := map[string]bool{"SERVER": w.server, "DATABASE": w.database}
			for scope, ok := range scopes {
				sql := "CREATE EVENT SESSION s_" + scope + " ON " + scope + " ADD EVENT sqlserver.sql_batch_completed ADD TARGET package0.event_file(SET filename = " + file + ")"
				_, err := run(c, sql)
				switch {
				case ok && err != nil:
					t.Errorf("ON %s refused: %v", scope, err)
				case !ok && (err == nil || err.Number != 102):
					t.Errorf("ON %s: %v, want Msg 102", scope, err)
				}
			}
			scope := "SERVER"
			if !w.server {
				scope = "DATABASE"
			}
			if ok := scopes[scope]; ok {
				mustRun(t, c, "ALTER EVENT SESSION s_"+scope+" ON "+scope+" STATE = START")
				mustRun(t, c, "ALTER EVENT SESSION s_"+scope+" ON "+scope+" STATE = STOP")
			}
			_, rvaErr := run(c, "CREATE EVENT SESSION rva ON "+scope+" ADD EVENT sqlserver.sql_batch_completed(ACTION(package0.callstack_rva))")
			if w.rva && rvaErr != nil {
				t.Errorf("callstack_rva refused: %v", rvaErr)
			} else if !w.rva && (rvaErr == nil || rvaErr.Number != 25623) {
				t.Errorf("callstack_rva: %v, want Msg 25623", rvaErr)
			}
			other := `N'https://acct.blob.core.windows.net/xe/x.xel'`
			if !w.localFile {
				other = `N'/var/opt/mssql/log/x.xel'`
			}
			if _, err := run(c, "CREATE EVENT SESSION f ON "+scope+" ADD EVENT sqlserver.sql_batch_completed ADD TARGET package0.event_file(SET filename = "+other+")"); err == nil || err.Number != 25602 {
				t.Errorf("event_file %s: %v, want Msg 25602", other, err)
			}
			r = mustRun(t, c, "SELECT permission_name FROM sys.fn_my_permissions(NULL, 'SERVER')")
			perms := map[string]bool{}
			for _, row := range r.sets[0].rows {
				perms[row[0].(string)] = true
			}
			if perms["CREATE ANY EVENT SESSION"] != (w.granularPerm && w.server) {
				t.Errorf("server permissions %v: granular event-session permissions should be %v", perms, w.granularPerm && w.server)
			}
			if w.engine == 5 && perms["ALTER ANY EVENT SESSION"] {
				t.Errorf("Azure SQL Database lists server permission ALTER ANY EVENT SESSION")
			}
		})
	}
	if _, err := LookupPersona("sql2000"); err == nil || !strings.Contains(err.Error(), "sql2022") {
		t.Errorf("unknown persona: %v", err)
	}
}
