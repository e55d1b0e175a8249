package standin

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-sql/sqlexp"
	mssql "github.com/microsoft/go-mssqldb"
)

// The independent-client suites: go-mssqldb (this file), tedious
// (clienttest/tedious_suite.js, run by TestTediousSuite) and FreeTDS
// (TestFreeTDSSuite). Each drives the same ground: login with TLS off, on
// and strict; batches; RPC with typed and output parameters; prepared
// statements; named and nested transactions and savepoints; cancel during a
// long result; errors and messages with numbers, states and lines; several
// result sets; large values; the demo schema's types.
//
// Against a real server: QUERYREPLAY_TEST_DSN=sqlserver://user:pw@host?database=db&encrypt=true...
// runs all three suites there instead of the stand-in (the tedious and
// FreeTDS suites get the DSN's fields through clients_target_test.go; see
// docs/standin.md §6, TestClientSuitesFollowTestDSN). Cases only the
// stand-in guarantees skip with "stand-in only: …".

// clientTarget is what a client suite talks to.
type clientTarget struct {
	dsn     string // go-mssqldb DSN, TLS off (or the real server's as given)
	tlsDSN  string // whole connection encrypted, CA pinned
	strict  string // TDS 8.0
	real    bool
	running *Running
}

func startClientTarget(t *testing.T) *clientTarget {
	t.Helper()
	if dsn := os.Getenv("QUERYREPLAY_TEST_DSN"); dsn != "" {
		return &clientTarget{dsn: dsn, real: true}
	}
	r, _ := startStandin(t, Options{})
	return &clientTarget{dsn: r.DSN, tlsDSN: r.TLSDSN, strict: strings.Replace(r.TLSDSN, "encrypt=true", "encrypt=strict", 1), running: r}
}

