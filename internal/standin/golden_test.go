package standin

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %.300s\nwant: %.300s", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", name, len(gl), len(wl))
	}
}
