package tracer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tsqlcorpus"
	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// TestTraceProcedureStandin: the example, EXEC of a user procedure
// with a named argument, traces; its two statements give two plans, each on
// its own node of the statement tree.
func TestTraceProcedureStandin(t *testing.T) {
	srv := startStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	b, err := tr.Trace(context.Background(), Options{SQL: "EXEC dbo.CustomerOrders @region = N'West', @minAmount = 2500"})
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	if !b.Result.RolledBack {
		t.Error("the transaction was not verified and rolled back")
	}
	if n := len(b.Result.Rows); n != 2 {
		t.Errorf("%d result sets, want the procedure's 2", n)
	}
	planned := 0
	for _, s := range b.Statements {
		if s.Plan != "" {
			planned++
		}
	}
	if planned != 2 || slices.ContainsFunc(b.Result.Warnings, func(w string) bool { return strings.Contains(w, "uses the first") }) {
		t.Errorf("%d statements with plans (warnings %q): want the procedure's two statements each with its own", planned, b.Result.Warnings)
	}
	// the issue's own example
	if _, err := db.ExecContext(context.Background(), "CREATE PROCEDURE dbo.TopCustomers @region nvarchar(20) AS SELECT TOP (5) CustomerID, Name FROM dbo.Customers WHERE Region = @region ORDER BY CustomerID"); err != nil {
		t.Fatal(err)
	}
	if b, err := tr.Trace(context.Background(), Options{SQL: "EXEC dbo.TopCustomers @region = N'West'"}); err != nil || len(b.Result.Rows) != 1 {
		t.Errorf("EXEC dbo.TopCustomers: %v", err)
	}
	if got := sessions(t, db); len(got) != 0 {
		t.Errorf("sessions left behind: %v", got)
	}
}

// TestHostileProceduresStandin: procedures created on the stand-in that
// commit, run dynamic SQL, run as another principal, call xp_cmdshell, are
// encrypted, or call one that commits are refused before anything runs,
// naming the procedure and the statement; no session is left and no data
// changed. A procedure that UPDATEs traces under the rollback, verified.
func TestHostileProceduresStandin(t *testing.T) {
	srv := startStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	ctx := context.Background()
	procs := []string{
		"CREATE PROCEDURE dbo.Commits AS UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1; COMMIT",
		"CREATE PROCEDURE dbo.Dynamic @s nvarchar(200) AS EXEC sp_executesql @s",
		"CREATE PROCEDURE dbo.RunsAs WITH EXECUTE AS OWNER AS SELECT 1",
		"CREATE PROCEDURE dbo.Shell AS EXEC xp_cmdshell 'dir'",
		"CREATE PROCEDURE dbo.Hidden WITH ENCRYPTION AS SELECT 1",
		"CREATE PROCEDURE dbo.CallsCommits AS SELECT 1; EXEC dbo.Commits",
		"CREATE PROCEDURE dbo.Bump @id int AS UPDATE dbo.Orders SET Amount = Amount + 1 WHERE OrderID = @id; SELECT Amount FROM dbo.Orders WHERE OrderID = @id",
		"CREATE PROCEDURE dbo.LooksBad AS SELECT 'COMMIT' AS [rollback], N'EXEC (@s)' AS [xp_cmdshell]",
	}
	for _, p := range procs {
		if _, err := db.ExecContext(ctx, p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	before := checksum(t, db)
	for _, tc := range []struct{ sql, want string }{
		{"EXEC dbo.Commits", "procedure dbo.Commits (called from the batch): line 1 (COMMIT): " + tsqlcorpus.WhyCommit},
		{"EXEC dbo.Dynamic @s = N'SELECT 1'", tsqlcorpus.WhyDynamic},
		{"EXEC dbo.RunsAs", tsqlcorpus.WhyExecuteAs},
		{"EXEC dbo.Shell", tsqlcorpus.WhyExtended},
		{"EXEC dbo.Hidden", "definition is NULL"},
		{"EXEC dbo.CallsCommits", "procedure dbo.Commits (called from procedure dbo.CallsCommits)"},
		{"EXEC dbo.Missing", "not a procedure QueryReplay can find"},
	} {
		n := len(log.texts())
		_, err := tr.Trace(ctx, Options{SQL: tc.sql})
		var re *tsql.RefusedError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, tc.want) {
			t.Errorf("%s: %v; want a refusal naming %q", tc.sql, err, tc.want)
		}
		for _, q := range log.texts()[n:] {
			if strings.Contains(q, "EVENT SESSION") || strings.Contains(q, tc.sql) {
				t.Errorf("%s: sent %q before refusing", tc.sql, q)
			}
		}
	}
	b, err := tr.Trace(ctx, Options{SQL: "EXEC dbo.Bump @id = 7"})
	if err != nil || !b.Result.RolledBack || !b.Run.Modification {
		t.Fatalf("dbo.Bump: %v (rolled back %v, modification %v)", err, b != nil && b.Result.RolledBack, b != nil && b.Run.Modification)
	}
	if _, err := tr.Trace(ctx, Options{SQL: "EXEC dbo.LooksBad"}); err != nil {
		t.Errorf("a look-alike is refused: %v", err)
	}
	if _, err := New(&recOpener{open: DBOpener{DB: db}, log: &stmtLog{}}, Policy{Modifications: ModificationsRefuse}, nil).Trace(ctx, Options{SQL: "EXEC dbo.Bump 7"}); err == nil || !strings.Contains(err.Error(), "refuses modifications") {
		t.Errorf("a modifying procedure under a policy that refuses modifications: %v", err)
	}
	if after := checksum(t, db); after != before {
		t.Errorf("data changed:\n%s\n%s", before, after)
	}
	if got := sessions(t, db); len(got) != 0 {
		t.Errorf("sessions left behind: %v", got)
	}
}

// TestTraceExecuteSQLStandin: the form ORMs send traces as its statement
// with typed parameters: sent as sp_executesql with the values as
// arguments of the request, none spliced.
func TestTraceExecuteSQLStandin(t *testing.T) {
	srv := startStandin(t)
	tr, log, _ := newTracer(t, srv.dsn, Policy{})
	const value = "4217"
	b, err := tr.Trace(context.Background(), Options{SQL: "EXEC sp_executesql N'SELECT COUNT(*) FROM dbo.Orders WHERE OrderID < @c', N'@c int', @c = " + value})
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	if b.SQL != "SELECT COUNT(*) FROM dbo.Orders WHERE OrderID < @c" || len(b.Result.Rows) != 1 {
		t.Errorf("bundle SQL %q, %d result sets", b.SQL, len(b.Result.Rows))
	}
	for _, q := range log.texts() {
		if strings.Contains(q, value) {
			t.Errorf("the value was spliced into %q", q)
		}
	}
	if _, err := tr.Trace(context.Background(), Options{SQL: "EXEC sp_executesql N'SELECT 1; COMMIT', N'@c int', @c = 1"}); err == nil || !strings.Contains(err.Error(), tsqlcorpus.WhyCommit) {
		t.Errorf("a literal that commits: %v", err)
	}
}
