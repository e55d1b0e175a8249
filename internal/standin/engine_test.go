package standin

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
)

func cell(t *testing.T, r *recorder, set, row, col int) any {
	t.Helper()
	if set >= len(r.sets) || row >= len(r.sets[set].rows) {
		t.Fatalf("no result set %d row %d (sets: %d)", set, row, len(r.sets))
	}
	return r.sets[set].rows[row][col]
}

func TestServerIdentity(t *testing.T) {
	c := session(t, New(Options{}), 57)
	r := mustRun(t, c, "SELECT @@SPID, @@VERSION, SERVERPROPERTY('ProductVersion'), SERVERPROPERTY('EngineEdition'), DB_ID(), DB_NAME(), CAST(SERVERPROPERTY('ErrorLogFileName') AS NVARCHAR(4000)), SERVERPROPERTY('NoSuchProperty')")
	want := []any{int64(57), versionString, productVersion, int64(3), int64(demoDBID), demoDBName, errorLogFile, nil}
	for i, w := range want {
		if got := cell(t, r, 0, 0, i); got != w {
			t.Errorf("column %d: got %v, want %v", i, got, w)
		}
	}
	// the tracer's path arithmetic (docs/design/tracing.md §1.2, [new] form)
	r = mustRun(t, c, `DECLARE @x nvarchar(4000) = CAST(SERVERPROPERTY('ErrorLogFileName') AS NVARCHAR(4000)); SELECT LEFT(@x, LEN(@x) - PATINDEX('%[\/]%', REVERSE(@x)))`)
	if got := cell(t, r, 0, 0, 0); got != "/var/opt/mssql/log" {
		t.Fatalf("log directory: %v", got)
	}
}

func TestQueriesAndErrors(t *testing.T) {
	c := session(t, New(Options{}), 51)
	r := mustRun(t, c, "SELECT COUNT(*) AS n, MIN(CustomerID), MAX(CustomerID) FROM dbo.Customers")
	if cell(t, r, 0, 0, 0) != int64(1000) || cell(t, r, 0, 0, 1) != int64(1) || cell(t, r, 0, 0, 2) != int64(1000) {
		t.Fatalf("customers: %v", r.sets[0].rows)
	}
	r = mustRun(t, c, "SELECT TOP 3 c.Region, COUNT(*) AS n FROM dbo.Customers AS c GROUP BY c.Region ORDER BY n DESC, c.Region")
	if len(r.sets[0].rows) != 3 {
		t.Fatalf("top 3: %v", r.sets[0].rows)
	}
	total := int64(0)
	r = mustRun(t, c, "SELECT c.Region, COUNT(*) AS n FROM dbo.Customers AS c GROUP BY c.Region")
	for _, row := range r.sets[0].rows {
		total += row[1].(int64)
	}
	if total != 1000 {
		t.Fatalf("group counts sum %d", total)
	}
	r = mustRun(t, c, "SELECT o.OrderID FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID WHERE c.CustomerID = 42 AND o.OrderID IN (SELECT OrderID FROM dbo.Orders WHERE CustomerID = 42)")
	r2 := mustRun(t, c, "SELECT COUNT(*) FROM dbo.Orders WHERE CustomerID = 42")
	if int64(len(r.sets[0].rows)) != r2.sets[0].rows[0][0].(int64) {
		t.Fatalf("join/subquery mismatch")
	}
	for _, tc := range []struct {
		sql    string
		number int32
		text   string
	}{
		{"SELECT * FROM dbo.NoSuchTable", 208, "Invalid object name 'dbo.NoSuchTable'."},
		{"SELECT * FROM sys.no_such_view", 208, "Invalid object name 'sys.no_such_view'."},
		{"SELECT NoSuchColumn FROM dbo.Orders", 207, "Invalid column name 'NoSuchColumn'."},
		{"SELECT OrderID FROM dbo.Orders o JOIN dbo.OrderLines l ON l.OrderID = o.OrderID", 209, "Ambiguous column name 'OrderID'."},
		{"SELECT FOO(1)", 195, "'foo' is not a recognized built-in function name."},
		{"SELECT @nope", 137, "Must declare the scalar variable \"@nope\"."},
		{"SELECT 1/0", 8134, "Divide by zero error encountered."},
		{"SELECT CustomerID, Region FROM dbo.Customers GROUP BY CustomerID", 8120, ""},
		{"COMMIT", 3902, ""},
		{"ROLLBACK", 3903, ""},
		{"EXEC dbo.usp_missing", 2812, "Could not find stored procedure 'dbo.usp_missing'."},
		{"INSERT INTO dbo.Customers (CustomerID, Name, Region, CreatedAt) VALUES (1, N'dup', N'x', '2026-01-01')", 2627, ""},
		{"INSERT INTO dbo.Customers (CustomerID, Name) VALUES (9999, N'x')", 515, ""},
		{"USE NoSuchDb", 911, ""},
		{"SET SHOWPLAN_XML ON", 102, ""},
		{"SELECT * FROM dbo.Orders WITH (INDEX(IX_Nope))", 308, ""},
		{"UPDATE sys.objects SET name = 'x'", 259, ""},
	} {
		_, err := run(c, tc.sql)
		if err == nil {
			t.Errorf("%s: no error", tc.sql)
			continue
		}
		if err.Number != tc.number || tc.text != "" && err.Message != tc.text {
			t.Errorf("%s: got Msg %d %q, want Msg %d %q", tc.sql, err.Number, err.Message, tc.number, tc.text)
		}
	}
}

