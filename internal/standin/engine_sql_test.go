package standin

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

// TestWhileAndStringSplit covers WHILE with BREAK/CONTINUE and
// STRING_SPLIT, and their errors.
func TestWhileAndStringSplit(t *testing.T) {
	c := session(t, New(Options{}), 51)
	r := mustRun(t, c, `DECLARE @i int = 0, @s int = 0;
WHILE @i < 100 BEGIN SET @i = @i + 1; IF @i % 2 = 0 CONTINUE; IF @i > 9 BREAK; SET @s = @s + @i END;
SELECT @i AS i, @s AS s`)
	if got := r.sets[0].rows[0]; got[0] != int64(11) || got[1] != int64(25) {
		t.Fatalf("WHILE: %v", got)
	}
	r = mustRun(t, c, "SELECT value FROM STRING_SPLIT(N'a,b,,c', N',') WHERE value <> N'' ORDER BY value DESC")
	if len(r.sets[0].rows) != 3 || r.sets[0].rows[0][0] != "c" {
		t.Fatalf("STRING_SPLIT: %v", r.sets[0].rows)
	}
	for _, tc := range []struct {
		sql string
		num int32
	}{
		{"BREAK", 135},
		{"SELECT GREATEST(1, 2)", 195},
		{"SELECT a FROM (SELECT 1 AS a) AS t ORDER BY a OFFSET -1 ROWS", 10742},
		{"SELECT ROW_NUMBER() OVER (PARTITION BY CustomerID) FROM dbo.Orders", 4112},
		{"SELECT OrderID FROM dbo.Orders WHERE ROW_NUMBER() OVER (ORDER BY OrderID) = 1", 4108},
		{"SELECT CustomerID FROM dbo.Orders UNION SELECT CustomerID, OrderID FROM dbo.Orders", 205},
		{"SELECT DISTINCT CustomerID FROM dbo.Orders ORDER BY Amount", 145},
		{"SELECT TOP (1) WITH TIES OrderID FROM dbo.Orders", 1062},
		{"WITH r AS (SELECT 1 AS n UNION SELECT n + 1 FROM r) SELECT n FROM r", 252},
		{"SELECT COUNT(*) FROM dbo.Orders GROUP BY CustomerID HAVING Amount > 1", 8121},
		{"SELECT SUM(COUNT(*)) FROM dbo.Orders", 130},
		{"SELECT (SELECT OrderID FROM dbo.Orders)", 512},
		{"SELECT DATEADD(fortnight, 1, '2026-01-01')", 155},
		{"SELECT * FROM #nope", 208},
		{"SELECT * FROM @nope", 1087},
	} {
		if _, err := run(c, tc.sql); err == nil || err.Number != tc.num {
			t.Errorf("%s: got %v, want Msg %d", tc.sql, err, tc.num)
		}
	}
}

// TestTableDDLRollsBack: CREATE TABLE and SELECT INTO inside a
// transaction are undone by its ROLLBACK, as the tracer's rollback mode
// relies on; outside one they stay.
func TestTableDDLRollsBack(t *testing.T) {
	c := session(t, New(Options{}), 51)
	mustRun(t, c, "BEGIN TRAN; CREATE TABLE #t (a int PRIMARY KEY, b nvarchar(10)); INSERT INTO #t VALUES (1, N'x'); SELECT CustomerID INTO dbo.Copy FROM dbo.Customers WHERE CustomerID < 5; ROLLBACK")
	for _, q := range []string{"SELECT * FROM #t", "SELECT * FROM dbo.Copy"} {
		if _, err := run(c, q); err == nil || err.Number != 208 {
			t.Errorf("%s after ROLLBACK: %v, want Msg 208", q, err)
		}
	}
	r := mustRun(t, c, "SELECT CustomerID, Name INTO #keep FROM dbo.Customers WHERE CustomerID <= 3; INSERT INTO #keep VALUES (99, N'extra'); SELECT COUNT(*) FROM #keep")
	if n := r.sets[len(r.sets)-1].rows[0][0]; n != int64(4) {
		t.Fatalf("temp table rows: %v", n)
	}
	if _, err := run(c, "CREATE TABLE #keep (a int)"); err == nil || err.Number != 2714 {
		t.Fatalf("duplicate temp table: %v", err)
	}
	mustRun(t, c, "DROP TABLE #keep; DROP TABLE IF EXISTS #keep")
}

// TestLockWaitEventsBetweenSessions: a reader meeting another session's X
// key lock waits in the lock manager and its trace shows the LCK_M_S wait
// (Begin, then End with its duration) and the S lock granted after it.
func TestLockWaitEventsBetweenSessions(t *testing.T) {
	srv := New(Options{})
	a, b := session(t, srv, 51), session(t, srv, 52)
	mustRun(t, b, `CREATE EVENT SESSION w ON SERVER
ADD EVENT sqlos.wait_info(WHERE sqlserver.session_id = 52),
ADD EVENT sqlserver.lock_acquired(WHERE sqlserver.session_id = 52)
ADD TARGET package0.event_file(SET filename = N'w.xel')`)
	mustRun(t, b, "ALTER EVENT SESSION w ON SERVER STATE = START")
	mustRun(t, a, "BEGIN TRAN; UPDATE dbo.Orders SET Status = N'Hold' WHERE OrderID = 321")
	done := runAsync(b, "SELECT Status FROM dbo.Orders WHERE OrderID = 321")
	waitBlocked(t, srv, b)
	mustRun(t, a, "ROLLBACK")
	res := <-done
	if res.err != nil || res.r.sets[0].rows[0][0] == "Hold" {
		t.Fatalf("blocked reader: %v %v", res.err, res.r)
	}
	mustRun(t, b, "ALTER EVENT SESSION w ON SERVER STATE = STOP")
	var all strings.Builder
	for _, row := range mustRun(t, b, "SELECT event_data FROM sys.fn_xe_file_target_read_file('w*.xel', NULL, NULL, NULL)").sets[0].rows {
		all.WriteString(row[0].(string))
	}
	data := all.String()
	begin := strings.Index(data, "LCK_M_S]]></text></data><data name=\"opcode\"><value>0</value><text><![CDATA[Begin")
	end := strings.LastIndex(data, "LCK_M_S]]></text></data><data name=\"opcode\"><value>1</value><text><![CDATA[End")
	granted := strings.LastIndex(data, "<text><![CDATA[KEY]]></text>")
	if begin < 0 || end < begin || granted < end {
		t.Fatalf("want LCK_M_S Begin, End, then the KEY lock granted; ring buffer:\n%.3000s", data)
	}
}

// TestFunctionsFollowThePersona: GREATEST, LEAST and DATETRUNC exist from
// SQL Server 2022 (and on Azure), not on 2017.
func TestFunctionsFollowThePersona(t *testing.T) {
	c := session(t, New(Options{Persona: "sql2022"}), 51)
	r := mustRun(t, c, "SELECT GREATEST(3, NULL, 7), LEAST(N'b', N'a'), DATETRUNC(month, CAST('2026-03-14 09:26' AS datetime2))")
	row := r.sets[0].rows[0]
	if row[0] != int64(7) || row[1] != "a" || !strings.HasPrefix(engine.ValueString(row[2]), "2026-03-01 00:00:00") {
		t.Fatalf("sql2022: %v", row)
	}
	if _, err := run(session(t, New(Options{}), 51), "SELECT GREATEST(1, 2)"); err == nil || err.Number != 195 {
		t.Fatalf("sql2017 GREATEST: %v", err)
	}
}
