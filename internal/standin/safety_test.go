package standin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tds"
)

func amountOf(t *testing.T, c *connState, id int) string {
	t.Helper()
	r := mustRun(t, c, fmt.Sprintf("SELECT Amount FROM dbo.Orders WHERE OrderID = %d", id))
	return fmt.Sprint(r.sets[0].rows[0][0])
}

func wantErr(t *testing.T, c *connState, sql string, number int32, text string) {
	t.Helper()
	_, err := run(c, sql)
	if err == nil || err.Number != number || !strings.Contains(err.Message, text) {
		t.Fatalf("%s: %v, want Msg %d %q", sql, err, number, text)
	}
}

// SET NOEXEC ON compiles without executing, until SET NOEXEC OFF
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-noexec-transact-sql);
// SET PARSEONLY likewise at parse time
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-parseonly-transact-sql).
func TestNoexecAndParseonlyRunNothing(t *testing.T) {
	for _, opt := range []string{"NOEXEC", "PARSEONLY"} {
		t.Run(opt, func(t *testing.T) {
			srv := New(Options{})
			c := session(t, srv, 51)
			before := amountOf(t, c, 1)
			mustRun(t, c, "BEGIN TRANSACTION qr_x")
			r := mustRun(t, c, "SET "+opt+" ON; UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1; SELECT 1; SET NOCOUNT ON")
			if len(r.sets) != 0 {
				t.Fatalf("SET %s ON: %d result sets came back", opt, len(r.sets))
			}
			// a later batch too: IF @@TRANCOUNT > 0 ROLLBACK does not run
			mustRun(t, c, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION")
			mustRun(t, c, "SET "+opt+" OFF")
			r = mustRun(t, c, "SELECT @@TRANCOUNT")
			if r.sets[0].rows[0][0] != int64(1) || c.nocount {
				t.Fatalf("after SET %s OFF: @@TRANCOUNT %v, NOCOUNT %v; the ROLLBACK and SET NOCOUNT must not have run", opt, r.sets[0].rows[0][0], c.nocount)
			}
			if got := amountOf(t, c, 1); got != before {
				t.Fatalf("the UPDATE ran under SET %s ON: Amount %s, was %s", opt, got, before)
			}
		})
	}
}

// SET FMTONLY ON returns only metadata; no rows are processed or sent
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-fmtonly-transact-sql).
func TestFmtonlyReturnsMetadataOnly(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	before := amountOf(t, c, 1)
	mustRun(t, c, "BEGIN TRANSACTION qr_x")
	r := mustRun(t, c, "SET FMTONLY ON; UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1; SELECT OrderID, Amount FROM dbo.Orders")
	if len(r.sets) != 1 || len(r.sets[0].cols) != 2 || len(r.sets[0].rows) != 0 {
		t.Fatalf("FMTONLY: %d sets, want one with 2 columns and no rows", len(r.sets))
	}
	mustRun(t, c, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION")
	r = mustRun(t, c, "SET FMTONLY OFF; SELECT @@TRANCOUNT")
	if r.sets[0].rows[0][0] != int64(1) {
		t.Fatalf("the ROLLBACK ran under FMTONLY: @@TRANCOUNT %v", r.sets[0].rows[0][0])
	}
	if got := amountOf(t, c, 1); got != before {
		t.Fatalf("the UPDATE ran under FMTONLY")
	}
}

// SET ROWCOUNT stops processing after n rows, for results and for the rows
// DML changes (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-rowcount-transact-sql).
func TestRowcountLimitsResultsAndDML(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	r := mustRun(t, c, "SET ROWCOUNT 3; SELECT OrderID FROM dbo.Orders WHERE CustomerID = 42")
	if n := len(r.sets[0].rows); n != 3 {
		t.Fatalf("SET ROWCOUNT 3: %d rows", n)
	}
	mustRun(t, c, "BEGIN TRANSACTION")
	r = mustRun(t, c, "UPDATE dbo.Orders SET Amount = 0 WHERE CustomerID = 42")
	if d := r.dones[len(r.dones)-1]; d.RowCount != 3 {
		t.Fatalf("UPDATE under SET ROWCOUNT 3 changed %d rows", d.RowCount)
	}
	mustRun(t, c, "ROLLBACK")
	r = mustRun(t, c, "SET ROWCOUNT 0; SELECT OrderID FROM dbo.Orders WHERE CustomerID = 42")
	if n := len(r.sets[0].rows); n <= 3 {
		t.Fatalf("SET ROWCOUNT 0 should lift the limit: %d rows", n)
	}
	// the limit cuts system functions too, fn_dblog among them
	r = mustRun(t, c, "SET ROWCOUNT 1; SELECT [Current LSN] FROM fn_dblog(NULL, NULL)")
	if n := len(r.sets[0].rows); n != 1 {
		t.Fatalf("fn_dblog under SET ROWCOUNT 1: %d rows", n)
	}
}

// SET TEXTSIZE cuts max-type values a SELECT returns
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-textsize-transact-sql).
func TestTextsizeCutsMaxValues(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	q := "SELECT CAST(N'abcdefghijklmnopqrstuvwxyz' AS nvarchar(max)), CAST(N'abcdefghijklmnopqrstuvwxyz' AS nvarchar(40))"
	r := mustRun(t, c, q)
	if r.sets[0].rows[0][0] != "abcdefghijklmnopqrstuvwxyz" {
		t.Fatalf("login default should be unlimited: %v", r.sets[0].rows[0][0])
	}
	r = mustRun(t, c, "SET TEXTSIZE 16; "+q)
	if r.sets[0].rows[0][0] != "abcdefgh" || r.sets[0].rows[0][1] != "abcdefghijklmnopqrstuvwxyz" {
		t.Fatalf("SET TEXTSIZE 16: %v (nvarchar(max) cut to 8 characters, nvarchar(40) untouched)", r.sets[0].rows[0])
	}
	r = mustRun(t, c, "SET TEXTSIZE -1; "+q)
	if r.sets[0].rows[0][0] != "abcdefghijklmnopqrstuvwxyz" {
		t.Fatalf("SET TEXTSIZE -1: %v", r.sets[0].rows[0][0])
	}
}

