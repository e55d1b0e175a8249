package tracer

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// leastPrivilege are the logins a DBA would grant instead of sysadmin, one
// per permission model: ALTER ANY EVENT SESSION on SQL Server 2019, the
// granular event-session permissions of SQL Server 2022, and Azure SQL
// Database's database-scoped ones (docs/standin.md, "Logins").
var leastPrivilege = []struct {
	name, persona    string
	server, database []string
}{
	{"sql2019 ALTER ANY EVENT SESSION", "sql2019", []string{"ALTER ANY EVENT SESSION", "VIEW SERVER STATE"}, nil},
	{"sql2022 granular", "sql2022", []string{"CREATE ANY EVENT SESSION", "ALTER ANY EVENT SESSION ENABLE", "ALTER ANY EVENT SESSION DISABLE",
		"DROP ANY EVENT SESSION", "VIEW SERVER PERFORMANCE STATE"}, nil},
	{"azure database-scoped", "azure-sql-database", nil, []string{"ALTER ANY DATABASE EVENT SESSION", "VIEW DATABASE STATE"}},
}

const leastPass = "Tracer-Pass1"

// startLeast starts the persona with the login "tracer" holding perms, and
// returns its DSN and the sysadmin's connection.
func startLeast(t *testing.T, persona string, server, database []string) (string, *testServer) {
	t.Helper()
	srv := startStandinWith(t, standin.Options{Persona: persona, XELEncoder: xe.EncodeXMLAsXEL, ExtraLogins: map[string]string{"tracer": leastPass},
		ServerPermissions: map[string][]string{"tracer": server}, DatabasePermissions: map[string][]string{"tracer": database}})
	return standin.DSN("tracer", leastPass, srv.running.Addr, "QueryReplayDemo"), srv
}

// A least-privilege login traces a select and a modification (rolled
// back), leaves no session behind, and the doctor says its sessions work.
func TestLeastPrivilegeTraces(t *testing.T) {
	for _, c := range leastPrivilege {
		t.Run(c.name, func(t *testing.T) {
			dsn, srv := startLeast(t, c.persona, c.server, c.database)
			_, _, admin := newTracer(t, srv.dsn, Policy{})
			tr, _, _ := newTracer(t, dsn, Policy{})
			d, err := Diagnose(context.Background(), tr.open)
			if err != nil {
				t.Fatal(err)
			}
			if s := checkOf(t, d, "trace sessions"); s.Status != CheckOK {
				t.Errorf("doctor: trace sessions %s (%s)", s.Status, s.Detail)
			}
			if c.persona != "azure-sql-database" {
				if s := checkOf(t, d, "log records of a modification"); s.Status != CheckDegraded || !strings.Contains(s.Detail, "sysadmin") {
					t.Errorf("doctor: log records %s (%s), want degraded for want of sysadmin", s.Status, s.Detail)
				}
			}
			before := checksum(t, admin)
			for _, q := range []string{selectSQL, updateSQL} {
				b, err := tr.Trace(context.Background(), Options{SQL: q, Events: bundle.EventGroups{Locks: true}})
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if b.Result.Events == 0 || b.Trace == nil {
					t.Errorf("%s: %d events", q, b.Result.Events)
				}
				if q == updateSQL {
					if !b.Result.RolledBack || len(b.Result.LogRecords) != 0 {
						t.Errorf("modification: rolled back %v, %d log records (fn_dblog is sysadmin-only)", b.Result.RolledBack, len(b.Result.LogRecords))
					}
					if !slices.ContainsFunc(b.Result.Warnings, func(w string) bool { return strings.Contains(w, "log records of a modification are not read") }) {
						t.Errorf("no warning that the log records are not read: %v", b.Result.Warnings)
					}
				}
			}
			if left := leftSessions(t, admin, c.persona); left != 0 {
				t.Errorf("%d sessions left", left)
			}
			waitNoOpenTransactions(t, admin)
			if after := checksum(t, admin); after != before {
				t.Error("data changed")
			}
		})
	}
}

// leftSessions counts the queryreplay sessions on the server.
func leftSessions(t *testing.T, admin *sql.DB, persona string) int {
	t.Helper()
	view := map[bool]string{true: "database", false: "server"}[persona == "azure-sql-database"]
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM sys." + view + "_event_sessions WHERE name LIKE N'queryreplay[_]%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// permissionFamily is how the tracer's refusal names a permission: the
// granular ones by the permission that covers them.
func permissionFamily(p string) string {
	switch {
	case strings.HasPrefix(p, "VIEW SERVER"):
		return "VIEW SERVER STATE"
	case strings.HasPrefix(p, "VIEW DATABASE"):
		return "VIEW DATABASE STATE"
	case strings.Contains(p, "DATABASE EVENT SESSION"):
		return "ALTER ANY DATABASE EVENT SESSION"
	}
	return "ALTER ANY EVENT SESSION"
}

// A login lacking one of the permissions is refused before anything is
// created, and told what to grant; the doctor says the same.
func TestLeastPrivilegeMissingOne(t *testing.T) {
	for _, c := range leastPrivilege {
		grants := c.server
		if grants == nil {
			grants = c.database
		}
		for _, drop := range grants {
			t.Run(c.name+" without "+drop, func(t *testing.T) {
				keep := slices.DeleteFunc(slices.Clone(grants), func(p string) bool { return p == drop })
				server, database := keep, []string(nil)
				if c.server == nil {
					server, database = nil, keep
				}
				dsn, _ := startLeast(t, c.persona, server, database)
				tr, log, _ := newTracer(t, dsn, Policy{})
				_, err := tr.Trace(context.Background(), Options{SQL: selectSQL})
				var re *tsql.RefusedError
				family := permissionFamily(drop)
				if !errors.As(err, &re) || !strings.Contains(re.Reason, family) {
					t.Fatalf("err = %v; want a refusal naming %s", err, family)
				}
				for _, s := range log.texts() {
					if strings.Contains(s, "CREATE EVENT SESSION") {
						t.Fatal("a session was created before the permission check")
					}
				}
				d, err := Diagnose(context.Background(), tr.open)
				if err != nil {
					t.Fatal(err)
				}
				if s := checkOf(t, d, "trace sessions"); s.Status != CheckUnavailable || !strings.Contains(s.Detail, family) {
					t.Errorf("doctor: trace sessions %s (%s), want unavailable naming %s", s.Status, s.Detail, family)
				}
			})
		}
	}
}
