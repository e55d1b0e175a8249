package exporter

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// What a clean shutdown leaves on the server, read from the stand-in's
// session catalog by a connection of its own: sys.server_event_sessions
// (defined sessions,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-server-event-sessions-transact-sql)
// and sys.dm_xe_sessions (running ones,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-sessions-transact-sql).

// sessionCatalog reports whether the session is defined and whether it is
// running.
func sessionCatalog(t *testing.T, db *sql.DB, name string) (defined, running bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.server_event_sessions WHERE name = @p1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var r int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.dm_xe_sessions WHERE name = @p1", name).Scan(&r); err != nil {
		t.Fatal(err)
	}
	if n > 1 || r > 1 {
		t.Fatalf("session %s defined %d times, running %d times", name, n, r)
	}
	return n == 1, r == 1
}

func shutdownNow(t *testing.T, e *Exporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// By default a clean shutdown drops the session: nothing is left defined
// or running on the server.
func TestShutdownDropsTheSessionByDefault(t *testing.T) {
	f := newFixture(t, "", "")
	name := sessionOf(t, f.e, "standin")
	if defined, running := sessionCatalog(t, f.db, name); !defined || !running {
		t.Fatalf("before shutdown: defined %v, running %v", defined, running)
	}
	shutdownNow(t, f.e)
	if defined, running := sessionCatalog(t, f.db, name); defined || running {
		t.Errorf("after shutdown: defined %v, running %v; want the session dropped", defined, running)
	}
}

// With drop_session_on_shutdown: false the session outlives the exporter,
// still running and recording; the next exporter adopts it as it is
// (neither created nor started again) and reads on.
func TestShutdownKeepsTheSessionWhenAsked(t *testing.T) {
	const cfg = "global:\n  poll_interval: 1h\n  poll_timeout: 30s\n  drop_session_on_shutdown: false\n" +
		"targets:\n  - name: standin\n    dsn_env: TEST_DSN_standin\n"
	run := startStandin(t)
	dsns := map[string]string{"standin": run.DSN}
	e := newTestExporter(t, testConfig(t, cfg, dsns))
	pollOK(t, e)
	db := workloadDB(t, run.DSN)
	name := sessionOf(t, e, "standin")
	shutdownNow(t, e)
	if defined, running := sessionCatalog(t, db, name); !defined || !running {
		t.Fatalf("after shutdown: defined %v, running %v; want the session kept running", defined, running)
	}
	before := run.Server.RecordedEvents(name)["sql_statement_completed"]
	statementVolume(t, db, 5)
	if after := run.Server.RecordedEvents(name)["sql_statement_completed"]; after < before+5 {
		t.Errorf("the kept session recorded %d statements of 5 run after the shutdown", after-before)
	}

	next := newTestExporter(t, testConfig(t, cfg, dsns))
	pollOK(t, next)
	if got := sessionOf(t, next, "standin"); got != name {
		t.Fatalf("the next exporter made session %s instead of adopting the orphaned %s", got, name)
	}
	fams := gather(t, next)
	for _, reason := range []string{"created", "started"} {
		if got := sum(fams, "queryreplay_exporter_session_restarts_total", labels("reason", reason)); got != 0 {
			t.Errorf("the next exporter counted session_restarts_total{reason=%q} = %v adopting the kept session", reason, got)
		}
	}
	statementVolume(t, db, 7)
	run.Server.FlushEventSessions()
	pollOK(t, next)
	// the 5 statements recorded while no exporter ran are not counted in
	// one burst by the next (the package doc's start rule); the 7 are
	if got := sum(gather(t, next), "queryreplay_statements_total", nil); got != 7 {
		t.Errorf("the next exporter counted %v statements from the kept session, want the 7 run after it started", got)
	}
	shutdownNow(t, next)
	if defined, _ := sessionCatalog(t, db, name); !defined {
		t.Error("the second shutdown dropped the session although drop_session_on_shutdown is false")
	}
}

// recordedTotal is how many events of every kind the stand-in recorded in
// the named session.
func recordedTotal(run map[string]int64) int64 {
	var n int64
	for _, v := range run {
		n += v
	}
	return n
}

// With drop_session_on_shutdown: false the events the kept session records
// while no exporter runs (the backlog) are not counted as data by the next
// exporter, but they are not silently skipped either: the next one counts
// them in events_lost_total. The expected count is what the stand-in
// recorded between the two processes, of whatever statements ran.
func TestKeptSessionBacklogIsCountedAsLost(t *testing.T) {
	for _, xeTarget := range []string{"event_file", "ring_buffer"} {
		t.Run(xeTarget, func(t *testing.T) { keptSessionBacklog(t, xeTarget) })
	}
}

func keptSessionBacklog(t *testing.T, xeTarget string) {
	cfg := "global:\n  poll_interval: 1h\n  poll_timeout: 30s\n  drop_session_on_shutdown: false\n" +
		"targets:\n  - name: standin\n    dsn_env: TEST_DSN_standin\n    session: {target: " + xeTarget + "}\n"
	run := startStandin(t)
	dsns := map[string]string{"standin": run.DSN}
	e := newTestExporter(t, testConfig(t, cfg, dsns))
	pollOK(t, e)
	db := workloadDB(t, run.DSN)
	name := sessionOf(t, e, "standin")
	statementVolume(t, db, 2) // read by the first exporter's last poll
	run.Server.FlushEventSessions()
	pollOK(t, e)
	shutdownNow(t, e)
	before := recordedTotal(run.Server.RecordedEvents(name))
	for _, n := range []int{3, 4} { // two batches: the backlog spans dispatches
		statementVolume(t, db, n)
		run.Server.FlushEventSessions()
	}
	backlog := recordedTotal(run.Server.RecordedEvents(name)) - before
	if backlog < 7 {
		t.Fatalf("the kept session recorded %d events while no exporter ran, want at least 7", backlog)
	}

	next := newTestExporter(t, testConfig(t, cfg, dsns))
	pollOK(t, next)
	if got := sessionOf(t, next, "standin"); got != name {
		t.Fatalf("the next exporter made session %s instead of adopting %s", got, name)
	}
	fams := gather(t, next)
	if got := sum(fams, "queryreplay_exporter_events_lost_total", nil); got != float64(backlog) {
		t.Errorf("events_lost_total = %v after adopting a session with a backlog of %d events", got, backlog)
	}
	if got := sum(fams, "queryreplay_statements_total", nil); got != 0 {
		t.Errorf("the backlog was counted as %v statements; it is lost, not data", got)
	}
	shutdownNow(t, next)
}
