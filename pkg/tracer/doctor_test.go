package tracer

import (
	"context"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testsql"
)

func checkOf(t *testing.T, d *Diagnosis, feature string) Check {
	t.Helper()
	for _, c := range d.Checks {
		if c.Feature == feature {
			return c
		}
	}
	t.Fatalf("no %q check in %+v", feature, d.Checks)
	return Check{}
}

// The doctor reads each persona as it is: the version decides page
// lookups, the edition the read-back path and the session scope, the login
// the permissions; and it leaves nothing behind.
func TestDiagnosePersonas(t *testing.T) {
	for _, c := range []struct {
		persona string
		want    map[string]string // feature → status
	}{
		{"sql2017", map[string]string{"server": CheckOK, "trace sessions": CheckOK, "page names and headers": CheckDegraded,
			"read-back": CheckOK, "predicate": CheckOK, "cold cache and read-ahead": CheckOK}},
		{"sql2019", map[string]string{"events": CheckOK, "call stacks": CheckDegraded}},
		{"sql2022", map[string]string{"page names and headers": CheckOK, "read-back": CheckOK, "kill on timeout": CheckOK,
			"events": CheckOK, "call stacks": CheckOK}},
		{"azure-sql-database", map[string]string{"read-back": CheckDegraded, "cold cache and read-ahead": CheckUnavailable,
			"page names and headers": CheckOK}},
		{"azure-sql-managed-instance", map[string]string{"read-back": CheckDegraded}},
	} {
		t.Run(c.persona, func(t *testing.T) {
			srv := startWithModules(t, c.persona, nil)
			tr, log, db := newTracer(t, srv.dsn, Policy{})
			d, err := Diagnose(context.Background(), tr.open)
			if err != nil {
				t.Fatal(err)
			}
			if d.Version == "" || d.Database == "" {
				t.Errorf("identity not read: %+v", d)
			}
			for feature, status := range c.want {
				if got := checkOf(t, d, feature); got.Status != status {
					t.Errorf("%s: %s is %s (%s), want %s", c.persona, feature, got.Status, got.Detail, status)
				}
			}
			for _, q := range log.texts() {
				up := strings.ToUpper(q)
				for _, word := range []string{"CREATE ", "ALTER ", "DROP ", "DBCC", "FN_DBLOG", "INSERT", "UPDATE", "DELETE", "EXEC"} {
					if strings.Contains(up, word) {
						t.Errorf("the doctor sent %q", q)
					}
				}
			}
			if s := testsql.EventSessions(t, db, ""); len(s) != 0 && c.persona != "azure-sql-database" {
				t.Errorf("sessions after the doctor: %v", s)
			}
		})
	}
}

// A server that lacks an action says which: SQL Server 2019 has no
// package0.callstack_rva (2022+), and the call stacks check names it.
func TestDiagnoseMissingAction(t *testing.T) {
	srv := startWithModules(t, "sql2019", nil)
	tr, _, _ := newTracer(t, srv.dsn, Policy{})
	d, err := Diagnose(context.Background(), tr.open)
	if err != nil {
		t.Fatal(err)
	}
	c := checkOf(t, d, "call stacks")
	if c.Status != CheckDegraded || !strings.Contains(c.Detail, "package0.callstack_rva") {
		t.Errorf("call stacks on 2019: %+v", c)
	}
	if e := checkOf(t, d, "events"); e.Status != CheckOK {
		t.Errorf("events on 2019: %+v", e)
	}
}

// A login without the event-session permissions is told what to grant.
func TestDiagnoseMissingPermissions(t *testing.T) {
	srv := startStandin(t)
	tr, _, _ := newTracer(t, standin.DSN("reader", "Reader-Pass1", srv.running.Addr, "QueryReplayDemo"), Policy{})
	d, err := Diagnose(context.Background(), tr.open)
	if err != nil {
		t.Fatal(err)
	}
	c := checkOf(t, d, "trace sessions")
	if c.Status != CheckUnavailable || !strings.Contains(c.Detail, "ALTER ANY EVENT SESSION") {
		t.Errorf("trace sessions for a reader: %+v", c)
	}
	if d.Worst() != CheckUnavailable {
		t.Errorf("worst %s", d.Worst())
	}
}
