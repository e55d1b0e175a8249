package tracer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// watchUpdateSQL updates one row; in QueryReplay's transaction it holds
// that row's X lock until the transaction ends.
const watchUpdateSQL = "UPDATE dbo.Orders SET Amount = Amount + 1 WHERE OrderID = 500"

// assertRowUpdatable checks that another connection can update the row
// watchUpdateSQL locked: the traced session's locks are gone. The update is
// rolled back; SET LOCK_TIMEOUT makes a held lock an error (Msg 1222), not
// a wait.
func assertRowUpdatable(t *testing.T, dsn string) {
	t.Helper()
	db, err := OpenDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"SET LOCK_TIMEOUT 2000", "BEGIN TRANSACTION", "UPDATE dbo.Orders SET Amount = Amount WHERE OrderID = 500", "ROLLBACK TRANSACTION"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("another connection could not update the traced row (%s): %v", q, err)
		}
	}
}

// watchdogStatements returns the connection ids that sent STOP and KILL.
func watchdogStatements(log *stmtLog) (stopConn, killConn int) {
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, s := range log.stmts {
		if stopConn == 0 && strings.Contains(s.sql, "STATE = STOP") {
			stopConn = s.conn
		}
		if killConn == 0 && strings.Contains(s.sql, "KILL ") {
			killConn = s.conn
		}
	}
	return
}

// TestWatchdogIndependentOfControl: a middlebox stops forwarding (and keeps
// the sockets open) the traced connection after it sent the batch, the
// control connection while it samples blockers, or both. The trace still
// ends within its timeout plus the watchdog's budget with a clear error;
// the watchdog, on its own connection, stopped the session and KILLed the
// traced session, so its locks are gone (another connection updates the
// row); no event session is left and no data changed.
func TestWatchdogIndependentOfControl(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		traced, control, hold bool
	}{
		{name: "traced black-holed", traced: true},
		{name: "traced and control black-holed", traced: true, control: true},
		{name: "control black-holed while sampling, batch held by the server", control: true, hold: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shorten(t, 3*time.Second, 3*time.Second)
			srv := startStandin(t)
			_, _, db := newTracer(t, srv.dsn, Policy{})
			before := checksum(t, db)
			p := startProxy(t, srv.running.Addr)
			var tracedHits, controlHits func() int
			if tc.traced {
				tracedHits = p.freezeAfterText("SET Amount = Amount + 1")
			}
			if tc.control {
				controlHits = p.freezeAfterText("FROM sys.dm_exec_requests WHERE session_id")
			}
			if tc.hold {
				srv.running.Faults().Delay("SET Amount = Amount + 1", time.Minute)
			}
			tr, log := proxiedTracer(t, dsnVia(t, srv.dsn, p.ln.Addr().String()))
			const timeout = time.Second
			start := time.Now()
			_, err := tr.Trace(context.Background(), Options{SQL: watchUpdateSQL, Timeout: timeout, BlockerInterval: 20 * time.Millisecond,
				cleanupBudget: 3 * time.Second})
			// the timeout, the watchdog's budget (3 s) and a second for the rest
			if elapsed := time.Since(start); elapsed > timeout+4*time.Second {
				t.Errorf("the trace took %s: timeout %s, watchdog budget 3s", elapsed, timeout)
			}
			if err == nil || !strings.Contains(err.Error(), "outlived its timeout of 1s") || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("error %v: want the timeout and the kill", err)
			}
			if tracedHits != nil && tracedHits() == 0 {
				t.Fatal("the traced connection was never black-holed")
			}
			if controlHits != nil && controlHits() == 0 {
				t.Fatal("the control connection was never black-holed")
			}
			spid, _ := killedSPID(log)
			if spid == 0 || slices.Contains(srv.running.Faults().SPIDs(), spid) {
				t.Errorf("the traced session (%d) was not killed", spid)
			}
			if stopConn, killConn := watchdogStatements(log); stopConn != 3 || killConn != 3 {
				t.Errorf("STOP came from connection %d and KILL from %d; want the watchdog's (3)", stopConn, killConn)
			}
			assertRowUpdatable(t, srv.dsn)
			assertNothingLeft(t, db, before)
		})
	}
}

// failingOpener fails every Open after the first n.
type failingOpener struct {
	open Opener
	n    int
}

func (o *failingOpener) Open(ctx context.Context) (Conn, error) {
	if o.n <= 0 {
		return nil, errors.New("injected: no more connections")
	}
	o.n--
	return o.open.Open(ctx)
}

