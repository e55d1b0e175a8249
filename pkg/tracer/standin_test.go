package tracer

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/internal/testenv"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// modifications is the number of traced modifications of
// TestModificationsNeverChangeData: 1,000 by default, 100 under -short.
var modifications = flag.Int("modifications", 0, "traced modifications in TestModificationsNeverChangeData (default 1000, or 100 with -short)")

const (
	selectSQL = "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42"
	// updateSQL is the insert_order demo scenario: a modification with a
	// plan and events that the stand-in runs quickly (its update scenario
	// simulates a run time of about a second).
	updateSQL = "INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (100001, 42, '2026-01-15', 99.5, N'New')"
)

// checksum summarises the demo tables; equal checksums before and after mean
// no row changed.
func checksum(t testing.TB, db *sql.DB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var parts []string
	for _, q := range []string{
		"SELECT COUNT(*), SUM(Amount), MAX(OrderID), MIN(OrderDate) FROM dbo.Orders",
		"SELECT Status, COUNT(*) FROM dbo.Orders GROUP BY Status ORDER BY Status",
		"SELECT COUNT(*), SUM(Quantity) FROM dbo.OrderLines",
		"SELECT COUNT(*) FROM dbo.Customers",
	} {
		parts = append(parts, rowStrings(t, ctx, db, q)...)
	}
	return strings.Join(parts, "|")
}

// rowStrings runs q and returns each row printed.
func rowStrings(t testing.TB, ctx context.Context, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	return out
}

// assertNothingLeft: no trace session left, no transaction open, and the
// demo tables' checksum is still before.
func assertNothingLeft(t testing.TB, db *sql.DB, before string) {
	t.Helper()
	if s := sessions(t, db); len(s) != 0 {
		t.Errorf("sessions left: %v", s)
	}
	waitNoOpenTransactions(t, db)
	if after := checksum(t, db); after != before {
		t.Errorf("data changed:\n%s\n%s", before, after)
	}
}

// waitNoOpenTransactions waits until the server has ended every session's
// transaction: a connection the client dropped is noticed, and its
// transaction rolled back, by the server a moment later.
func waitNoOpenTransactions(t testing.TB, db *sql.DB) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, "every session's transaction to end after the traces ended", func() bool {
		return openTransactions(t, db) == 0
	})
}

// label names each statement the tracer sent, so sequences compare exactly
// while the session name and the big CREATE text (golden-tested) vary.
func label(q, name string) string {
	n := normalize(q, name)
	switch {
	case strings.HasPrefix(n, "CREATE EVENT SESSION"):
		return "CREATE EVENT SESSION"
	case strings.HasPrefix(n, "SELECT name, map_key"):
		return "SELECT … FROM sys.dm_xe_map_values"
	case strings.HasPrefix(n, "SELECT @@SPID, CAST"):
		return "SELECT @@SPID …"
	}
	return n
}

// traceSequence labels every statement with its connection: T for the
// traced connection (opened first), C for the control connection.
func traceSequence(log *stmtLog, session string) []string {
	var out []string
	log.mu.Lock()
	stmts := append([]recorded(nil), log.stmts...)
	log.mu.Unlock()
	for _, s := range stmts {
		l := label(s.sql, session)
		if strings.HasPrefix(l, "SELECT au.allocation_unit_id") || strings.HasPrefix(l, "SELECT %%lockres%%") || strings.HasPrefix(l, "SELECT SUM(au.used_pages)") || strings.HasPrefix(l, "SELECT allocated_page") {
			continue // resolution, checked on its own
		}
		who := "C: "
		if s.conn == 1 {
			who = "T: "
		}
		out = append(out, who+l)
	}
	return out
}