func TestLockresAndPhyslocMatchCatalog(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	orders := srv.demo.Table("dbo", "Orders")
	for _, ix := range orders.Indexes {
		r := mustRun(t, c, "SELECT OrderID, %%lockres%%, %%physloc%%, sys.fn_PhysLocFormatter(%%physloc%%) FROM dbo.Orders WITH (INDEX("+ix.Name+")) WHERE CustomerID = 7")
		if len(r.sets[0].rows) == 0 {
			t.Fatal("no rows for customer 7")
		}
		for _, row := range r.sets[0].rows {
			i, _ := orders.FindRow([]any{row[0]})
			want := ix.KeyHash(orders.Rows[i])
			if row[1] != want {
				t.Fatalf("%s: lockres %v, want %v", ix.Name, row[1], want)
			}
			pl := row[2].([]byte)
			page := int32(pl[0]) | int32(pl[1])<<8 | int32(pl[2])<<16 | int32(pl[3])<<24
			owner := srv.demo.PageOwner[page]
			if owner == nil || owner.Idx != ix || owner.Kind == "IAM_PAGE" {
				t.Fatalf("%s: physloc page %d not a leaf page of the index (%+v)", ix.Name, page, owner)
			}
			if !strings.HasPrefix(row[3].(string), "(1:") {
				t.Fatalf("fn_PhysLocFormatter: %v", row[3])
			}
			// the tracer's lookup: WHERE %%lockres%% IN (...)
			r2 := mustRun(t, c, "SELECT %%physloc%% FROM dbo.Orders WITH (INDEX("+ix.Name+")) WHERE %%lockres%% IN (N'"+want+"')")
			if len(r2.sets[0].rows) != 1 {
				t.Fatalf("lookup by lockres found %d rows", len(r2.sets[0].rows))
			}
		}
	}
	// key hash resources decode back with docs/design/tracing.md §5.3's formula
	h := orders.Indexes[0].KeyHash(orders.Rows[0])
	r1, r2 := engine.KeyHashResources(h)
	hi := uint16(r1 >> 16)
	hi = hi>>8 | hi<<8
	lo := r2>>24 | (r2>>8)&0xFF00 | (r2<<8)&0xFF0000 | r2<<24
	if got := "(" + strings.ToLower(strings.TrimLeft("", "")) + hex12(uint64(hi)<<32|uint64(lo)) + ")"; got != h {
		t.Fatalf("resource decode %s != %s", got, h)
	}
}

