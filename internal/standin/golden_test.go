package standin

import (
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
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
	checkGoldenTraceFacts(t, c, b.String())
}

// checkGoldenTraceFacts asserts, independently of the golden file, what
// the trace must hold whatever its exact bytes: the events that carry
// event_sequence (which counts every event of the session) come in
// increasing order; every lock acquired is released; every page read
// from disk has its file read; and the batch read the rows an ordinary
// query says customer 42 has, one key lookup each.
func checkGoldenTraceFacts(t *testing.T, c *connState, events string) {
	t.Helper()
	count := map[string]int{}
	seq := regexp.MustCompile(`<action name="event_sequence" package="package0"><value>(\d+)</value>`)
	last := 0
	for i, line := range strings.Split(strings.TrimSpace(events), "\n") {
		name := regexp.MustCompile(`^<event name="(\w+)"`).FindStringSubmatch(line)
		if name == nil {
			t.Fatalf("event %d has no name: %.200s", i, line)
		}
		count[name[1]]++
		if m := seq.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n <= last {
				t.Fatalf("event %d (%s) has event_sequence %d after %d", i+1, name[1], n, last)
			}
			last = n
		}
	}
	if last == 0 {
		t.Fatal("no event carries event_sequence")
	}
	if count["lock_acquired"] == 0 || count["lock_acquired"] != count["lock_released"] {
		t.Errorf("%d locks acquired, %d released", count["lock_acquired"], count["lock_released"])
	}
	if count["physical_page_read"] == 0 || count["physical_page_read"] != count["file_read"] {
		t.Errorf("%d physical page reads, %d file reads (a cold cache reads every page from its file)", count["physical_page_read"], count["file_read"])
	}
	if count["query_post_execution_showplan"] != 1 {
		t.Errorf("%d actual plans, want 1", count["query_post_execution_showplan"])
	}
	rows := mustRun(t, c, "SELECT COUNT(*) FROM dbo.Orders WHERE CustomerID = 42").sets[0].rows
	want := fmt.Sprint(rows[0][0])
	lookup := regexp.MustCompile(`<RelOp [^>]*LogicalOp="Clustered Index Seek"[^>]*>(?s:.*?)<RunTimeCountersPerThread [^>]*ActualRows="(\d+)"[^>]*ActualExecutions="(\d+)"`).FindStringSubmatch(events)
	if lookup == nil {
		t.Fatal("the plan has no Clustered Index Seek (the key lookup) with runtime counters")
	}
	if lookup[1] != want || lookup[2] != want {
		t.Errorf("key lookup: %s rows in %s executions; customer 42 has %s orders", lookup[1], lookup[2], want)
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", "golden", name), []byte(got), *update)
}
