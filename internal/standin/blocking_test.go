package standin

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

// waitBlocked waits until c waits for a lock.
func waitBlocked(t *testing.T, srv *Server, c *connState) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("session %d to wait for a lock", c.spid), func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return c.waitingOn != nil
	})
}

type batchResult struct {
	r   *recorder
	err *tds.Error
}

func runAsync(c *connState, sql string) chan batchResult {
	ch := make(chan batchResult, 1)
	go func() {
		r, err := run(c, sql)
		ch <- batchResult{r, err}
	}()
	return ch
}

func TestWriterWaitsForWriter(t *testing.T) {
	srv := New(Options{})
	a, b := session(t, srv, 51), session(t, srv, 52)
	amount := cell(t, mustRun(t, a, "SELECT Amount FROM dbo.Orders WHERE OrderID = 1"), 0, 0, 0).(float64)
	mustRun(t, a, "BEGIN TRAN; UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1")
	done := runAsync(b, "UPDATE dbo.Orders SET Amount = Amount + 1 WHERE OrderID = 1")
	waitBlocked(t, srv, b)
	// a reader waits too, unless it reads uncommitted data
	if got := cell(t, mustRun(t, session(t, srv, 53), "SELECT Amount FROM dbo.Orders WITH (NOLOCK) WHERE OrderID = 1"), 0, 0, 0); got != float64(0) {
		t.Fatalf("NOLOCK read %v", got)
	}
	mustRun(t, a, "ROLLBACK")
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if got := cell(t, mustRun(t, a, "SELECT Amount FROM dbo.Orders WHERE OrderID = 1"), 0, 0, 0); got != amount+1 {
		t.Fatalf("after the wait: %v, want %v (the update must see the rolled-back value)", got, amount+1)
	}
}

func TestReaderWaitsAndLockTimeout(t *testing.T) {
	srv := New(Options{})
	a, b := session(t, srv, 51), session(t, srv, 52)
	mustRun(t, a, "BEGIN TRAN; DELETE FROM dbo.OrderLines WHERE OrderID = 10")
	mustRun(t, b, "SET LOCK_TIMEOUT 50")
	if _, err := run(b, "SELECT COUNT(*) FROM dbo.OrderLines"); err == nil || err.Number != 1222 {
		t.Fatalf("lock timeout: %v", err)
	}
	mustRun(t, b, "SET LOCK_TIMEOUT -1")
	done := runAsync(b, "SELECT COUNT(*) FROM dbo.OrderLines WHERE OrderID = 10")
	waitBlocked(t, srv, b)
	mustRun(t, a, "COMMIT")
	res := <-done
	if res.err != nil || res.r.sets[0].rows[0][0] != int64(0) {
		t.Fatalf("reader after commit: %v %v", res.err, res.r)
	}
}

func TestDeadlockVictim(t *testing.T) {
	srv := New(Options{})
	a, b := session(t, srv, 51), session(t, srv, 52)
	mustRun(t, a, "BEGIN TRAN; UPDATE dbo.Customers SET Name = N'a' WHERE CustomerID = 1")
	mustRun(t, b, "BEGIN TRAN; UPDATE dbo.Customers SET Name = N'b' WHERE CustomerID = 2")
	doneA := runAsync(a, "UPDATE dbo.Customers SET Name = N'a' WHERE CustomerID = 2")
	waitBlocked(t, srv, a)
	r, err := run(b, "UPDATE dbo.Customers SET Name = N'b' WHERE CustomerID = 1")
	if err == nil || err.Number != 1205 || b.txn != nil || r.tran[len(r.tran)-1] != "rollback" {
		t.Fatalf("deadlock: %v, txn %v", err, b.txn)
	}
	if res := <-doneA; res.err != nil {
		t.Fatalf("survivor: %v", res.err)
	}
	mustRun(t, a, "COMMIT")
	if got := cell(t, mustRun(t, a, "SELECT Name FROM dbo.Customers WHERE CustomerID = 2"), 0, 0, 0); got != "a" {
		t.Fatalf("survivor's update lost: %v", got)
	}
}

func TestCancelWhileBlocked(t *testing.T) {
	srv := New(Options{})
	a, b := session(t, srv, 51), session(t, srv, 52)
	mustRun(t, a, "BEGIN TRAN; UPDATE dbo.Products SET ListPrice = 1 WHERE ProductID = 3")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- b.Batch(ctx, &tds.Batch{SQL: "UPDATE dbo.Products SET ListPrice = 2 WHERE ProductID = 3"}, &recorder{})
	}()
	waitBlocked(t, srv, b)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("cancelled wait: %v", err)
	}
	mustRun(t, a, "ROLLBACK")
	if b.txn != nil {
		t.Fatal("cancelled statement left its autocommit transaction open")
	}
}

func TestKillBlockedSession(t *testing.T) {
	srv := New(Options{})
	a, b := session(t, srv, 51), session(t, srv, 52)
	mustRun(t, a, "BEGIN TRAN; DELETE FROM dbo.OrderLines WHERE OrderID = 11")
	done := make(chan error, 1)
	go func() {
		done <- b.Batch(context.Background(), &tds.Batch{SQL: "DELETE FROM dbo.OrderLines WHERE OrderID = 11"}, &recorder{})
	}()
	waitBlocked(t, srv, b)
	if !srv.Faults.Kill(52) {
		t.Fatal("kill")
	}
	if err := <-done; err != tds.ErrDropConnection {
		t.Fatalf("killed waiter: %v", err)
	}
	mustRun(t, a, "ROLLBACK")
	if n := cell(t, mustRun(t, a, "SELECT COUNT(*) FROM dbo.OrderLines WHERE OrderID = 11"), 0, 0, 0); n == int64(0) {
		t.Fatal("rows lost")
	}
}
