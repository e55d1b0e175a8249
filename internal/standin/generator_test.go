package standin

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestGenerateTraceShape(t *testing.T) {
	for _, ops := range []int{1, 2, 5, 8} {
		tr, err := GenerateTrace(100, ops)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for _, e := range tr.Events {
			counts[e.Name]++
		}
		if counts["physical_page_read"] != 100 || counts["lock_acquired"] != 100 || counts["wait_info"] != 200 {
			t.Fatalf("ops=%d: per-page events wrong: %v", ops, counts)
		}
		if counts["query_thread_profile"] != ops {
			t.Fatalf("ops=%d: want one query_thread_profile per operator, got %d", ops, counts["query_thread_profile"])
		}
		if got := strings.Count(tr.PlanXML, "<RelOp "); got != ops {
			t.Fatalf("ops=%d: plan has %d RelOps", ops, got)
		}
		if err := xml.Unmarshal([]byte(tr.PlanXML), new(struct{})); err != nil {
			t.Fatalf("plan XML: %v", err)
		}
		// event_sequence is contiguous and timestamps never go back
		for i := 1; i < len(tr.Events); i++ {
			if tr.Events[i].Timestamp.Before(tr.Events[i-1].Timestamp) {
				t.Fatalf("time goes back at %d", i)
			}
			if tr.Events[i].FileOffset < tr.Events[i-1].FileOffset {
				t.Fatalf("file offset goes back at %d", i)
			}
		}
	}
	if _, err := GenerateTrace(0, 1); err == nil {
		t.Fatal("pages=0 accepted")
	}
	if _, err := GenerateTrace(1, 0); err == nil {
		t.Fatal("operators=0 accepted")
	}
}

func TestGenerateTraceManyEventsPerMillisecond(t *testing.T) {
	tr, err := GenerateTrace(2000, 3)
	if err != nil {
		t.Fatal(err)
	}
	perMs := map[string]int{}
	for _, e := range tr.Events {
		perMs[e.Timestamp.Format("15:04:05.000")]++
	}
	max := 0
	for _, n := range perMs {
		if n > max {
			max = n
		}
	}
	if max < 5 {
		t.Fatalf("want many events per millisecond, max %d", max)
	}
}

// BenchmarkGenerateTrace1M measures producing a 1,000,000-event trace.
func BenchmarkGenerateTrace1M(b *testing.B) {
	for i := 0; i < b.N; i++ {
		tr, err := GenerateTrace(200000, 15)
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Events) < 1000000 {
			b.Fatalf("only %d events", len(tr.Events))
		}
	}
}

// BenchmarkScenarioTrace measures one traced scenario run through the
// engine (cold buffer pool, event_file target) plus reading it back.
func BenchmarkScenarioTrace(b *testing.B) {
	srv := New(Options{})
	c := session(b, srv, 51)
	mustRun(b, c, allEventsSession)
	sql := ""
	for _, s := range Scenarios() {
		if s.Name == "sort_spill" {
			sql = s.SQL
		}
	}
	b.ResetTimer()
	events := 0
	for i := 0; i < b.N; i++ {
		mustRun(b, c, "DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS; DBCC TRACEON(652) WITH NO_INFOMSGS; ALTER EVENT SESSION sc ON SERVER STATE = START")
		mustRun(b, c, sql)
		mustRun(b, c, "ALTER EVENT SESSION sc ON SERVER STATE = STOP")
		r := mustRun(b, c, "SELECT object_name FROM sys.fn_xe_file_target_read_file('sc*.xel', NULL, NULL, NULL)")
		events = len(r.sets[0].rows)
	}
	// every START opens a new file and the pattern reads them all
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}
