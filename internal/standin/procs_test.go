package standin

import (
	"strings"
	"testing"
)

// TestProcedureLifecycle: CREATE, EXEC (named, positional, defaults,
// OUTPUT, return status), ALTER, DROP, and the catalog views.
func TestProcedureLifecycle(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 53)
	mustRun(t, c, "CREATE PROCEDURE dbo.Twice @a int, @b int = 10, @out int OUTPUT\nAS\nSET @out = (@a + @b) * 2;\nSELECT @out AS v;\nRETURN 7")
	r := mustRun(t, c, "DECLARE @o int, @rc int; EXEC @rc = dbo.Twice 1, @out = @o OUTPUT; SELECT @o, @rc")
	if got := cell(t, r, 1, 0, 0); got != int64(22) {
		t.Errorf("OUTPUT = %v, want 22", got)
	}
	if got := cell(t, r, 1, 0, 1); got != int64(7) {
		t.Errorf("return status = %v, want 7", got)
	}
	r = mustRun(t, c, "DECLARE @o int; EXEC Twice @b = 1, @a = 2, @out = @o OUTPUT")
	if got := cell(t, r, 0, 0, 0); got != int64(6) {
		t.Errorf("named arguments: %v, want 6", got)
	}
	r = mustRun(t, c, "SELECT OBJECT_DEFINITION(OBJECT_ID('dbo.Twice')), (SELECT type FROM sys.objects WHERE name = 'Twice'), (SELECT COUNT(*) FROM sys.sql_modules WHERE object_id = OBJECT_ID(N'[dbo].[Twice]'))")
	if def, _ := cell(t, r, 0, 0, 0).(string); !strings.HasPrefix(def, "CREATE PROCEDURE dbo.Twice") || !strings.Contains(def, "RETURN 7") {
		t.Errorf("OBJECT_DEFINITION = %q", def)
	}
	if typ := cell(t, r, 0, 0, 1); typ != "P " {
		t.Errorf("sys.objects type %q", typ)
	}
	for _, tc := range []struct {
		sql string
		num int32
	}{
		{"CREATE PROCEDURE dbo.Twice AS SELECT 1", 2714},
		{"SELECT 1; CREATE PROCEDURE dbo.Y AS SELECT 1", 111},
		{"SELECT 1\nCREATE PROC dbo.Y AS SELECT 1", 111},
		{"CREATE PROCEDURE dbo.Y AS SELECT 1; CREATE PROCEDURE dbo.Z AS SELECT 2", 111},
		{"ALTER PROCEDURE dbo.Nope AS SELECT 1", 208},
		{"DROP PROCEDURE dbo.Nope", 3701},
		{"EXEC dbo.Nope", 2812},
		{"EXEC dbo.Twice", 201},
		{"EXEC dbo.Twice 1, 2, 3, 4", 8144},
		{"EXEC dbo.Twice @zz = 1", 8145},
		{"CREATE PROCEDURE sales.P AS SELECT 1", 2760},
	} {
		if _, err := run(c, tc.sql); err == nil || err.Number != tc.num {
			t.Errorf("%q: %v; want Msg %d", tc.sql, err, tc.num)
		}
	}
	mustRun(t, c, "ALTER PROCEDURE dbo.Twice @a int AS SELECT @a * 3")
	if got := cell(t, mustRun(t, c, "EXEC dbo.Twice 5"), 0, 0, 0); got != int64(15) {
		t.Errorf("after ALTER: %v", got)
	}
	mustRun(t, c, "CREATE OR ALTER PROCEDURE dbo.Twice WITH ENCRYPTION AS SELECT 4")
	r = mustRun(t, c, "SELECT OBJECT_DEFINITION(OBJECT_ID('dbo.Twice')), (SELECT definition FROM sys.sql_modules WHERE object_id = OBJECT_ID('dbo.Twice'))")
	if cell(t, r, 0, 0, 0) != nil || cell(t, r, 0, 0, 1) != nil {
		t.Errorf("an encrypted module's definition reads %v / %v; want NULL", cell(t, r, 0, 0, 0), cell(t, r, 0, 0, 1))
	}
	mustRun(t, c, "DROP PROCEDURE dbo.Twice; DROP PROCEDURE IF EXISTS dbo.Twice")
	if _, err := run(c, "EXEC dbo.Twice"); err == nil || err.Number != 2812 {
		t.Errorf("after DROP: %v", err)
	}
}

