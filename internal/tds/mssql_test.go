package tds

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-sql/civil"
	"github.com/golang-sql/sqlexp"
	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/internal/testenv"
)

// End-to-end tests with the real go-mssqldb v1.11.2 driver over loopback TCP.

func dsn(addr, extra string) string {
	s := "sqlserver://sa:" + testPassword + "@" + addr + "?database=appdb&encrypt=disable"
	if extra != "" {
		s += "&" + extra
	}
	return s
}

func openDB(t testing.TB, addr, extra string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn(addr, extra))
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSelect1AndLoginReply(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "app name=prototest")
	ctx := context.Background()
	var one int
	if err := db.QueryRowContext(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
	var dbName string
	if err := db.QueryRowContext(ctx, "select db_name()").Scan(&dbName); err != nil || dbName != "appdb" {
		t.Fatalf("db_name() = %q, %v; want appdb from the login", dbName, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.logins) == 0 {
		t.Fatal("handler saw no login")
	}
	l := h.logins[0]
	if l.User != "sa" || l.Password != testPassword || l.Database != "appdb" || l.AppName != "prototest" || l.TDSVersion != 0x74000004 {
		t.Errorf("login request = user %q db %q app %q tds %#x; want sa/appdb/prototest/0x74000004 and the password", l.User, l.Database, l.AppName, l.TDSVersion)
	}
}

func TestResultSetTypes(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	db := openDB(t, addr, "")
	rows, err := db.QueryContext(context.Background(), "select types")
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{"INT", "BIGINT", "SMALLINT", "TINYINT", "BIT", "FLOAT", "REAL", "DECIMAL", "NVARCHAR", "NVARCHAR",
		"VARCHAR", "VARCHAR", "XML", "DATETIME2", "DATETIMEOFFSET", "DATE", "DATETIME", "UNIQUEIDENTIFIER", "VARBINARY", "VARBINARY"}
	if len(cts) != len(wantTypes) {
		t.Fatalf("%d columns, want %d", len(cts), len(wantTypes))
	}
	for i, ct := range cts {
		if ct.Name() != typeColumns[i].Name || ct.DatabaseTypeName() != wantTypes[i] {
			t.Errorf("column %d = %s %s, want %s %s", i, ct.Name(), ct.DatabaseTypeName(), typeColumns[i].Name, wantTypes[i])
		}
		if nullable, ok := ct.Nullable(); !ok || !nullable {
			t.Errorf("column %s nullable = %v,%v; want true", ct.Name(), nullable, ok)
		}
	}
	if n, ok := cts[8].Length(); !ok || n != 50 {
		t.Errorf("nvarchar(50) length = %d,%v", n, ok)
	}
	if p, s, ok := cts[7].DecimalSize(); !ok || p != 18 || s != 4 {
		t.Errorf("decimal size = (%d,%d),%v; want (18,4)", p, s, ok)
	}

	if !rows.Next() {
		t.Fatalf("no first row: %v", rows.Err())
	}
	got := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range got {
		ptrs[i] = &got[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatalf("scan: %v", err)
	}
	wireGUID := wireUUID(testUUID)
	want := []any{
		int64(-2147483648), int64(1) << 40, int64(-32768), int64(255), true, 3.25, 1.5,
		[]byte("-12345678901234.5678"), "héllo ☃", longText, "café", strings.Repeat("v", 9000),
		`<event name="x"><data>1</data></event>`, testTime, time.Date(2024, 5, 6, 7, 8, 9, 123456700, testZone),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 997000000, time.UTC),
		wireGUID[:], []byte{0xDE, 0xAD, 0xBE, 0xEF}, make([]byte, 10000),
	}
	for i := range want {
		if !sameValue(got[i], want[i]) {
			t.Errorf("column %s = %#v, want %#v", typeColumns[i].Name, short(got[i]), short(want[i]))
		}
	}
	if _, offset := got[14].(time.Time).Zone(); offset != -(5*60+30)*60 {
		t.Errorf("datetimeoffset zone offset = %d s, want -05:30", offset)
	}
	var g mssql.UniqueIdentifier
	if err := g.Scan(got[17]); err != nil || g.String() != testUUID.String() {
		t.Errorf("uniqueidentifier = %v (%v), want %s", g, err, testUUID)
	}

	if !rows.Next() {
		t.Fatalf("no NULL row: %v", rows.Err())
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatalf("scan NULL row: %v", err)
	}
	for i, v := range got {
		if v != nil {
			t.Errorf("column %s = %#v in the NULL row", typeColumns[i].Name, short(v))
		}
	}
	if rows.Next() {
		t.Error("unexpected third row")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func sameValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	if ba, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && bytes.Equal(ba, bb)
	}
	return a == b
}

func short(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return fmt.Sprintf("%q...(%d bytes)", x[:40], len(x))
		}
	case []byte:
		if len(x) > 20 {
			return fmt.Sprintf("% x...(%d bytes)", x[:20], len(x))
		}
	}
	return v
}