func hex12(v uint64) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 12)
	for i := 11; i >= 0; i-- {
		b[i] = digits[v&0xF]
		v >>= 4
	}
	return string(b)
}

func TestPageLookups(t *testing.T) {
	srv := New(Options{Persona: "sql2019"}) // sys.dm_db_page_info is SQL Server 2019+
	c := session(t, srv, 51)
	r := mustRun(t, c, `SELECT au.allocation_unit_id, p.hobt_id, i.name, au.first_page, au.root_page, au.first_iam_page
FROM sys.system_internals_allocation_units au JOIN sys.partitions p ON p.partition_id = au.container_id
JOIN sys.indexes i ON i.object_id = p.object_id AND i.index_id = p.index_id WHERE p.object_id = OBJECT_ID('dbo.OrderLines')`)
	if len(r.sets[0].rows) != 1 {
		t.Fatalf("OrderLines allocation units: %v", r.sets[0].rows)
	}
	lines := srv.demo.Table("dbo", "OrderLines").Indexes[0]
	if r.sets[0].rows[0][0] != lines.AllocUnitID || r.sets[0].rows[0][1] != lines.PartitionID {
		t.Fatalf("ids: %v", r.sets[0].rows[0])
	}
	leaf := lines.LeafPages[3]
	r = mustRun(t, c, "SELECT object_id, index_id, alloc_unit_id, page_type_desc, OBJECT_NAME(object_id) FROM sys.dm_db_page_info(5, 1, "+itoa(int64(leaf))+", 'DETAILED')")
	row := r.sets[0].rows[0]
	if row[0] != lines.Tbl.ObjectID || row[1] != int64(1) || row[2] != lines.AllocUnitID || row[3] != "DATA_PAGE" || row[4] != "OrderLines" {
		t.Fatalf("page info: %v", row)
	}
	r = mustRun(t, c, "SELECT allocated_page_page_id, page_type_desc FROM sys.dm_db_database_page_allocations(DB_ID(), OBJECT_ID('dbo.OrderLines'), 1, NULL, 'DETAILED') WHERE is_iam_page = 0 AND page_level = 0")
	if len(r.sets[0].rows) != len(lines.LeafPages)+1 { // leaf pages + the root (level 1 counted separately)
		if len(r.sets[0].rows) != len(lines.LeafPages) {
			t.Fatalf("allocations: %d rows, %d leaf pages", len(r.sets[0].rows), len(lines.LeafPages))
		}
	}
	if _, err := run(c, "SELECT * FROM sys.dm_db_page_info(5, 2, 1, 'DETAILED')"); err == nil || err.Number != 2561 {
		t.Fatalf("bad file id: %v", err)
	}
}