func TestStatementSequence(t *testing.T) {
	srv := startStandin(t)
	const (
		info     = "T: SELECT @@SPID …"
		tIdent   = "T: SELECT @@SPID, login_time FROM sys.dm_exec_sessions WHERE session_id = @@SPID"
		cIdent   = "C: SELECT @@SPID, login_time FROM sys.dm_exec_sessions WHERE session_id = @@SPID"
		perms    = "C: SELECT permission_name FROM sys.fn_my_permissions(NULL, 'SERVER')"
		sysadm   = "C: SELECT IS_SRVROLEMEMBER('sysadmin')"
		sweep    = "C: SELECT name FROM sys.server_event_sessions WHERE name LIKE N'queryreplay[_]%'"
		create   = "C: CREATE EVENT SESSION"
		begin    = "T: BEGIN TRANSACTION qr_<txn>; SELECT @@TRANCOUNT, (SELECT transaction_id FROM sys.dm_tran_current_transaction)"
		start    = "C: ALTER EVENT SESSION [<session>] ON SERVER STATE = START"
		dropped  = "C: SELECT dropped_event_count FROM sys.dm_xe_sessions WHERE name = N'<session>'"
		stop     = "C: ALTER EVENT SESSION [<session>] ON SERVER STATE = STOP"
		reset    = "T: SET PARSEONLY OFF; SET NOEXEC OFF; SET FMTONLY OFF; SET ROWCOUNT 0"
		state    = "T: SELECT @@TRANCOUNT, (SELECT transaction_id FROM sys.dm_tran_current_transaction)"
		rollback = "T: IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION"
		drop     = "C: IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'<session>') DROP EVENT SESSION [<session>] ON SERVER"
		maps     = "C: SELECT … FROM sys.dm_xe_map_values"
		read     = "C: SELECT event_data FROM sys.fn_xe_file_target_read_file(N'/var/opt/mssql/log/<session>*.xel', NULL, NULL, NULL)"
		// the binary read-back (ReadBackAuto, the login has the bulk permission)
		bulk  = "C: SELECT HAS_PERMS_BY_NAME(NULL, NULL, N'ADMINISTER BULK OPERATIONS')"
		list  = "C: SELECT full_filesystem_path FROM sys.dm_os_enumerate_filesystem(N'/var/opt/mssql/log', N'<session>*.xel')"
		fetch = "C: SELECT BulkColumn FROM OPENROWSET(BULK N'/var/opt/mssql/log/<session>_0_"
		// a modification's log records: the log's end from the documented
		// DMV, then ONE bounded read of the log from there
		logEnd  = "C: SELECT log_end_lsn FROM sys.dm_db_log_stats(DB_ID())"
		logRead = "C: SELECT TOP (100001) [Current LSN], [Operation], [Context], [Transaction ID], [AllocUnitId], [Page ID], [Slot ID], [Transaction Name] FROM fn_dblog(N'0x"
	)
	head := []string{info, tIdent, cIdent, perms, sysadm, sweep, create}
	// a modification first reads the triggers on the table it writes
	// (procedures.go), before anything is created
	trig := "C: SELECT t.object_id, OBJECT_SCHEMA_NAME(t.object_id) + N'.' + t.name, t.type, OBJECT_DEFINITION(t.object_id) FROM sys.triggers AS t"
	modHead := []string{info, tIdent, cIdent, trig, perms, sysadm, sweep, create}
	seq := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	run := func(batch string) []string { return []string{begin, start, "T: " + batch, dropped, stop, reset, state} }
	tail := []string{rollback, state, drop, maps, bulk, list, fetch}
	cases := []struct {
		name string
		o    Options
		want []string
	}{
		{"plain select", Options{SQL: selectSQL}, seq(head, run(selectSQL), tail)},
		{"database", Options{SQL: selectSQL, Database: "QueryReplayDemo"},
			seq([]string{"T: USE [QueryReplayDemo]", info, tIdent, "C: USE [QueryReplayDemo]", cIdent, perms, sysadm, sweep, create}, run(selectSQL), tail)},
		{"clear buffer pool", Options{SQL: selectSQL, ClearBufferPool: true},
			seq(head, []string{"C: CHECKPOINT", "C: DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS"}, run(selectSQL), tail)},
		{"disable read-ahead", Options{SQL: selectSQL, DisableReadAhead: true},
			seq(head, []string{"T: DBCC TRACEON(652) WITH NO_INFOMSGS"}, run(selectSQL), []string{rollback, state, "T: DBCC TRACEOFF(652) WITH NO_INFOMSGS"}, tail[2:])},
		{"modification", Options{SQL: updateSQL},
			seq(modHead, []string{logEnd}, run(updateSQL), []string{logRead}, tail)},
		{"everything", Options{SQL: updateSQL, ClearBufferPool: true, DisableReadAhead: true, Events: bundle.AllEventGroups(), CallStacks: true},
			seq(modHead, []string{"C: CHECKPOINT", "C: DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS", "T: DBCC TRACEON(652) WITH NO_INFOMSGS", logEnd}, run(updateSQL),
				[]string{logRead, rollback, state, "T: DBCC TRACEOFF(652) WITH NO_INFOMSGS"}, tail[2:],
				// raw call-stack addresses need the modules' base addresses
				[]string{"C: SELECT name, base_address FROM sys.dm_os_loaded_modules WHERE name NOT LIKE N'%.rll'"})},
		{"xml read-back", Options{SQL: selectSQL, ReadBack: ReadBackXML}, seq(head, run(selectSQL), tail[:4], []string{read})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, log, db := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
			before := checksum(t, db)
			b, err := tr.Trace(context.Background(), c.o)
			if err != nil {
				t.Fatal(err)
			}
			got := traceSequence(log, b.Run.Session)
			if len(got) != len(c.want) {
				t.Fatalf("statements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Errorf("statement %d = %q, want %q", i, got[i], c.want[i])
				}
			}
			// The CREATE sent is exactly the spec's DDL for these options.
			spec := SessionSpec{Name: b.Run.Session, SPID: b.Server.SPID, Events: c.o.Events, Modification: b.Run.Modification,
				CallStacks: c.o.CallStacks, Directory: "/var/opt/mssql/log", MaxFileSizeMB: DefaultMaxFileSizeMB, MaxEvents: DefaultMaxEvents}
			if s := log.texts()[slices.Index(got, create)]; s != spec.Marker()+spec.CreateDDL() {
				t.Errorf("CREATE sent:\n%s\nwant:\n%s", s, spec.CreateDDL())
			}
			if wantPath := map[bool]string{true: "xml", false: "binary"}[c.o.ReadBack == ReadBackXML]; b.Run.ReadBack != wantPath || b.Run.ReadBackFallback != "" {
				t.Errorf("read back as %q (fallback %q), want %q", b.Run.ReadBack, b.Run.ReadBackFallback, wantPath)
			}
			if b.Result.Batches != 1 || len(b.Result.SessionIDs) != 1 || b.Result.SessionIDs[0] != int64(b.Server.SPID) {
				t.Errorf("trace saw %d batches from sessions %v; want only the traced batch of session %d", b.Result.Batches, b.Result.SessionIDs, b.Server.SPID)
			}
			if b.Trace == nil || b.Trace.Summary.Events == 0 || len(b.Trace.Operators) == 0 {
				t.Errorf("no timeline: %+v", b.Trace)
			}
			if b.Run.Modification != strings.HasPrefix(c.o.SQL, "INSERT") || !b.Result.RolledBack {
				t.Errorf("modification %v, rolled back %v: every batch runs in a verified, rolled-back transaction", b.Run.Modification, b.Result.RolledBack)
			}
			if b.Run.Modification && len(b.Result.LogRecords) == 0 {
				t.Error("no log records read for a modification")
			}
			if after := checksum(t, db); after != before {
				t.Errorf("data changed:\n%s\n%s", before, after)
			}
			if s := sessions(t, db); len(s) != 0 {
				t.Errorf("sessions left: %v", s)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestResolution(t *testing.T) {
	// SQL Server 2019: pages are named through sys.dm_db_page_info (before
	// 2019 only when the undocumented allocation walk is allowed:
	// TestPageNamesNeverEnumerateTheDatabaseUnasked)
	srv := startWithModules(t, "sql2019", nil)
	tr, _, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.AllEventGroups(), ClearBufferPool: true, DisableReadAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	res := b.Result.Resolution
	if res.Pages == 0 || res.PagesNamed != res.Pages || res.HoBTs == 0 || res.HoBTsNamed != res.HoBTs || res.KeyLocks == 0 || res.KeyLocksRows != res.KeyLocks || len(res.Errors) > 0 {
		t.Fatalf("resolution %+v: want every page, HoBT and key lock resolved", res)
	}
	named, rows := 0, 0
	for _, l := range b.Trace.Lanes.Lock {
		if l.ResourceType == "KEY" {
			if o := b.Trace.ObjectOf(l.Object); o == nil || o.Table != "Orders" || o.Index == "" {
				t.Errorf("key lock %s not named: %+v", l.Resource, o)
			}
			if l.Row != "" {
				rows++
			}
		}
	}
	for _, p := range b.Trace.Lanes.Read {
		if o := b.Trace.ObjectOf(p.Object); o != nil && o.Table == "Orders" {
			named++
		}
	}
	if rows == 0 || named == 0 {
		t.Errorf("%d key locks with rows, %d named reads", rows, named)
	}
	// The second trace on the same database uses the cache for HoBTs: the
	// names query is not sent again.
	if tr.names.c.Len() == 0 {
		t.Error("the name cache is empty after a trace")
	}
	tr2, log, _ := newTracer(t, srv.dsn, Policy{})
	tr2.names = tr.names
	b, err = tr2.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Locks: true}, MaxLockRows: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range log.texts() {
		if strings.Contains(s, "FROM sys.allocation_units") {
			t.Error("names were looked up again despite the cache")
		}
	}
	res = b.Result.Resolution
	if res.HoBTsNamed != res.HoBTs || res.KeyLocksRows != 5 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "limit 5") {
		t.Errorf("MaxLockRows 5: %+v", res)
	}
}

// faultCase is one failure injected into a trace.
type faultCase struct {
	name    string
	sql     string
	opts    func(*Options)
	inject  func(srv *testServer)
	ctx     func() (context.Context, context.CancelFunc)
	wantErr string
}

func faultCases() []faultCase {
	bg := func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
	return []faultCase{
		{"query error", selectSQL, nil, func(s *testServer) { s.running.Faults().Error("o.CustomerID = 42", 50000, 16, "injected failure") }, bg, "injected failure"},
		{"modification error", updateSQL, nil, func(s *testServer) { s.running.Faults().Error("VALUES (100001", 50000, 16, "injected failure") }, bg, "injected failure"},
		{"error at stop", updateSQL, nil, func(s *testServer) { s.running.Faults().Error("STATE = STOP", 25704, 16, "injected stop failure") }, bg, "injected stop failure"},
		{"error at create", selectSQL, nil, func(s *testServer) {
			s.running.Faults().Error("CREATE EVENT SESSION", 25623, 16, "injected create failure")
		}, bg, "injected create failure"},
		{"cancel", updateSQL, nil, func(s *testServer) { s.running.Faults().Delay("VALUES (100001", 10*time.Second) },
			func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(300*time.Millisecond, cancel)
				return ctx, cancel
			}, "context canceled"},
		{"timeout", updateSQL, func(o *Options) { o.Timeout = 300 * time.Millisecond }, func(s *testServer) { s.running.Faults().Delay("VALUES (100001", 10*time.Second) }, bg, "deadline exceeded"},
		{"dropped connection", updateSQL, nil, func(s *testServer) { s.running.Faults().DropConnection("VALUES (100001") }, bg, "run query"},
		{"dropped at stop", updateSQL, func(o *Options) { o.DisableReadAhead = true }, func(s *testServer) { s.running.Faults().DropConnection("STATE = STOP") }, bg, "stop event session"},
		{"dropped at log read", updateSQL, nil, func(s *testServer) { s.running.Faults().DropConnection("FROM fn_dblog(N'0x") }, bg, "read log"},
		{"traced dropped at the check", updateSQL, nil, func(s *testServer) { s.running.Faults().DropConnection("SET PARSEONLY OFF") }, bg, "verify QueryReplay's transaction"},
		{"traced dropped at rollback", updateSQL, func(o *Options) { o.DisableReadAhead = true }, func(s *testServer) { s.running.Faults().DropConnection("IF @@TRANCOUNT > 0 ROLLBACK") }, bg, "roll back"},
		{"error at begin", updateSQL, nil, func(s *testServer) {
			s.running.Faults().Error("BEGIN TRANSACTION qr_", 50000, 16, "injected begin failure")
		}, bg, "injected begin failure"},
	}
}

func TestCleanupUnderFaults(t *testing.T) {
	for _, fc := range faultCases() {
		t.Run(fc.name, func(t *testing.T) {
			srv := startStandin(t)
			tr, _, db := newTracer(t, srv.dsn, Policy{})
			before := checksum(t, db)
			fc.inject(srv)
			ctx, cancel := fc.ctx()
			defer cancel()
			o := Options{SQL: fc.sql, Events: bundle.EventGroups{Locks: true}}
			if fc.opts != nil {
				fc.opts(&o)
			}
			_, err := tr.Trace(ctx, o)
			if err == nil {
				t.Fatal("the trace succeeded despite the fault")
			}
			if fc.wantErr != "" && !strings.Contains(err.Error(), fc.wantErr) {
				t.Errorf("error %v, want it to mention %q", err, fc.wantErr)
			}
			if s := sessions(t, db); len(s) != 0 {
				t.Errorf("sessions left after %s: %v", fc.name, s)
			}
			waitNoOpenTransactions(t, db)
			if after := checksum(t, db); after != before {
				t.Errorf("data changed after %s:\n%s\n%s", fc.name, before, after)
			}
		})
	}
}

func TestModificationsNeverChangeData(t *testing.T) {
	n := *modifications
	if n == 0 {
		n = 1000
		if testing.Short() {
			n = 100
		}
	}
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	// Cheap statements (the stand-in's demo scenarios simulate their run
	// time). Concurrent traces share rows: each statement kind cycles over
	// three keys, so up to eight workers modify the same rows at once and
	// the server makes the later ones wait for the earlier ones' rollback
	// (the stand-in emulates that blocking, with lock timeouts and
	// deadlock victims); every trace must still leave the data unchanged.
	const sharedRows = 3
	stmts := []func(k int) string{
		func(k int) string {
			return fmt.Sprintf("UPDATE dbo.Orders SET Amount = Amount + 1, Status = N'Shipped' WHERE OrderID = %d", 1+k)
		},
		func(k int) string { return fmt.Sprintf("DELETE FROM dbo.OrderLines WHERE OrderID = %d", 2001+k) },
		func(k int) string {
			return fmt.Sprintf("INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (%d, 42, '2026-01-15', 99.5, N'New')", 100001+k)
		},
		func(k int) string { return fmt.Sprintf("DELETE FROM dbo.Orders WHERE OrderID = %d", 5001+k) },
		func(k int) string {
			return fmt.Sprintf("UPDATE dbo.Customers SET Name = N'x' WHERE CustomerID = %d", 1+k)
		},
	}
	f := srv.running.Faults()
	faults := []func(){
		func() {},
		func() { f.Error("SET Amount = Amount + 1", 50000, 16, "injected") },
		func() { f.DropConnection("dbo.Orders (OrderID") },
		func() { f.Error("STATE = STOP", 50000, 16, "injected at stop") },
		func() { f.DropConnection("[Current LSN] >") },
		func() { f.DropConnection("ROLLBACK TRANSACTION") },
		func() { f.Error("DROP EVENT SESSION", 50000, 16, "injected at drop") },
		func() { f.DropConnection("BEGIN TRANSACTION") },
	}
	// Rounds of concurrent traces; the checksum runs between rounds, when no
	// trace holds uncommitted changes.
	const workers, round = 8, 100
	var failed sync.Mutex
	nFailed, nOK, nBad, nBlocked := 0, 0, 0, 0
	for done := 0; done < n; done += round {
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					faults[i%len(faults)]()
					// traces i, i+5, i+10 and i+15 — likely running at
					// once — modify the same row
					b, err := tr.Trace(context.Background(), Options{SQL: stmts[i%len(stmts)]((i / (4 * len(stmts))) % sharedRows), Events: bundle.EventGroups{Waits: true}})
					failed.Lock()
					if err == nil && waitedForLock(b) {
						nBlocked++
					}
					switch {
					case err != nil:
						nFailed++
					case !b.Result.RolledBack:
						nBad++
					default:
						nOK++
					}
					failed.Unlock()
				}
			}()
		}
		for i := done; i < done+round && i < n; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		waitNoOpenTransactions(t, db)
		if after := checksum(t, db); after != before {
			t.Fatalf("data changed after %d traces:\n%s\n%s", min(done+round, n), before, after)
		}
	}
	if nBad > 0 {
		t.Fatalf("%d traces succeeded without rolling back", nBad)
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
	if nFailed == 0 || nOK == 0 {
		t.Fatalf("%d failed, %d succeeded: want both (faults injected and not)", nFailed, nOK)
	}
	t.Logf("%d traced modifications (%d failed by injected faults, %d rolled back normally, %d of these waited for another trace's lock); data unchanged, no session left", n, nFailed, nOK, nBlocked)
}