// TestParameterRoundTrip sends every parameter type go-mssqldb produces
// through sp_executesql; the handler echoes each argument back as a column
// of the argument's own type, so the test checks decoding (server side) and
// encoding (client side).
func TestParameterRoundTrip(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "")
	dto := time.Date(2023, 2, 3, 4, 5, 6, 700000000, time.FixedZone("", 2*3600))
	longString := strings.Repeat("ü", 5000) // > 4000 chars: sent as nvarchar(max) PLP
	bigBytes := bytes.Repeat([]byte{1, 2, 3}, 4000)
	cases := []struct {
		name     string
		arg      any
		wantType TypeInfo
		wantVal  any // value the server decodes
		back     any // value the client reads back (nil: same as wantVal)
	}{
		{"int64", int64(math.MinInt64), TypeInfo{Type: TypeBigInt}, int64(math.MinInt64), nil},
		{"int32", int32(-7), TypeInfo{Type: TypeInt}, int64(-7), nil},
		{"int16", int16(300), TypeInfo{Type: TypeSmallInt}, int64(300), nil},
		{"uint8", uint8(200), TypeInfo{Type: TypeTinyInt}, int64(200), nil},
		{"bool", true, TypeInfo{Type: TypeBit}, true, nil},
		{"float64", 2.5e-300, TypeInfo{Type: TypeFloat}, 2.5e-300, nil},
		{"float32", float32(0.25), TypeInfo{Type: TypeReal}, 0.25, nil},
		{"string", "héllo ☃", TypeInfo{Type: TypeNVarChar, Length: 7}, "héllo ☃", nil},
		{"empty string", "", TypeInfo{Type: TypeNVarChar, Length: Max}, "", nil},
		{"long string", longString, TypeInfo{Type: TypeNVarChar, Length: Max}, longString, nil},
		{"nvarcharmax", mssql.NVarCharMax("max text"), TypeInfo{Type: TypeNVarChar, Length: Max}, "max text", nil},
		{"varchar", mssql.VarChar("café"), TypeInfo{Type: TypeVarChar, Length: 5}, "caf\u00c3\u00a9", nil},
		{"bytes", []byte{0, 1, 0xFF}, TypeInfo{Type: TypeVarBinary, Length: 3}, []byte{0, 1, 0xFF}, nil},
		{"big bytes", bigBytes, TypeInfo{Type: TypeVarBinary, Length: Max}, bigBytes, nil},
		{"time", dto, TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, dto, nil},
		{"datetimeoffset", mssql.DateTimeOffset(dto), TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, dto, nil},
		{"datetime2", civil.DateTimeOf(testTime), TypeInfo{Type: TypeDateTime2, Scale: 7}, testTime, nil},
		{"date", civil.Date{Year: 2020, Month: 2, Day: 29}, TypeInfo{Type: TypeDate}, time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC), nil},
		{"time of day", civil.Time{Hour: 13, Minute: 14, Second: 15, Nanosecond: 1600}, TypeInfo{Type: TypeTime, Scale: 7}, time.Date(1, 1, 1, 13, 14, 15, 1600, time.UTC), nil},
		{"datetime", mssql.DateTime1(time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)), TypeInfo{Type: TypeDateTime}, time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC), nil},
		{"uniqueidentifier", mssql.UniqueIdentifier(testUUID), TypeInfo{Type: TypeUniqueIdentifier}, testUUID, nil},
		{"decimal as text", "12.345", TypeInfo{Type: TypeNVarChar, Length: 6}, "12.345", nil},
		{"nil", nil, TypeInfo{}, nil, nil},
		{"null int", sql.NullInt64{}, TypeInfo{Type: TypeBigInt}, nil, nil},
		{"null string", sql.NullString{}, TypeInfo{Type: TypeNVarChar, Length: 4000}, nil, nil},
		{"null time", sql.NullTime{}, TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, nil, nil},
		{"null bool", sql.NullBool{}, TypeInfo{Type: TypeBit}, nil, nil},
		{"null float", sql.NullFloat64{}, TypeInfo{Type: TypeFloat}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var back any
			err := db.QueryRowContext(context.Background(), "select echo", sql.Named("v", tc.arg)).Scan(&back)
			if err != nil {
				t.Fatalf("echo: %v", err)
			}
			call := h.lastRPC()
			x, ok := call.ExecuteSQL()
			if !ok || call.ProcID != ProcIDExecuteSQL || x.Statement != "select echo" || len(x.Args) != 1 {
				t.Fatalf("server saw proc %q id %d, statement %q, %d args; want sp_executesql(echo) with 1 arg", call.ProcName, call.ProcID, x.Statement, len(x.Args))
			}
			p := x.Args[0]
			if p.Name != "@v" || p.Type != tc.wantType {
				t.Errorf("server param = %s %v, want @v %v", p.Name, p.Type, tc.wantType)
			}
			if !sameDecoded(p.Value, tc.wantVal) {
				t.Errorf("server value = %#v, want %#v", short(p.Value), short(tc.wantVal))
			}
			want := tc.back
			if want == nil {
				want = clientForm(tc.wantVal)
			}
			if !sameValue(back, want) {
				t.Errorf("echoed value = %#v, want %#v", short(back), short(want))
			}
		})
	}
}

