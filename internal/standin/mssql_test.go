package standin

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"
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

// TestTraceRunThroughDriver runs the tracer's sequence (xe-tracing.md §2)
// against the stand-in with go-mssqldb and checks what it reads back.
func TestTraceRunThroughDriver(t *testing.T) {
	_, db := startStandin(t, Options{Logger: testLogger(t)})
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