// waitedForLock reports whether a traced query waited for a lock (LCK_M_*).
func waitedForLock(b *bundle.Bundle) bool {
	if b == nil || b.Trace == nil {
		return false
	}
	for _, w := range b.Trace.Lanes.Wait {
		if strings.HasPrefix(w.WaitType, "LCK_M_") {
			return true
		}
	}
	return false
}

func TestConcurrentTracesSeeOnlyTheirOwnEvents(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	const n = 50
	var wg sync.WaitGroup
	bundles := make([]*bundle.Bundle, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Distinct texts, each locking a distinct order's key (rolled back).
			q := fmt.Sprintf("UPDATE dbo.Orders SET Amount = Amount WHERE OrderID = %d", 1000+i)
			bundles[i], errs[i] = tr.Trace(context.Background(), Options{SQL: q, Events: bundle.EventGroups{Locks: true}})
		}(i)
	}
	wg.Wait()
	spids := map[int]int{}
	owner := map[string]int{} // key lock resource → trace
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			t.Fatalf("trace %d: %v", i, errs[i])
		}
		b := bundles[i]
		if b.Result.Batches != 1 || len(b.Result.SessionIDs) != 1 || b.Result.SessionIDs[0] != int64(b.Server.SPID) {
			t.Errorf("trace %d (spid %d) saw %d batches from sessions %v", i, b.Server.SPID, b.Result.Batches, b.Result.SessionIDs)
		}
		if other, dup := spids[b.Server.SPID]; dup {
			t.Logf("traces %d and %d ran on spid %d one after the other", other, i, b.Server.SPID)
		}
		spids[b.Server.SPID] = i
		keys := 0
		for _, l := range b.Trace.Lanes.Lock {
			if l.ResourceType == "KEY" {
				keys++
				if l.Row == "" {
					t.Errorf("trace %d: key lock %s unresolved", i, l.Resource)
				}
				if other, seen := owner[l.Resource]; seen && other != i {
					t.Errorf("key lock %s is in traces %d and %d: a trace saw another's events", l.Resource, other, i)
				}
				owner[l.Resource] = i
			}
		}
		if keys == 0 {
			t.Errorf("trace %d has no key locks of its own", i)
		}
	}
	if len(owner) < n {
		t.Errorf("%d distinct key locks over %d traces of distinct rows", len(owner), n)
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

func TestOrphanSweep(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	ctx := context.Background()
	old := orphanName(t, time.Now().Add(-2*time.Hour))
	young := orphanName(t, time.Now())
	for _, name := range []string{old, young, "QueryReplay_1558c1fe10524e4f1558c1fe10524e4f"} {
		s := SessionSpec{Name: name, SPID: 999, Directory: "/var/opt/mssql/log", MaxFileSizeMB: 2}
		if _, err := db.ExecContext(ctx, s.CreateDDL()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, SessionSpec{Name: old}.StartDDL()); err != nil {
		t.Fatal(err)
	}
	n, err := tr.SweepOrphans(ctx, time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("SweepOrphans = %d, %v; want 1", n, err)
	}
	left := sessions(t, db)
	if len(left) != 1 || left[0] != young { // the foreign QueryReplay_ session is not ours to list
		t.Fatalf("after the sweep: %v, want only %s", left, young)
	}
	// A trace sweeps too (with its own grace period).
	if _, err := tr.Trace(ctx, Options{SQL: selectSQL, GracePeriod: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	if left := sessions(t, db); len(left) != 0 {
		t.Fatalf("after a trace with a tiny grace period: %v", left)
	}
	var foreign int
	db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.server_event_sessions WHERE name = N'QueryReplay_1558c1fe10524e4f1558c1fe10524e4f'").Scan(&foreign)
	if foreign != 1 {
		t.Fatal("the sweep dropped another tool's session")
	}
}

// orphanName makes a session name created at when.
func orphanName(t *testing.T, when time.Time) string {
	name, err := NewSessionName()
	if err != nil {
		t.Fatal(err)
	}
	ms := when.UnixMilli()
	b := []byte(name[len(SessionPrefix):])
	copy(b, fmt.Sprintf("%012x", ms))
	return SessionPrefix + string(b)
}

// TestKilledProcessThenSweep kills a tracing process in the middle of a trace
// (a real child process, SIGKILL) and checks that the sweep removes what it
// left.
func TestKilledProcessThenSweep(t *testing.T) {
	if dsn := os.Getenv("QUERYREPLAY_TRACER_CHILD_DSN"); dsn != "" {
		// Child: trace a query the parent delays, until killed.
		db, err := OpenDSN(dsn)
		if err != nil {
			os.Exit(3)
		}
		tr := New(DBOpener{DB: db}, Policy{}, nil)
		_, err = tr.Trace(context.Background(), Options{SQL: updateSQL})
		fmt.Fprintln(os.Stderr, "child finished:", err)
		os.Exit(4)
	}
	srv := startStandin(t)
	_, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	srv.running.Faults().Delay("VALUES (100001", 30*time.Second)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledProcessThenSweep$")
	cmd.Env = append(os.Environ(), "QUERYREPLAY_TRACER_CHILD_DSN="+srv.dsn)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the child's session exists and it is in the transaction
	// it sends the traced (held) modification in.
	var left []string
	if !testenv.Poll(20*time.Second, func() bool { left = sessions(t, db); return len(left) == 1 }) {
		cmd.Process.Kill()
		t.Fatalf("the child never created its session: %v", left)
	}
	if !testenv.Poll(20*time.Second, func() bool { return openTransactions(t, db) > 0 }) {
		cmd.Process.Kill()
		t.Fatal("the child never began its transaction")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() == 4 {
		t.Fatalf("the child was not killed mid-trace: %v", werr)
	}
	if left := sessions(t, db); len(left) != 1 {
		t.Fatalf("a killed tracer should leave its session behind: %v", left)
	}
	tr, _, _ := newTracer(t, srv.dsn, Policy{})
	// The owner is gone: dropped at once, however long the grace period.
	waitOwnerGone(t, db, left[0])
	if n, err := tr.SweepOrphans(context.Background(), 24*time.Hour); err != nil || n != 1 {
		t.Fatalf("SweepOrphans = %d, %v", n, err)
	}
	if left := sessions(t, db); len(left) != 0 {
		t.Fatalf("sessions left after the sweep: %v", left)
	}
	if after := checksum(t, db); after != before {
		t.Fatalf("the killed tracer's modification survived:\n%s\n%s", before, after)
	}
}

func TestPermissionRefusal(t *testing.T) {
	srv := startStandin(t)
	dsn := strings.Replace(srv.dsn, "sa:QueryReplay-Standin1@", "reader:Reader-Pass1@", 1)
	if dsn == srv.dsn {
		t.Fatalf("cannot build the reader DSN from %s", srv.dsn)
	}
	tr, log, _ := newTracer(t, dsn, Policy{})
	_, err := tr.Trace(context.Background(), Options{SQL: selectSQL})
	var re *tsql.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "ALTER ANY EVENT SESSION") || !strings.Contains(re.Reason, "VIEW SERVER STATE") {
		t.Fatalf("err = %v; want a refusal naming the permissions", err)
	}
	for _, s := range log.texts() {
		if strings.Contains(s, "CREATE EVENT SESSION") {
			t.Fatal("a session was created before the permission check")
		}
	}
}

func TestRefusedBeforeAnythingRuns(t *testing.T) {
	srv := startStandin(t)
	tr, log, _ := newTracer(t, srv.dsn, Policy{})
	for _, q := range []string{"UPDATE dbo.Orders SET Amount = 0; COMMIT", "SELECT 1\nGO\nSELECT 2", "EXEC master..xp_cmdshell 'dir'"} {
		_, err := tr.Trace(context.Background(), Options{SQL: q})
		var re *tsql.RefusedError
		if !errors.As(err, &re) {
			t.Errorf("%q: %v, want a refusal", q, err)
		}
	}
	if _, err := tr.Trace(context.Background(), Options{SQL: selectSQL, ClearBufferPool: true}); err == nil {
		t.Error("buffer pool clearing ran without the policy allowing it")
	}
	if s := log.texts(); len(s) != 0 {
		t.Errorf("statements ran for refused traces: %v", s)
	}
	// a user procedure is refused once its definition is read (here: it
	// does not exist): only identity and catalog reads reach the server
	var re *tsql.RefusedError
	if _, err := tr.Trace(context.Background(), Options{SQL: "EXEC dbo.usp_Anything"}); !errors.As(err, &re) {
		t.Errorf("EXEC dbo.usp_Anything: %v, want a refusal", err)
	}
	for _, q := range log.texts() {
		if !strings.HasPrefix(q, "SELECT ") || strings.Contains(q, "usp_Anything") {
			t.Errorf("sent %q for a refused procedure", q)
		}
	}
}

// TestEditions: against the stand-in's Azure personas, Azure SQL Database
// gets a database-scoped ring_buffer session and no fn_dblog, Managed
// Instance (whose event_file takes only blob URLs) a server session with a
// ring_buffer; each refuses what it cannot do with a clear message.
func TestEditions(t *testing.T) {
	for _, c := range []struct {
		persona string
		refuse  map[string]Options
	}{
		{"azure-sql-database", map[string]Options{
			"Azure SQL Database does not support DBCC DROPCLEANBUFFERS": {SQL: selectSQL, ClearBufferPool: true},
			"Azure SQL Database does not support trace flags":           {SQL: selectSQL, DisableReadAhead: true},
		}},
		{"azure-sql-managed-instance", map[string]Options{
			"Managed Instance supports only a few global trace flags": {SQL: selectSQL, DisableReadAhead: true},
		}},
	} {
		t.Run(c.persona, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			run, err := standin.Start(ctx, "127.0.0.1:0", standin.Options{Persona: c.persona})
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			t.Cleanup(func() { run.Close(); cancel() })
			tr, log, db := newTracer(t, run.DSN, Policy{AllowClearBufferPool: true})
			before := checksum(t, db)
			for want, o := range c.refuse {
				_, err := tr.Trace(context.Background(), o)
				var re *tsql.RefusedError
				if !errors.As(err, &re) || !strings.Contains(re.Reason, want) {
					t.Errorf("%v, want a refusal naming %q", err, want)
				}
			}
			b, err := tr.Trace(context.Background(), Options{SQL: updateSQL, Events: bundle.EventGroups{Locks: true}})
			if err != nil {
				t.Fatal(err)
			}
			azureDB := c.persona == "azure-sql-database"
			texts := strings.Join(log.texts(), "\n")
			if b.Run.Target != "ring_buffer" || b.Run.ReadBack != "ring_buffer" || b.Result.Events == 0 || !b.Result.RolledBack {
				t.Errorf("target %s, read back %s, %d events, rolled back %v", b.Run.Target, b.Run.ReadBack, b.Result.Events, b.Result.RolledBack)
			}
			if strings.Contains(texts, "ON DATABASE") != azureDB || !strings.Contains(texts, "ADD TARGET package0.ring_buffer") || strings.Contains(texts, "event_file") {
				t.Errorf("the session DDL is not a ring_buffer session %s:\n%s", map[bool]string{true: "ON DATABASE", false: "ON SERVER"}[azureDB], texts)
			}
			if usesLog := strings.Contains(texts, "fn_dblog"); usesLog == azureDB {
				t.Errorf("fn_dblog used: %v", usesLog)
			}
			if azureDB && !slices.ContainsFunc(b.Result.Warnings, func(w string) bool { return strings.Contains(w, "log records of a modification are not read") }) {
				t.Errorf("no warning that the log records are not read: %v", b.Result.Warnings)
			}
			var n int
			db.QueryRow("SELECT COUNT(*) FROM sys." + map[bool]string{true: "database", false: "server"}[azureDB] + "_event_sessions WHERE name LIKE N'queryreplay[_]%'").Scan(&n)
			if n != 0 {
				t.Errorf("%d sessions left", n)
			}
			waitNoOpenTransactions(t, db)
			if after := checksum(t, db); after != before {
				t.Error("data changed")
			}
		})
	}
	if err := (edition{id: editionSynapse}).check(Options{}); err == nil || !strings.Contains(err.Error(), "Azure Synapse Analytics") {
		t.Errorf("Synapse: %v", err)
	}
}

func TestRingBufferScope(t *testing.T) {
	// database-scoped sessions exist on Azure SQL Database only
	srv := startStandinWith(t, standin.Options{Persona: "azure-sql-database", XELEncoder: xe.EncodeXMLAsXEL})
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	scope := ScopeDatabase
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Locks: true}, scopeOverride: &scope})
	if err != nil {
		for _, s := range log.texts() {
			t.Log(s)
		}
		t.Fatal(err)
	}
	if b.Run.Target != "ring_buffer" || b.Result.Events == 0 || b.Trace == nil {
		t.Fatalf("ring buffer trace: target %s, %d events", b.Run.Target, b.Result.Events)
	}
	// Azure SQL Database refuses the lock events in a database-scoped
	// session (Msg 25743): the trace runs without them and says so.
	for _, ev := range []string{"sqlserver.lock_acquired", "sqlserver.lock_released"} {
		if !slices.ContainsFunc(b.Result.Warnings, func(w string) bool { return strings.Contains(w, ev) && strings.Contains(w, "25743") }) {
			t.Errorf("no warning that %s was left out: %v", ev, b.Result.Warnings)
		}
		if slices.Contains(b.Run.Events, ev) {
			t.Errorf("%s listed among the traced events %v", ev, b.Run.Events)
		}
	}
	if len(b.Trace.Lanes.Lock) != 0 {
		t.Errorf("%d lock events from a session without lock events", len(b.Trace.Lanes.Lock))
	}
	var n int
	db.QueryRow("SELECT COUNT(*) FROM sys.database_event_sessions WHERE name LIKE N'queryreplay[_]%'").Scan(&n)
	if n != 0 {
		t.Fatalf("%d database sessions left", n)
	}
}

