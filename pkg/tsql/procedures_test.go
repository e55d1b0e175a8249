package tsql

import (
	"errors"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tsqlcorpus"
)

// TestClassifyModuleCorpus: every hostile procedure or trigger body is
// refused with its reason, and every look-alike is allowed.
func TestClassifyModuleCorpus(t *testing.T) {
	for _, m := range tsqlcorpus.Modules {
		_, c, err := ClassifyModule(m.Def)
		if m.Refuse != "" {
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, m.Refuse) {
				t.Errorf("ClassifyModule(%q) = %+v, %v; want a refusal naming %q", m.Def, c, err, m.Refuse)
			}
			continue
		}
		if err != nil {
			t.Errorf("ClassifyModule(%q): %v", m.Def, err)
			continue
		}
		if c.Modification != m.Mod || len(c.Calls) != m.Calls {
			t.Errorf("ClassifyModule(%q) = %+v; want modification %v and %d calls", m.Def, c, m.Mod, m.Calls)
		}
	}
}

// TestModuleRefusalLines: a refusal names the definition's line, not the
// body's.
func TestModuleRefusalLines(t *testing.T) {
	def := "CREATE PROCEDURE dbo.R\n  @a int\nAS\nSELECT @a\n\nCOMMIT"
	_, _, err := ClassifyModule(def)
	var re *RefusedError
	if !errors.As(err, &re) || re.Line != 6 || re.Statement != "COMMIT" {
		t.Fatalf("ClassifyModule = %v (%+v); want line 6, COMMIT", err, re)
	}
}

// TestUserProcedureCalls: without Options.UserProcedures a user procedure
// call is refused (the example); with it the call is listed with
// its name, for the caller to read.
func TestUserProcedureCalls(t *testing.T) {
	const batch = "EXEC dbo.TopCustomers @region = N'West'"
	if _, err := Classify(batch); err == nil || !strings.Contains(err.Error(), "EXEC runs a procedure") {
		t.Fatalf("Classify(%q) = %v; want the plain classifier to refuse it", batch, err)
	}
	for _, tc := range []struct {
		sql  string
		want string
	}{
		{batch, "dbo.TopCustomers"},
		{"EXEC @rc = [dbo].[Top Customers] 1, @x OUTPUT", "dbo.Top Customers"},
		{"usp_Bare 1", "usp_Bare"},
		{"SELECT 1; EXECUTE sales.Report @from = '2020-01-01'", "sales.Report"},
		{"EXEC sp_executesql N'EXEC dbo.Inner'", "dbo.Inner"},
	} {
		c, err := ClassifyWith(tc.sql, Options{UserProcedures: true})
		if err != nil || len(c.Calls) != 1 || c.Calls[0].Proc.String() != tc.want {
			t.Errorf("ClassifyWith(%q) = %+v, %v; want one call of %s", tc.sql, c, err, tc.want)
		}
	}
	for _, bad := range []string{"EXEC xp_cmdshell 'dir'", "EXEC dbo.xp_x", "EXEC sp_configure 'x', 1", "EXEC sys.sp_addlogin 'a'", "EXEC dbo.P (SELECT 1)", "EXEC dbo.P @a = 1 + 1"} {
		if _, err := ClassifyWith(bad, Options{UserProcedures: true}); err == nil {
			t.Errorf("ClassifyWith(%q) allowed it", bad)
		}
	}
}

// TestTargets: the tables a modification changes are listed for their
// triggers; #temp tables and table variables are not.
func TestTargets(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"UPDATE dbo.Orders SET Amount = 0", []string{"dbo.Orders"}},
		{"INSERT INTO [s].[T 1] (a) VALUES (1)", []string{"s.T 1"}},
		{"INSERT TOP (5) t SELECT 1", []string{"t"}},
		{"DELETE FROM x WHERE a = 1; DELETE TOP (1) y", []string{"x", "y"}},
		{"MERGE INTO dbo.T AS d USING dbo.S AS s ON d.a = s.a WHEN MATCHED THEN UPDATE SET b = 1 WHEN NOT MATCHED THEN INSERT (a) VALUES (s.a);", []string{"dbo.T"}},
		{"INSERT INTO #t VALUES (1); DECLARE @t TABLE (a int); INSERT INTO @t VALUES (1)", nil},
	} {
		c, err := Classify(tc.sql)
		var got []string
		for _, n := range c.Targets {
			got = append(got, n.String())
		}
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Classify(%q) targets %q, %v; want %q", tc.sql, got, err, tc.want)
		}
	}
}

