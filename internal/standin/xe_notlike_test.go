package standin

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestXENotLikePredicateAccepted pins a decision (docs/standin.md §4): the
// infix NOT LIKE in an event session's predicate is accepted, as real SQL
// Server compiles it — microsoft/SqlScriptDOM issue 153 reports this
// statement "successfully compiled on server side" while ScriptDom refused
// it (https://github.com/microsoft/SqlScriptDOM/issues/153). The
// CREATE EVENT SESSION page documents only the comparator functions, so
// the stand-in does not refuse what a server runs; NOT LIKE filters like
// NOT sqlserver.like_i_sql_unicode_string.
func TestXENotLikePredicateAccepted(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	// the statement of the report, with an event_file target and on
	// sql_statement_starting (the stand-in's catalog has no
	// sp_statement_starting, whose source_database_id field it also used)
	mustRun(t, c, `CREATE EVENT SESSION [Trace-07a0784d30f94b6fa1af2bb4650df0e8] ON SERVER
ADD EVENT sqlserver.sql_statement_starting(
    ACTION (sqlserver.plan_handle)
    WHERE (sqlserver.database_id = (1000)
        AND sqlserver.is_system = 0
        AND sqlserver.client_app_name NOT LIKE 'SQLAgent%'))
ADD TARGET package0.event_file(SET FILENAME = N'/tmp/notlike.xel', MAX_FILE_SIZE = (1024), MAX_ROLLOVER_FILES = (10))
WITH (MAX_MEMORY = 4096 KB, EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, MAX_DISPATCH_LATENCY = 1 SECONDS,
    MAX_EVENT_SIZE = 0 KB, MEMORY_PARTITION_MODE = NONE, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF)`)

	// and it filters: the batch matching the pattern is left out
	mustRun(t, c, `CREATE EVENT SESSION nl ON SERVER ADD EVENT sqlserver.sql_batch_starting (
    WHERE (sqlserver.session_id = (51) AND sqlserver.sql_text NOT LIKE N'%skip-me%'))
ADD TARGET package0.ring_buffer WITH (MAX_DISPATCH_LATENCY = 1 SECONDS)`)
	mustRun(t, c, "ALTER EVENT SESSION nl ON SERVER STATE = START")
	mustRun(t, c, "SELECT 1 /* skip-me */")
	mustRun(t, c, "SELECT 2 /* keep-me */")
	if data := ringBufferAfterLatency(t, srv, c, "nl"); strings.Contains(data, "skip-me") || !strings.Contains(data, "keep-me") {
		t.Fatalf("NOT LIKE did not filter the session's events:\n%s", data)
	}
}

// ringBufferAfterLatency advances the event clock past a 1-second dispatch
// latency and returns the ring_buffer target XML of the named session.
func ringBufferAfterLatency(t *testing.T, srv *Server, c *connState, session string) string {
	t.Helper()
	srv.mu.Lock()
	srv.advance(2 * time.Second)
	srv.mu.Unlock()
	r := mustRun(t, c, "SELECT CAST(t.target_data AS nvarchar(max)) FROM sys.dm_xe_session_targets AS t JOIN sys.dm_xe_sessions AS s ON s.address = t.event_session_address WHERE s.name = N'"+session+"'")
	return fmt.Sprint(r.sets[0].rows[0][0])
}