func TestProgressAndMaxEvents(t *testing.T) {
	srv := startStandin(t)
	tr, _, _ := newTracer(t, srv.dsn, Policy{})
	var steps []string
	var mu sync.Mutex
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.AllEventGroups(), MaxEvents: 5,
		Progress: func(p Progress) { mu.Lock(); steps = append(steps, p.Step); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Result.Truncated || b.Result.Events != 5 {
		t.Errorf("MaxEvents 5: truncated=%v events=%d", b.Result.Truncated, b.Result.Events)
	}
	joined := strings.Join(steps, ",")
	for _, s := range []string{"running", "stopping", "reading events", "resolving names"} {
		if !strings.Contains(joined, s) {
			t.Errorf("progress %q missing from %s", s, joined)
		}
	}
	found := false
	for _, w := range b.Result.Warnings {
		found = found || strings.Contains(w, "first 5 events")
	}
	if !found {
		t.Errorf("no truncation warning in %v", b.Result.Warnings)
	}
}

// TestKillDuringModification kills the traced session (KILL) while its
// modification runs (held by a Delay fault). SQL Server aborts the running
// request and rolls the transaction back
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/kill-transact-sql):
// the trace fails, no session is left and no data changed.
func TestKillDuringModification(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	// The delay is long: KILL must wake the held request, not wait it out.
	srv.running.Faults().Delay("VALUES (100001", time.Minute)
	go func() {
		// the traced session is the one with the open (named) transaction
		testenv.Poll(30*time.Second, func() bool {
			var spid int
			if db.QueryRow("SELECT session_id FROM sys.dm_exec_sessions WHERE open_transaction_count > 0").Scan(&spid) != nil {
				return false
			}
			srv.running.Faults().Kill(spid)
			return true
		})
	}()
	if _, err := tr.Trace(context.Background(), Options{SQL: updateSQL}); err == nil {
		t.Fatal("the trace succeeded although its session was killed")
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Errorf("sessions left: %v", s)
	}
	if after := checksum(t, db); after != before {
		t.Errorf("data changed:\n%s\n%s", before, after)
	}
}

