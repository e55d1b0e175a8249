package standin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// Every persona's databases report its version's default compatibility
// level (ALTER DATABASE … SET COMPATIBILITY_LEVEL, the table of products).
func TestPersonaCompatibilityLevel(t *testing.T) {
	want := map[string]int64{"sql2016": 130, "sql2017": 140, "sql2019": 150, "sql2022": 160, "sql2025": 170,
		"azure-sql-database": 160, "azure-sql-managed-instance": 150}
	for _, p := range Personas() {
		w, ok := want[p.Name]
		if !ok {
			t.Fatalf("persona %s has no expected compatibility level", p.Name)
		}
		c := session(t, New(Options{Persona: p.Name}), 51)
		r := mustRun(t, c, "SELECT compatibility_level FROM sys.databases WHERE database_id = DB_ID()")
		if got := r.sets[0].rows[0][0]; got != w {
			t.Errorf("%s: compatibility_level %v, want %d", p.Name, got, w)
		}
	}
}

// sys.dm_xe_packages joins sys.dm_xe_objects on package_guid, and the
// objects include the actions and targets each persona has: callstack_rva
// only where the product has it.
func TestXEObjectsActionsPerPersona(t *testing.T) {
	const q = "SELECT p.name, o.name, o.object_type FROM sys.dm_xe_objects AS o " +
		"JOIN sys.dm_xe_packages AS p ON o.package_guid = p.guid WHERE o.object_type IN (N'event', N'action', N'target')"
	for _, p := range Personas() {
		c := session(t, New(Options{Persona: p.Name}), 51)
		r := mustRun(t, c, q)
		got := map[string]bool{}
		for _, row := range r.sets[0].rows {
			got[row[2].(string)+" "+row[0].(string)+"."+row[1].(string)] = true
		}
		for _, must := range []string{"event sqlserver.sql_batch_completed", "event sqlos.wait_info", "action package0.event_sequence",
			"action sqlserver.session_id", "action sqlos.task_address", "action package0.callstack", "target package0.ring_buffer", "target package0.event_file"} {
			if !got[must] {
				t.Errorf("%s: %s not listed", p.Name, must)
			}
		}
		if got["action package0.callstack_rva"] != p.CallstackRVA {
			t.Errorf("%s: callstack_rva listed %v, persona has it %v", p.Name, got["action package0.callstack_rva"], p.CallstackRVA)
		}
		pk := mustRun(t, c, "SELECT name FROM sys.dm_xe_packages WHERE name = N'package0'")
		if len(pk.sets[0].rows) != 1 {
			t.Errorf("%s: package0 not in sys.dm_xe_packages", p.Name)
		}
	}
}

func loginTo(t *testing.T, srv *Server, db string) *connState {
	t.Helper()
	res, err := srv.Login(context.Background(), &tds.Session{SPID: 52, User: "sa"}, &tds.LoginRequest{User: srv.opts.User, Password: srv.opts.Password, Database: db})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session.(*connState)
}

// A predicate longer than the documented 3,000 characters is refused on
// every persona; one just under it is accepted.
func TestXEPredicateLengthLimit(t *testing.T) {
	for _, p := range Personas() {
		c := session(t, New(Options{Persona: p.Name}), 51)
		scope := "SERVER"
		if !p.ServerSessions {
			scope = "DATABASE"
		}
		pred := func(n int) string { // n characters after WHERE
			leaf := "sqlserver.session_id = (51)"
			var b strings.Builder
			b.WriteString("(" + leaf)
			for b.Len() < n-len(" OR "+leaf)-1 {
				b.WriteString(" OR " + leaf)
			}
			for b.Len() < n-1 {
				b.WriteString(" ")
			}
			b.WriteString(")")
			return b.String()
		}
		for _, n := range []int{2990, 3001, 4500} {
			p1 := pred(n)
			if len(p1) != n {
				t.Fatalf("predicate of %d, want %d", len(p1), n)
			}
			_, err := run(c, "CREATE EVENT SESSION len_"+strconv.Itoa(n)+" ON "+scope+" ADD EVENT sqlserver.sql_batch_completed(WHERE "+p1+") ADD TARGET package0.ring_buffer")
			switch {
			case n <= 3000 && err != nil:
				t.Errorf("%s: %d-character predicate refused: %v", p.Name, n, err)
			case n > 3000 && (err == nil || err.Number != errNumPredicateTooLong):
				t.Errorf("%s: %d-character predicate: %v, want Msg %d", p.Name, n, err, errNumPredicateTooLong)
			}
		}
	}
}