// CURRENT_TRANSACTION_ID() and sys.dm_tran_current_transaction agree, and
// a new transaction has a new id; sys.dm_tran_session_transactions shows
// other sessions' transactions.
func TestTransactionIDs(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	other := session(t, srv, 52)
	mustRun(t, c, "BEGIN TRANSACTION qr_x")
	r := mustRun(t, c, "SELECT CURRENT_TRANSACTION_ID(), (SELECT transaction_id FROM sys.dm_tran_current_transaction), @@TRANCOUNT")
	id := r.sets[0].rows[0][0]
	if id != r.sets[0].rows[0][1] || r.sets[0].rows[0][2] != int64(1) {
		t.Fatalf("ids %v", r.sets[0].rows[0])
	}
	r = mustRun(t, other, "SELECT session_id, transaction_id FROM sys.dm_tran_session_transactions")
	if len(r.sets[0].rows) != 1 || r.sets[0].rows[0][0] != int64(51) || r.sets[0].rows[0][1] != id {
		t.Fatalf("dm_tran_session_transactions: %v", r.sets[0].rows)
	}
	mustRun(t, c, "COMMIT; BEGIN TRANSACTION")
	r = mustRun(t, c, "SELECT CURRENT_TRANSACTION_ID()")
	if r.sets[0].rows[0][0] == id {
		t.Fatal("a new transaction kept the old id")
	}
	r = mustRun(t, other, "SELECT session_id, login_time FROM sys.dm_exec_sessions WHERE session_id = 51")
	if len(r.sets[0].rows) != 1 || r.sets[0].rows[0][1] == nil {
		t.Fatalf("dm_exec_sessions.login_time: %v", r.sets[0].rows)
	}
}

// KILL from another connection, with SQL Server's refusals
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/kill-transact-sql).
func TestKillStatement(t *testing.T) {
	srv := New(Options{ExtraLogins: map[string]string{"reader": "Reader-Pass1"}})
	killer := session(t, srv, 51)
	victim := session(t, srv, 52)
	before := amountOf(t, killer, 1)
	mustRun(t, victim, "BEGIN TRANSACTION; UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1")
	wantErr(t, killer, "KILL 51", 6104, "your own process")
	wantErr(t, killer, "KILL 999", 6106, "Process ID 999 is not an active process ID.")
	res, err := srv.Login(context.Background(), &tds.Session{SPID: 53}, loginReq("reader", "Reader-Pass1"))
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, res.Session.(*connState), "KILL 52", 6102, "permission to use the KILL statement")
	mustRun(t, killer, "KILL 52")
	if got := amountOf(t, killer, 1); got != before {
		t.Fatalf("the victim's transaction was not rolled back: %s, was %s", got, before)
	}
	if err := victim.Batch(context.Background(), &tds.Batch{SQL: "SELECT 1"}, &recorder{}); !errors.Is(err, tds.ErrDropConnection) {
		t.Fatalf("the killed session ran another request: %v", err)
	}
	r := mustRun(t, killer, "SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE session_id = 52")
	if r.sets[0].rows[0][0] != int64(0) {
		t.Fatal("the killed session is still listed")
	}
}