func sameDecoded(a, b any) bool {
	if ua, ok := a.(UUID); ok {
		return b == any(ua)
	}
	return sameValue(a, b)
}

// clientForm is how go-mssqldb returns a value of the server's type.
func clientForm(v any) any {
	switch x := v.(type) {
	case UUID:
		w := wireUUID(x)
		return w[:]
	}
	return v
}

func TestParamDeclarationAndPositional(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "")
	var a, b any
	if err := db.QueryRowContext(context.Background(), "select echo", int64(5), "x").Scan(&a, &b); err != nil {
		t.Fatal(err)
	}
	x, _ := h.lastRPC().ExecuteSQL()
	if x.ParamDecl != "@p1 bigint,@p2 nvarchar(1)" || x.Args[0].Name != "@p1" || x.Args[1].Name != "@p2" {
		t.Errorf("decl %q, names %q %q", x.ParamDecl, x.Args[0].Name, x.Args[1].Name)
	}
	if a != int64(5) || b != "x" {
		t.Errorf("echo = %v, %v", a, b)
	}
}

func TestProcedureByNameAndReturnStatus(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "")
	var rs mssql.ReturnStatus
	var name string
	// The return status arrives after the rows, so read them all.
	rows, err := db.QueryContext(context.Background(), "dbo.MyProc", &rs)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if name != "dbo.MyProc" || rs != 7 {
		t.Errorf("proc = %q, return status %d; want dbo.MyProc, 7", name, rs)
	}
	if c := h.lastRPC(); c.ProcID != 0 || c.ProcName != "dbo.MyProc" {
		t.Errorf("RPC = id %d name %q", c.ProcID, c.ProcName)
	}
	// A bare identifier without arguments is an RPC by name too [docs/design/standin-protocol.md §11].
	if err := db.QueryRowContext(context.Background(), "types").Scan(&name); err != nil || name != "types" {
		t.Errorf("bare identifier: %q, %v", name, err)
	}
}