// Azure SQL Database: USE of another database is Msg 40508 (the current
// one is allowed), and no event session may be created in master.
func TestAzureSQLDatabaseUseAndMaster(t *testing.T) {
	srv := New(Options{Persona: "azure-sql-database"})
	c := session(t, srv, 51)
	if _, err := run(c, "USE [master]"); err == nil || err.Number != 40508 {
		t.Errorf("USE master: %v, want Msg 40508", err)
	}
	mustRun(t, c, "USE "+demoDBName)
	m := loginTo(t, srv, "master")
	if _, err := run(m, "CREATE EVENT SESSION s ON DATABASE ADD EVENT sqlserver.sql_batch_completed ADD TARGET package0.ring_buffer"); err == nil || err.Number != errNumXEInMaster {
		t.Errorf("CREATE EVENT SESSION in master: %v, want Msg %d", err, errNumXEInMaster)
	}
	box := session(t, New(Options{Persona: "sql2022"}), 51)
	mustRun(t, box, "USE [master]")
}

// A database-scoped session is refused whole when one event (Msg 25743)
// or one action (Msg 25744) is not available to database-scoped sessions.
func TestAzureDatabaseScopedAvailability(t *testing.T) {
	srv := New(Options{Persona: "azure-sql-database"})
	c := session(t, srv, 51)
	for _, ev := range []string{"sqlserver.lock_acquired", "sqlserver.lock_released", "lock_acquired", "sqlserver.logout"} {
		_, err := run(c, "CREATE EVENT SESSION s ON DATABASE ADD EVENT sqlserver.sql_batch_completed, ADD EVENT "+ev+" ADD TARGET package0.ring_buffer")
		if err == nil || err.Number != 25743 || !strings.Contains(err.Message, strings.TrimPrefix(ev, "sqlserver.")) {
			t.Errorf("%s: %v, want Msg 25743 naming it", ev, err)
		}
	}
	_, err := run(c, "CREATE EVENT SESSION s ON DATABASE ADD EVENT sqlserver.sql_batch_completed(ACTION(sqlserver.session_id, sqlserver.server_principal_name)) ADD TARGET package0.ring_buffer")
	if err == nil || err.Number != 25744 || !strings.Contains(err.Message, "server_principal_name") {
		t.Errorf("server_principal_name: %v, want Msg 25744", err)
	}
	r := mustRun(t, c, "SELECT COUNT(*) FROM sys.database_event_sessions")
	if n := r.sets[0].rows[0][0]; n != int64(0) {
		t.Errorf("%v sessions after refusals, want none", n)
	}
	mustRun(t, c, "CREATE EVENT SESSION ok ON DATABASE ADD EVENT sqlserver.sql_batch_completed(ACTION(sqlserver.session_id)) ADD TARGET package0.ring_buffer")
	mustRun(t, c, "ALTER EVENT SESSION ok ON DATABASE ADD EVENT sqlserver.sql_batch_starting")
	if _, err := run(c, "ALTER EVENT SESSION ok ON DATABASE ADD EVENT sqlserver.lock_released"); err == nil || err.Number != 25743 {
		t.Errorf("ALTER … ADD EVENT lock_released: %v, want Msg 25743", err)
	}
	// a server session on a box takes them
	box := session(t, New(Options{Persona: "sql2022"}), 51)
	mustRun(t, box, "CREATE EVENT SESSION s ON SERVER ADD EVENT sqlserver.lock_acquired(ACTION(sqlserver.server_principal_name)) ADD TARGET package0.ring_buffer")
}

// sys.dm_os_enumerate_filesystem exists from SQL Server 2017.
func TestEnumerateFilesystemFrom2017(t *testing.T) {
	q := "SELECT COUNT(*) FROM sys.dm_os_enumerate_filesystem(N'/var/opt/mssql/log/', N'*.xel')"
	if _, err := run(session(t, New(Options{Persona: "sql2016"}), 51), q); err == nil || err.Number != 208 {
		t.Errorf("sql2016: %v, want Msg 208", err)
	}
	mustRun(t, session(t, New(Options{Persona: "sql2017"}), 51), q)
}

