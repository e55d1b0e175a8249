package tracer

import (
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/sqlconn"
)

// A parameterized statement (as the plan cache holds it) is sent as
// sys.sp_executesql with the statement, its declarations and its values as
// named arguments; the request text depends only on how many values there
// are. (The stand-in runs sp_executesql as an RPC only, not as EXEC inside
// one, so this is checked on the request the tracer builds; the classifier
// still reads the statement itself, TestTraceParametersAreValidated.)
func TestTracedRequestPassesParametersAsArguments(t *testing.T) {
	stmt := "SELECT OrderID FROM dbo.Orders WHERE OrderID <= @P1 AND Note = @P2"
	p := &sqlconn.Params{Decl: "@P1 int, @P2 nvarchar(20)", List: []sqlconn.Param{{Value: "5"}, {Value: "N'); DROP TABLE dbo.Orders; --"}}}
	q, args := tracedRequest(Options{SQL: stmt, Params: p})
	if q != "EXEC sys.sp_executesql @stmt, @params, @v1, @v2" {
		t.Fatalf("request %q", q)
	}
	want := []any{sql.Named("stmt", stmt), sql.Named("params", p.Decl), sql.Named("v1", "5"), sql.Named("v2", "N'); DROP TABLE dbo.Orders; --")}
	if !reflect.DeepEqual(args, want) {
		t.Fatalf("args %#v", args)
	}
	if q, args := tracedRequest(Options{SQL: stmt}); q != stmt || args != nil {
		t.Fatalf("without parameters: %q %v", q, args)
	}
}

func FuzzTracedRequest(f *testing.F) {
	f.Add("SELECT @a", "@a int", "1", 2)
	f.Add("SELECT 1", "@a nvarchar(max)", "'; SHUTDOWN --", 0)
	f.Fuzz(func(t *testing.T, stmt, decl, value string, n int) {
		n = min(max(n, 0), 50)
		list := make([]sqlconn.Param, n)
		for i := range list {
			list[i].Value = value
		}
		q, args := tracedRequest(Options{SQL: stmt, Params: &sqlconn.Params{Decl: decl, List: list}})
		skeleton := "EXEC sys.sp_executesql @stmt, @params"
		for i := range n {
			skeleton += fmt.Sprintf(", @v%d", i+1)
		}
		if q != skeleton || len(args) != n+2 {
			t.Fatalf("request %q with %d args for %d values", q, len(args), n)
		}
	})
}

// The statement is classified as any batch is (a parameterized UPDATE is
// refused under the read-only policy), and the declarations must parse and
// match the values before anything runs.
func TestTraceParametersAreValidated(t *testing.T) {
	one := []sqlconn.Param{{Value: "1"}}
	cases := []struct {
		o    Options
		want string
	}{
		{Options{SQL: "UPDATE dbo.Orders SET Status = @s", Params: &sqlconn.Params{Decl: "@s nvarchar(10)", List: one}}, "modifies data"},
		{Options{SQL: "SELECT @a", Params: &sqlconn.Params{Decl: "@a int", List: nil}}, "1 declared, 0 values"},
		{Options{SQL: "SELECT @a", Params: &sqlconn.Params{Decl: "@a int); DROP TABLE t; --", List: one}}, "parameters"},
	}
	for _, c := range cases {
		if _, err := c.o.Validate(ReadOnlyPolicy); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want %q", c.o.SQL, c.o.Params.Decl, err, c.want)
		}
	}
	if _, err := (Options{SQL: "SELECT @a", Params: &sqlconn.Params{Decl: "@a int", List: one}}).Validate(ReadOnlyPolicy); err != nil {
		t.Errorf("a valid parameterized SELECT: %v", err)
	}
}