// TestNoWatchdogNoTrace: when the watchdog's connection cannot be opened,
// the trace refuses to start, says why, and nothing was created.
func TestNoWatchdogNoTrace(t *testing.T) {
	srv := startStandin(t)
	_, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	base, log, _ := newTracer(t, srv.dsn, Policy{})
	tr := New(&failingOpener{open: base.open, n: 2}, Policy{}, nil)
	_, err := tr.Trace(context.Background(), Options{SQL: watchUpdateSQL})
	if err == nil || !strings.Contains(err.Error(), "watchdog") || !strings.Contains(err.Error(), "no more connections") {
		t.Fatalf("error %v: want the refusal to run without a watchdog, and why", err)
	}
	for _, q := range log.texts() {
		if strings.Contains(q, "CREATE EVENT SESSION") || strings.Contains(q, watchUpdateSQL) {
			t.Errorf("sent %q although the watchdog could not connect", q)
		}
	}
	assertNothingLeft(t, db, before)
}

// TestTracedLostAfterBatchIsKilled: the traced connection goes silent
// after the batch (a middlebox swallows the transaction check and keeps
// the socket open), outside the watchdog's watch. The trace fails within
// the connection's idle limit, and the cleanup KILLs the traced session
// from the watchdog's connection: the row the batch updated is free again,
// no event session is left and no data changed.
func TestTracedLostAfterBatchIsKilled(t *testing.T) {
	shorten(t, 2*time.Second, 3*time.Second)
	srv := startStandin(t)
	_, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	p := startProxy(t, srv.running.Addr)
	p.freezeOnText("SET PARSEONLY OFF")
	tr, log := proxiedTracer(t, dsnVia(t, srv.dsn, p.ln.Addr().String()))
	start := time.Now()
	_, err := tr.Trace(context.Background(), Options{SQL: watchUpdateSQL, Timeout: time.Minute, cleanupBudget: 5 * time.Second})
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the trace took %s: idle limit 2s, cleanup budget 5s", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), "traced connection") {
		t.Fatalf("error %v: want the lost traced connection", err)
	}
	spid, _ := killedSPID(log)
	if spid == 0 || slices.Contains(srv.running.Faults().SPIDs(), spid) {
		t.Errorf("the traced session (%d) was not killed", spid)
	}
	if _, killConn := watchdogStatements(log); killConn != 3 {
		t.Errorf("KILL came from connection %d; want the watchdog's (3)", killConn)
	}
	assertRowUpdatable(t, srv.dsn)
	assertNothingLeft(t, db, before)
}

// TestWatchdogSilentTooThenFreshKill: the traced connection and then the
// watchdog's own go silent (a middlebox swallows the replies and keeps the
// sockets). The trace still ends within its timeout plus the watchdog's and
// the cleanup's budgets; the cleanup KILLs the traced session from a fresh
// connection, so its locks are gone, and drops the session.
func TestWatchdogSilentTooThenFreshKill(t *testing.T) {
	shorten(t, 2*time.Second, 2*time.Second)
	srv := startStandin(t)
	_, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	p := startProxy(t, srv.running.Addr)
	tracedHits := p.freezeAfterText("SET Amount = Amount + 1")
	watchHits := p.freezeAfterText("STATE = STOP")
	tr, log := proxiedTracer(t, dsnVia(t, srv.dsn, p.ln.Addr().String()))
	start := time.Now()
	_, err := tr.Trace(context.Background(), Options{SQL: watchUpdateSQL, Timeout: time.Second, cleanupBudget: 5 * time.Second})
	if elapsed := time.Since(start); elapsed > 9*time.Second {
		t.Errorf("the trace took %s: timeout 1s, watchdog 2s, cleanup 5s", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), "outlived its timeout of 1s") || !strings.Contains(err.Error(), "could not be looked up") {
		t.Fatalf("error %v: want the timeout and the watchdog's failure", err)
	}
	if tracedHits() == 0 || watchHits() == 0 {
		t.Fatalf("black-holed: traced %d, watchdog %d connections; want both", tracedHits(), watchHits())
	}
	log.mu.Lock()
	killConn := 0
	for _, s := range log.stmts {
		if strings.Contains(s.sql, "KILL ") {
			killConn = s.conn
		}
	}
	log.mu.Unlock()
	if killConn <= 3 {
		t.Errorf("the KILL came from connection %d; want a fresh one (> 3)", killConn)
	}
	spid, _ := killedSPID(log)
	if spid == 0 || slices.Contains(srv.running.Faults().SPIDs(), spid) {
		t.Errorf("the traced session (%d) was not killed", spid)
	}
	assertRowUpdatable(t, srv.dsn)
	assertNothingLeft(t, db, before)
}
