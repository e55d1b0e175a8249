package tracer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// TestRealServer runs the tracer's guarantees against a real SQL Server when
// QUERYREPLAY_TEST_DSN is set (a sysadmin login on a test server: the suite
// creates and drops the table dbo.queryreplay_tracer_test in the DSN's
// database). Fault injection needs the stand-in, so here faults are the ones
// a client can cause: errors, cancellation, timeouts and a killed session.
func TestRealServer(t *testing.T) {
	dsn := os.Getenv("QUERYREPLAY_TEST_DSN")
	if dsn == "" {
		t.Skip("QUERYREPLAY_TEST_DSN is not set: real-server suite skipped (the same guarantees ran against the stand-in)")
	}
	tr, log, db := newTracer(t, dsn, Policy{AllowClearBufferPool: os.Getenv("QUERYREPLAY_TEST_ALLOW_DROPCLEANBUFFERS") == "1"})
	ctx := context.Background()
	const table = "dbo.queryreplay_tracer_test"
	mustExec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec("IF OBJECT_ID(N'" + table + "') IS NOT NULL DROP TABLE " + table)
	mustExec("CREATE TABLE " + table + " (id int NOT NULL PRIMARY KEY, v int NOT NULL)")
	mustExec("INSERT INTO " + table + " (id, v) SELECT TOP (1000) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)), 0 FROM sys.all_objects")
	t.Cleanup(func() { db.ExecContext(context.Background(), "DROP TABLE "+table) })
	sum := func() string {
		var n, s int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(CAST(v AS bigint)) FROM "+table).Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(n, s)
	}
	noSessions := func(t *testing.T) {
		t.Helper()
		if s := sessions(t, db); len(s) != 0 {
			t.Fatalf("sessions left: %v", s)
		}
	}
	before := sum()

	t.Run("select", func(t *testing.T) {
		b, err := tr.Trace(ctx, Options{SQL: "SELECT id, v FROM " + table + " WHERE id BETWEEN 10 AND 20", Events: bundle.AllEventGroups(), DisableReadAhead: true})
		if err != nil {
			t.Fatal(err)
		}
		if b.Result.Rows[0] != 11 || b.Result.Batches != 1 || len(b.Result.SessionIDs) != 1 || b.Trace == nil || len(b.Trace.Operators) == 0 {
			t.Fatalf("result %+v", b.Result)
		}
		got := traceSequence(log, b.Run.Session)
		if !strings.HasPrefix(got[0], "T: SELECT @@SPID") || !containsPrefix(got, "T: DBCC TRACEOFF(652)") || !containsPrefix(got, "C: ALTER EVENT SESSION") {
			t.Errorf("sequence %v", got)
		}
		noSessions(t)
	})
	t.Run("modification rolled back", func(t *testing.T) {
		b, err := tr.Trace(ctx, Options{SQL: "UPDATE " + table + " SET v = v + 1 WHERE id <= 100", Events: bundle.AllEventGroups()})
		if err != nil {
			t.Fatal(err)
		}
		if !b.Result.RolledBack || len(b.Result.LogRecords) == 0 {
			t.Fatalf("rolled back %v, %d log records", b.Result.RolledBack, len(b.Result.LogRecords))
		}
		if after := sum(); after != before {
			t.Fatalf("data changed: %s → %s", before, after)
		}
		noSessions(t)
	})
	t.Run("error, cancel and timeout", func(t *testing.T) {
		cases := []struct {
			sql     string
			timeout time.Duration
			cancel  time.Duration
		}{
			{"UPDATE " + table + " SET v = 1 / 0 WHERE id = 1", 0, 0},
			{"UPDATE " + table + " SET v = v + 1 WHERE id <= 10; WAITFOR DELAY '00:00:30'", 0, 500 * time.Millisecond},
			{"UPDATE " + table + " SET v = v + 1 WHERE id <= 10; WAITFOR DELAY '00:00:30'", 500 * time.Millisecond, 0},
		}
		for _, c := range cases {
			cctx, cancel := context.WithCancel(ctx)
			if c.cancel > 0 {
				time.AfterFunc(c.cancel, cancel)
			}
			_, err := tr.Trace(cctx, Options{SQL: c.sql, Timeout: c.timeout})
			cancel()
			if err == nil {
				t.Errorf("%s: no error", c.sql)
			}
			noSessions(t)
			if after := sum(); after != before {
				t.Fatalf("data changed: %s → %s", before, after)
			}
		}
	})
	t.Run("killed session", func(t *testing.T) {
		go func() {
			// KILL the traced session once its batch waits in the WAITFOR
			var spid int
			if testenv.Poll(20*time.Second, func() bool {
				return db.QueryRowContext(ctx, "SELECT TOP (1) session_id FROM sys.dm_exec_requests WHERE wait_type = N'WAITFOR' AND session_id <> @@SPID").Scan(&spid) == nil
			}) {
				db.ExecContext(ctx, fmt.Sprintf("KILL %d", spid))
			}
		}()
		_, err := tr.Trace(ctx, Options{SQL: "UPDATE " + table + " SET v = v + 1 WHERE id <= 10; WAITFOR DELAY '00:00:30'"})
		if err == nil {
			t.Fatal("no error from a killed session")
		}
		noSessions(t)
		if after := sum(); after != before {
			t.Fatalf("data changed: %s → %s", before, after)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 20)
		bs := make([]*bundle.Bundle, 20)
		for i := range errs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				bs[i], errs[i] = tr.Trace(ctx, Options{SQL: fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE id = %d", table, 200+i), Events: bundle.EventGroups{Locks: true}})
			}(i)
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("trace %d: %v", i, err)
			}
			if bs[i].Result.Batches != 1 || len(bs[i].Result.SessionIDs) != 1 || bs[i].Result.SessionIDs[0] != int64(bs[i].Server.SPID) {
				t.Errorf("trace %d saw other sessions: %+v", i, bs[i].Result)
			}
		}
		noSessions(t)
		if after := sum(); after != before {
			t.Fatalf("data changed: %s → %s", before, after)
		}
	})
	t.Run("trigger that commits", func(t *testing.T) {
		// a COMMIT the classifier cannot see: the trace must fail loudly
		const trig = "dbo.queryreplay_tracer_trigger"
		mustExec("IF OBJECT_ID(N'" + trig + "') IS NOT NULL DROP TABLE " + trig)
		mustExec("CREATE TABLE " + trig + " (id int NOT NULL PRIMARY KEY, v int NOT NULL)")
		t.Cleanup(func() { db.ExecContext(context.Background(), "DROP TABLE "+trig) })
		mustExec("INSERT INTO " + trig + " (id, v) VALUES (1, 0)")
		mustExec("CREATE TRIGGER " + trig + "_commit ON " + trig + " AFTER UPDATE AS COMMIT TRANSACTION")
		b, err := tr.Trace(ctx, Options{SQL: "UPDATE " + trig + " SET v = 1 WHERE id = 1"})
		var ended *TransactionEndedError
		if !errors.As(err, &ended) || b == nil || b.Result.RolledBack {
			t.Fatalf("trace of a committing trigger: %v (bundle %v)", err, b != nil)
		}
		var v int
		db.QueryRowContext(ctx, "SELECT v FROM "+trig+" WHERE id = 1").Scan(&v)
		if v != 1 {
			t.Errorf("v = %d: the trigger's commit should have made the change permanent (what the error warns of)", v)
		}
		noSessions(t)
	})
	t.Run("blocked by another session", func(t *testing.T) {
		// a second session holds an X key lock for 600 ms; the traced
		// read waits for it and the bundle names that session
		holder, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		var spid int
		if err := holder.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
			t.Fatal(err)
		}
		if _, err := holder.ExecContext(ctx, "BEGIN TRANSACTION; UPDATE "+table+" SET v = v + 1 WHERE id = 500"); err != nil {
			t.Fatal(err)
		}
		released := make(chan error, 1)
		time.AfterFunc(600*time.Millisecond, func() {
			_, err := holder.ExecContext(context.Background(), "ROLLBACK TRANSACTION")
			released <- err
		})
		b, err := tr.Trace(ctx, Options{SQL: "SELECT v FROM " + table + " WHERE id = 500", Events: bundle.AllEventGroups()})
		if rerr := <-released; rerr != nil {
			t.Fatalf("holder's rollback: %v", rerr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Result.Blocking) == 0 || b.Result.Blocking[0].SessionID != spid || !strings.HasPrefix(b.Result.Blocking[0].WaitType, "LCK_M_") ||
			b.Result.Blocking[0].Login == "" || b.Result.Blocking[0].Statement != "" {
			t.Fatalf("blocking %+v (note %q), want session %d", b.Result.Blocking, b.Result.BlockingNote, spid)
		}
		noSessions(t)
		if after := sum(); after != before {
			t.Fatalf("data changed: %s → %s", before, after)
		}
	})
	t.Run("refusal", func(t *testing.T) {
		_, err := tr.Trace(ctx, Options{SQL: "UPDATE " + table + " SET v = 9; COMMIT"})
		var re *tsql.RefusedError
		if !errors.As(err, &re) {
			t.Fatalf("err %v", err)
		}
	})
}

func containsPrefix(list []string, p string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
