package standin

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

const requestsQuery = "SELECT session_id, status, command, blocking_session_id, wait_type, wait_time, wait_resource, last_wait_type, database_id " +
	"FROM sys.dm_exec_requests ORDER BY session_id"

// A session waiting for another's lock shows in sys.dm_exec_requests as
// suspended, with the blocker's id, the wait type, a growing wait time and
// the locked key; the blocker, idle in its open transaction, has no
// request, and sys.dm_exec_sessions names it. A login without VIEW SERVER
// STATE sees only its own request and session.
func TestRequestsShowLockWait(t *testing.T) {
	srv := New(Options{ExtraLogins: map[string]string{"reader": "pw"}})
	holder, waiter, watcher := session(t, srv, 51), session(t, srv, 52), session(t, srv, 53)
	holder.host, holder.app = "web01", "orders-app"
	mustRun(t, holder, "BEGIN TRAN; UPDATE dbo.Orders SET Status = N'Hold' WHERE OrderID = 500")

	// no lock wait yet: only the caller's own request
	rows := mustRun(t, watcher, requestsQuery).sets[0].rows
	if len(rows) != 1 || rows[0][0] != int64(53) || rows[0][1] != "running" || rows[0][3] != int64(0) || rows[0][4] != nil {
		t.Fatalf("before the wait: %v", rows)
	}

	began := time.Now()
	done := runAsync(waiter, "SELECT o.OrderID, o.Status FROM dbo.Orders AS o WHERE o.OrderID = 500")
	waitBlocked(t, srv, waiter)
	// wait_time grows while the wait lasts: watch it pass 25 ms (bounded),
	// and never exceed the time since the request began
	var w []any
	testenv.WaitFor(t, 10*time.Second, "the waiter's wait_time to pass 25 ms", func() bool {
		rows = mustRun(t, watcher, requestsQuery).sets[0].rows
		if len(rows) != 2 {
			t.Fatalf("while blocked: %v, want the waiter's and the watcher's requests", rows)
		}
		w = rows[0]
		if w[0] != int64(52) || w[1] != "suspended" || w[2] != "SELECT" || w[3] != int64(51) || w[4] != "LCK_M_S" || w[7] != "LCK_M_S" || w[8] != int64(srv.demo.ID) {
			t.Fatalf("waiter's request: %v", w)
		}
		return w[5].(int64) >= 25
	})
	if ms, most := w[5].(int64), time.Since(began).Milliseconds(); ms > most {
		t.Errorf("wait_time %d ms, but the request began only %d ms ago", ms, most)
	}
	if res := w[6].(string); !strings.HasPrefix(res, "KEY: ") || !strings.Contains(res, " (") || !strings.HasSuffix(res, ")") {
		t.Errorf("wait_resource %q, want KEY: db:hobt (hash)", res)
	}
	// the key in wait_resource is the one the holder's X lock is on
	var heldKeys []string
	for _, r := range mustRun(t, watcher, "SELECT resource_description, resource_associated_entity_id, request_mode FROM sys.dm_tran_locks WHERE request_session_id = 51 AND resource_type = N'KEY'").sets[0].rows {
		if r[2] == "X" && strings.HasSuffix(w[6].(string), fmt.Sprintf(":%d %s", r[1], r[0])) {
			heldKeys = append(heldKeys, r[0].(string))
		}
	}
	if len(heldKeys) != 1 {
		t.Errorf("wait_resource %q names none of the holder's X key locks", w[6])
	}

	sess := mustRun(t, watcher, "SELECT session_id, login_name, host_name, program_name, status FROM sys.dm_exec_sessions WHERE session_id IN (51, 52) ORDER BY session_id").sets[0].rows
	if len(sess) != 2 || sess[0][2] != "web01" || sess[0][3] != "orders-app" || sess[0][4] != "sleeping" || sess[1][4] != "running" {
		t.Fatalf("sessions: %v", sess)
	}
	ib := mustRun(t, watcher, "SELECT event_type, event_info FROM sys.dm_exec_input_buffer(51, NULL)").sets[0].rows
	if len(ib) != 1 || ib[0][0] != "Language Event" || !strings.Contains(ib[0][1].(string), "UPDATE dbo.Orders") {
		t.Fatalf("input buffer: %v", ib)
	}

	reader := session(t, srv, 54)
	reader.user, reader.sysadmin = "reader", false
	if rows := mustRun(t, reader, requestsQuery).sets[0].rows; len(rows) != 1 || rows[0][0] != int64(54) {
		t.Errorf("reader sees requests %v, want its own only", rows)
	}
	if rows := mustRun(t, reader, "SELECT session_id FROM sys.dm_exec_sessions").sets[0].rows; len(rows) != 1 || rows[0][0] != int64(54) {
		t.Errorf("reader sees sessions %v, want its own only", rows)
	}
	if rows := mustRun(t, reader, "SELECT event_info FROM sys.dm_exec_input_buffer(51, NULL)").sets[0].rows; len(rows) != 0 {
		t.Errorf("reader reads another session's input buffer: %v", rows)
	}

	mustRun(t, holder, "ROLLBACK")
	if res := <-done; res.err != nil {
		t.Fatal(res.err)
	}
	rows = mustRun(t, watcher, requestsQuery).sets[0].rows
	if len(rows) != 1 || rows[0][0] != int64(53) {
		t.Fatalf("after the wait: %v", rows)
	}
	// the waiter's wait is over; its last_wait_type stays for its next request
	waiter.srv.mu.Lock()
	last := waiter.lockWait.lastWaitType
	waiter.srv.mu.Unlock()
	if last != "LCK_M_S" {
		t.Errorf("last wait type %q", last)
	}
	if _, err := run(watcher, "SELECT * FROM sys.dm_exec_input_buffer(51)"); err == nil || err.Number != 313 {
		t.Errorf("one argument: %v, want Msg 313", err)
	}
}

// The lock_blocking scenario's blocker (SPID 999, set up by
// PrepareScenario) is a session the DMVs show: the traced statement waits
// for it while it holds its lock.
func TestRequestsShowScenarioBlocker(t *testing.T) {
	srv := New(Options{})
	sc := scenarioByName("lock_blocking")
	release, err := PrepareScenario(context.Background(), srv, *sc)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	traced, watcher := session(t, srv, 51), session(t, srv, 52)
	done := runAsync(traced, sc.SQL)
	waitBlocked(t, srv, traced)
	rows := mustRun(t, watcher, "SELECT blocking_session_id, wait_type FROM sys.dm_exec_requests WHERE session_id = 51").sets[0].rows
	if len(rows) != 1 || rows[0][0] != int64(holdSPID) || rows[0][1] != "LCK_M_S" {
		t.Fatalf("traced request: %v", rows)
	}
	sess := mustRun(t, watcher, "SELECT login_name, program_name, status FROM sys.dm_exec_sessions WHERE session_id = 999").sets[0].rows
	if len(sess) != 1 || sess[0][0] != "demo_blocker" || sess[0][1] != "QueryReplay demo blocker" || sess[0][2] != "sleeping" {
		t.Fatalf("blocker session: %v", sess)
	}
	if res := <-done; res.err != nil {
		t.Fatal(res.err)
	}
}