// TestNestedProceduresAndExecuteSQL: nested EXEC, sp_executesql with typed
// parameters inside a batch, and the nesting limit (Msg 217).
func TestNestedProceduresAndExecuteSQL(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 53)
	r := mustRun(t, c, "EXEC dbo.RegionReport @region = N'West'")
	if len(r.sets) != 3 {
		t.Fatalf("dbo.RegionReport returned %d result sets, want 3 (its own and the nested procedure's two)", len(r.sets))
	}
	r = mustRun(t, c, "EXEC sp_executesql N'SELECT COUNT(*) FROM dbo.Orders WHERE CustomerID = @c', N'@c int', @c = 42")
	want := mustRun(t, c, "SELECT COUNT(*) FROM dbo.Orders WHERE CustomerID = 42")
	if cell(t, r, 0, 0, 0) != cell(t, want, 0, 0, 0) {
		t.Errorf("sp_executesql: %v, want %v", cell(t, r, 0, 0, 0), cell(t, want, 0, 0, 0))
	}
	if _, err := run(c, "DECLARE @x int = 1; EXEC sp_executesql N'SELECT @x'"); err == nil || err.Number != 137 {
		t.Errorf("sp_executesql sees the batch's variables: %v; want Msg 137", err)
	}
	mustRun(t, c, "CREATE PROCEDURE dbo.Loop AS EXEC dbo.Loop")
	if _, err := run(c, "EXEC dbo.Loop"); err == nil || err.Number != 217 {
		t.Errorf("endless recursion: %v; want Msg 217", err)
	}
}

// TestProcedurePlansPerStatement: each statement of a procedure emits its
// own actual plan, with the procedure's object id and nest level.
func TestProcedurePlansPerStatement(t *testing.T) {
	evs := traceScenario(t, Options{}, "procedure_two_statements")
	var plans []tracedEvent
	for _, e := range evs {
		if e.name == "query_post_execution_showplan" {
			plans = append(plans, e)
		}
	}
	if len(plans) != 2 {
		t.Fatalf("%d actual plans, want one per statement (2)", len(plans))
	}
	for _, p := range plans {
		if p.data["object_type"] != "8272" /* the object_type map key of PROC */ || p.data["nest_level"] != "1" || p.data["object_name"] != "CustomerOrders" || p.data["object_id"] == "0" {
			t.Errorf("plan fields %v", p.data)
		}
	}
	if plans[0].value == plans[1].value {
		t.Errorf("the two statements have the same plan")
	}
}

// FuzzParseProcedure: any CREATE PROCEDURE text parses or fails with a SQL
// error, and a stored definition parses back to the same body.
func FuzzParseProcedure(f *testing.F) {
	for _, d := range demoProcedures {
		f.Add(d)
	}
	f.Add("CREATE PROC p (@a AS int = 1 OUTPUT, @b nvarchar(max) READONLY) WITH RECOMPILE, EXECUTE AS OWNER AS RETURN")
	f.Add("CREATE OR ALTER PROCEDURE dbo.p WITH ENCRYPTION AS BEGIN SELECT 1; RETURN 2 END")
	f.Add("DROP PROCEDURE IF EXISTS a, b.c")
	f.Fuzz(func(t *testing.T, src string) {
		cp, err := parseProc(src)
		if err != nil {
			return
		}
		again, err := parseProc(src)
		if err != nil || len(again.Body) != len(cp.Body) || len(cp.Body) == 0 {
			t.Fatalf("parsed twice differently: %v", err)
		}
	})
}

// TestBareProcedureCall: a batch's first statement may be a procedure name
// without EXEC; a misspelt keyword there is a call of a missing procedure.
func TestBareProcedureCall(t *testing.T) {
	srv := New(Options{})
	c := session(t, srv, 53)
	if r := mustRun(t, c, "[CustomerOrders] N'East'"); len(r.sets) != 2 {
		t.Errorf("bare call: %d result sets, want 2", len(r.sets))
	}
	if _, err := run(c, "SELEC 1"); err == nil || err.Number != 2812 {
		t.Errorf("SELEC 1: %v; want Msg 2812", err)
	}
	if _, err := run(c, "SELECT 1; CustomerOrders"); err == nil || err.Number == 2812 {
		t.Errorf("a bare name after the first statement: %v; want a syntax error", err)
	}
}
