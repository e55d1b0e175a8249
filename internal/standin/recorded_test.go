package standin

import (
	"strings"
	"testing"
)

// RecordedEvents counts what a session recorded, by event name, and keeps
// counting across DROP and CREATE of the same name; FlushEventSessions puts
// the pending events into the file, where fn_xe_file_target_read_file
// finds exactly as many.
func TestRecordedEventsMatchTheFile(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 60)
	create := "CREATE EVENT SESSION rec ON SERVER ADD EVENT sqlserver.sql_statement_completed (ACTION (package0.event_sequence)), " +
		"ADD EVENT sqlos.wait_info ADD TARGET package0.event_file (SET filename = N'rec.xel') WITH (MAX_DISPATCH_LATENCY = 30 SECONDS)"
	mustRun(t, c, create)
	mustRun(t, c, "ALTER EVENT SESSION rec ON SERVER STATE = START")
	mustRun(t, c, "SELECT 1; SELECT 2; WAITFOR DELAY '00:00:00.010'")
	srv.FlushEventSessions()
	got := srv.RecordedEvents("rec")
	if got["sql_statement_completed"] < 3 {
		t.Fatalf("recorded %v, want at least the 3 statements", got)
	}
	r := mustRun(t, c, "SELECT object_name FROM sys.fn_xe_file_target_read_file(N'rec*.xel', NULL, NULL, NULL)")
	inFile := map[string]int64{}
	for _, row := range r.sets[len(r.sets)-1].rows {
		inFile[row[0].(string)]++
	}
	for ev, n := range got {
		if inFile[ev] != n {
			t.Errorf("%s: recorded %d, file has %d", ev, n, inFile[ev])
		}
	}
	mustRun(t, c, "DROP EVENT SESSION rec ON SERVER")
	mustRun(t, c, create)
	mustRun(t, c, "ALTER EVENT SESSION rec ON SERVER STATE = START")
	mustRun(t, c, "SELECT 3")
	if after := srv.RecordedEvents("rec"); after["sql_statement_completed"] <= got["sql_statement_completed"] {
		t.Errorf("counts restarted with the session: before %v, after %v", got, after)
	}
	files := srv.EventFiles("/var/opt/mssql/log/rec_0_")
	if len(files) != 2 {
		t.Errorf("event files %v, want the two sessions' files", files)
	}
	for p := range files {
		if !strings.HasSuffix(p, ".xel") {
			t.Errorf("file %s", p)
		}
	}
}