// A ring_buffer capped at MaxEvents loses events; the loss (its droppedCount,
// or event_sequence gaps) is reported, never silent.
func TestLostEventsReported(t *testing.T) {
	srv := startStandinWith(t, standin.Options{Persona: "azure-sql-database", XELEncoder: xe.EncodeXMLAsXEL})
	tr, _, _ := newTracer(t, srv.dsn, Policy{})
	scope := ScopeDatabase
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Locks: true}, MaxEvents: 3, scopeOverride: &scope})
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.Events > 3 || b.Result.Lost+uint64(b.Result.DroppedEvents) == 0 {
		t.Fatalf("%d events kept, %d lost: want at most 3 kept and the rest reported lost (%+v)", b.Result.Events, b.Result.Lost, b.Result)
	}
	found := false
	for _, w := range b.Result.Warnings {
		found = found || strings.Contains(w, "lost")
	}
	if !found {
		t.Errorf("no warning about lost events: %v", b.Result.Warnings)
	}
}

// A failing name lookup leaves the trace standing, with the failure reported.
func TestPartialResolution(t *testing.T) {
	srv := startStandin(t)
	tr, _, _ := newTracer(t, srv.dsn, Policy{})
	srv.running.Faults().Error("%%lockres%%", 8645, 17, "injected resolution failure")
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Locks: true}})
	if err != nil {
		t.Fatalf("a failed lookup failed the trace: %v", err)
	}
	res := b.Result.Resolution
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "injected resolution failure") {
		t.Fatalf("resolution errors %v", res.Errors)
	}
	if res.HoBTsNamed == 0 || res.KeyLocksRows == 0 || res.KeyLocksRows == res.KeyLocks {
		t.Errorf("want HoBTs named and key locks partly resolved (one index failed): %+v", res)
	}
	warned := false
	for _, w := range b.Result.Warnings {
		warned = warned || strings.Contains(w, "name resolution was partial")
	}
	if !warned || b.Trace == nil {
		t.Errorf("warnings %v", b.Result.Warnings)
	}
}

