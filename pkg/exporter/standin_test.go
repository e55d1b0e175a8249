package exporter

import (
	"context"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// The exporter's counts equal the events the stand-in's session recorded,
// event by event, over several polls of a workload that fires every group.
func TestCountsEqualRecordedEvents(t *testing.T) {
	f := newFixture(t, "", "")
	run, e, db := f.run, f.e, f.db
	for round := 0; round < 3; round++ {
		f.round(t, round)
	}
	insertOrders(t, db, 9, 150) // at least one page split
	run.Server.FlushEventSessions()
	pollOK(t, e)
	rec := assertCountsMatch(t, e, run, sessionOf(t, e, "standin"))
	// a bare file name is created in the error log's directory, where SQL
	// Server would put it, so the read pattern is known from the start
	if got := e.targets[0].spec.file; got != "/var/opt/mssql/log/"+sessionOf(t, e, "standin")+".xel" {
		t.Errorf("event file %s", got)
	}
	for _, ev := range []string{"sort_warning", "wait_info", "physical_page_read", "page_split", "sql_statement_completed", "query_memory_grant_usage"} {
		if rec[ev] == 0 {
			t.Errorf("the workload recorded no %s event", ev)
		}
	}
}

// restarts returns the session_restarts_total of a reason.
func restarts(t *testing.T, e *Exporter, reason string) float64 {
	return sum(gather(t, e), "queryreplay_exporter_session_restarts_total", labels("reason", reason))
}

// A session dropped by someone else is created again at the next poll; the
// events the old session flushed at DROP are still read from its files,
// and nothing is counted twice.
func TestSurvivesSessionLoss(t *testing.T) {
	f := newFixture(t, "", "")
	run, e, db := f.run, f.e, f.db
	f.round(t, 0)
	mixedWorkload(t, db, 1) // still pending in the session's buffers
	runSQL(t, db, "DROP EVENT SESSION "+sessionOf(t, e, "standin")+" ON SERVER")
	mixedWorkload(t, db, 2) // no session: nothing recorded
	pollOK(t, e)
	if got := restarts(t, e, "created"); got != 1 {
		t.Fatalf("session_restarts_total{reason=created} = %v, want 1", got)
	}
	mixedWorkload(t, db, 3)
	run.Server.FlushEventSessions()
	pollOK(t, e)
	assertCountsMatch(t, e, run, sessionOf(t, e, "standin"))
}

// A service restart stops the session (STARTUP_STATE = OFF) and drops the
// exporter's connection: the poll during the outage reports the target
// down, the next one reconnects, starts the session again and goes on.
func TestSurvivesServerRestart(t *testing.T) {
	f := newFixture(t, "", "")
	run, e, db := f.run, f.e, f.db
	f.round(t, 0)
	mixedWorkload(t, db, 1) // pending; STOP at the restart flushes it
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	e.PollNow(context.Background())
	if up := sum(gather(t, e), "queryreplay_up", nil); up != 0 {
		t.Fatalf("queryreplay_up = %v while the server is down", up)
	}
	if err := run.Restart(); err != nil {
		t.Fatal(err)
	}
	pollOK(t, e)
	if got := restarts(t, e, "started"); got != 1 {
		t.Fatalf("session_restarts_total{reason=started} = %v, want 1", got)
	}
	db2 := workloadDB(t, run.DSN)
	mixedWorkload(t, db2, 2)
	run.Server.FlushEventSessions()
	pollOK(t, e)
	assertCountsMatch(t, e, run, sessionOf(t, e, "standin"))
	if errs := sum(gather(t, e), "queryreplay_exporter_poll_errors_total", labels("step", "connect")); errs != 1 {
		t.Errorf("poll_errors_total{step=connect} = %v, want 1", errs)
	}
}

// Connections dropped at each statement of a poll fail that poll only;
// the next poll resumes at the bookmark and the counts stay exact.
func TestSurvivesConnectionDrops(t *testing.T) {
	f := newFixture(t, "", "")
	run, e, db := f.run, f.e, f.db
	for i, at := range []string{"fn_xe_file_target_read_file", "dm_xe_sessions", "sys.databases", "dm_exec_query_stats"} {
		mixedWorkload(t, db, i)
		f.run.Server.FlushEventSessions()
		run.Faults().DropConnection(at)
		e.PollNow(context.Background())
		pollOK(t, e)
	}
	assertCountsMatch(t, e, run, sessionOf(t, e, "standin"))
	if errs := sum(gather(t, e), "queryreplay_exporter_poll_errors_total", nil); errs == 0 {
		t.Error("no poll failed: the faults did not fire")
	}
}

// Event files roll over at max_file_size; polled often enough, every file is
// read before max_rollover_files deletes it and nothing is lost.
func TestSurvivesFileRollover(t *testing.T) {
	f := newFixture(t, "", "    session:\n      max_memory_mb: 1\n      event_file: {max_file_size_mb: 1, max_rollover_files: 2}\n")
	run, e, db := f.run, f.e, f.db
	files := map[string]bool{}
	for round := 0; round < 8; round++ {
		mixedWorkload(t, db, round)
		statementVolume(t, db, 1500)
		run.Server.FlushEventSessions()
		pollOK(t, e)
		for f := range run.Server.EventFiles("/var/opt/mssql/log/" + sessionOf(t, e, "standin") + "_0_") {
			files[f] = true
		}
	}
	if len(files) < 3 {
		t.Fatalf("only %d event files were written: the workload did not roll over", len(files))
	}
	assertCountsMatch(t, e, run, sessionOf(t, e, "standin"))
}

// When the bookmarked file rolled over before the exporter read it, the
// server refuses the bookmark; the exporter reads what is left, skipping up
// to the bookmark itself, and counts the events it can no longer see as
// lost: decoded + lost = recorded, exactly.
func TestCountsEventsLostToRollover(t *testing.T) {
	f := newFixture(t, "", "    session:\n      max_memory_mb: 1\n      event_file: {max_file_size_mb: 1, max_rollover_files: 2}\n")
	e, db := f.e, f.db
	f.round(t, 0)
	for round := 1; round < 4; round++ { // several files' worth, unread
		mixedWorkload(t, db, round)
		statementVolume(t, db, 3000)
	}
	f.flushAndPoll(t)
	recorded := f.recordedTotal(t)
	fams := gather(t, e)
	decoded := sum(fams, "queryreplay_exporter_events_decoded_total", nil)
	lost := sum(fams, "queryreplay_exporter_events_lost_total", nil)
	if lost == 0 {
		t.Fatal("no event was lost: the workload did not roll the bookmarked file away")
	}
	if decoded+lost != recorded {
		t.Errorf("decoded %v + lost %v = %v, the stand-in recorded %v", decoded, lost, decoded+lost, recorded)
	}
	if dup := sum(fams, "queryreplay_exporter_events_duplicate_total", nil); dup != 0 {
		t.Errorf("%v duplicates", dup)
	}
}

// On Azure SQL Database the session is database-scoped with a ring_buffer
// target (event files there go only to Blob Storage), chosen from
// EngineEdition 5 without any configuration; on Managed Instance it is
// server-scoped with a ring_buffer. Counts stay exact across polls that
// re-read the whole ring.
func TestAzurePersonasUseTheRingBuffer(t *testing.T) {
	for _, c := range []struct {
		persona string
		scope   tracer.Scope
	}{{"azure-sql-database", tracer.ScopeDatabase}, {"azure-sql-managed-instance", tracer.ScopeServer}} {
		t.Run(c.persona, func(t *testing.T) {
			f := newFixture(t, c.persona, "")
			run, e := f.run, f.e
			spec := e.targets[0].spec
			if spec.target != "ring_buffer" || spec.scope != c.scope {
				t.Fatalf("target %s scope %v", spec.target, spec.scope)
			}
			for round := 0; round < 3; round++ {
				f.round(t, round)
				pollOK(t, e) // the same ring again: nothing new
			}
			assertCountsMatch(t, e, run, sessionOf(t, e, "standin"))
		})
	}
}

// A ring buffer that overwrote events before a poll: decoded + lost equals
// what the session recorded.
func TestRingBufferOverwritesAreCountedAsLost(t *testing.T) {
	f := newFixture(t, "", "    session: {target: ring_buffer, ring_buffer: {max_events: 200}}\n")
	mixedWorkload(t, f.db, 0)
	statementVolume(t, f.db, 500)
	f.flushAndPoll(t)
	recorded := f.recordedTotal(t)
	fams := gather(t, f.e)
	decoded := sum(fams, "queryreplay_exporter_events_decoded_total", nil)
	lost := sum(fams, "queryreplay_exporter_events_lost_total", nil)
	if decoded != 200 || decoded+lost != recorded {
		t.Fatalf("decoded %v (want the ring's 200) + lost %v != recorded %v", decoded, lost, recorded)
	}
}

// An Azure SQL Database target configured for event_file without a blob
// URL is refused with a message that says what to do.
func TestAzureEventFileNeedsBlobStorage(t *testing.T) {
	run := startPersona(t, "azure-sql-database")
	e := newTestExporter(t, testConfig(t, oneTarget("    session: {target: event_file}\n"), map[string]string{"standin": run.DSN}))
	e.PollNow(context.Background())
	last := e.targets[0].st.lastError
	if e.targets[0].st.up || !strings.Contains(last, "Azure Blob Storage") {
		t.Fatalf("up %v, error %q", e.targets[0].st.up, last)
	}
}