func TestOutputParameter(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	db := openDB(t, addr, "")
	var out int64
	if _, err := db.ExecContext(context.Background(), "set output", sql.Named("out", sql.Out{Dest: &out})); err != nil {
		t.Fatal(err)
	}
	if out != 42 {
		t.Errorf("output parameter = %d, want 42", out)
	}
}

func TestRowsAffected(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	db := openDB(t, addr, "")
	for _, tc := range []struct {
		query string
		args  []any
		want  int64
	}{
		{"update 5", nil, 5},
		{"select multi", nil, 6}, // 1 row + 2 rows + update of 3
		{"update via rpc", []any{1}, 4},
		{"select rows 3", nil, 3},
	} {
		res, err := db.ExecContext(context.Background(), tc.query, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != tc.want {
			t.Errorf("%s: rows affected %d, %v; want %d", tc.query, n, err, tc.want)
		}
	}
}

func TestMultipleResultSets(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	db := openDB(t, addr, "")
	rows, err := db.QueryContext(context.Background(), "select multi")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sets [][]any
	for {
		var set []any
		for rows.Next() {
			var v any
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			set = append(set, v)
		}
		sets = append(sets, set)
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sets) != "[[1] [x <nil>]]" {
		t.Errorf("result sets = %v, want [[1] [x <nil>]]", sets)
	}
}

func TestErrors(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	db := openDB(t, addr, "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	_, err = conn.ExecContext(ctx, "raise error")
	var me mssql.Error
	if !errors.As(err, &me) {
		t.Fatalf("raise error: %v (%T), want mssql.Error", err, err)
	}
	if me.Number != 50000 || me.Class != 16 || me.State != 3 || me.LineNo != 7 || me.ProcName != "usp_boom" ||
		me.ServerName != "QUERYREPLAY" || me.Message != "boom from test" {
		t.Errorf("error = %+v", me)
	}
	var one int
	if err := conn.QueryRowContext(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("connection unusable after an error: %v", err)
	}

	// RPC error
	_, err = conn.ExecContext(ctx, "raise error via rpc", 1)
	if !errors.As(err, &me) || me.Number != 547 || me.LineNo != 2 {
		t.Errorf("RPC error = %v", err)
	}
	// a plain Go error from the handler becomes 50000
	_, err = conn.ExecContext(ctx, "go error")
	if !errors.As(err, &me) || me.Number != 50000 || me.Message != "plain Go error" {
		t.Errorf("Go error = %v", err)
	}
	// a value that does not fit its column is an error, not a panic
	_, err = conn.ExecContext(ctx, "bad row")
	if !errors.As(err, &me) || !strings.Contains(me.Message, "out of range for tinyint") {
		t.Errorf("bad row = %v", err)
	}
	// a statement error followed by more results
	rows, err := conn.QueryContext(ctx, "error then rows")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if !errors.As(err, &me) || me.Number != 8134 {
		t.Errorf("error then rows = %v", err)
	}
	if err := conn.QueryRowContext(ctx, "select 1").Scan(&one); err != nil {
		t.Fatalf("connection unusable after errors: %v", err)
	}

	// severity >= 20 ends the connection
	_, err = conn.ExecContext(ctx, "raise fatal")
	if !errors.As(err, &me) || me.Number != 9001 || me.Class != 21 {
		t.Errorf("fatal = %v", err)
	}
	if err := conn.PingContext(ctx); err == nil {
		t.Error("connection still usable after a severity 21 error")
	}
}

func TestInfoMessages(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	db := openDB(t, addr, "")
	ctx := context.Background()
	msgs := &sqlexp.ReturnMessage{}
	rows, err := db.QueryContext(ctx, "print info", msgs)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var notices []mssql.Error
	var values []int
	for active := true; active; {
		switch m := msgs.Message(ctx).(type) {
		case sqlexp.MsgNotice:
			if e, ok := m.Message.(mssql.Error); ok {
				notices = append(notices, e)
			}
		case sqlexp.MsgNext:
			for rows.Next() {
				var v int
				rows.Scan(&v)
				values = append(values, v)
			}
		case sqlexp.MsgNextResultSet:
			active = rows.NextResultSet()
		case sqlexp.MsgError:
			t.Fatalf("error message: %v", m.Error)
		}
	}
	if len(notices) != 1 || notices[0].Message != "hello notice" || notices[0].State != 1 || notices[0].LineNo != 1 {
		t.Errorf("notices = %+v", notices)
	}
	if fmt.Sprint(values) != "[5]" {
		t.Errorf("values = %v", values)
	}
}

func TestLoginFailures(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	for _, tc := range []struct {
		name, user, dsn string
		wantAll         []int32
	}{
		{"wrong password", "sa", "sqlserver://sa:nope@" + addr + "?encrypt=disable", []int32{18456}},
		{"unknown user", "bob", "sqlserver://bob:" + testPassword + "@" + addr + "?encrypt=disable", []int32{18456}},
		{"unknown database", "sa", "sqlserver://sa:" + testPassword + "@" + addr + "?encrypt=disable&database=nodb", []int32{4060, 18456}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sql.Open("sqlserver", tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.PingContext(context.Background())
			var me mssql.Error
			if !errors.As(err, &me) {
				t.Fatalf("ping = %v (%T), want mssql.Error", err, err)
			}
			// go-mssqldb prefixes "login error: " to the server's text.
			if me.Number != 18456 || me.Class != 14 || me.State != 1 || !strings.HasSuffix(me.Message, "Login failed for user '"+tc.user+"'.") {
				t.Errorf("error = %#v, want 18456 class 14 state 1", me)
			}
			var nums []int32
			for _, e := range me.All {
				nums = append(nums, e.Number)
			}
			if fmt.Sprint(nums) != fmt.Sprint(tc.wantAll) {
				t.Errorf("errors = %v, want %v", nums, tc.wantAll)
			}
		})
	}
}

func TestCancelWithAttention(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, query := range []string{"waitfor delay", "rows then wait", "stream forever"} {
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			rows, err := conn.QueryContext(cctx, query)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			errc <- err
		}()
		<-h.running // the handler is blocked inside the request
		cancel()
		if cause := <-h.canceled; !errors.Is(cause, ErrAttention) {
			t.Errorf("%s: handler context cause = %v, want ErrAttention", query, cause)
		}
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: query error = %v, want context.Canceled", query, err)
		}
		// With cancel() (not a deadline) go-mssqldb keeps the connection [docs/design/standin-protocol.md §14].
		var valid bool
		conn.Raw(func(dc any) error { valid = dc.(*mssql.Conn).IsValid(); return nil })
		if !valid {
			t.Fatalf("%s: connection marked bad after cancel", query)
		}
		var one int
		if err := conn.QueryRowContext(ctx, "select 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("%s: same connection after cancel: %d, %v", query, one, err)
		}
	}
	h.mu.Lock()
	logins := len(h.logins)
	h.mu.Unlock()
	if logins != 1 {
		t.Errorf("%d logins; cancel must not force a reconnect", logins)
	}
}

