package standin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

func startStandin(t *testing.T, opts Options) (*Running, *sql.DB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, err := Start(ctx, "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	db, err := sql.Open("sqlserver", r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return r, db
}

func mustExec(t *testing.T, conn interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string) {
	t.Helper()
	if _, err := conn.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func sqlErrNumber(err error) int32 {
	var e mssql.Error
	if errors.As(err, &e) {
		return e.Number
	}
	return 0
}

// TestTraceRunThroughDriver runs the tracer's sequence (docs/design/tracing.md §2)
// against the stand-in with go-mssqldb and checks what it reads back.
func TestTraceRunThroughDriver(t *testing.T) {
	_, db := startStandin(t, Options{})
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var spid int64
	if err := conn.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	if spid < 51 {
		t.Fatalf("spid %d", spid)
	}
	ddl := `CREATE EVENT SESSION [QR_test] ON SERVER
ADD EVENT sqlserver.sql_batch_starting(ACTION(sqlserver.session_id, package0.event_sequence) WHERE (sqlserver.session_id = ` + itoa(spid) + ` AND sqlserver.sql_text NOT LIKE '%QR_test%')),
ADD EVENT sqlserver.physical_page_read(ACTION(sqlserver.session_id, package0.event_sequence, sqlserver.plan_handle) WHERE (sqlserver.session_id = ` + itoa(spid) + `)),
ADD EVENT sqlserver.lock_acquired(ACTION(package0.event_sequence) WHERE (sqlserver.session_id = ` + itoa(spid) + `)),
ADD EVENT sqlos.wait_info(ACTION(package0.event_sequence) WHERE (sqlserver.session_id = ` + itoa(spid) + `)),
ADD EVENT sqlserver.query_post_execution_showplan(ACTION(package0.event_sequence, sqlserver.plan_handle) WHERE (sqlserver.session_id = ` + itoa(spid) + `))
ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/QR_test.xel', max_file_size = (150), max_rollover_files = (1))
WITH (MAX_DISPATCH_LATENCY = 1 SECONDS, EVENT_RETENTION_MODE = NO_EVENT_LOSS)`
	mustExec(t, conn, ddl)
	mustExec(t, conn, "CHECKPOINT")
	mustExec(t, conn, "DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS")
	mustExec(t, conn, "dbcc traceon(652)")
	mustExec(t, conn, "ALTER EVENT SESSION [QR_test] ON SERVER STATE = START")
	rows, err := conn.QueryContext(ctx, "SELECT OrderID, CustomerID, OrderDate, Amount FROM dbo.Orders WHERE Amount > 2500")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n == 0 {
		t.Fatal("scenario returned no rows")
	}
	mustExec(t, conn, "ALTER EVENT SESSION [QR_test] ON SERVER STATE = STOP")
	mustExec(t, conn, "DROP EVENT SESSION [QR_test] ON SERVER")

	// read back on a new connection
	rs, err := db.QueryContext(ctx, "SELECT object_name, event_data, file_name, file_offset FROM sys.fn_xe_file_target_read_file('/var/opt/mssql/log/QR_test*.xel', NULL, NULL, NULL)")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	counts := map[string]int{}
	var showplan string
	for rs.Next() {
		var name, data, file string
		var off int64
		if err := rs.Scan(&name, &data, &file, &off); err != nil {
			t.Fatal(err)
		}
		counts[name]++
		if strings.Contains(data, "<type ") {
			t.Fatalf("event_file XML must not carry <type>: %s", data)
		}
		if name == "query_post_execution_showplan" {
			showplan = data
		}
	}
	if counts["physical_page_read"] == 0 || counts["lock_acquired"] == 0 || counts["wait_info"] == 0 || showplan == "" {
		t.Fatalf("missing events: %v", counts)
	}
	if counts["sql_batch_starting"] != 1 {
		t.Fatalf("sql_text NOT LIKE filter: want exactly the scenario batch, got %d sql_batch_starting", counts["sql_batch_starting"])
	}
	if !strings.Contains(showplan, `<data name="showplan_xml"><value><ShowPlanXML`) {
		t.Fatalf("showplan not a child element: %.300s", showplan)
	}
}

func itoa(n int64) string {
	return strings.TrimSpace(strings.Replace(string(rune('0'+0)), "0", "", 1) + formatInt(n))
}

func formatInt(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

func TestDriverErrorsAndLogin(t *testing.T) {
	r, db := startStandin(t, Options{})
	ctx := context.Background()
	for q, number := range map[string]int32{
		"SELECT * FROM dbo.NoSuchTable": 208,
		// a batch's first statement needs no EXEC: SELEC 1 calls procedure
		// SELEC (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/execute-transact-sql)
		"SELEC 1":        2812,
		"SELEC * FROM t": 102,
		"CREATE EVENT SESSION x ON SERVER ADD EVENT sqlserver.bogus":                                        25623,
		"CREATE EVENT SESSION x ON SERVER ADD EVENT sqlserver.lock_acquired ADD TARGET package0.event_file": 25642,
		"DROP EVENT SESSION nope ON SERVER":                                                                 15151,
	} {
		_, err := db.ExecContext(ctx, q)
		if got := sqlErrNumber(err); got != number {
			t.Errorf("%s: got %v, want Msg %d", q, err, number)
		}
	}
	bad, err := sql.Open("sqlserver", DSN("sa", "wrong", r.Addr, demoDBName))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.PingContext(ctx); sqlErrNumber(err) != 18456 {
		t.Fatalf("wrong password: %v", err)
	}
	nodb, _ := sql.Open("sqlserver", DSN("sa", r.Server.opts.Password, r.Addr, "NoSuchDb"))
	defer nodb.Close()
	if err := nodb.PingContext(ctx); err == nil {
		t.Fatal("login to a missing database succeeded")
	}
}

func TestDriverTransactionsAndParameters(t *testing.T) {
	_, db := startStandin(t, Options{})
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.ExecContext(ctx, "UPDATE dbo.Orders SET Status = @p1 WHERE OrderID BETWEEN @lo AND @hi", "Held", sql.Named("lo", 10), sql.Named("hi", 14))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 5 {
		t.Fatalf("rows affected %d", n)
	}
	var status string
	if err := tx.QueryRowContext(ctx, "SELECT Status FROM dbo.Orders WHERE OrderID = @p1", 12).Scan(&status); err != nil || status != "Held" {
		t.Fatalf("inside tx: %q %v", status, err)
	}
	var tranCount int
	if err := tx.QueryRowContext(ctx, "SELECT @@TRANCOUNT").Scan(&tranCount); err != nil || tranCount != 1 {
		t.Fatalf("@@TRANCOUNT %d %v", tranCount, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT Status FROM dbo.Orders WHERE OrderID = 12").Scan(&status); err != nil || status == "Held" {
		t.Fatalf("after rollback: %q %v", status, err)
	}
	// T-SQL transactions across batches on one connection
	conn, _ := db.Conn(ctx)
	defer conn.Close()
	mustExec(t, conn, "BEGIN TRANSACTION iv_x")
	mustExec(t, conn, "DELETE FROM dbo.OrderLines WHERE OrderID = 3")
	var lsns int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM fn_dblog(NULL, NULL) WHERE Operation = 'LOP_DELETE_ROWS'").Scan(&lsns); err != nil || lsns == 0 {
		t.Fatalf("fn_dblog: %d %v", lsns, err)
	}
	mustExec(t, conn, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION iv_x")
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM dbo.OrderLines WHERE OrderID = 3").Scan(&n); err != nil || n == 0 {
		t.Fatalf("delete not rolled back: %d %v", n, err)
	}
}

func TestDriverFaults(t *testing.T) {
	r, db := startStandin(t, Options{})
	ctx := context.Background()
	f := r.Faults()

	f.Error("SELECT 42", 1205, 13, "Transaction (Process ID 51) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction.")
	if _, err := db.ExecContext(ctx, "SELECT 42"); sqlErrNumber(err) != 1205 {
		t.Fatalf("injected error: %v", err)
	}
	if _, err := db.ExecContext(ctx, "SELECT 42"); err != nil {
		t.Fatalf("fault fired twice: %v", err)
	}

	f.DropConnection("fn_dblog")
	conn, _ := db.Conn(ctx)
	if _, err := conn.ExecContext(ctx, "SELECT * FROM fn_dblog(NULL, NULL)"); err == nil {
		t.Fatal("connection not dropped")
	}
	conn.Close()

	// a delayed statement can be cancelled (ATTENTION) and the conn reused
	f.Delay("SELECT 7", time.Minute)
	conn, _ = db.Conn(ctx)
	defer conn.Close()
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		// cancel once the Delay fault holds the statement (or after 10 s,
		// which fails the test below only if the statement was never held)
		testenv.Poll(10*time.Second, faultConsumed(r.Server))
		cancel()
	}()
	if _, err := conn.ExecContext(cctx, "SELECT 7"); err == nil {
		t.Fatal("delayed statement not cancelled")
	}
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("connection unusable after cancel: %v", err)
	}

	// KILL: the session's next request finds the connection closed
	var spid int
	if err := conn.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	if !f.Kill(spid) {
		t.Fatal("kill: no such session")
	}
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err == nil {
		t.Fatal("killed session still answers")
	}

	// restart: sessions without STARTUP_STATE are gone, the pool reconnects
	mustExec(t, db, "CREATE EVENT SESSION lost ON SERVER ADD EVENT sqlserver.lock_acquired ADD TARGET package0.ring_buffer")
	mustExec(t, db, "ALTER EVENT SESSION lost ON SERVER STATE = START")
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	var running int
	var err error
	for i := 0; i < 3; i++ { // the pool may first hand out a connection of the old process
		if err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sys.dm_xe_sessions").Scan(&running); err == nil {
			break
		}
	}
	if err != nil || running != 0 {
		t.Fatalf("after restart: %d running, %v", running, err)
	}
}