// The trace directory override reaches the DDL and the read-back, quoted.
func TestTraceDirectoryOverride(t *testing.T) {
	srv := startStandin(t, "/srv/qr traces/O'Brien")
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	dir := `/srv/qr traces/O'Brien/`
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, TraceDirectory: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := "/srv/qr traces/O''Brien/" + b.Run.Session
	n := 0
	for _, s := range log.texts() {
		if strings.Contains(s, want) {
			n++
		}
	}
	if n != 2 || b.Run.Target != "/srv/qr traces/O'Brien/"+b.Run.Session+"*.xel" || b.Result.Events == 0 {
		t.Fatalf("directory in %d statements (want CREATE and the read: OPENROWSET of the file), target %s, %d events", n, b.Run.Target, b.Result.Events)
	}
	// A directory the server does not have: START fails, the error names the
	// directory, and the session is dropped.
	_, err = tr.Trace(context.Background(), Options{SQL: selectSQL, TraceDirectory: "/no/such/dir"})
	if err == nil || !strings.Contains(err.Error(), "/no/such/dir") {
		t.Fatalf("err = %v; want it to name the directory", err)
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// TestFailureAtEveryStep makes each statement of the fullest sequence fail in
// turn — answered with an error, then with a dropped connection — and checks
// that no session and no change is ever left behind, and that only the
// optional steps (dropped-event count, map values, name resolution) may fail
// without failing the trace.
func TestFailureAtEveryStep(t *testing.T) {
	steps := []string{"SELECT @@SPID", "fn_my_permissions", "IS_SRVROLEMEMBER", "LIKE N'queryreplay[_]%'", "CREATE EVENT SESSION",
		"CHECKPOINT", "DROPCLEANBUFFERS", "TRACEON", "dm_db_log_stats", "STATE = START", "BEGIN TRANSACTION", "VALUES (100001",
		"dropped_event_count", "STATE = STOP", "fn_dblog(N'0x", "ROLLBACK TRANSACTION", "TRACEOFF", "DROP EVENT SESSION",
		"dm_xe_map_values", "ADMINISTER BULK OPERATIONS", "dm_os_enumerate_filesystem", "OPENROWSET(BULK", "fn_xe_file_target_read_file",
		"sys.allocation_units", "%%lockres%%"}
	// An error on the binary read-back's steps falls back to the XML read;
	// a lost connection fails the read-back on either path.
	optional := map[string]map[string]bool{
		"error": {"LIKE N'queryreplay[_]%'": true, "dropped_event_count": true, "dm_xe_map_values": true, "sys.allocation_units": true, "%%lockres%%": true,
			"ADMINISTER BULK OPERATIONS": true, "dm_os_enumerate_filesystem": true, "OPENROWSET(BULK": true,
			// a refused log-end DMV or start-LSN read falls back to the
			// whole-log reads (reads.go)
			"dm_db_log_stats": true, "fn_dblog(N'0x": true},
		"drop": {"sys.allocation_units": true, "%%lockres%%": true},
	}
	srv := startStandin(t)
	_, _, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	for _, kind := range []string{"error", "drop"} {
		for _, step := range steps {
			t.Run(kind+" at "+step, func(t *testing.T) {
				tr, log, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
				if kind == "error" {
					srv.running.Faults().Error(step, 50000, 16, "injected at "+step)
				} else {
					srv.running.Faults().DropConnection(step)
				}
				o := Options{SQL: updateSQL, ClearBufferPool: true, DisableReadAhead: true, Events: bundle.AllEventGroups()}
				if step == "fn_xe_file_target_read_file" {
					o.ReadBack = ReadBackXML // the binary path (the default here) reads no XML
				}
				b, err := tr.Trace(context.Background(), o)
				hit := false
				for _, s := range log.texts() {
					hit = hit || strings.Contains(s, step)
				}
				if !hit {
					t.Fatalf("the sequence never sent a statement containing %q", step)
				}
				switch {
				case optional[kind][step]:
					if err != nil {
						t.Errorf("an optional step failing failed the trace: %v", err)
					} else if !b.Result.RolledBack {
						t.Error("not rolled back")
					}
				case err == nil:
					t.Errorf("the trace succeeded although %q failed", step)
				}
				if s := sessions(t, db); len(s) != 0 {
					t.Errorf("sessions left: %v", s)
				}
				waitNoOpenTransactions(t, db)
				if after := checksum(t, db); after != before {
					t.Fatalf("data changed:\n%s\n%s", before, after)
				}
			})
		}
	}
}

// A key-lock lookup scans its whole index, so an index over
// MaxLockScanPages is skipped with a note naming it, its size and the
// limit; the lookup itself reads without shared locks, so a writer holding
// a row of that index does not hold it up.
func TestLockLookupsBoundedInPages(t *testing.T) {
	srv := startWithModules(t, "sql2019", nil)
	tr, log, _ := newTracer(t, srv.dsn, Policy{})
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Locks: true}, MaxLockScanPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	res := b.Result.Resolution
	if res.KeyLocks == 0 || res.KeyLocksRows != 0 {
		t.Fatalf("MaxLockScanPages 1: %d of %d key locks resolved, want none", res.KeyLocksRows, res.KeyLocks)
	}
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "pages, over the limit of 1 that a lookup may scan") {
		t.Fatalf("notes %q: want the index's size over the limit", res.Errors)
	}
	for _, s := range log.texts() {
		if strings.Contains(s, "%%lockres%%") {
			t.Errorf("a lookup ran although the index is over the limit: %s", s)
		}
	}
	tr2, log2, _ := newTracer(t, srv.dsn, Policy{})
	b, err = tr2.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Locks: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res := b.Result.Resolution; res.KeyLocksRows != res.KeyLocks || len(res.Errors) != 0 {
		t.Fatalf("default limit on a small index: %+v", res)
	}
	looked := 0
	for _, s := range log2.texts() {
		if strings.Contains(s, "%%lockres%%") {
			looked++
			if !strings.Contains(s, "READUNCOMMITTED") {
				t.Errorf("a lookup takes shared locks: %s", s)
			}
		}
	}
	if looked == 0 {
		t.Error("no lookup ran")
	}
}