func TestMapValuesAndPermissions(t *testing.T) {
	srv := New(Options{ExtraLogins: map[string]string{"reader": "pw"}})
	c := session(t, srv, 51)
	r := mustRun(t, c, "SELECT map_key, map_value FROM sys.dm_xe_map_values WHERE name = N'wait_types' AND map_value IN (N'PAGEIOLATCH_SH', N'CXPACKET', N'LCK_M_X') ORDER BY map_key")
	got := map[any]any{}
	for _, row := range r.sets[0].rows {
		got[row[1]] = row[0]
	}
	if got["LCK_M_X"] != int64(5) || got["PAGEIOLATCH_SH"] != int64(66) || got["CXPACKET"] != int64(193) {
		t.Fatalf("wait_types keys: %v", got)
	}
	r = mustRun(t, c, "SELECT map_value FROM sys.dm_xe_map_values WHERE name = 'lock_resource_type' AND map_key = 7")
	if cell(t, r, 0, 0, 0) != "KEY" {
		t.Fatal("lock_resource_type 7 != KEY")
	}
	r = mustRun(t, c, "SELECT permission_name FROM fn_my_permissions(NULL, 'SERVER') WHERE permission_name = 'ALTER ANY EVENT SESSION'")
	if len(r.sets[0].rows) != 1 {
		t.Fatal("sysadmin lacks ALTER ANY EVENT SESSION")
	}
	// NULL securable and class test a server permission: example A of
	// https://learn.microsoft.com/en-us/sql/t-sql/functions/has-perms-by-name-transact-sql
	r = mustRun(t, c, "SELECT HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE'), IS_SRVROLEMEMBER('sysadmin')")
	if cell(t, r, 0, 0, 0) != int64(1) || cell(t, r, 0, 0, 1) != int64(1) {
		t.Fatalf("sa perms: %v", r.sets[0].rows[0])
	}
	// a login without server permissions
	res, err := srv.Login(t.Context(), tdsSession(52), loginReq("reader", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	reader := res.Session.(*connState)
	r = mustRun(t, reader, "SELECT HAS_PERMS_BY_NAME(NULL, 'SERVER', 'ALTER ANY EVENT SESSION'), IS_SRVROLEMEMBER('sysadmin')")
	if cell(t, r, 0, 0, 0) != int64(0) || cell(t, r, 0, 0, 1) != int64(0) {
		t.Fatalf("reader perms: %v", r.sets[0].rows[0])
	}
	for sql, number := range map[string]int32{
		"SELECT * FROM fn_dblog(NULL, NULL)": 229,
		"DBCC DROPCLEANBUFFERS":              2571,
		"DROP EVENT SESSION x ON SERVER":     15151,
	} {
		if _, err := run(reader, sql); err == nil || err.Number != number {
			t.Errorf("%s as reader: %v, want Msg %d", sql, err, number)
		}
	}
	if _, err := srv.Login(t.Context(), tdsSession(53), loginReq("reader", "wrong")); err == nil {
		t.Fatal("wrong password accepted")
	}
}

func TestTransactionLogAndRollback(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	mustRun(t, c, "CHECKPOINT")
	r := mustRun(t, c, "SELECT MAX([Current LSN]) FROM fn_dblog(NULL, NULL)")
	start := cell(t, r, 0, 0, 0).(string)
	before := mustRun(t, c, "SELECT Status FROM dbo.Orders WHERE OrderID = 100").sets[0].rows[0][0]
	r = mustRun(t, c, "BEGIN TRANSACTION iv_QueryReplay_0123456789abcdef; UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120")
	if len(r.tran) != 1 || r.tran[0] != "begin" {
		t.Fatalf("BEGIN TRAN did not start a TDS transaction: %v", r.tran)
	}
	if r.dones[len(r.dones)-1].RowCount != 21 {
		t.Fatalf("rows affected: %+v", r.dones)
	}
	r = mustRun(t, c, "SELECT [Current LSN], Operation, Context, AllocUnitName, [Transaction Name] FROM fn_dblog(NULL, NULL) WHERE [Current LSN] > '"+start+"'")
	ops := map[string]int{}
	for _, row := range r.sets[0].rows {
		ops[row[1].(string)+"/"+row[2].(string)]++
		if row[1] == "LOP_BEGIN_XACT" && row[4] != "iv_QueryReplay_0123456789abcdef" {
			t.Fatalf("transaction name: %v", row[4])
		}
	}
	if ops["LOP_BEGIN_XACT/LCX_NULL"] != 1 || ops["LOP_MODIFY_ROW/LCX_CLUSTERED"] != 21 {
		t.Fatalf("log ops: %v", ops)
	}
	if got := mustRun(t, c, "SELECT Status FROM dbo.Orders WHERE OrderID = 100").sets[0].rows[0][0]; got != "Shipped" {
		t.Fatalf("update not applied: %v", got)
	}
	r = mustRun(t, c, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION iv_QueryReplay_0123456789abcdef")
	if len(r.tran) != 1 || r.tran[0] != "rollback" {
		t.Fatalf("rollback envchange: %v", r.tran)
	}
	if got := mustRun(t, c, "SELECT Status FROM dbo.Orders WHERE OrderID = 100").sets[0].rows[0][0]; got != before {
		t.Fatalf("rollback did not restore: %v != %v", got, before)
	}
	r = mustRun(t, c, "SELECT Operation FROM fn_dblog(NULL, NULL) WHERE Operation = 'LOP_ABORT_XACT'")
	if len(r.sets[0].rows) != 1 {
		t.Fatal("no LOP_ABORT_XACT")
	}
	// insert + delete roll back too, including the nonclustered index
	mustRun(t, c, "BEGIN TRAN; INSERT INTO dbo.Orders (OrderID, CustomerID, OrderDate, Amount, Status) VALUES (100001, 42, '2026-01-15', 99.5, N'New'); DELETE FROM dbo.OrderLines WHERE OrderID = 77")
	if n := cell(t, mustRun(t, c, "SELECT COUNT(*) FROM dbo.Orders WITH (INDEX(IX_Orders_CustomerID)) WHERE OrderID = 100001"), 0, 0, 0); n != int64(1) {
		t.Fatalf("insert not visible in the nonclustered index: %v", n)
	}
	mustRun(t, c, "ROLLBACK")
	if n := cell(t, mustRun(t, c, "SELECT COUNT(*) FROM dbo.Orders WHERE OrderID = 100001"), 0, 0, 0); n != int64(0) {
		t.Fatal("insert survived rollback")
	}
	if n := cell(t, mustRun(t, c, "SELECT COUNT(*) FROM dbo.OrderLines WHERE OrderID = 77"), 0, 0, 0); n == int64(0) {
		t.Fatal("delete survived rollback")
	}
}

func TestDBCCAndSetOptions(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	r := mustRun(t, c, "DBCC DROPCLEANBUFFERS")
	if len(r.infos) != 1 || r.infos[0].Number != 2528 {
		t.Fatalf("DBCC info: %+v", r.infos)
	}
	if len(srv.cached) != 0 {
		t.Fatalf("buffer pool still holds %d pages", len(srv.cached))
	}
	r = mustRun(t, c, "DBCC TRACEON(652) WITH NO_INFOMSGS")
	if len(r.infos) != 0 || !c.traceFlag(652) {
		t.Fatal("TRACEON(652) WITH NO_INFOMSGS")
	}
	r = mustRun(t, c, "DBCC TRACESTATUS")
	if len(r.sets[0].rows) != 1 || r.sets[0].rows[0][0] != int64(652) {
		t.Fatalf("tracestatus: %v", r.sets[0].rows)
	}
	mustRun(t, c, "DBCC TRACEOFF(652)")
	if c.traceFlag(652) {
		t.Fatal("TRACEOFF")
	}
	if _, err := run(c, "DBCC CHECKDB"); err == nil || err.Number != 2526 {
		t.Fatalf("DBCC CHECKDB: %v", err)
	}
	r = mustRun(t, c, "SET NOCOUNT ON; SELECT 1")
	if r.dones[0].RowCount >= 0 {
		t.Fatalf("NOCOUNT: %+v", r.dones)
	}
	mustRun(t, c, "SET NOCOUNT OFF; SET STATISTICS XML ON")
	r = mustRun(t, c, "SELECT OrderID, CustomerID, OrderDate, Amount FROM dbo.Orders WHERE Amount > 2500")
	if len(r.sets) != 2 || r.sets[1].cols[0].Name != "Microsoft SQL Server 2005 XML Showplan" {
		t.Fatalf("STATISTICS XML: %d sets", len(r.sets))
	}
	if !strings.Contains(r.sets[1].rows[0][0].(string), `PhysicalOp="Clustered Index Scan"`) {
		t.Fatal("plan lacks the scan")
	}
}

func TestStatementAndCheckpointEvents(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	mustRun(t, c, `CREATE EVENT SESSION st ON SERVER ADD EVENT sqlserver.sql_statement_completed, ADD EVENT sqlserver.physical_page_write,
ADD EVENT sqlserver.log_flush_complete, ADD EVENT sqlserver.error_reported, ADD EVENT sqlserver.sql_transaction ADD TARGET package0.ring_buffer`)
	mustRun(t, c, "ALTER EVENT SESSION st ON SERVER STATE = START")
	mustRun(t, c, "UPDATE dbo.Orders SET Status = N'Paid' WHERE OrderID = 5;\nSELECT 1")
	mustRun(t, c, "CHECKPOINT")
	run(c, "SELECT * FROM dbo.Missing")
	mustRun(t, c, "ALTER EVENT SESSION st ON SERVER STATE = STOP")
	s := srv.sessions[0]
	counts := map[string]int{}
	var stmtTexts []string
	for _, e := range s.Targets[0].Ring {
		counts[e.Name]++
		if e.Name == "sql_statement_completed" {
			i := strings.Index(e.Ring, `<data name="statement">`)
			stmtTexts = append(stmtTexts, e.Ring[i:i+160])
		}
	}
	if counts["sql_statement_completed"] < 5 || counts["physical_page_write"] == 0 || counts["log_flush_complete"] != 1 || counts["error_reported"] != 1 || counts["sql_transaction"] < 2 {
		t.Fatalf("events: %v", counts)
	}
	if !strings.Contains(stmtTexts[1], "UPDATE dbo.Orders") || !strings.Contains(stmtTexts[2], "SELECT 1") {
		t.Fatalf("statement texts: %q", stmtTexts)
	}
}

func TestApplyValuesAndLockDMV(t *testing.T) {
	srv := New(Options{Persona: "sql2019"}) // sys.dm_db_page_info is SQL Server 2019+
	c := session(t, srv, 51)
	lines := srv.demo.Table("dbo", "OrderLines").Indexes[0]
	q := "SELECT v.page_id, pi.object_id, pi.index_id FROM (VALUES (1, " + itoa(int64(lines.LeafPages[0])) + "), (1, " + itoa(int64(lines.LeafPages[5])) + ")) AS v(file_id, page_id) CROSS APPLY sys.dm_db_page_info(DB_ID(), v.file_id, v.page_id, 'LIMITED') AS pi"
	r := mustRun(t, c, q)
	if len(r.sets[0].rows) != 2 || r.sets[0].rows[1][1] != lines.Tbl.ObjectID || r.sets[0].rows[1][2] != int64(1) {
		t.Fatalf("correlated apply: %v", r.sets[0].rows)
	}
	mustRun(t, c, "BEGIN TRAN; UPDATE dbo.Orders SET Status = N'x' WHERE OrderID = 9")
	r = mustRun(t, c, "SELECT resource_type, request_mode, resource_description FROM sys.dm_tran_locks WHERE request_session_id = @@SPID ORDER BY resource_type")
	modes := map[string]string{}
	for _, row := range r.sets[0].rows {
		modes[row[0].(string)] += row[1].(string) + " "
	}
	if !strings.Contains(modes["KEY"], "X") || !strings.Contains(modes["OBJECT"], "IX") || !strings.Contains(modes["PAGE"], "IX") {
		t.Fatalf("held locks: %v", modes)
	}
	tid := cell(t, mustRun(t, c, "SELECT transaction_id FROM sys.dm_tran_current_transaction"), 0, 0, 0)
	if tid != c.txn.id {
		t.Fatalf("transaction id %v != %d", tid, c.txn.id)
	}
	mustRun(t, c, "ROLLBACK")
	if n := len(mustRun(t, c, "SELECT * FROM sys.dm_tran_locks").sets[0].rows); n != 0 {
		t.Fatalf("%d locks after rollback", n)
	}
}

func TestStatementErrorsContinueTheBatch(t *testing.T) {
	c := session(t, New(Options{}), 51)
	// a run-time error ends only its statement
	r, err := run(c, "SELECT 1/0; SELECT 2 AS two")
	if err == nil || err.Number != 8134 {
		t.Fatalf("no statement error: %v", err)
	}
	// the failed SELECT's column metadata went out before the error, as
	// SQL Server sends it; no row did
	if len(r.errs) != 1 || r.errs[0].Number != 8134 || len(r.sets) != 2 || len(r.sets[0].rows) != 0 || r.sets[1].rows[0][0] != int64(2) {
		t.Fatalf("errors %v, sets %d", r.errs, len(r.sets))
	}
	// a name-resolution error ends the batch
	r, err = run(c, "SELECT * FROM dbo.Nope; SELECT 2")
	if err == nil || err.Number != 208 || len(r.sets) != 0 {
		t.Fatalf("208 did not abort the batch: %v, %d sets", err, len(r.sets))
	}
	// with XACT_ABORT ON a run-time error aborts and rolls back
	mustRun(t, c, "SET XACT_ABORT ON")
	r, err = run(c, "BEGIN TRAN; DELETE FROM dbo.OrderLines WHERE OrderID = 8; SELECT 1/0; SELECT 3")
	if err == nil || err.Number != 8134 || c.txn != nil || r.tran[len(r.tran)-1] != "rollback" {
		t.Fatalf("XACT_ABORT: %v, txn %v, tran %v", err, c.txn, r.tran)
	}
	if n := cell(t, mustRun(t, c, "SELECT COUNT(*) FROM dbo.OrderLines WHERE OrderID = 8"), 0, 0, 0); n == int64(0) {
		t.Fatal("XACT_ABORT did not roll back")
	}
}

func TestScenarioMatchesInsideLargerBatch(t *testing.T) {
	c := session(t, New(Options{}), 51)
	r := mustRun(t, c, "SET NOCOUNT ON; SET STATISTICS XML ON;\n"+scenarioSQL(t, "hash_join")+"\n-- trailing comment")
	if len(r.sets) != 2 || !strings.Contains(r.sets[1].rows[0][0].(string), `PhysicalOp="Hash Match"`) {
		t.Fatalf("scenario inside a batch not recognised: %d sets", len(r.sets))
	}
}

func TestGuessedColumnsOnlyOnRequest(t *testing.T) {
	for _, guessed := range []bool{false, true} {
		srv := New(Options{GuessedColumns: guessed})
		c := session(t, srv, 51)
		mustRun(t, c, "CREATE EVENT SESSION g ON SERVER ADD EVENT sqlserver.transaction_log, ADD EVENT sqlserver.query_thread_profile ADD TARGET package0.ring_buffer")
		mustRun(t, c, "ALTER EVENT SESSION g ON SERVER STATE = START")
		mustRun(t, c, "BEGIN TRAN; "+scenarioSQL(t, "update_orders")+"; ROLLBACK")
		mustRun(t, c, "ALTER EVENT SESSION g ON SERVER STATE = STOP")
		var all strings.Builder
		for _, e := range srv.sessions[0].Targets[0].Ring {
			all.WriteString(e.Ring)
		}
		for _, col := range []string{`name="log_record_size"`, `name="actual_rows"`} {
			if strings.Contains(all.String(), col) != guessed {
				t.Errorf("GuessedColumns=%v: %s present=%v", guessed, col, !guessed)
			}
		}
		if !strings.Contains(all.String(), `name="total_time_us"`) || !strings.Contains(all.String(), `<text><![CDATA[LOP_MODIFY_ROW]]></text>`) {
			t.Errorf("GuessedColumns=%v: documented columns missing", guessed)
		}
	}
}

func TestLongInListOfParameters(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 51)
	lines := srv.demo.Table("dbo", "OrderLines")
	ix := lines.Indexes[0]
	var hashes []string
	params := map[string]any{}
	for i := 0; i < 2000; i++ {
		h := ix.KeyHash(lines.Rows[i*7])
		name := "@h" + itoa(int64(i))
		hashes = append(hashes, name)
		params[strings.ToLower(name)] = h
	}
	params["@h5"] = nil // a NULL among the values matches nothing
	r := &recorder{}
	x := strings.Join(hashes, ", ")
	if err := c.run(t.Context(), "SELECT %%lockres%%, %%physloc%% FROM [dbo].[OrderLines] WITH (INDEX([PK_OrderLines])) WHERE %%lockres%% IN ("+x+")", params, r, true); err != nil {
		t.Fatal(err)
	}
	if len(r.sets[0].rows) != 1999 {
		t.Fatalf("%d rows, want 1999", len(r.sets[0].rows))
	}
}
