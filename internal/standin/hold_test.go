package standin

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// spellings returns the lock_blocking scenario's query as written and in
// other spellings of the same statement: another alias, an added no-op
// predicate, other whitespace and case, bracketed names. SQL Server runs
// them all alike; so must the stand-in.
func spellings(t *testing.T) []string {
	t.Helper()
	sql := scenarioSQL(t, "lock_blocking")
	return []string{
		sql,
		sql + " AND 1 = 1",
		"SELECT ord.OrderID, ord.Status, ord.Amount FROM dbo.Orders AS ord WHERE ord.OrderID = 500",
		"SELECT OrderID, Status, Amount FROM dbo.Orders WHERE OrderID = 500 AND 1 = 1",
		strings.ToLower(sql),
		strings.Join(strings.Fields(sql), "\n\t  "),
		"SELECT [o].[OrderID], [o].[Status], [o].[Amount] FROM [dbo].[Orders] [o] WHERE 500 = o.OrderID",
	}
}

// lockWaitCounter counts the LCK_M_* waits session c begins, through an
// event session on wait_info as a tracer would read them.
type lockWaitCounter struct {
	t    *testing.T
	srv  *Server
	c    *connState
	seen int
}

func newLockWaitCounter(t *testing.T, srv *Server, c *connState) *lockWaitCounter {
	mustRun(t, c, "CREATE EVENT SESSION [lw] ON SERVER ADD EVENT sqlos.wait_info(WHERE ([sqlserver].[session_id] = (53))) ADD TARGET package0.event_file (SET filename = N'lw.xel')")
	mustRun(t, c, "ALTER EVENT SESSION lw ON SERVER STATE = START")
	return &lockWaitCounter{t: t, srv: srv, c: c}
}

// since returns how many lock waits began since the last call.
func (w *lockWaitCounter) since() int {
	w.t.Helper()
	w.srv.FlushEventSessions()
	n := 0
	for _, r := range mustRun(w.t, w.c, "SELECT event_data FROM sys.fn_xe_file_target_read_file('lw*.xel', NULL, NULL, NULL)").sets[0].rows {
		xml := r[0].(string)
		if strings.Contains(xml, "CDATA[LCK_M_") && strings.Contains(xml, "CDATA[Begin]") {
			n++
		}
	}
	d := n - w.seen
	w.seen = n
	return d
}

// Without a hold, no spelling of the blocking scenario's query waits for
// a lock: nothing holds one. (Before, the scenario's exact text summoned
// a hidden blocker and other spellings did not.)
func TestNoSpellingIsBlockedWithoutAHold(t *testing.T) {
	srv := New(Options{})
	traced := session(t, srv, 53)
	waits := newLockWaitCounter(t, srv, traced)
	for _, sql := range spellings(t) {
		r := mustRun(t, traced, sql)
		if n := len(r.sets[0].rows); n != 1 {
			t.Errorf("%q: %d rows, want 1", sql, n)
		}
		if n := waits.since(); n != 0 {
			t.Errorf("%q waited for a lock %d times with no other session holding one", sql, n)
		}
	}
}

// With the scenario's set-up in place, every spelling waits for the
// blocker's lock (LCK_M_S, blocked by the hold's own session), and runs
// once the hold is released.
func TestEverySpellingIsBlockedByAHold(t *testing.T) {
	srv := New(Options{})
	traced, watcher := session(t, srv, 53), session(t, srv, 54)
	waits := newLockWaitCounter(t, srv, traced)
	sc := scenarioByName("lock_blocking")
	for _, sql := range spellings(t) {
		h, err := srv.HoldLocks(context.Background(), sc.Blocker, HoldOptions{})
		if err != nil {
			t.Fatal(err)
		}
		done := runAsync(traced, sql)
		select {
		case <-h.Waited():
		case res := <-done:
			h.Release()
			t.Fatalf("%q ran without waiting for the hold: %v", sql, res.err)
		case <-time.After(10 * time.Second):
			h.Release()
			t.Fatalf("%q never waited for the hold", sql)
		}
		rows := mustRun(t, watcher, "SELECT blocking_session_id, wait_type FROM sys.dm_exec_requests WHERE session_id = 53").sets[0].rows
		if len(rows) != 1 || rows[0][0] != int64(h.SessionID()) || rows[0][1] != "LCK_M_S" {
			t.Errorf("%q: request %v, want blocked by %d on LCK_M_S", sql, rows, h.SessionID())
		}
		h.Release()
		res := <-done
		if res.err != nil {
			t.Fatalf("%q: %v", sql, res.err)
		}
		if n := len(res.r.sets[0].rows); n != 1 {
			t.Errorf("%q: %d rows, want 1", sql, n)
		}
		if n := waits.since(); n != 1 {
			t.Errorf("%q: %d lock waits, want 1", sql, n)
		}
	}
}

