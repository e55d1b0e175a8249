package exporter

import (
	"context"
	"database/sql"
	"github.com/queryreplay/queryreplay/internal/testsql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// At start the exporter drops the trace sessions whose owner is gone (a
// probe or a trace killed with its process), and leaves alone a trace
// session whose owner is alive and every queryreplay_exporter_* session.
func TestStartSweepsOrphanedTraceSessions(t *testing.T) {
	run := startStandin(t)
	db := workloadDB(t, run.DSN)
	var aliveSPID int
	if err := db.QueryRow("SELECT @@SPID").Scan(&aliveSPID); err != nil {
		t.Fatal(err)
	}
	var login time.Time
	if err := db.QueryRow("SELECT login_time FROM sys.dm_exec_sessions WHERE session_id = @@SPID").Scan(&login); err != nil {
		t.Fatal(err)
	}
	gone, _ := tracer.NewOwnedSessionName(tracer.SessionOwner{SPID: 999, LoginTime: time.Now().Add(-time.Hour)})
	alive, _ := tracer.NewOwnedSessionName(tracer.SessionOwner{SPID: aliveSPID, LoginTime: login})
	other := "queryreplay_exporter_prod"
	for _, name := range []string{gone, alive, other} {
		s := tracer.SessionSpec{Name: name, SPID: 999, Directory: "/var/opt/mssql/log", MaxFileSizeMB: 2}
		runSQL(t, db, s.CreateDDL())
	}
	e := newTestExporter(t, testConfig(t, oneTarget(""), map[string]string{"standin": run.DSN}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.Start(ctx)
	res, err := e.waitSweeps(ctx)
	if err != nil || len(res) != 1 {
		t.Fatalf("sweeps %v, %v", res, err)
	}
	if res[0].err != nil || res[0].dropped != 1 || res[0].target != "standin" {
		t.Fatalf("sweep of %s dropped %d: %v", res[0].target, res[0].dropped, res[0].err)
	}
	left := eventSessions(t, db)
	if slices.Contains(left, gone) || !slices.Contains(left, alive) || !slices.Contains(left, other) {
		t.Fatalf("sessions left: %v (want %s dropped, %s and %s kept)", left, gone, alive, other)
	}
}

// An unreachable target's sweep fails with an error that names no secret,
// and the exporter goes on.
func TestStartSweepFailureIsReported(t *testing.T) {
	e := newTestExporter(t, testConfig(t, oneTarget(""), map[string]string{"standin": "sqlserver://sa:Sup3rSecret@127.0.0.1:1?dial+timeout=1"}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.Start(ctx)
	res, err := e.waitSweeps(ctx)
	if err != nil || len(res) != 1 || res[0].err == nil {
		t.Fatalf("sweeps %v, %v: want one failure", res, err)
	}
	if strings.Contains(res[0].err.Error(), "Sup3rSecret") {
		t.Fatalf("the error shows the password: %v", res[0].err)
	}
}

// eventSessions lists the server's event sessions (sys.server_event_sessions).
func eventSessions(t *testing.T, db *sql.DB) []string {
	t.Helper()
	return testsql.EventSessions(t, db, "")
}
