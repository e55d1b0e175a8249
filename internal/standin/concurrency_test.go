package standin

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

// longScan is the query of the report: a CROSS JOIN of Orders
// with itself (100 million rows), which once held the server for minutes.
const longScan = "SELECT COUNT(*) FROM dbo.Orders AS a CROSS JOIN dbo.Orders AS b"

// heapSampler records the largest heap in use while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > h.peak.Load() {
				h.peak.Store(m.HeapInuse)
			}
			select {
			case <-h.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

// TestLongScansDoNotBlockLoginsOrCancel: two sessions run the long scan;
// meanwhile a new login and a query on it complete in under a second, a
// cancel of one scan returns within a second, KILL stops the other within
// a second, and the heap stays under the documented bound.
func TestLongScansDoNotBlockLoginsOrCancel(t *testing.T) {
	run, db := startStandin(t, Options{})
	heap := sampleHeap()
	var spids [2]int64
	done := [2]chan error{make(chan error, 1), make(chan error, 1)}
	cancels := make([]context.CancelFunc, 2)
	started := make(chan struct{}, 2)
	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		defer cancel()
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.QueryRowContext(context.Background(), "SELECT @@SPID").Scan(&spids[i]); err != nil {
			t.Fatal(err)
		}
		go func() {
			started <- struct{}{}
			var n int64
			done[i] <- conn.QueryRowContext(ctx, longScan).Scan(&n)
		}()
	}
	<-started
	<-started
	// both scans are running: the server has begun each batch
	testenv.WaitFor(t, 10*time.Second, "both long scans to begin", func() bool {
		run.Server.mu.Lock()
		defer run.Server.mu.Unlock()
		for _, id := range spids {
			if c := run.Server.conns[int(id)]; c == nil || c.lastBatch != longScan {
				return false
			}
		}
		return true
	})

	// a new login, and a query on the new session
	begin := time.Now()
	fresh, err := sql.Open("sqlserver", run.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	var one int
	if err := fresh.QueryRow("SELECT COUNT(*) FROM dbo.Customers WHERE CustomerID = 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("query on a new session: %v %d", err, one)
	}
	loginTook := time.Since(begin)
	if loginTook > time.Second {
		t.Fatalf("login and query took %v while two long scans ran; want under a second", loginTook)
	}

	// cancel the first scan
	begin = time.Now()
	cancels[0]()
	select {
	case err := <-done[0]:
		if err == nil {
			t.Fatal("the cancelled scan finished")
		}
		if d := time.Since(begin); d > time.Second {
			t.Fatalf("cancel returned after %v; want within a second", d)
		} else {
			t.Logf("login and query beside two long scans: %v; cancel returned after %v", loginTook, d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not return within 5 s")
	}
	// KILL the second scan's session
	begin = time.Now()
	if !run.Faults().Kill(int(spids[1])) {
		t.Fatal("KILL found no session")
	}
	select {
	case err := <-done[1]:
		if err == nil {
			t.Fatal("the killed scan finished")
		}
		if d := time.Since(begin); d > time.Second {
			t.Fatalf("KILL stopped the scan after %v; want within a second", d)
		} else {
			t.Logf("KILL stopped the scan after %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("KILL did not stop the scan within 5 s")
	}
	peak := heap.Stop()
	if peak > streamingHeapBound {
		t.Fatalf("heap peaked at %d MB while scanning; the documented bound is %d MB", peak>>20, streamingHeapBound>>20)
	}
	t.Logf("heap peak %d MB", peak>>20)
}

// streamingHeapBound is the heap a test process with the stand-in stays
// under while sessions stream large results (docs/standin.md §3).
const streamingHeapBound = 256 << 20

// TestStreamingResultHasBoundedMemory reads half a million rows of the
// cross join: rows stream to the client, the heap does not grow with them.
func TestStreamingResultHasBoundedMemory(t *testing.T) {
	_, db := startStandin(t, Options{})
	heap := sampleHeap()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := db.QueryContext(ctx, "SELECT a.OrderID, b.OrderID, a.Status FROM dbo.Orders AS a CROSS JOIN dbo.Orders AS b")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for n < 500_000 && rows.Next() {
		n++
	}
	cancel()
	rows.Close()
	peak := heap.Stop()
	if n != 500_000 {
		t.Fatalf("read %d rows: %v", n, rows.Err())
	}
	if peak > streamingHeapBound {
		t.Fatalf("heap peaked at %d MB streaming %d rows; bound %d MB", peak>>20, n, streamingHeapBound>>20)
	}
}

// TestStatementLimitsAnswerMsg701: a sort of the cross join would hold a
// hundred million rows; past the statement's memory (or row) limit it
// fails with SQL Server's Msg 701, and the session goes on working.
func TestStatementLimitsAnswerMsg701(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		sql  string
	}{
		{"memory", Options{MaxStatementMemory: 32 << 20}, "SELECT a.OrderID, b.OrderID FROM dbo.Orders AS a CROSS JOIN dbo.Orders AS b ORDER BY a.Amount, b.Amount"},
		{"rows", Options{MaxStatementRows: 5000}, "SELECT OrderID, LineNumber FROM dbo.OrderLines ORDER BY Price"},
		{"hash", Options{MaxStatementRows: 5000}, "SELECT o.OrderID, l.LineNumber FROM dbo.Orders AS o JOIN dbo.OrderLines AS l ON l.ProductID = o.CustomerID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, db := startStandin(t, tc.opts)
			heap := sampleHeap()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rows, err := db.QueryContext(ctx, tc.sql)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			var me mssql.Error
			if !errors.As(err, &me) || me.Number != 701 || me.Class != 17 {
				t.Fatalf("want Msg 701 severity 17, got %v", err)
			}
			if peak := heap.Stop(); peak > streamingHeapBound {
				t.Fatalf("heap peaked at %d MB", peak>>20)
			}
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM dbo.Products").Scan(&n); err != nil || n != 200 {
				t.Fatalf("after Msg 701: %v %d", err, n)
			}
		})
	}
}
