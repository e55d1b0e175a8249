package standin

import (
	"context"
	"database/sql"
	"runtime"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
)

// waitQueued waits (bounded) until n goroutines queue for l.
func waitQueued(t *testing.T, l *latch, n int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.waiters.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters never queued (have %d)", n, l.waiters.Load())
		}
		runtime.Gosched()
	}
}

// TestLatchHandsOverInArrivalOrder: whoever gives the latch up cannot take
// it back before the sessions already waiting had their turn, in the order
// they came.
func TestLatchHandsOverInArrivalOrder(t *testing.T) {
	var l latch
	order := make(chan string, 3)
	l.Lock()
	for i, name := range []string{"first", "second"} {
		go func() {
			l.Lock()
			order <- name
			l.Unlock()
		}()
		waitQueued(t, &l, int32(i+1))
	}
	l.Unlock() // a yield: give it up and ask again at once
	l.Lock()
	order <- "yielder"
	l.Unlock()
	for _, want := range []string{"first", "second", "yielder"} {
		if got := <-order; got != want {
			t.Fatalf("turn went to %s, want %s", got, want)
		}
	}
	if s := l.snapshot(); s.handoffs != 3 {
		t.Errorf("handoffs %d, want 3", s.handoffs)
	}
}

// TestLatchTurnEndsSoonWhenContended: nobody waiting, a turn runs on (the
// statement yields every YieldEvery rows anyway); someone waiting, it is
// over after at most sliceTicks rows.
func TestLatchTurnEndsSoonWhenContended(t *testing.T) {
	var l latch
	l.Lock()
	for i := range 10 * sliceTicks {
		if l.tick() {
			t.Fatalf("uncontended turn ended at row %d", i)
		}
	}
	done := make(chan struct{})
	go func() {
		l.Lock()
		l.Unlock()
		close(done)
	}()
	waitQueued(t, &l, 1)
	rows := 0
	for !l.tick() {
		rows++
		if rows > sliceTicks {
			t.Fatalf("contended turn went on past %d rows", sliceTicks)
		}
	}
	l.Unlock()
	<-done
}

// TestReaderNotStarvedByPacedQuery is issue 29's starvation: while a paced
// long query runs on one connection, another connection reads many rows
// (as the tracer reads the event file). Each time the reader waits for the
// latch, the long query must give it up within one contended slice
// (sliceTicks rows) instead of running on to its next regular yield
// (YieldEvery rows): the reader, which gives the latch up at every network
// write, would otherwise advance one batch per long turn.
func TestReaderNotStarvedByPacedQuery(t *testing.T) {
	run, db := startStandin(t, Options{PaceToWallClock: true, Persona: "sql2019"}) // profiled: waitRunning sees it
	long, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	reader, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // before the connections close: the long query ends first
	var spid int64
	if err := long.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	longDone := make(chan error, 1)
	go func() {
		var n int64
		longDone <- long.QueryRowContext(ctx, longScan).Scan(&n)
	}()
	waitRunning(ctx, t, reader, spid)

	before := run.Server.mu.snapshot()
	const want = 20000
	rows, err := reader.QueryContext(ctx, "SELECT TOP (20000) a.OrderID, b.CustomerID FROM dbo.Orders AS a CROSS JOIN dbo.Orders AS b")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	after := run.Server.mu.snapshot()
	select {
	case err := <-longDone:
		t.Fatalf("the long query ended before the reader (%v): nothing was shared", err)
	default:
	}
	cancel()
	<-longDone

	if n != want {
		t.Fatalf("read %d rows, want %d", n, want)
	}
	if after.handoffs == before.handoffs {
		t.Fatal("the reader never waited for the latch: the test did not contend")
	}
	if after.maxContended > sliceTicks {
		t.Errorf("a turn ran %d rows while another session waited; at most %d", after.maxContended, sliceTicks)
	}
	t.Logf("%d rows read over %d hand-offs", n, after.handoffs-before.handoffs)
}

// waitRunning waits (bounded) until session spid has a query running:
// its operators show in sys.dm_exec_query_profiles.
func waitRunning(ctx context.Context, t *testing.T, c *sql.Conn, spid int64) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "the long query to start", func() bool { return sessionRunning(ctx, t, c, spid) })
}

func sessionRunning(ctx context.Context, t *testing.T, c *sql.Conn, spid int64) bool {
	t.Helper()
	rows, err := c.QueryContext(ctx, "SELECT session_id FROM sys.dm_exec_query_profiles")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		found = found || id == spid
	}
	return found
}
