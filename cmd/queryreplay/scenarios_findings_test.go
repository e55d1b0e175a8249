package main

// Every findings rule on a stand-in scenario built to trigger it and on one
// built not to, and compare on the scenario pairs: traced with the real
// tracer (the trace command) against internal/standin, analysed as
// `queryreplay findings` and `queryreplay compare` do.

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/compare"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// The scenario queries, on the stand-in's demo database (10,000 orders,
// 30,000 order lines).
const (
	scLookupMany  = "SELECT o.OrderID, o.OrderDate, o.Amount, o.Status FROM dbo.Orders AS o WITH (INDEX(IX_Orders_CustomerID)) WHERE o.CustomerID BETWEEN 1 AND 300"
	scLookupFew   = "SELECT o.OrderID, o.OrderDate, o.Amount FROM dbo.Orders AS o WHERE o.CustomerID = 42"
	scResidual    = "SELECT OrderID, CustomerID, OrderDate, Amount FROM dbo.Orders WHERE Amount > 19500"
	scResidualNot = "SELECT OrderID, CustomerID, OrderDate, Amount FROM dbo.Orders WHERE Amount > 100"
	scSortSpill   = "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price DESC, l.OrderID OPTION (MAX_GRANT_PERCENT = 0.01)"
	scSortFits    = "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price DESC, l.OrderID"
	scSortBig     = "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price DESC, l.OrderID OPTION (MIN_GRANT_PERCENT = 50)"
	scSkew        = "SELECT o.Status, COUNT(*) AS n FROM dbo.Orders AS o GROUP BY o.Status OPTION (MAXDOP 4)"
	scNoSkew      = "SELECT l.ProductID, SUM(l.Quantity) AS Units FROM dbo.OrderLines AS l GROUP BY l.ProductID OPTION (MAXDOP 4)"
	scSerial      = "SELECT o.Status, COUNT(*) AS n FROM dbo.Orders AS o GROUP BY o.Status"
	scSplits      = "INSERT INTO dbo.OrderLines (OrderID, LineNumber, ProductID, Quantity, Price) SELECT o.OrderID, 99, 1, 1, 1.0 FROM dbo.Orders AS o WHERE o.OrderID <= 3000"
	scInsertOne   = "INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (100001, 42, '2026-01-15', 99.5, N'New')"
	scUpdate      = "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120"
	scCount       = "SELECT COUNT(*) FROM dbo.OrderLines"
	scOneOrder    = "SELECT o.OrderID, o.Amount FROM dbo.Orders AS o WHERE o.OrderID = 7"
	scHashJoin    = "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West' OPTION (HASH JOIN)"
	scLoopJoin    = "SELECT c.Name, o.OrderID, o.Amount FROM dbo.Customers AS c JOIN dbo.Orders AS o ON o.CustomerID = c.CustomerID WHERE c.Region = N'West' OPTION (LOOP JOIN)"
	scScanHint    = "SELECT o.OrderID, o.CustomerID FROM dbo.Orders AS o WITH (INDEX(PK_Orders)) WHERE o.CustomerID = 42"
	scSeekHint    = "SELECT o.OrderID, o.CustomerID FROM dbo.Orders AS o WITH (INDEX(IX_Orders_CustomerID)) WHERE o.CustomerID = 42"
	scGrantHog    = "SELECT l.OrderID, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price OPTION (MIN_GRANT_PERCENT = 100)"
	scGrantWanted = "SELECT o.OrderID, o.Amount FROM dbo.Orders AS o ORDER BY o.Amount OPTION (MIN_GRANT_PERCENT = 100)"
)

// scenarioRun traces one scenario and analyses it.
type scenarioRun struct {
	t      *testing.T
	dsn    string
	bundle *tracer.Bundle
	path   string
	report *findings.Report
}

func traceScenario(t *testing.T, dsn, name, sql string, args ...string) *scenarioRun {
	t.Helper()
	path := traceBundle(t, dsn, name, sql, args...)
	b, err := tracer.LoadBundle(path)
	if err != nil {
		t.Fatal(err)
	}
	in, warn := findingsInput(b)
	// A truncated read-back may stop before the plan's event.
	if in.Trace == nil || warn != "" || in.Plan == nil && !b.Result.Truncated {
		t.Fatalf("%s: input %q (plan %v)", name, warn, in.Plan != nil)
	}
	rep, err := findings.Analyze(in, findings.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &scenarioRun{t: t, dsn: dsn, bundle: b, path: path, report: rep}
}

func (s *scenarioRun) all(rule string) []findings.Finding {
	var out []findings.Finding
	for _, f := range s.report.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func (s *scenarioRun) fires(rule string) findings.Finding {
	s.t.Helper()
	fs := s.all(rule)
	if len(fs) == 0 {
		s.t.Fatalf("%s did not fire:\n%s", rule, s.report.Text())
	}
	return fs[0]
}

func (s *scenarioRun) silent(rules ...string) {
	s.t.Helper()
	for _, r := range rules {
		if fs := s.all(r); len(fs) > 0 {
			s.t.Errorf("%s fired on its control: %s", r, fs[0].Title)
		}
	}
}

func contains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s %q lacks %q", what, got, w)
		}
	}
}