// Log flushes are the log writer's, a system task the session filter
// leaves out: a trace that asked for them and got none says why, and one
// that did not ask says nothing.
func TestSystemTaskEventsAreExplained(t *testing.T) {
	srv := startWithModules(t, "sql2019", nil)
	tr, _, _ := newTracer(t, srv.dsn, Policy{Modifications: ModificationsRollback})
	b, err := tr.Trace(context.Background(), Options{SQL: "UPDATE dbo.Orders SET Status = N'x' WHERE OrderID = 1", Events: bundle.EventGroups{Log: true, Waits: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.Result.Warnings, SystemTaskNote) {
		t.Errorf("warnings %q: want the system-task note", b.Result.Warnings)
	}
	b, err = tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Waits: true}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(b.Result.Warnings, SystemTaskNote) {
		t.Errorf("the note without the log group: %q", b.Result.Warnings)
	}
}

// nullErrorLog answers SERVERPROPERTY('ErrorLogFileName') with NULL, as a
// server may for a login that may not see it.
type nullErrorLog struct{ Conn }

func (c nullErrorLog) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.Conn.QueryContext(ctx, strings.ReplaceAll(q, "SERVERPROPERTY('ErrorLogFileName')", "NULL"), args...)
}

type nullErrorLogOpener struct{ Opener }