// TestSplitExecuteSQL reads the form applications send.
func TestSplitExecuteSQL(t *testing.T) {
	e, ok := SplitExecuteSQL("EXEC sp_executesql N'SELECT * FROM t WHERE c = @c AND n = @n', N'@c int, @n nvarchar(10)', @c = -42, @n = N'it''s';")
	if !ok || e.Statement != "SELECT * FROM t WHERE c = @c AND n = @n" || e.Params != "@c int, @n nvarchar(10)" ||
		len(e.Args) != 2 || e.Args[0] != (Arg{"@c", "-42"}) || e.Args[1] != (Arg{"@n", "N'it''s'"}) {
		t.Fatalf("SplitExecuteSQL = %+v, %v", e, ok)
	}
	if e, ok := SplitExecuteSQL("exec [sys].[sp_executesql] @stmt = N'SELECT 1', @params = N'@a int', NULL"); !ok || e.Args[0].Literal != "NULL" {
		t.Errorf("named @stmt/@params: %+v, %v", e, ok)
	}
	for _, no := range []string{
		"EXEC sp_executesql @s", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = @b", "EXEC sp_executesql N'x', N'@a int', 1 + 1",
		"SELECT 1; EXEC sp_executesql N'SELECT 1'", "EXEC dbo.sp_executesql N'SELECT 1'", "EXEC sp_executesql N'SELECT 1' SELECT 2",
		"EXEC sp_executesql N'x', N'@a int', @x = 1 OUTPUT", "EXEC sp_executesql N'x', N'@a money', $5", "EXEC sp_executesql @other = N'x'",
	} {
		if e, ok := SplitExecuteSQL(no); ok {
			t.Errorf("SplitExecuteSQL(%q) = %+v; want not a literal call", no, e)
		}
	}
}

// FuzzClassifyModule: any definition is classified or refused without
// panicking, and one that is allowed has an allowed body.
func FuzzClassifyModule(f *testing.F) {
	for _, m := range tsqlcorpus.Modules {
		f.Add(m.Def)
	}
	f.Fuzz(func(t *testing.T, def string) {
		m, _, err := ClassifyModule(def)
		if err != nil {
			return
		}
		if m.BodyPos <= 0 || m.BodyPos > len(def) {
			t.Fatalf("body at %d of %d", m.BodyPos, len(def))
		}
		if _, err := ClassifyWith(def[m.BodyPos:], Options{UserProcedures: true}); err != nil {
			t.Fatalf("the module is allowed but its body alone is refused: %v", err)
		}
	})
}

// FuzzSplitExecuteSQL: a call that splits is allowed exactly when its
// statement alone is and its declarations are only declarations.
func FuzzSplitExecuteSQL(f *testing.F) {
	f.Add("EXEC sp_executesql N'SELECT @c', N'@c int', @c = 42")
	f.Add("EXEC sp_executesql N'COMMIT'")
	f.Add("EXECUTE sys.sp_executesql @stmt = N'UPDATE t SET a = 1', @params = N'@a int', -1.5e3")
	for _, c := range tsqlcorpus.Cases {
		f.Add(c.SQL)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, ok := SplitExecuteSQL(src)
		if !ok {
			return
		}
		_, errAlone := Classify(e.Statement)
		_, errCall := Classify(src)
		declOK := e.Params == "" || plainDeclarations(e.Params)
		if (errAlone == nil && declOK) != (errCall == nil) {
			t.Fatalf("statement alone: %v (declarations plain: %v); through sp_executesql: %v", errAlone, declOK, errCall)
		}
	})
}