func TestFindingsOnStandinScenarios(t *testing.T) {
	srv := startTraceStandin(t)
	dsn := srv.DSN
	warm := func(sql string) { traceScenario(t, dsn, "warm", sql) } // fills the buffer pool

	t.Run("reads-concentrated", func(t *testing.T) {
		f := traceScenario(t, dsn, "lookups", scLookupMany).fires("reads-concentrated")
		contains(t, "title", f.Title, "Key Lookup did ", "% of the reads: ")
		if f.Operators[0].Name != "Key Lookup" || f.Reference != "https://learn.microsoft.com/en-us/sql/relational-databases/indexes/create-indexes-with-included-columns" {
			t.Errorf("operator %+v ref %s", f.Operators, f.Reference)
		}
		if v, _ := f.Number("executions"); v < 2000 {
			t.Errorf("lookup executions %v", v)
		}
		traceScenario(t, dsn, "lookup-few", scLookupFew).silent("reads-concentrated")
	})
	t.Run("residual-predicate", func(t *testing.T) {
		f := traceScenario(t, dsn, "residual", scResidual).fires("residual-predicate")
		contains(t, "title", f.Title, "Clustered Index Scan (dbo.Orders.PK_Orders) read 10,000 rows to return ")
		contains(t, "detail", f.Detail, "[Amount] > (19500)")
		traceScenario(t, dsn, "residual-not", scResidualNot).silent("residual-predicate")
	})
	t.Run("spill", func(t *testing.T) {
		s := traceScenario(t, dsn, "sort-spill", scSortSpill)
		f := s.fires("spill")
		contains(t, "title", f.Title, "Sort spilled to tempdb (single pass): ", " pages written; the grant was 512 KB, 100% used")
		if f.EvidenceTotal == 0 || f.Evidence[0].Lane != findings.LaneMemory || s.bundle.Trace.Lanes.Memory[f.Evidence[0].Index].Kind != "sort_warning" {
			t.Errorf("evidence %+v", f.Evidence)
		}
		g := s.fires("grant-too-small")
		contains(t, "title", g.Title, "Memory grant too small: 100% of its 512 KB used, and 1 spill to tempdb")
		fits := traceScenario(t, dsn, "sort-fits", scSortFits)
		fits.silent("spill", "grant-too-small", "grant-excess")
	})
	t.Run("grant-excess", func(t *testing.T) {
		f := traceScenario(t, dsn, "sort-big-grant", scSortBig).fires("grant-excess")
		contains(t, "title", f.Title, "Memory grant far above use: 768.0 MB granted, ")
		if len(f.Operators) != 1 || f.Operators[0].Name != "Sort" {
			t.Errorf("operators %+v", f.Operators)
		}
		// Its control is sort-fits above; the hash join's 1 MB grant is
		// below minGrantKB however little of it is used.
		traceScenario(t, dsn, "hash-join", scHashJoin).silent("grant-excess")
	})
	t.Run("grant-wait", func(t *testing.T) { grantWaitScenario(t, srv) })
	t.Run("blocking", func(t *testing.T) { blockingScenario(t, srv) })
	t.Run("cold-cache", func(t *testing.T) {
		off := traceScenario(t, dsn, "cold-no-read-ahead", scCount, "--clear-buffer-pool", "--allow-clear-buffer-pool", "--disable-read-ahead").fires("cold-cache")
		contains(t, "title", off.Title, "Cold cache with read-ahead off: ", "(100%) read from disk one at a time")
		if off.Severity != findings.SeverityInfo || !strings.Contains(off.Detail, "cleared") {
			t.Errorf("severity %s detail %q", off.Severity, off.Detail)
		}
		on := traceScenario(t, dsn, "cold-read-ahead", scCount, "--clear-buffer-pool", "--allow-clear-buffer-pool").fires("cold-cache")
		contains(t, "title", on.Title, "came from disk, ", "of them by read-ahead")
		if v, _ := on.Number("readAheadPages"); v == 0 {
			t.Errorf("no read-ahead pages: %+v", on.Numbers)
		}
		warm(scCount)
		traceScenario(t, dsn, "warm", scCount).silent("cold-cache")
	})
	t.Run("parallel-skew", func(t *testing.T) {
		s := traceScenario(t, dsn, "skew", scSkew)
		f := s.fires("parallel-skew")
		contains(t, "title", f.Title, "Parallel skew in Parallelism (Repartition Streams): thread ")
		s.fires("parallelism-waits")
		traceScenario(t, dsn, "no-skew", scNoSkew).silent("parallel-skew")
		traceScenario(t, dsn, "serial", scSerial).silent("parallel-skew", "parallelism-waits")
	})
	t.Run("page-splits", func(t *testing.T) {
		s := traceScenario(t, dsn, "splits", scSplits)
		f := s.fires("page-splits")
		contains(t, "title", f.Title, "page splits on dbo.OrderLines.PK_OrderLines (SPLIT_FOR_INSERT)")
		contains(t, "detail", f.Detail, "rolled back")
		l := s.fires("log-volume")
		contains(t, "title", l.Title, "The modification wrote ", " log records", "before its rollback")
		one := traceScenario(t, dsn, "insert-one", scInsertOne)
		one.silent("page-splits")
		one.fires("log-volume")
		traceScenario(t, dsn, "select", scOneOrder).silent("page-splits", "log-volume")
	})
	t.Run("events-lost", func(t *testing.T) {
		// A 1 MB event file cap: the head of the trace is lost.
		s := traceScenario(t, dsn, "lost", strings.Replace(scSplits, "<= 3000", "<= 6000", 1), "--max-file-size", "1")
		f := s.fires("events-lost")
		contains(t, "title", f.Title, "events were lost (")
		if sp := s.fires("page-splits"); sp.Confidence != findings.ConfidenceLow {
			t.Errorf("splits with lost events: confidence %s", sp.Confidence)
		}
		traceScenario(t, dsn, "not-lost", scSplits).silent("events-lost")
	})
	t.Run("events-truncated", func(t *testing.T) {
		f := traceScenario(t, dsn, "truncated", scResidual, "--max-events", "40").fires("events-truncated")
		contains(t, "title", f.Title, "The trace stopped at the event cap after ")
		traceScenario(t, dsn, "whole", scResidual).silent("events-truncated")
	})
	t.Run("events-ambiguous", func(t *testing.T) {
		// The update's seek and the update itself lock the same index.
		traceScenario(t, dsn, "update", scUpdate).fires("events-ambiguous")
		traceScenario(t, dsn, "scan", scResidual).silent("events-ambiguous")
	})
}