func TestTransactions(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "")
	db.SetMaxOpenConns(1)
	ctx := context.Background()

	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		t.Fatal(err)
	}
	var desc int64
	if err := tx.QueryRowContext(ctx, "select tran").Scan(&desc); err != nil {
		t.Fatal(err)
	}
	if desc == 0 {
		t.Error("no transaction descriptor inside BeginTx")
	}
	if _, err := tx.ExecContext(ctx, "update via rpc", 1); err != nil { // RPC inside the transaction
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if rpc := h.lastRPC(); rpc.Transaction != uint64(desc) {
		t.Errorf("RPC carried transaction %d, want %d", rpc.Transaction, desc)
	}

	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var desc2 int64
	if err := tx.QueryRowContext(ctx, "select tran").Scan(&desc2); err != nil {
		t.Fatal(err)
	}
	if desc2 == 0 || desc2 == desc {
		t.Errorf("second transaction descriptor %d (first %d)", desc2, desc)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if err := db.QueryRowContext(ctx, "select tran").Scan(&desc); err != nil || desc != 0 {
		t.Errorf("after rollback descriptor = %d, %v; want 0", desc, err)
	}

	var kinds []string
	for _, r := range h.snapshotTM() {
		kinds = append(kinds, fmt.Sprintf("%s/%d", r.Kind, r.Isolation))
	}
	if got := strings.Join(kinds, " "); got != "begin/4 commit/0 begin/0 rollback/0" {
		t.Errorf("TM requests = %s", got)
	}

	// T-SQL BEGIN TRAN / COMMIT through the writer
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "begin tran"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "select tran").Scan(&desc); err != nil || desc == 0 {
		t.Errorf("after T-SQL begin: descriptor %d, %v", desc, err)
	}
	if _, err := conn.ExecContext(ctx, "commit tran"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "select tran").Scan(&desc); err != nil || desc != 0 {
		t.Errorf("after T-SQL commit: descriptor %d, %v", desc, err)
	}
}