// A hold given AfterWait lets go by itself once a session has waited on
// it that long: the waiter's LCK_M_S wait lasts about AfterWait without
// the caller timing anything, and the blocker's change is rolled back.
func TestHoldReleasesAfterAWait(t *testing.T) {
	srv := New(Options{})
	traced := session(t, srv, 53)
	h, err := srv.HoldLocks(context.Background(), "UPDATE dbo.Orders SET Status = N'Hold' WHERE OrderID = 500", HoldOptions{AfterWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	r := mustRun(t, traced, "SELECT Status FROM dbo.Orders WHERE OrderID = 500 AND 1 = 1")
	select {
	case <-h.Released():
	default:
		t.Fatal("the statement finished while the hold still held its locks")
	}
	if got := r.sets[0].rows[0][0]; got == "Hold" {
		t.Fatalf("read the blocker's uncommitted change %v", got)
	}
}

// A hold that nobody waits on ends at its hard upper bound.
func TestHoldEndsAtItsBound(t *testing.T) {
	srv := New(Options{})
	h, err := srv.HoldWorkspaceMemory(context.Background(), workspaceKB-256, HoldOptions{Max: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Released():
	case <-time.After(10 * time.Second):
		t.Fatal("the hold outlived its bound")
	}
	srv.mu.Lock()
	n := len(srv.engine().ghosts)
	srv.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d workspace memory holds left", n)
	}
}

// Held workspace memory makes any statement that needs a grant wait
// RESOURCE_SEMAPHORE, whatever its text; released, the statement runs.
func TestHeldMemoryMakesAnyGrantWait(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 53)
	h, err := srv.HoldWorkspaceMemory(context.Background(), workspaceKB-256, HoldOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := runAsync(c, "select ProductID, sum(Quantity) as q from dbo.OrderLines group by ProductID order by q desc")
	select {
	case <-h.Waited():
	case res := <-done:
		h.Release()
		t.Fatalf("the sort ran without waiting for memory: %v", res.err)
	case <-time.After(10 * time.Second):
		h.Release()
		t.Fatal("the sort never waited for memory")
	}
	h.Release()
	if res := <-done; res.err != nil {
		t.Fatal(res.err)
	}
}

// Holds refuse what they cannot honour: a batch that fails (its changes
// rolled back, no session left behind), memory beyond the workspace.
func TestHoldRefusesBadInput(t *testing.T) {
	srv := New(Options{})
	if _, err := srv.HoldLocks(context.Background(), "UPDATE dbo.NoSuchTable SET x = 1", HoldOptions{}); err == nil {
		t.Error("a failing blocker batch was accepted")
	}
	if _, err := srv.HoldLocks(context.Background(), strings.Repeat(" ", maxHoldBatch+1), HoldOptions{}); err == nil {
		t.Error("an oversized blocker batch was accepted")
	}
	srv.mu.Lock()
	n := len(srv.conns)
	srv.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sessions left after failed holds", n)
	}
	for _, kb := range []int64{0, -1, workspaceKB + 1} {
		if _, err := srv.HoldWorkspaceMemory(context.Background(), kb, HoldOptions{}); err == nil {
			t.Errorf("HoldWorkspaceMemory(%d) accepted", kb)
		}
	}
}

// Every statement with a plan reaches the plan cache, not only the demo
// queries: sys.dm_exec_query_stats shows a statement no scenario has.
func TestPlanCacheHoldsEveryStatement(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 60)
	const stmt = "SELECT c.Region, COUNT(*) AS n FROM dbo.Customers AS c WHERE c.CustomerID < 77 GROUP BY c.Region"
	mustRun(t, c, stmt)
	r := mustRun(t, c, "SELECT qs.execution_count, st.text FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st")
	found := false
	for _, row := range r.sets[len(r.sets)-1].rows {
		if row[1] == stmt && row[0] == int64(1) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the statement is not in sys.dm_exec_query_stats: %v", r.sets[len(r.sets)-1].rows)
	}
}

// The plan cache is bounded: past its limit of distinct statements
// the least recently used entries go, and their texts with them.
func TestPlanCacheEvictsLeastRecentlyUsed(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 60)
	first := "SELECT OrderID FROM dbo.Orders WHERE OrderID = 1"
	mustRun(t, c, first)
	const limit = 20
	srv.plans.limit = limit
	for i := 2; i <= limit+10; i++ {
		mustRun(t, c, "SELECT OrderID FROM dbo.Orders WHERE OrderID = "+strconv.Itoa(i))
		if i == limit {
			mustRun(t, c, first) // used again: it survives
		}
	}
	srv.mu.Lock()
	n, texts := srv.plans.lru.Len(), len(srv.plans.texts)
	_, kept := srv.plans.texts[string(sqlHandleOf(first))]
	_, second := srv.plans.texts[string(sqlHandleOf("SELECT OrderID FROM dbo.Orders WHERE OrderID = 2"))]
	srv.mu.Unlock()
	if n != limit || texts != limit {
		t.Errorf("%d entries and %d texts, want %d", n, texts, limit)
	}
	if !kept || second {
		t.Errorf("recently used kept %v, least recently used kept %v", kept, second)
	}
}
