package sqlconn

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/tsql"
)

// The Query Store SQL holds the database only as QUOTENAME quotes it:
// replacing that quoted name by another gives the same query for the
// other database, whatever the name holds.
func FuzzQueryStoreQuery(f *testing.F) {
	for _, s := range []string{"Sales", "we]ird db", "a'b", "x]; DROP TABLE t; --", "[", "", "\u0000", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, db string) {
		q := queryStoreQuery(db)
		skeleton := strings.ReplaceAll(q, tsql.QuoteName(db), "[X]")
		if skeleton != queryStoreQuery("X") {
			t.Fatalf("database %q leaks into the SQL outside QUOTENAME: %q", db, q)
		}
	})
}

// A split declaration list rebuilds the text, and every declaration it
// accepts is a parameter name and a type.
func FuzzSplitDeclarations(f *testing.F) {
	for _, s := range []string{"(@P1 int)SELECT @P1", "(@a decimal(10, 2),@b nvarchar(max))SELECT 1", "(SELECT 1)", "(@x int", "(@x int,)SELECT", "(@x 'a')SELECT", " (@p1 varchar(8000) OUTPUT)UPDATE t SET a=@p1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		decl, body := SplitDeclarations(text)
		if decl == "" {
			if body != text {
				t.Fatalf("no declarations, but the body changed: %q -> %q", text, body)
			}
			return
		}
		if strings.TrimLeft(text, " \t\r\n") != "("+decl+")"+body {
			t.Fatalf("(%q)%q does not rebuild %q", decl, body, text)
		}
		list, err := ParseDeclarations(decl)
		if err != nil || len(list) == 0 {
			t.Fatalf("accepted declarations %q do not parse: %v", decl, err)
		}
		for _, p := range list {
			if !paramName.MatchString(p.Name) || strings.ContainsAny(p.Type, "';") {
				t.Fatalf("declaration %+v", p)
			}
		}
	})
}

// A literal's value is what the literal means: a quoted string comes back
// unquoted (” as '), and quoting it again gives the literal back.
func FuzzLiteralValue(f *testing.F) {
	for _, s := range []string{"(42)", "N'O''Brien'", "'x'", "NULL", "0x0A0b", "(1.5e+000)", "((-3))", "'", "N'", "0xZZ", "(", "'a'b'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		v, err := LiteralValue(lit)
		if err != nil {
			return
		}
		if s, ok := v.(string); ok {
			trimmed := strings.Trim(strings.TrimSpace(lit), "() ")
			if strings.HasPrefix(trimmed, "'") || strings.HasPrefix(trimmed, "N'") || strings.HasPrefix(trimmed, "n'") {
				if re := tsql.QuoteString(s); !strings.HasSuffix(trimmed, re[1:]) {
					t.Fatalf("%q -> %q, which quotes as %q", lit, s, re)
				}
			} else if !numeric.MatchString(s) {
				t.Fatalf("%q -> %q, neither a string nor a number", lit, s)
			}
		}
	})
}

// Any plan text: the reader ends, with values or an error.
func FuzzCompiledValues(f *testing.F) {
	f.Add(planWith([2]string{"@P1", "(1)"}))
	f.Add(`<ParameterList><ColumnReference Column="@a" ParameterCompiledValue="N'x'"/></ParameterList>`)
	f.Add(`<ColumnReference Column="@a" ParameterCompiledValue="1"/>`)
	f.Add(`<ParameterList><ParameterList>`)
	f.Fuzz(func(t *testing.T, plan string) {
		vals, err := CompiledValues(strings.NewReader(plan))
		if err == nil && len(vals) > MaxParams {
			t.Fatalf("%d values", len(vals))
		}
	})
}