// Service Broker statements parse and are answered as SQL Server answers
// them without the queue or conversation.
func TestBrokerStatementsAnswerHonestly(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	wantErr(t, c, "RECEIVE TOP(1) * FROM dbo.TargetQueue", 208, "Invalid object name 'dbo.TargetQueue'.")
	wantErr(t, c, "WAITFOR (RECEIVE TOP(1) conversation_handle FROM dbo.TargetQueue), TIMEOUT 1000", 208, "dbo.TargetQueue")
	wantErr(t, c, "DECLARE @h uniqueidentifier = '6F9619FF-8B86-D011-B42D-00C04FC964FF'; SEND ON CONVERSATION @h MESSAGE TYPE [x] (N'a')", 8426, `"6F9619FF-8B86-D011-B42D-00C04FC964FF" is not found`)
	wantErr(t, c, "DECLARE @h uniqueidentifier = '6F9619FF-8B86-D011-B42D-00C04FC964FF'; END CONVERSATION @h WITH CLEANUP", 8426, "is not found")
}

// The transaction faults end or replace a batch's transaction after its
// statements, invisibly to the batch text — as a committing trigger would.
func TestTransactionFaults(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	before := amountOf(t, c, 1)
	srv.Faults.EndTransactionIn("OrderID = 1")
	mustRun(t, c, "BEGIN TRANSACTION qr_x")
	mustRun(t, c, "UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1")
	r := mustRun(t, c, "SELECT @@TRANCOUNT")
	if r.sets[0].rows[0][0] != int64(0) {
		t.Fatalf("EndTransactionIn: @@TRANCOUNT %v", r.sets[0].rows[0][0])
	}
	if got := amountOf(t, c, 1); got == before {
		t.Fatal("the committed change is not there")
	}

	srv.Faults.ReplaceTransactionIn("OrderID = 2")
	mustRun(t, c, "BEGIN TRANSACTION qr_y")
	id := mustRun(t, c, "SELECT CURRENT_TRANSACTION_ID()").sets[0].rows[0][0]
	mustRun(t, c, "UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 2")
	r = mustRun(t, c, "SELECT @@TRANCOUNT, CURRENT_TRANSACTION_ID()")
	if r.sets[0].rows[0][0] != int64(1) || r.sets[0].rows[0][1] == id {
		t.Fatalf("ReplaceTransactionIn: @@TRANCOUNT %v, id %v (was %v)", r.sets[0].rows[0][0], r.sets[0].rows[0][1], id)
	}
}

// The documented comparator form sqlserver.like_i_sql_unicode_string is
// accepted (it is in package sqlserver, not package0).
func TestLikeComparator(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	ok := "CREATE EVENT SESSION s1 ON SERVER ADD EVENT sqlserver.sql_batch_starting (WHERE (sqlserver.session_id = (51) AND NOT sqlserver.like_i_sql_unicode_string(sqlserver.sql_text, N'%marker%'))) ADD TARGET package0.ring_buffer WITH (MAX_DISPATCH_LATENCY = 1 SECONDS)"
	mustRun(t, c, ok)
	mustRun(t, c, "ALTER EVENT SESSION s1 ON SERVER STATE = START")
	mustRun(t, c, "SELECT 1 /* marker */")
	mustRun(t, c, "SELECT 2")
	data := ringBufferAfterLatency(t, srv, c, "s1")
	if strings.Contains(data, "marker") || !strings.Contains(data, "SELECT 2") {
		t.Fatalf("the NOT like_i_sql_unicode_string predicate did not filter:\n%s", data)
	}
	bad := strings.Replace(strings.Replace(ok, "s1", "s2", 1), "sqlserver.like_i_sql", "package0.like_i_sql", 1)
	if _, err := run(c, bad); err == nil {
		t.Fatal("package0.like_i_sql_unicode_string was accepted; the comparator is in package sqlserver")
	}
}
