package standin

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

// ordersFingerprint summarises the rows the kill tests modify.
func ordersFingerprint(t *testing.T, c *connState) string {
	t.Helper()
	r := mustRun(t, c, "SELECT COUNT(*), SUM(Amount), MIN(Status), MAX(Status) FROM dbo.Orders WHERE OrderID BETWEEN 100 AND 120")
	return fmt.Sprint(r.sets[0].rows[0]...)
}

// waitUntil waits until cond (checked under the server lock) holds.
func waitUntil(t *testing.T, srv *Server, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, what, func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return cond()
	})
}

// faultConsumed reports whether the Delay rule has fired (the request is
// being held by it).
func faultConsumed(srv *Server) func() bool {
	return func() bool {
		return srv.Faults.Pending() == 0
	}
}

// KILL ends the session: the running request is aborted and never
// completes, its transaction rolls back, and the client finds the
// connection closed
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/kill-transact-sql).
func TestKillAbortsInFlightRequest(t *testing.T) {
	const update = "UPDATE dbo.Orders SET Status = N'Shipped', Amount = Amount + 1 WHERE OrderID BETWEEN 100 AND 120"
	cases := []struct {
		name string
		// setup runs on the victim (52) or the other session (51) before
		// the held request
		setup func(t *testing.T, srv *Server, other, victim *connState)
		batch string
		// held tells when the request is held (by a fault, WAITFOR or a lock)
		held func(srv *Server, victim *connState) func() bool
		// after runs once the victim is killed, before the checks
		after func(t *testing.T, other *connState)
	}{
		{
			name: "delay fault in an explicit transaction",
			setup: func(t *testing.T, srv *Server, _, victim *connState) {
				mustRun(t, victim, "BEGIN TRANSACTION qr_x")
				srv.Faults.Delay("SET Status", time.Hour)
			},
			batch: update,
			held:  func(srv *Server, _ *connState) func() bool { return faultConsumed(srv) },
		},
		{
			// even if nothing woke the held request, it must not run once
			// its delay ends
			name: "short delay fault that ends after the kill",
			setup: func(t *testing.T, srv *Server, _, victim *connState) {
				mustRun(t, victim, "BEGIN TRANSACTION qr_x")
				srv.Faults.Delay("SET Status", 200*time.Millisecond)
			},
			batch: update,
			held:  func(srv *Server, _ *connState) func() bool { return faultConsumed(srv) },
		},
		{
			name: "delay fault in autocommit mode",
			setup: func(t *testing.T, srv *Server, _, _ *connState) {
				srv.Faults.Delay("SET Status", time.Hour)
			},
			batch: update,
			held:  func(srv *Server, _ *connState) func() bool { return faultConsumed(srv) },
		},
		{
			name:  "WAITFOR before the modification",
			batch: "BEGIN TRANSACTION; UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 100; WAITFOR DELAY '01:00:00'; " + update + "; COMMIT",
			held: func(_ *Server, victim *connState) func() bool {
				return func() bool { return victim.txn != nil && len(victim.txn.undo) == 1 }
			},
		},
		{
			name: "waiting for a lock whose holder ends right after the kill",
			setup: func(t *testing.T, _ *Server, other, _ *connState) {
				mustRun(t, other, "BEGIN TRANSACTION; UPDATE dbo.Orders SET Amount = Amount WHERE OrderID = 110")
			},
			batch: update,
			held: func(_ *Server, victim *connState) func() bool {
				return func() bool { return victim.waitingOn != nil }
			},
			// the lock frees at once: the killed waiter must still not run
			after: func(t *testing.T, other *connState) { mustRun(t, other, "ROLLBACK") },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(Options{})
			other, victim := session(t, srv, 51), session(t, srv, 52)
			before := ordersFingerprint(t, other)
			if tc.setup != nil {
				tc.setup(t, srv, other, victim)
			}
			done := make(chan error, 1)
			go func() {
				// through the fault wrapper, as Running serves it
				done <- srv.Faults.WrapSession(victim).Batch(context.Background(), &tds.Batch{SQL: tc.batch}, &recorder{})
			}()
			waitUntil(t, srv, "request held", tc.held(srv, victim))
			if !srv.Faults.Kill(52) {
				t.Fatal("Kill(52) found no session")
			}
			if tc.after != nil {
				tc.after(t, other)
			}
			select {
			case err := <-done:
				if err != tds.ErrDropConnection {
					t.Fatalf("killed request returned %v, want the connection dropped", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the killed request is still held: KILL must abort it")
			}
			if after := ordersFingerprint(t, other); after != before {
				t.Fatalf("the killed request changed data: %s, want %s", after, before)
			}
			if victim.txn != nil {
				t.Fatal("the killed session still has a transaction")
			}
			r := mustRun(t, other, "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE request_session_id = 52")
			if n := cell(t, r, 0, 0, 0); n != int64(0) {
				t.Fatalf("the killed session still holds %v locks", n)
			}
			// nothing is left blocking the rows, and the session is gone
			mustRun(t, other, "SET LOCK_TIMEOUT 0; UPDATE dbo.Orders SET Amount = Amount WHERE OrderID BETWEEN 100 AND 120")
			if err := victim.Batch(context.Background(), &tds.Batch{SQL: "SELECT 1"}, &recorder{}); err != tds.ErrDropConnection {
				t.Fatalf("a later request on the killed connection: %v, want the connection dropped", err)
			}
		})
	}
}

// Through go-mssqldb, the killed request's client gets an error and the
// transaction's changes are gone.
func TestKillThroughDriver(t *testing.T) {
	r, db := startStandin(t, Options{})
	ctx := context.Background()
	fingerprint := func() string {
		var n, lo, hi any
		var sum any
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(Amount), MIN(Status), MAX(Status) FROM dbo.Orders WHERE OrderID BETWEEN 100 AND 120").Scan(&n, &sum, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(n, sum, lo, hi)
	}
	before := fingerprint()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var spid int
	if err := conn.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "BEGIN TRANSACTION qr_x")
	r.Faults().Delay("SET Status", time.Hour)
	done := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(ctx, "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120")
		done <- err
	}()
	waitUntil(t, r.Server, "request held", faultConsumed(r.Server))
	if !r.Faults().Kill(spid) {
		t.Fatalf("Kill(%d) found no session", spid)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the killed request succeeded")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the killed request is still held: KILL must abort it")
	}
	if after := fingerprint(); after != before {
		t.Fatalf("data changed: %s, want %s", after, before)
	}
}

// A request held by a Delay fault (in front of the stand-in, tdsfault) and
// cancelled by the client still fires the attention event, as SQL Server
// reports every cancelled request.
func TestDelayedRequestCancelledFiresAttention(t *testing.T) {
	r, db := startStandin(t, Options{})
	ctx := context.Background()
	mustExec(t, db, "CREATE EVENT SESSION held ON SERVER ADD EVENT sqlserver.attention ADD TARGET package0.event_file(SET filename = N'held.xel')")
	mustExec(t, db, "ALTER EVENT SESSION held ON SERVER STATE = START")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r.Faults().Delay("SELECT 7", time.Minute)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(cctx, "SELECT 7")
		done <- err
	}()
	waitUntil(t, r.Server, "request held", faultConsumed(r.Server))
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the held request was not cancelled")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held request did not end on ATTENTION")
	}
	mustExec(t, db, "ALTER EVENT SESSION held ON SERVER STATE = STOP")
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.fn_xe_file_target_read_file('held*.xel', NULL, NULL, NULL) WHERE object_name = 'attention'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d attention events, want 1", n)
	}
}
