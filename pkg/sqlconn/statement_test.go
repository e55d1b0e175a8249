package sqlconn

import (
	"github.com/queryreplay/queryreplay/internal/fakesql"

	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/queryreplay/queryreplay/pkg/tsql"
)

const testHash = 0x1A2B3C4D5E6F7788

// planWith is a showplan fragment with a ParameterList, as SQL Server
// writes it (values in parentheses for numbers, N'…' for Unicode strings).
func planWith(params ...[2]string) string {
	var b strings.Builder
	b.WriteString(`<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564"><BatchSequence><Batch><Statements><StmtSimple><QueryPlan><ParameterList>`)
	for _, p := range params {
		fmt.Fprintf(&b, `<ColumnReference Column="%s" ParameterDataType="int" ParameterCompiledValue="%s" />`, p[0], strings.ReplaceAll(p[1], "'", "&apos;"))
	}
	b.WriteString(`</ParameterList></QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`)
	return b.String()
}

// utf16Len is a string's length in bytes of UTF-16, the unit of the plan
// cache's statement offsets.
func utf16Len(s string) int64 { return int64(2 * len(utf16.Encode([]rune(s)))) }

// A parameterized statement in the plan cache comes back whole, without
// its declarations, with each declared parameter's sniffed value from the
// cached plan; the hash is passed as a binary(8) argument, never in the
// text.
func TestLookupPlanCacheWithParameters(t *testing.T) {
	decl := "@P1 int,@P2 nvarchar(4000),@P3 decimal(10, 2)"
	stmt := "SELECT o.OrderID FROM dbo.Orders AS o WHERE o.CustomerID = @P1 AND o.Status = @P2 AND o.Amount > @P3 AND o.Note <> N'" + strings.Repeat("x", 9000) + "'"
	batch := "(" + decl + ")" + stmt
	f := &fakesql.Server{NamedOnly: true, Answer: func(q string, args map[string]any) ([][]any, error) {
		switch {
		case reads(q, "sys.dm_exec_query_stats"):
			if !bytes.Equal(args["hash"].([]byte), []byte{0x1A, 0x2B, 0x3C, 0x4D, 0x5E, 0x6F, 0x77, 0x88}) {
				return nil, nil
			}
			return [][]any{{batch, utf16Len("(" + decl + ")"), int64(-1), "Sales", []byte{1, 2, 3}}}, nil
		case reads(q, "sys.dm_exec_text_query_plan"):
			if !bytes.Equal(args["handle"].([]byte), []byte{1, 2, 3}) {
				return nil, errors.New("wrong plan handle")
			}
			return [][]any{{planWith([2]string{"@P1", "(42)"}, [2]string{"@p2", "N'O''Brien'"}, [2]string{"@P3", "(1.50)"})}}, nil
		}
		return nil, fmt.Errorf("unexpected query %q", q)
	}}
	st, err := LookupStatement(context.Background(), fakesql.Open(t, f), testHash, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Text != stmt || st.Database != "Sales" || st.Source != SourcePlanCache {
		t.Fatalf("statement %d bytes in %q from %q; want the whole %d-byte statement", len(st.Text), st.Database, st.Source, len(stmt))
	}
	if st.Params == nil || st.Params.Decl != decl {
		t.Fatalf("params %+v", st.Params)
	}
	if got, want := st.Params.Values(), []any{"42", "O'Brien", "1.50"}; !reflect.DeepEqual(got, want) {
		t.Errorf("values %#v, want %#v", got, want)
	}
	for _, s := range f.Seen() {
		if strings.Contains(strings.ToUpper(s.Text), "1A2B3C4D5E6F7788") {
			t.Errorf("the hash is spliced into %q", s.Text)
		}
	}
}

// A hash the plan cache no longer holds is read from each database's Query
// Store, the database named in three-part names as QUOTENAME quotes it; a
// database whose Query Store cannot be read is skipped.
func TestLookupFallsBackToQueryStore(t *testing.T) {
	dbs := []string{"Closed", "we]ird db", "Sales"}
	stmt := "SELECT 1 FROM dbo.T WHERE a = @a"
	f := &fakesql.Server{NamedOnly: true, Answer: func(q string, args map[string]any) ([][]any, error) {
		switch {
		case reads(q, "sys.dm_exec_query_stats"):
			return nil, nil
		case reads(q, "[Closed].sys.query_store_query"):
			return nil, errors.New("The server principal is not able to access the database")
		case reads(q, tsql.QuoteName("we]ird db")+".sys.query_store_query"):
			return [][]any{{"(@a bigint)" + stmt, planWith([2]string{"@a", "(7)"})}}, nil
		}
		return nil, fmt.Errorf("unexpected query %q", q)
	}}
	st, err := LookupStatement(context.Background(), fakesql.Open(t, f), testHash, dbs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Text != stmt || st.Database != "we]ird db" || st.Source != SourceQueryStore {
		t.Fatalf("got %+v", st)
	}
	if st.Params == nil || st.Params.Decl != "@a bigint" || !reflect.DeepEqual(st.Params.Values(), []any{"7"}) {
		t.Fatalf("params %+v", st.Params)
	}
	// a hash found nowhere is ErrNotFound, with the unreadable database's error
	f.Answer = func(q string, _ map[string]any) ([][]any, error) {
		if reads(q, "[Closed]") {
			return nil, errors.New("closed")
		}
		return nil, nil
	}
	_, err = LookupStatement(context.Background(), fakesql.Open(t, f), testHash, dbs)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "[Closed]") {
		t.Fatalf("not found: %v", err)
	}
}

// With no database named, the lookup searches the databases that have
// Query Store on, as sys.databases lists them.
func TestLookupListsQueryStoreDatabases(t *testing.T) {
	f := &fakesql.Server{NamedOnly: true, Answer: func(q string, args map[string]any) ([][]any, error) {
		switch {
		case reads(q, "sys.dm_exec_query_stats"):
			return nil, nil
		case reads(q, "sys.databases"):
			if args["n"] != int64(MaxQueryStoreDatabases) {
				return nil, fmt.Errorf("bound %v", args["n"])
			}
			return [][]any{{"A"}, {"B"}}, nil
		case reads(q, "[B].sys.query_store_query"):
			return [][]any{{"SELECT 2", nil}}, nil
		case reads(q, "[A].sys.query_store_query"):
			return nil, nil
		}
		return nil, fmt.Errorf("unexpected query %q", q)
	}}
	st, err := LookupStatement(context.Background(), fakesql.Open(t, f), testHash, nil)
	if err != nil || st.Text != "SELECT 2" || st.Database != "B" || st.Params != nil {
		t.Fatalf("%+v, %v", st, err)
	}
}

// A statement longer than MaxStatementBytes is refused, not cut; a
// parameter the plan has no value for is an error, not a NULL.
func TestLookupRefusesWhatItCannotReplay(t *testing.T) {
	long := "SELECT '" + strings.Repeat("y", MaxStatementBytes) + "'"
	f := &fakesql.Server{NamedOnly: true, Answer: func(q string, _ map[string]any) ([][]any, error) {
		if reads(q, "sys.dm_exec_query_stats") {
			return [][]any{{long, int64(0), int64(-1), nil, []byte{1}}}, nil
		}
		return nil, nil
	}}
	if _, err := LookupStatement(context.Background(), fakesql.Open(t, f), testHash, nil); err == nil || !strings.Contains(err.Error(), "never cut") {
		t.Fatalf("long statement: %v", err)
	}
	f.Answer = func(q string, _ map[string]any) ([][]any, error) {
		switch {
		case reads(q, "sys.dm_exec_query_stats"):
			return [][]any{{"(@x int)SELECT @x", int64(0), int64(-1), nil, []byte{1}}}, nil
		case reads(q, "sys.dm_exec_text_query_plan"):
			return [][]any{{planWith()}}, nil
		}
		return nil, nil
	}
	if _, err := LookupStatement(context.Background(), fakesql.Open(t, f), testHash, nil); err == nil || !strings.Contains(err.Error(), "@x") {
		t.Fatalf("missing compiled value: %v", err)
	}
}

func TestQueryHashRoundTrip(t *testing.T) {
	for _, s := range []string{"0x1A2B3C4D5E6F7788", "0x0000000000000000", "0xffffffffffffffff"} {
		h, err := ParseQueryHash(s)
		if err != nil || !strings.EqualFold(FormatQueryHash(h), s) {
			t.Errorf("%s: %x %v", s, h, err)
		}
	}
	for _, s := range []string{"", "1A2B3C4D5E6F7788", "0x1A2B", "0x1A2B3C4D5E6F77889", "0x1A2B3C4D5E6F77G8", "0x-A2B3C4D5E6F7788", "0x+A2B3C4D5E6F7788"} {
		if _, err := ParseQueryHash(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