func openClient(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func hasDemoDB(t *testing.T, db *sql.DB) bool {
	var id sql.NullInt64
	if err := db.QueryRow("SELECT DB_ID(N'QueryReplayDemo')").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id.Valid
}

func TestGoMssqldbSuite(t *testing.T) {
	target := startClientTarget(t)
	if target.real {
		t.Log("running against the real server in QUERYREPLAY_TEST_DSN")
	}
	db := openClient(t, target.dsn)
	ctx := context.Background()

	t.Run("login TLS off, on, strict", func(t *testing.T) {
		if target.real {
			t.Skip("stand-in only: a real server's TLS modes are its configuration; the DSN's mode logged in")
		}
		for name, dsn := range map[string]string{"off": target.dsn, "on": target.tlsDSN, "strict": target.strict} {
			var encrypted string
			if err := openClient(t, dsn).QueryRow("SELECT encrypt_option FROM sys.dm_exec_connections WHERE session_id = @@SPID").Scan(&encrypted); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want := map[bool]string{true: "FALSE", false: "TRUE"}[name == "off"]; encrypted != want {
				t.Errorf("%s: encrypt_option %s, want %s", name, encrypted, want)
			}
		}
	})

	t.Run("batch and several result sets", func(t *testing.T) {
		rows, err := db.QueryContext(ctx, "SELECT 1 AS a; SELECT N'two' AS b, 3 AS c")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var a int
		if !rows.Next() || rows.Scan(&a) != nil || a != 1 {
			t.Fatalf("first set: %d", a)
		}
		if rows.Next() || !rows.NextResultSet() {
			t.Fatal("no second result set")
		}
		var b string
		var c int
		if !rows.Next() || rows.Scan(&b, &c) != nil || b != "two" || c != 3 {
			t.Fatalf("second set: %q %d", b, c)
		}
	})

	t.Run("RPC typed and output parameters", func(t *testing.T) {
		var n int64
		var s string
		if err := db.QueryRowContext(ctx, "SELECT @n + 1, @s", sql.Named("n", int64(41)), sql.Named("s", "héllo ☃")).Scan(&n, &s); err != nil || n != 42 || s != "héllo ☃" {
			t.Fatalf("typed parameters: %d %q %v", n, s, err)
		}
		var out int64
		var outS string
		if _, err := db.ExecContext(ctx, "SET @out = @in * 2; SET @outs = N'x' + @str", sql.Named("in", int64(21)), sql.Named("str", "yz"),
			sql.Named("out", sql.Out{Dest: &out}), sql.Named("outs", sql.Out{Dest: &outS})); err != nil {
			t.Fatal(err)
		}
		if out != 42 || outS != "xyz" {
			t.Fatalf("output parameters: %d %q, want 42 xyz", out, outS)
		}
	})

	t.Run("prepared statements", func(t *testing.T) {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var handle int32
		if _, err := conn.ExecContext(ctx, "sp_prepare", sql.Named("handle", sql.Out{Dest: &handle}), sql.Named("params", "@a int, @b int"),
			sql.Named("stmt", "SELECT @a * @b AS product")); err != nil {
			t.Fatal(err)
		}
		if handle == 0 {
			t.Fatal("sp_prepare returned handle 0")
		}
		for _, ab := range [][2]int{{6, 7}, {3, 5}} {
			var p int
			if err := conn.QueryRowContext(ctx, "sp_execute", handle, ab[0], ab[1]).Scan(&p); err != nil || p != ab[0]*ab[1] {
				t.Fatalf("sp_execute %v: %d %v", ab, p, err)
			}
		}
		if _, err := conn.ExecContext(ctx, "sp_unprepare", handle); err != nil {
			t.Fatal(err)
		}
		_, err = conn.ExecContext(ctx, "sp_execute", handle, 1, 2)
		if me := (mssql.Error{}); !errors.As(err, &me) || me.Number != 8179 {
			t.Fatalf("sp_execute after sp_unprepare: %v, want Msg 8179", err)
		}
		var h2 int32
		var sum int
		if err := conn.QueryRowContext(ctx, "sp_prepexec", sql.Named("handle", sql.Out{Dest: &h2}), sql.Named("params", "@x int"), sql.Named("stmt", "SELECT @x + 1"), sql.Named("x", 9)).Scan(&sum); err != nil || sum != 10 {
			t.Fatalf("sp_prepexec: %d %v", sum, err)
		}
	})

	t.Run("named and nested transactions and savepoints", func(t *testing.T) {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		trancount := func() int {
			var n int
			if err := conn.QueryRowContext(ctx, "SELECT @@TRANCOUNT").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		mustExec(t, conn, "BEGIN TRAN outer_tx")
		mustExec(t, conn, "BEGIN TRAN inner_tx")
		if n := trancount(); n != 2 {
			t.Fatalf("@@TRANCOUNT %d after nested BEGIN, want 2", n)
		}
		mustExec(t, conn, "COMMIT")
		mustExec(t, conn, "SAVE TRANSACTION sp1")
		if n := trancount(); n != 1 {
			t.Fatalf("@@TRANCOUNT %d after SAVE, want 1", n)
		}
		mustExec(t, conn, "ROLLBACK TRANSACTION sp1")
		if n := trancount(); n != 1 {
			t.Fatalf("rollback to a savepoint ended the transaction (@@TRANCOUNT %d)", n)
		}
		_, err = conn.ExecContext(ctx, "ROLLBACK TRANSACTION nosuch")
		if me := (mssql.Error{}); !errors.As(err, &me) || me.Number != 6401 {
			t.Fatalf("rollback to an unknown savepoint: %v, want Msg 6401", err)
		}
		mustExec(t, conn, "ROLLBACK TRANSACTION outer_tx")
		if n := trancount(); n != 0 {
			t.Fatalf("@@TRANCOUNT %d after ROLLBACK, want 0", n)
		}
		// database/sql transactions are TM requests
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRow("SELECT @@TRANCOUNT").Scan(&n); err != nil || n != 1 {
			t.Fatalf("TM BEGIN: @@TRANCOUNT %d %v", n, err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("savepoint undoes work", func(t *testing.T) {
		if !hasDemoDB(t, db) {
			t.Skip("stand-in only: needs the demo database QueryReplayDemo")
		}
		conn, _ := db.Conn(ctx)
		defer conn.Close()
		price := func() float64 {
			var p float64
			if err := conn.QueryRowContext(ctx, "SELECT ListPrice FROM dbo.Products WHERE ProductID = 1").Scan(&p); err != nil {
				t.Fatal(err)
			}
			return p
		}
		before := price()
		mustExec(t, conn, "BEGIN TRAN")
		mustExec(t, conn, "UPDATE dbo.Products SET ListPrice = 1 WHERE ProductID = 1")
		mustExec(t, conn, "SAVE TRAN after_first")
		mustExec(t, conn, "UPDATE dbo.Products SET ListPrice = 2 WHERE ProductID = 1")
		mustExec(t, conn, "ROLLBACK TRAN after_first")
		if p := price(); p != 1 {
			t.Fatalf("after rollback to savepoint price %v, want 1", p)
		}
		mustExec(t, conn, "ROLLBACK")
		if p := price(); p != before {
			t.Fatalf("after ROLLBACK price %v, want %v", p, before)
		}
	})

	t.Run("errors and messages with numbers, states and lines", func(t *testing.T) {
		var retmsg sqlexp.ReturnMessage
		rows, err := db.QueryContext(ctx, "PRINT N'hello from PRINT'\nSELECT 1 AS x\nSELECT 1/0", &retmsg)
		if err != nil {
			t.Fatal(err)
		}
		var infos []string
		var gotErr *mssql.Error
		for more := true; more; {
			switch m := retmsg.Message(ctx).(type) {
			case sqlexp.MsgNotice:
				infos = append(infos, m.Message.String())
			case sqlexp.MsgNext:
				for rows.Next() {
				}
			case sqlexp.MsgError:
				var me mssql.Error
				if errors.As(m.Error, &me) {
					gotErr = &me
				}
			case sqlexp.MsgNextResultSet:
				more = rows.NextResultSet()
			}
		}
		rows.Close()
		if len(infos) == 0 || !strings.Contains(infos[0], "hello from PRINT") {
			t.Errorf("INFO messages %q", infos)
		}
		if gotErr == nil || gotErr.Number != 8134 || gotErr.Class != 16 || gotErr.State != 1 || gotErr.LineNo != 3 {
			t.Fatalf("divide by zero: %+v, want Msg 8134 level 16 state 1 line 3", gotErr)
		}
	})

	t.Run("large values", func(t *testing.T) {
		big := strings.Repeat("QueryReplay ☃ ", 20000) // 280,000 characters
		blob := bytes.Repeat([]byte{0xDE, 0xAD, 0xBE, 0xEF}, 50000)
		var s string
		var b []byte
		if err := db.QueryRowContext(ctx, "SELECT CAST(@s AS nvarchar(max)), CAST(@b AS varbinary(max))", sql.Named("s", big), sql.Named("b", blob)).Scan(&s, &b); err != nil {
			t.Fatal(err)
		}
		if s != big || !bytes.Equal(b, blob) {
			t.Fatalf("large values: %d chars, %d bytes back; want %d, %d", len([]rune(s)), len(b), len([]rune(big)), len(blob))
		}
	})

	t.Run("demo schema types", func(t *testing.T) {
		if !hasDemoDB(t, db) {
			t.Skip("stand-in only: needs the demo database QueryReplayDemo")
		}
		var id, cust int
		var name, status string
		var created time.Time
		var amount float64
		if err := db.QueryRowContext(ctx, "SELECT TOP 1 o.OrderID, o.CustomerID, c.Name, o.Status, o.OrderDate, o.Amount FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID ORDER BY o.OrderID").Scan(&id, &cust, &name, &status, &created, &amount); err != nil {
			t.Fatal(err)
		}
		if id != 1 || name == "" || created.IsZero() || amount <= 0 {
			t.Fatalf("demo row: %d %d %q %q %v %v", id, cust, name, status, created, amount)
		}
	})

	t.Run("cancel during a long result", func(t *testing.T) {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rows, err := conn.QueryContext(cctx, "SELECT a.CustomerID FROM dbo.Customers a CROSS JOIN dbo.Products b")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var cancelled time.Time
		for rows.Next() {
			if n++; n == 1000 {
				cancelled = time.Now()
				cancel()
			}
		}
		rows.Close()
		if n < 1000 || n >= 200000 {
			t.Fatalf("%d rows read; want the cancel to stop a 200,000-row result", n)
		}
		if d := time.Since(cancelled); d > 5*time.Second {
			t.Fatalf("cancel took %v", d)
		}
		var one int
		if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("connection after cancel: %v", err)
		}
	})

	t.Run("login to a missing database", func(t *testing.T) {
		if target.real {
			t.Skip("stand-in only: uses the stand-in's login")
		}
		bad := strings.Replace(target.dsn, "database=QueryReplayDemo", "database=NoSuchDB", 1)
		err := openClient(t, bad+"&disableretry=true").Ping()
		var me mssql.Error
		if !errors.As(err, &me) || me.Number != 18456 || len(me.All) != 2 || me.All[0].Number != 4060 || me.All[0].Class != 11 {
			t.Fatalf("login to a missing database: %v (%+v); want Msg 4060 (level 11) then 18456", err, me.All)
		}
	})
}