// grantWaitScenario: four sessions take 1.5 GB grants each (the stand-in's
// 6 GB of workspace memory) and then wait to read rows another session
// changed; the traced query needs a grant too and waits on
// RESOURCE_SEMAPHORE until the changes roll back and the four finish.
func grantWaitScenario(t *testing.T, srv *standin.Running) {
	db, ctx := otherSessions(t, srv)
	release := hold(ctx, t, db, "UPDATE dbo.OrderLines SET Quantity = Quantity + 1 WHERE OrderID = 1")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rows, err := db.QueryContext(ctx, scGrantHog); err == nil {
				for rows.Next() {
				}
				rows.Close()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the four hold their grants and wait
	timer := time.AfterFunc(1500*time.Millisecond, release)
	defer timer.Stop()
	s := traceScenario(t, srv.DSN, "grant-wait", scGrantWanted)
	wg.Wait()
	f := s.fires("grant-wait")
	contains(t, "title", f.Title, "for a memory grant (RESOURCE_SEMAPHORE, 1 wait)")
	if us, _ := f.Number("waitUs"); us < 900_000 {
		t.Errorf("waited %v µs, want about 1.2 s", us)
	}
	traceScenario(t, srv.DSN, "grant-free", scGrantWanted).silent("grant-wait")
}

// blockingScenario: another session updates order 7 and rolls back after
// 1.2 s; the traced read of order 7 waits for its X lock.
func blockingScenario(t *testing.T, srv *standin.Running) {
	db, ctx := otherSessions(t, srv)
	release := hold(ctx, t, db, "UPDATE dbo.Orders SET Status = N'Held' WHERE OrderID = 7")
	timer := time.AfterFunc(1200*time.Millisecond, release)
	defer timer.Stop()
	s := traceScenario(t, srv.DSN, "blocked", scOneOrder)
	f := s.fires("blocking")
	contains(t, "title", f.Title, "Blocked for ", "waiting for an S lock on KEY dbo.Orders.PK_Orders")
	contains(t, "detail", f.Detail, "The holder is not in this trace")
	if us, _ := f.Number("waitUs"); us < 900_000 {
		t.Errorf("waited %v µs", us)
	}
	traceScenario(t, srv.DSN, "not-blocked", scOneOrder).silent("blocking")
}

// otherSessions opens connections for the sessions a scenario runs beside
// the traced one, closed (and their context ended) when the test ends.
func otherSessions(t *testing.T, srv *standin.Running) (*sql.DB, context.Context) {
	t.Helper()
	db, err := tracer.OpenDSN(srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(func() { cancel(); db.Close() })
	return db, ctx
}

// hold runs stmt in an open transaction on its own connection and returns
// the function that rolls it back (safe to call twice).
func hold(ctx context.Context, t *testing.T, db *sql.DB, stmt string) func() {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION; "+stmt); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	done := func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), "ROLLBACK TRANSACTION")
			conn.Close()
		})
	}
	t.Cleanup(done)
	return done
}