func TestConcurrentConnectionsHaveDistinctSPIDs(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "")
	const n = 50
	db.SetMaxOpenConns(n)
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		spids   = map[int]bool{}
		holdAll = make(chan struct{})
		ready   sync.WaitGroup
		errs    []error
	)
	ready.Add(n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := db.Conn(ctx)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				ready.Done()
				return
			}
			defer conn.Close()
			var spid int
			err = conn.QueryRowContext(ctx, "select @@spid").Scan(&spid)
			mu.Lock()
			if err != nil {
				errs = append(errs, err)
			} else {
				if spids[spid] {
					errs = append(errs, fmt.Errorf("SPID %d seen twice", spid))
				}
				spids[spid] = true
			}
			mu.Unlock()
			ready.Done()
			<-holdAll // keep every connection open until all have asked
		}()
	}
	ready.Wait()
	close(holdAll)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(spids) != n {
		t.Errorf("%d distinct SPIDs, want %d", len(spids), n)
	}
	for spid := range spids {
		if spid < 51 || spid >= 51+n {
			t.Errorf("SPID %d outside 51..%d", spid, 50+n)
		}
	}
}

func TestLargeResultsWithSmallPackets(t *testing.T) {
	h := newTestHandler()
	rec := &packetRecorder{}
	_, addr := startServerRecording(t, h, rec)
	db := openDB(t, addr, "packet size=512")
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, "select rows 2000")
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for rows.Next() {
		var n int
		var s string
		var blob []byte
		if err := rows.Scan(&n, &s, &blob); err != nil {
			t.Fatal(err)
		}
		if n != count || s != fmt.Sprintf("row %d", n) || len(blob) != n%700 {
			t.Fatalf("row %d = %d %q %d bytes", count, n, s, len(blob))
		}
		count++
	}
	if err := rows.Err(); err != nil || count != 2000 {
		t.Fatalf("read %d rows, %v", count, err)
	}
	rows.Close()
	// large values in both directions: a 20,000-character argument forces the
	// client to split its RPC over many packets
	big := strings.Repeat("0123456789", 2000)
	var back string
	if err := db.QueryRowContext(ctx, "select echo", sql.Named("v", big)).Scan(&back); err != nil || back != big {
		t.Fatalf("echo of %d chars: got %d chars, %v", len(big), len(back), err)
	}
	var any1 any
	if err := db.QueryRowContext(ctx, "select types").Scan(new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), &any1,
		new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any), new(any)); err != nil || any1 != longText {
		t.Fatalf("select types with 512-byte packets: %v", err)
	}
	max, count512 := rec.stats()
	if max > 512 {
		t.Errorf("server sent a %d-byte packet; negotiated 512", max)
	}
	if count512 < 100 {
		t.Errorf("only %d full packets: the result was not split as expected", count512)
	}
	if n := rec.clientMultiPacket(); n == 0 {
		t.Error("no client message spanned several packets; reassembly untested")
	}
}

func TestDroppedConnection(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "disableretry=true")
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, "drop connection")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil {
		t.Fatal("no error from a dropped connection")
	}
	var me mssql.Error
	if errors.As(err, &me) {
		t.Errorf("dropped connection gave a server error %v; want a transport error", me)
	}
	// the pool replaces the broken connection
	var one int
	if err := db.QueryRowContext(ctx, "select 1").Scan(&one); err != nil {
		t.Fatalf("after drop: %v", err)
	}
}

