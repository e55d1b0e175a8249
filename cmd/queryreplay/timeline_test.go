package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
)

// writeEvents writes events as event_file XML rows, one per line, the way a
// fn_xe_file_target_read_file dump looks.
func writeEvents(t *testing.T, events []xe.Event) string {
	t.Helper()
	var buf []byte
	for i := range events {
		buf = events[i].AppendXML(buf, xe.FormEventFile)
		buf = append(buf, '\n')
	}
	path := filepath.Join(t.TempDir(), "events.xml")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func timelineEvents(withPlan string) []xe.Event {
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	seq := uint64(0)
	ev := func(ms int, name string, fields ...xe.Field) xe.Event {
		seq++
		ts := base.Add(time.Duration(ms) * time.Millisecond)
		return xe.Event{Name: name, Package: "sqlserver", Timestamp: xe.Timestamp{Raw: ts.Format("2006-01-02T15:04:05.000Z"), Time: ts},
			Fields:  fields,
			Actions: []xe.Field{{Name: "event_sequence", Package: "package0", Value: xe.UintValue(seq)}, {Name: "database_id", Package: "sqlserver", Value: xe.UintValue(5)}}}
	}
	read := func(ms int, page uint64) xe.Event {
		return ev(ms, "physical_page_read", xe.Field{Name: "file_id", Value: xe.UintValue(1)}, xe.Field{Name: "page_id", Value: xe.UintValue(page)})
	}
	out := []xe.Event{ev(0, "sql_batch_starting", xe.Field{Name: "batch_text", Value: xe.StringValue("SELECT")}), read(1, 300), read(2, 400), read(2, 401)}
	if withPlan != "" {
		out = append(out, ev(3, "query_post_execution_showplan", xe.Field{Name: "showplan_xml", Value: xe.XMLValue(withPlan)}))
	}
	return append(out, ev(4, "sql_batch_completed", xe.Field{Name: "duration", Value: xe.UintValue(4000)}))
}

const keyLookupPlan = "../../pkg/timeline/testdata/plans/KeyLookup.sqlplan"

func TestTimelineCommandJSON(t *testing.T) {
	events := writeEvents(t, timelineEvents(""))
	catalog := filepath.Join(t.TempDir(), "catalog.json")
	os.WriteFile(catalog, []byte(`{"pages":[
		{"databaseId":5,"fileId":1,"pageId":300,"schema":"dbo","table":"Users","index":"IX_DisplayName"},
		{"databaseId":5,"fileId":1,"pageId":400,"schema":"dbo","table":"Users","index":"PK_Users_Id"},
		{"databaseId":5,"fileId":1,"pageId":401,"schema":"dbo","table":"Users","index":"PK_Users_Id"}]}`), 0o644)
	code, out, errOut := runCLI(t, "timeline", "--plan", keyLookupPlan, "--events", events, "--catalog", catalog, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tr struct {
		Start, End int64
		Operators  []struct {
			ID                    int
			Start, FirstEmit, End int64
			Phases                []struct{ Kind string }
		}
		Lanes struct {
			Read []struct {
				T      int64
				NodeID *int `json:"nodeId"`
				Rule   string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("output is not the trace JSON: %v\n%s", err, out)
	}
	if len(tr.Operators) != 3 || len(tr.Lanes.Read) != 3 {
		t.Fatalf("operators %d reads %d", len(tr.Operators), len(tr.Lanes.Read))
	}
	want := []int{3, 5, 5}
	for i, r := range tr.Lanes.Read {
		if r.NodeID == nil || *r.NodeID != want[i] || r.Rule != "object" {
			t.Errorf("read %d: %+v", i, r)
		}
	}
	if tr.Lanes.Read[1].T != 2000 || tr.Lanes.Read[2].T != 2500 {
		t.Errorf("coincident reads not spread: %+v", tr.Lanes.Read)
	}
}

func TestTimelineCommandPlanFromEvents(t *testing.T) {
	plan, err := os.ReadFile(keyLookupPlan)
	if err != nil {
		t.Fatal(err)
	}
	// The event carries the plan as XML without the declaration.
	text := string(plan)
	if i := strings.Index(text, "<ShowPlanXML"); i >= 0 {
		text = text[i:]
	}
	events := writeEvents(t, timelineEvents(text))
	code, out, errOut := runCLI(t, "timeline", "--events", events)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Trace: 6 events", "Key Lookup", "Index Seek", "read"} {
		// issue 26: the lookup is named Key Lookup, as SSMS names it
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestTimelineCommandErrors(t *testing.T) {
	events := writeEvents(t, timelineEvents(""))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"timeline", "--events", events}, "no --plan given and no query_post_execution_showplan"},
		{[]string{"timeline", "--plan", "/nonexistent.sqlplan", "--events", events}, "plan:"},
		{[]string{"timeline", "--plan", keyLookupPlan, "--events", "/nonexistent.xml"}, "events:"},
		{[]string{"timeline", "--plan", keyLookupPlan, "--events", events, "--statement", "9"}, "statement 9 does not exist"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestTimelineCommandSummaryReportsFidelity: the text summary says what
// the trace could not know for sure — duplicates dropped, where events
// were lost, ambiguous matches, operators that never ran or ran many times.
func TestTimelineCommandSummaryReportsFidelity(t *testing.T) {
	evs := timelineEvents("")
	evs = append(evs, evs[1]) // the first read fed twice
	last := &evs[len(evs)-2]  // sql_batch_completed: sequences 5–8 lost
	last.Actions[0].Value = xe.UintValue(9)
	events := writeEvents(t, evs)
	code, out, errOut := runCLI(t, "timeline", "--plan", "../../pkg/timeline/testdata/plans/adaptive_join.sqlplan", "--events", events)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Trace: 5 events", "4 lost", "1 duplicate dropped",
		"gap: 4 events lost between 2.500 ms and 4.000 ms",
		"not executed", // the adaptive join's hash branch
		"x10",          // the index seek ran 10 times
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestTimelineCommandBadCatalog(t *testing.T) {
	events := writeEvents(t, timelineEvents(""))
	catalog := filepath.Join(t.TempDir(), "catalog.json")
	os.WriteFile(catalog, []byte(`{"pages":[{"fileId":1,"pageId":3}]}`), 0o644)
	code, _, errOut := runCLI(t, "timeline", "--plan", keyLookupPlan, "--events", events, "--catalog", catalog)
	if code == 0 || !strings.Contains(errOut, "pages[0] has no table name") || !strings.Contains(errOut, catalog) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