func TestCompareOnStandinScenarioPairs(t *testing.T) {
	srv := startTraceStandin(t)
	pair := func(name, a, b string) *compare.Result {
		t.Helper()
		sa, sb := traceScenario(t, srv.DSN, name+"-a", a), traceScenario(t, srv.DSN, name+"-b", b)
		ia, _ := findingsInput(sa.bundle)
		ib, _ := findingsInput(sb.bundle)
		r, err := compare.Compare(compare.Side{Label: "a", Trace: ia.Trace, Plan: ia.Plan}, compare.Side{Label: "b", Trace: ib.Trace, Plan: ib.Plan})
		if err != nil {
			t.Fatal(err)
		}
		// The CLI gives the same comparison.
		if code, out, errs := runCLI(t, "compare", sa.path, sb.path); code != 0 || !strings.Contains(out, r.Verdict) {
			t.Errorf("compare CLI: exit %d %s\n%s", code, errs, out)
		}
		return r
	}
	byStatus := func(r *compare.Result, status string) []compare.OperatorDiff {
		var out []compare.OperatorDiff
		for _, d := range r.Operators {
			if d.Status == status {
				out = append(out, d)
			}
		}
		return out
	}
	t.Run("scan vs seek", func(t *testing.T) {
		r := pair("scan-seek", scScanHint, scSeekHint)
		rep := byStatus(r, compare.StatusReplaced)
		if len(rep) != 1 || rep[0].A.Name != "Clustered Index Scan" || rep[0].B.Name != "Index Seek" {
			t.Fatalf("replaced %+v\n%s", rep, r.Text())
		}
		if !strings.HasPrefix(rep[0].Verdict, "Index Seek replaced Clustered Index Scan: reads ") {
			t.Errorf("verdict %q", rep[0].Verdict)
		}
		if m, _ := rep[0].Metric("reads"); m.A == nil || m.B == nil || *m.B >= *m.A {
			t.Errorf("reads %+v", m)
		}
	})
	t.Run("spill vs no spill", func(t *testing.T) {
		r := pair("spill", scSortSpill, scSortFits)
		var sort *compare.OperatorDiff
		for i := range r.Operators {
			if r.Operators[i].A != nil && r.Operators[i].A.Name == "Sort" {
				sort = &r.Operators[i]
			}
		}
		if sort == nil || sort.Status != compare.StatusChanged || !strings.HasPrefix(sort.Verdict, "Sort: spills 1 → 0") {
			t.Fatalf("sort %+v\n%s", sort, r.Text())
		}
		if r.Counts.Added+r.Counts.Removed+r.Counts.Replaced != 0 {
			t.Errorf("counts %+v", r.Counts)
		}
		contains(t, "verdict", r.Verdict, "spills 1 → 0", "grant 512 KB → ")
	})
	t.Run("hash vs nested loops", func(t *testing.T) {
		r := pair("join", scHashJoin, scLoopJoin)
		var join *compare.OperatorDiff
		for i := range r.Operators {
			if d := &r.Operators[i]; d.A != nil && d.A.PhysicalOp == "Hash Match" {
				join = d
			}
		}
		if join == nil || join.B == nil || join.B.PhysicalOp != "Nested Loops" || join.Status != compare.StatusReplaced {
			t.Fatalf("join %+v\n%s", join, r.Text())
		}
		contains(t, "verdict", join.Verdict, "Nested Loops (Inner Join) replaced Hash Match (Inner Join)")
		for _, d := range r.Operators {
			if d.A != nil && d.A.Object == "dbo.Customers.PK_Customers" && (d.B == nil || d.B.Object != d.A.Object) {
				t.Errorf("the Customers scan did not match its twin: %+v", d)
			}
		}
	})
}