func (o nullErrorLogOpener) Open(ctx context.Context) (Conn, error) {
	c, err := o.Opener.Open(ctx)
	if err != nil {
		return nil, err
	}
	return nullErrorLog{c}, nil
}

// Without the error log's directory the trace has nowhere to put an event
// file: it reads a ring_buffer target instead and says so, rather than
// failing.
func TestUnknownErrorLogFallsBackToTheRingBuffer(t *testing.T) {
	srv := startWithModules(t, "sql2019", nil)
	db, err := OpenDSN(srv.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log := &stmtLog{}
	tr := New(nullErrorLogOpener{&recOpener{open: DBOpener{DB: db}, log: log}}, Policy{}, nil)
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.Result.Warnings, ErrorLogUnknownNote) || b.Plan == "" || b.Trace == nil || len(b.Trace.Operators) == 0 {
		t.Fatalf("warnings %q, plan %d bytes", b.Result.Warnings, len(b.Plan))
	}
	ring := false
	for _, q := range log.texts() {
		ring = ring || strings.Contains(q, "package0.ring_buffer")
		if strings.Contains(q, "package0.event_file") {
			t.Errorf("an event file without a directory: %s", q)
		}
	}
	if !ring {
		t.Error("no ring_buffer target")
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Errorf("sessions left: %v", s)
	}
}
