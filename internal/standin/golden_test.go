package standin

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGoldenTrace pins the full event_file output and plan of one scenario
// run on a cold buffer pool with a fixed clock. Run with -update after an
// intended change and review the diff.
func TestGoldenTrace(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	srv := New(Options{Now: func() time.Time { return now }})
	c := session(t, srv, 53)
	mustRun(t, c, allEventsSession)
	mustRun(t, c, "DBCC DROPCLEANBUFFERS; DBCC TRACEON(652)")
	mustRun(t, c, "ALTER EVENT SESSION sc ON SERVER STATE = START")
	mustRun(t, c, scenarioSQL(t, "seek_key_lookup"))
	mustRun(t, c, "ALTER EVENT SESSION sc ON SERVER STATE = STOP")
	rows := mustRun(t, c, "SELECT event_data, file_offset FROM sys.fn_xe_file_target_read_file('sc*.xel', NULL, NULL, NULL)").sets[0].rows
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r[0].(string))
		b.WriteString("\n")
	}
	checkGolden(t, "seek_key_lookup.events.xml", b.String())
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", "golden", name), []byte(got), *update)
}