func TestDriverConcurrentConnections(t *testing.T) {
	_, db := startStandin(t, Options{})
	db.SetMaxOpenConns(8)
	ctx := context.Background()
	queries := []string{
		scenarioSQL(t, "hash_aggregate"),
		scenarioSQL(t, "seek_key_lookup"),
		"SELECT name FROM sys.dm_xe_map_values WHERE name = 'lock_mode'",
		"SELECT @@SPID",
	}
	want := make([]int, len(queries))
	for i, q := range queries {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			want[i]++
		}
		rows.Close()
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			for i := 0; i < 10; i++ {
				k := (g + i) % len(queries)
				rows, err := db.QueryContext(ctx, queries[k])
				if err != nil {
					errs <- err
					return
				}
				n := 0
				for rows.Next() {
					n++
				}
				rows.Close()
				if n != want[k] {
					errs <- fmt.Errorf("query %d: %d rows, want %d", k, n, want[k])
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestDriverLoginLogoutAttentionEvents(t *testing.T) {
	r, db := startStandin(t, Options{})
	ctx := context.Background()
	mustExec(t, db, "CREATE EVENT SESSION conn ON SERVER ADD EVENT sqlserver.login, ADD EVENT sqlserver.logout, ADD EVENT sqlserver.attention ADD TARGET package0.event_file(SET filename = N'conn.xel')")
	mustExec(t, db, "ALTER EVENT SESSION conn ON SERVER STATE = START")
	other, err := sql.Open("sqlserver", r.DSN)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var spid int
	if err := conn.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	const waitfor = "WAITFOR DELAY '00:01:00'"
	go func() {
		// cancel once the server runs the WAITFOR (its batch has begun)
		testenv.Poll(10*time.Second, func() bool {
			r.Server.mu.Lock()
			defer r.Server.mu.Unlock()
			c := r.Server.conns[spid]
			return c != nil && c.lastBatch == waitfor
		})
		cancel()
	}()
	if _, err := conn.ExecContext(cctx, waitfor); err == nil {
		t.Fatal("WAITFOR not cancelled")
	}
	conn.Close()
	other.Close()
	// the server notices the closed socket asynchronously
	testenv.WaitFor(t, 10*time.Second, "the server to notice the closed connection", func() bool {
		return !slices.Contains(r.Faults().SPIDs(), spid)
	})
	mustExec(t, db, "ALTER EVENT SESSION conn ON SERVER STATE = STOP")
	rows, err := db.QueryContext(ctx, "SELECT object_name FROM sys.fn_xe_file_target_read_file('conn*.xel', NULL, NULL, NULL)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var name string
		rows.Scan(&name)
		seen[name] = true
	}
	for _, want := range []string{"login", "attention", "logout"} {
		if !seen[want] {
			t.Fatalf("no %s event: %v", want, seen)
		}
	}
}

func TestDriverColumnTypesOfSystemViews(t *testing.T) {
	_, db := startStandin(t, Options{})
	ctx := context.Background()
	mustExec(t, db, "CREATE EVENT SESSION ty ON SERVER ADD EVENT sqlserver.sql_batch_starting ADD TARGET package0.event_file(SET filename = N'ty.xel')")
	mustExec(t, db, "ALTER EVENT SESSION ty ON SERVER STATE = START")
	mustExec(t, db, "SELECT 1")
	mustExec(t, db, "ALTER EVENT SESSION ty ON SERVER STATE = STOP")
	rows, err := db.QueryContext(ctx, "SELECT * FROM sys.fn_xe_file_target_read_file('ty*.xel', NULL, NULL, NULL)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, _ := rows.ColumnTypes()
	var got []string
	for _, ct := range types {
		got = append(got, ct.Name()+":"+ct.DatabaseTypeName())
	}
	want := "module_guid:UNIQUEIDENTIFIER,package_guid:UNIQUEIDENTIFIER,object_name:NVARCHAR,event_data:NVARCHAR,file_name:NVARCHAR,file_offset:BIGINT,timestamp_utc:DATETIME2"
	if strings.Join(got, ",") != want {
		t.Fatalf("columns %s", strings.Join(got, ","))
	}
	n := 0
	for rows.Next() {
		var mod, pkg mssql.UniqueIdentifier
		var name, data, file string
		var off int64
		var ts time.Time
		if err := rows.Scan(&mod, &pkg, &name, &data, &file, &off, &ts); err != nil {
			t.Fatal(err)
		}
		if mod.String() != "D5149520-6282-11DE-8A39-0800200C9A66" || ts.IsZero() {
			t.Fatalf("row: %v %v", mod, ts)
		}
		n++
	}
	if n < 2 {
		t.Fatalf("%d events", n)
	}
}
