package standin

import (
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

// slowQuery runs for seconds of event time: a cross join counted, with
// nothing in it that the stand-in treats specially.
const slowQuery = "SELECT COUNT(*) FROM dbo.Products AS a CROSS JOIN dbo.Customers AS b CROSS JOIN dbo.Products AS c WHERE c.ProductID <= 1"

// profileSums reads sys.dm_exec_query_profiles for spid: the rows summed
// over operators and threads, and how many rows the view returned.
func profileSums(t *testing.T, c *connState, spid int) (rows int64, n int) {
	t.Helper()
	r := mustRun(t, c, "SELECT node_id, physical_operator_name, thread_id, row_count, estimate_row_count, open_time, close_time, logical_read_count FROM sys.dm_exec_query_profiles WHERE session_id = "+itoa(int64(spid)))
	for _, row := range r.sets[0].rows {
		rows += row[3].(int64)
		if row[1].(string) == "" {
			t.Fatalf("an operator without a name: %v", row)
		}
	}
	return rows, len(r.sets[0].rows)
}

// TestQueryProfilesWhileRunning: the view shows the running query's
// operators with rows that grow, and nothing once it has ended; the
// statistics XML is its plan.
func TestQueryProfilesWhileRunning(t *testing.T) {
	srv := New(Options{PaceToWallClock: true, Persona: "sql2019"})
	a, b := session(t, srv, 51), session(t, srv, 52)
	done := make(chan *recorder, 1)
	began := time.Now()
	go func() {
		r, err := run(a, slowQuery)
		if err != nil {
			t.Errorf("slow query: %v", err)
		}
		done <- r
	}()
	var seen []int64
	ended := false
	testenv.WaitFor(t, 60*time.Second, "the running query's rows to grow", func() bool {
		select {
		case <-done:
			ended = true
			return true
		default:
		}
		rows, n := profileSums(t, b, 51)
		if n > 0 && rows > 0 && (len(seen) == 0 || rows > seen[len(seen)-1]) {
			seen = append(seen, rows)
		}
		return len(seen) >= 3
	})
	if ended || len(seen) < 3 {
		t.Fatalf("the query ended after %s with the rows seen growing only %v", time.Since(began), seen)
	}
	x := mustRun(t, b, "SELECT session_id, query_plan FROM sys.dm_exec_query_statistics_xml(51)")
	if len(x.sets[0].rows) != 1 || !strings.Contains(x.sets[0].rows[0][1].(string), "<ShowPlanXML") {
		t.Fatalf("dm_exec_query_statistics_xml while running: %v", x.sets[0].rows)
	}
	<-done
	t.Logf("the query ran %s", time.Since(began))
	if _, n := profileSums(t, b, 51); n != 0 {
		t.Fatalf("%d rows once the query ended", n)
	}
	if x := mustRun(t, b, "SELECT session_id FROM sys.dm_exec_query_statistics_xml(51)"); len(x.sets[0].rows) != 0 {
		t.Fatalf("dm_exec_query_statistics_xml after the end: %v", x.sets[0].rows)
	}
}

// TestQueryProfilesNeedProfiling: before SQL Server 2019 a query is
// profiled only with trace flag 7412 or an event session capturing the
// profile events; and the view needs VIEW SERVER STATE.
func TestQueryProfilesNeedProfiling(t *testing.T) {
	srv := New(Options{PaceToWallClock: true, Persona: "sql2017", ExtraLogins: map[string]string{"reader": "Reader-Pass1"}})
	a, b := session(t, srv, 51), session(t, srv, 52)
	for _, flag := range []bool{false, true} {
		if flag {
			mustRun(t, b, "DBCC TRACEON(7412, -1)")
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(a, slowQuery)
		}()
		saw := false
		testenv.WaitFor(t, 60*time.Second, "the query to end", func() bool {
			select {
			case <-done:
				return true
			default:
			}
			rows, _ := profileSums(t, b, 51)
			saw = saw || rows > 0
			return saw && flag
		})
		mustRun(t, b, "SELECT 1") // the query may still run: wait for it
		<-done
		if saw != flag {
			t.Fatalf("trace flag 7412 %v: profiled rows seen %v", flag, saw)
		}
	}
	res, err := srv.Login(t.Context(), tdsSession(53), loginReq("reader", "Reader-Pass1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, e := run(res.Session.(*connState), "SELECT node_id FROM sys.dm_exec_query_profiles"); e == nil || e.Number != 300 {
		t.Fatalf("without VIEW SERVER STATE: %v, want Msg 300", e)
	}
}
