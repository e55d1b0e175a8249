package standin

import (
	"context"
	"database/sql"
	"io"
	"strings"
	"testing"
)

// fakeXEL stands for pkg/xe's XELWriter (this package must not import
// pkg/xe): it writes a marker and the events' XML, so the test sees which
// events the file held, in order.
func fakeXEL(events []string, w io.Writer) error {
	_, err := io.WriteString(w, "XEL\n"+strings.Join(events, "\n"))
	return err
}

func TestOpenRowsetBulkEventFile(t *testing.T) {
	r, db := startStandin(t, Options{XELEncoder: fakeXEL, ExtraLogins: map[string]string{"reader": "Reader-Pass1"},
		BulkPermission: map[string]bool{"reader": false}})
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, `CREATE EVENT SESSION [qr_bulk] ON SERVER ADD EVENT sqlserver.sql_batch_completed
		ADD TARGET package0.event_file (SET filename = N'/var/opt/mssql/log/qr_bulk.xel')`)
	mustExec(t, conn, "ALTER EVENT SESSION [qr_bulk] ON SERVER STATE = START")
	mustExec(t, conn, "SELECT 42 AS answer")
	mustExec(t, conn, "ALTER EVENT SESSION [qr_bulk] ON SERVER STATE = STOP")

	// the file list
	rows, err := conn.QueryContext(ctx, "SELECT full_filesystem_path, file_or_directory_name, size_in_bytes FROM sys.dm_os_enumerate_filesystem(N'/var/opt/mssql/log/', N'qr_bulk_0_*.xel')")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for rows.Next() {
		var full, name string
		var size int64
		if err := rows.Scan(&full, &name, &size); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "qr_bulk_0_") || full != "/var/opt/mssql/log/"+name || size <= 0 {
			t.Errorf("listed %q %q %d", full, name, size)
		}
		paths = append(paths, full)
	}
	rows.Close()
	if len(paths) != 1 {
		t.Fatalf("listed %v, want one file", paths)
	}

	// the permission checks agree
	var has int
	if err := conn.QueryRowContext(ctx, "SELECT HAS_PERMS_BY_NAME(NULL, NULL, 'ADMINISTER BULK OPERATIONS')").Scan(&has); err != nil || has != 1 {
		t.Fatalf("sa HAS_PERMS_BY_NAME bulk: %d %v", has, err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM fn_my_permissions(NULL, 'SERVER') WHERE permission_name = 'ADMINISTER BULK OPERATIONS'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("sa fn_my_permissions bulk: %d %v", n, err)
	}

	var blob []byte
	q := "SELECT BulkColumn FROM OPENROWSET(BULK N'" + paths[0] + "', SINGLE_BLOB) AS f"
	if err := conn.QueryRowContext(ctx, q).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(blob), "XEL\n<event name=\"sql_batch_completed\"") || !strings.Contains(string(blob), "SELECT 42 AS answer") {
		t.Fatalf("BulkColumn = %.200q", blob)
	}
	// a Windows-style path names the same file, as on SQL Server on Linux
	win := `C:` + strings.ReplaceAll(paths[0], "/", `\`)
	if err := conn.QueryRowContext(ctx, "SELECT BulkColumn FROM OPENROWSET(BULK N'"+win+"', SINGLE_BLOB) AS f").Scan(&blob); err != nil {
		t.Fatalf("Windows-style path: %v", err)
	}

	// a missing file: Msg 4860
	_, err = conn.ExecContext(ctx, "SELECT BulkColumn FROM OPENROWSET(BULK N'/var/opt/mssql/log/nothing.xel', SINGLE_BLOB) AS f")
	if sqlErrNumber(err) != 4860 || !strings.Contains(err.Error(), "nothing.xel\" does not exist") {
		t.Fatalf("missing file: %v", err)
	}

	// a login without the permission: Msg 4834, and both checks say so
	rdb := openAs(t, r, "reader", "Reader-Pass1")
	if err := rdb.QueryRowContext(ctx, "SELECT HAS_PERMS_BY_NAME(NULL, NULL, 'ADMINISTER BULK OPERATIONS')").Scan(&has); err != nil || has != 0 {
		t.Fatalf("reader HAS_PERMS_BY_NAME bulk: %d %v", has, err)
	}
	if err := rdb.QueryRowContext(ctx, "SELECT HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'ADMINISTER DATABASE BULK OPERATIONS')").Scan(&has); err != nil || has != 0 {
		t.Fatalf("reader HAS_PERMS_BY_NAME database bulk: %d %v", has, err)
	}
	if err := rdb.QueryRowContext(ctx, "SELECT COUNT(*) FROM fn_my_permissions(NULL, 'SERVER') WHERE permission_name LIKE 'ADMINISTER%BULK%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("reader fn_my_permissions bulk: %d %v", n, err)
	}
	_, err = rdb.ExecContext(ctx, q)
	if sqlErrNumber(err) != 4834 {
		t.Fatalf("without the permission: %v, want Msg 4834", err)
	}
	mustExec(t, conn, "DROP EVENT SESSION [qr_bulk] ON SERVER")
}

func openAs(t *testing.T, r *Running, user, password string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", DSN(user, password, r.Addr, demoDBName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