// HAS_PERMS_BY_NAME with a permission the version does not know is NULL
// (the SQL Server 2022 permissions on 2016–2019).
func TestHasPermsByNameUnknownPermission(t *testing.T) {
	for _, c := range []struct {
		persona string
		want    any
	}{{"sql2016", nil}, {"sql2017", nil}, {"sql2019", nil}, {"sql2022", int64(1)}, {"sql2025", int64(1)}} {
		s := session(t, New(Options{Persona: c.persona}), 51)
		for _, perm := range []string{"VIEW SERVER PERFORMANCE STATE", "CREATE ANY EVENT SESSION"} {
			r := mustRun(t, s, "SELECT HAS_PERMS_BY_NAME(NULL, NULL, N'"+perm+"')")
			if got := r.sets[0].rows[0][0]; got != c.want {
				t.Errorf("%s %s: %v, want %v", c.persona, perm, got, c.want)
			}
		}
		r := mustRun(t, s, "SELECT HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE')")
		if got := r.sets[0].rows[0][0]; got != int64(1) {
			t.Errorf("%s VIEW SERVER STATE: %v", c.persona, got)
		}
	}
}

// fn_dblog takes a start LSN ("0x" and hex parts, or decimal parts) and
// returns the records from it; sys.dm_db_log_stats gives the log's end.
func TestFnDblogStartLSN(t *testing.T) {
	c := session(t, New(Options{}), 51)
	mustRun(t, c, "BEGIN TRANSACTION a; INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (900001, 42, '2026-01-15', 1, N'New'); ROLLBACK")
	end := mustRun(t, c, "SELECT log_end_lsn FROM sys.dm_db_log_stats(DB_ID())").sets[0].rows[0][0].(string)
	all := len(mustRun(t, c, "SELECT [Current LSN] FROM fn_dblog(NULL, NULL)").sets[0].rows)
	mustRun(t, c, "BEGIN TRANSACTION b; INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (900002, 42, '2026-01-15', 1, N'New'); ROLLBACK")
	var vlf, blk, slot uint64
	if _, err := fmt.Sscanf(end, "%x:%x:%x", &vlf, &blk, &slot); err != nil {
		t.Fatalf("log_end_lsn %q: %v", end, err)
	}
	for _, arg := range []string{"N'0x" + end + "'", fmt.Sprintf("N'%d:%d:%d'", vlf, blk, slot)} {
		rows := mustRun(t, c, "SELECT [Current LSN], [Operation], [Transaction Name] FROM fn_dblog("+arg+", NULL)").sets[0].rows
		if len(rows) == 0 || rows[0][0] != end {
			t.Fatalf("fn_dblog(%s): first record %v, want the log end %s", arg, rows, end)
		}
		names := map[any]bool{}
		for _, r := range rows {
			names[r[2]] = true
		}
		if names["a"] || !names["b"] {
			t.Errorf("fn_dblog(%s) names %v: want only records from the start LSN on", arg, names)
		}
	}
	if n := len(mustRun(t, c, "SELECT [Current LSN] FROM fn_dblog(NULL, NULL)").sets[0].rows); n <= all {
		t.Errorf("the whole log has %d records, %d before the second transaction", n, all)
	}
	// hexadecimal parts with a letter and no 0x are not an LSN
	if _, err := run(c, "SELECT [Current LSN] FROM fn_dblog(N'0000002b:000001a0:000a', NULL)"); err == nil || err.Number != 9005 {
		t.Errorf("hex LSN without 0x: %v, want Msg 9005", err)
	}
}

// Whatever text fn_dblog gets as a bound, it is refused (Msg 9005) or
// read as a fixed-width LSN that the 0x form gives back unchanged.
func FuzzDblogBound(f *testing.F) {
	for _, s := range []string{"0x0000002b:000001a8:0002", "43:424:2", "0000002b:000001a8:0002", "0x:", "1:2", "0xffffffff:ffffffff:ffff", "99999999999:1:1", " 0X1:2:3 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lsn, ok, err := dblogBound(s)
		if err != nil {
			if err.Number != 9005 || ok {
				t.Fatalf("%q: %v %v", s, ok, err)
			}
			return
		}
		if !ok || len(lsn) != 22 {
			t.Fatalf("%q read as %q", s, lsn)
		}
		again, ok, err := dblogBound("0x" + lsn)
		if err != nil || !ok || again != lsn {
			t.Fatalf("%q → %q → %q %v", s, lsn, again, err)
		}
	})
}