func TestResetConnectionRestoresDatabase(t *testing.T) {
	h := newTestHandler()
	_, addr := startServer(t, h)
	db := openDB(t, addr, "")
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "use otherdb"); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := conn.QueryRowContext(ctx, "select db_name()").Scan(&name); err != nil || name != "otherdb" {
		t.Fatalf("after use: %q, %v", name, err)
	}
	conn.Close() // back to the pool; the next use carries the reset flag
	if err := db.QueryRowContext(ctx, "select db_name()").Scan(&name); err != nil || name != "appdb" {
		t.Errorf("after pool reuse: %q, %v; want appdb", name, err)
	}
	h.mu.Lock()
	last := h.batches[len(h.batches)-1]
	h.mu.Unlock()
	if !last.ResetConnection {
		t.Error("Batch.ResetConnection not set on pool reuse")
	}
}

func TestShutdown(t *testing.T) {
	h := newTestHandler()
	srv, addr := startServer(t, h)
	db := openDB(t, addr, "disableretry=true")
	ctx := context.Background()
	idle, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if err := idle.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	busy, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	errc := make(chan error, 1)
	go func() { _, err := busy.ExecContext(ctx, "waitfor delay"); errc <- err }()
	<-h.running

	// The busy request never ends by itself, so Shutdown gives up at its deadline.
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want DeadlineExceeded while a request runs", err)
	}
	waitForConnections(t, srv, 1) // the idle one is gone, the busy one stays
	if err := idle.PingContext(ctx); err == nil {
		t.Error("idle connection still works after Shutdown")
	}
	db2 := openDB(t, addr, "")
	if err := db2.PingContext(ctx); err == nil {
		t.Error("new connection accepted after Shutdown")
	}
	srv.Close()
	if cause := <-h.canceled; errors.Is(cause, ErrAttention) {
		t.Errorf("Close cancelled the request with %v, want a non-attention cause", cause)
	}
	if err := <-errc; err == nil {
		t.Error("busy request succeeded after Close")
	}
}

// waitForConnections waits until the server holds n connections.
func waitForConnections(t *testing.T, srv *Server, n int) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, fmt.Sprintf("the server to hold %d connections", n), func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.conns) == n
	})
}

func TestCloseSessionDropsOneConnection(t *testing.T) {
	h := newTestHandler()
	srv, addr := startServer(t, h)
	db := openDB(t, addr, "disableretry=true")
	ctx := context.Background()
	victim, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var spid int
	if err := victim.QueryRowContext(ctx, "select @@spid").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	if !srv.CloseSession(uint16(spid)) {
		t.Fatalf("CloseSession(%d) found no connection", spid)
	}
	if srv.CloseSession(999) {
		t.Error("CloseSession(999) reported a connection")
	}
	if err := victim.PingContext(ctx); err == nil {
		t.Error("killed connection still answers")
	}
	var one int
	if err := db.QueryRowContext(ctx, "select 1").Scan(&one); err != nil {
		t.Errorf("other connections broken: %v", err)
	}
}

// The server answers PRELOGIN with ENCRYPTION NOT_SUP: DSNs without encrypt
// work, encrypt=true is refused by the driver itself [docs/design/standin-protocol.md §4].
func TestEncryptionNotSupported(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	ctx := context.Background()
	plain, err := sql.Open("sqlserver", "sqlserver://sa:"+testPassword+"@"+addr+"?database=appdb")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.PingContext(ctx); err != nil {
		t.Errorf("DSN without encrypt: %v", err)
	}
	enc, err := sql.Open("sqlserver", "sqlserver://sa:"+testPassword+"@"+addr+"?database=appdb&encrypt=true")
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	if err := enc.PingContext(ctx); err == nil || !strings.Contains(err.Error(), "encryption") {
		t.Errorf("encrypt=true: %v, want the driver's encryption error", err)
	}
}
