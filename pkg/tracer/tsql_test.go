package tracer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	src := "SELECT N'it''s /* not */ -- a comment', [we]]ird], \"q\"\"x\" /* outer /* inner */ still */ FROM t -- tail\nGO"
	toks, err := Tokenize(src)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []TokenKind
	var values []string
	for _, tk := range toks {
		kinds = append(kinds, tk.Kind)
		if tk.Kind == TokString || tk.Kind == TokQuotedName {
			values = append(values, tk.Value)
		}
	}
	want := []TokenKind{TokWord, TokString, TokSymbol, TokQuotedName, TokSymbol, TokQuotedName, TokComment, TokWord, TokWord, TokComment, TokWord}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("token %d (%q) kind %d, want %d", i, toks[i].Text, kinds[i], want[i])
		}
	}
	if strings.Join(values, "|") != `it's /* not */ -- a comment|we]ird|q"x` {
		t.Errorf("values %q", values)
	}
	last := toks[len(toks)-1]
	if last.Line != 2 || !last.LineStart || !last.LineEnd {
		t.Errorf("GO token %+v: want line 2, alone on its line", last)
	}
	if toks[8].LineEnd != true { // "t" before "-- tail"
		t.Errorf("t should end its line (a comment follows)")
	}
	for _, bad := range []string{"SELECT 'open", "SELECT [open", `SELECT "open`, "/* /* */", "SELECT N'x"} {
		var se *SyntaxError
		if _, err := Tokenize(bad); !errors.As(err, &se) {
			t.Errorf("Tokenize(%q) = %v, want a SyntaxError", bad, err)
		}
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		sql    string
		mod    bool
		verbs  string
		refuse string // substring of the reason; "" = accepted
	}{
		{"SELECT * FROM dbo.Orders", false, "", ""},
		{"select 1; select 2", false, "", ""},
		{"SELECT 'COMMIT' AS x, [rollback] FROM t -- ROLLBACK\n/* BEGIN TRAN */", false, "", ""},
		{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SELECT 1", false, "", ""},
		{"UPDATE dbo.Orders SET Status = N'x' WHERE OrderID = 1", true, "UPDATE", ""},
		{"insert into t (a) values (1)", true, "INSERT", ""},
		{"DELETE FROM t WHERE a = 1", true, "DELETE", ""},
		{"MERGE t USING s ON t.a = s.a WHEN MATCHED THEN UPDATE SET b = 1;", true, "MERGE,UPDATE", ""},
		{"SELECT a INTO #t FROM t", true, "SELECT INTO", ""},
		{"INSERT INTO t SELECT a FROM s", true, "INSERT", ""},
		{"WITH c AS (SELECT a FROM t) DELETE FROM c", true, "DELETE", ""},
		{"TRUNCATE TABLE t", true, "TRUNCATE TABLE", ""},
		{"IF UPDATE(a) SELECT 1", false, "", ""},
		{"BEGIN TRY SELECT 1 END TRY BEGIN CATCH SELECT 2 END CATCH", false, "", ""},
		{"UPDATE t SET a = 1; COMMIT", false, "", "COMMIT"},
		{"update t set a = 1\nrollback tran", false, "", "line 2: a ROLLBACK"},
		{"SAVE TRANSACTION s; DELETE FROM t", false, "", "SAVE TRANSACTION"},
		{"BEGIN TRAN; UPDATE t SET a = 1", false, "", "BEGIN TRANSACTION"},
		{"begin transaction x", false, "", "BEGIN TRANSACTION"},
		{"BEGIN DISTRIBUTED TRANSACTION", false, "", "DISTRIBUTED"},
		{"SELECT 1\nGO\nSELECT 2", false, "", "GO separates"},
		{"SELECT 1\n  go 5 -- twice\nSELECT 2", false, "", "GO separates"},
		{"SELECT go FROM t", false, "", ""},
		{"SELECT 1 AS go\nFROM t", false, "", ""},
		{"CREATE TABLE t (a int)", false, "", "DDL"},
		{"CREATE TABLE #t (a int); INSERT INTO #t VALUES (1); SELECT a FROM #t; DROP TABLE IF EXISTS #t", true, "CREATE TABLE #temp,INSERT,DROP TABLE #temp", ""},
		{"CREATE TABLE [#t] (a int)", true, "CREATE TABLE #temp", ""},
		{"CREATE TABLE dbo.[#t2]x (a int)", false, "", "DDL"},
		{"ALTER DATABASE x SET RECOVERY FULL", false, "", "DDL"},
		{"DROP TABLE t", false, "", "DDL"},
		{"EXEC dbo.DoThings", false, "", "EXEC"},
		{"sp_who", false, "", "procedure"},
		{"DBCC CHECKDB", false, "", "DBCC"},
		{"BACKUP DATABASE x TO DISK = 'y'", false, "", "BACKUP"},
		{"SELECT * FROM srv.db.dbo.t", false, "", "four-part"},
		{"SELECT * FROM [srv].[db].[dbo].[t]", false, "", "four-part"},
		{"SELECT a.b.c FROM t", false, "", ""},
		{"SELECT * FROM OPENQUERY(srv, 'select 1')", false, "", "OPENQUERY"},
		{"SET IMPLICIT_TRANSACTIONS ON; UPDATE t SET a = 1", false, "", "IMPLICIT_TRANSACTIONS"},
		{"UPDATE STATISTICS t", false, "", "UPDATE STATISTICS"},
		{"BULK INSERT t FROM 'f'", false, "", "BULK"},
		{"USE master; SELECT 1", false, "", "USE"},
		{"SELECT 'unterminated", false, "", "unterminated string"},
		{"   ", false, "", ""},
	}
	for _, c := range cases {
		got, err := Classify(c.sql)
		if c.refuse != "" {
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, c.refuse) {
				t.Errorf("Classify(%q) = %+v, %v; want refusal naming %q", c.sql, got, err, c.refuse)
			}
			continue
		}
		if err != nil {
			t.Errorf("Classify(%q): %v", c.sql, err)
			continue
		}
		if got.Modification != c.mod || strings.Join(got.Verbs, ",") != c.verbs {
			t.Errorf("Classify(%q) = %+v, want modification=%v verbs=%q", c.sql, got, c.mod, c.verbs)
		}
	}
}

func TestValidatePolicy(t *testing.T) {
	var re *RefusedError
	if _, err := (Options{SQL: "SELECT 1", ClearBufferPool: true}).Validate(Policy{}); !errors.As(err, &re) || !strings.Contains(re.Reason, "buffer pool") {
		t.Errorf("clearing without the policy: %v", err)
	}
	if _, err := (Options{SQL: "SELECT 1", ClearBufferPool: true}).Validate(Policy{AllowClearBufferPool: true}); err != nil {
		t.Errorf("clearing with the policy: %v", err)
	}
	if _, err := (Options{SQL: "DELETE FROM t"}).Validate(Policy{Modifications: ModificationsRefuse}); !errors.As(err, &re) || !strings.Contains(re.Reason, "DELETE") {
		t.Errorf("modification refused by policy: %v", err)
	}
	if c, err := (Options{SQL: "DELETE FROM t"}).Validate(Policy{}); err != nil || !c.Modification {
		t.Errorf("modification in rollback mode: %+v %v", c, err)
	}
	if _, err := (Options{SQL: ""}).Validate(Policy{}); !errors.As(err, &re) {
		t.Errorf("empty SQL: %v", err)
	}
	_, err := (Options{SQL: "SELECT 1", MaxEvents: -1, Timeout: -1, TraceDirectory: "a\nb"}).Validate(Policy{})
	if err == nil || !strings.Contains(err.Error(), "max events") || !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), "trace directory") {
		t.Errorf("bad values: %v", err)
	}
}

func FuzzClassify(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "sql", "*.sql"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(string(b))
		}
	}
	f.Add("SELECT N'a''b' /* /* */ */ [x]]y] \"z\" -- c\nGO 2")
	f.Fuzz(func(t *testing.T, src string) {
		toks, err := Tokenize(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Tokenize error is not a SyntaxError: %v", err)
			}
			return
		}
		// Tokens cover the source in order without overlap.
		pos := 0
		for _, tk := range toks {
			i := strings.Index(src[pos:], tk.Text)
			if i < 0 || strings.TrimSpace(src[pos:pos+i]) != "" {
				t.Fatalf("token %q not next in the source after %d", tk.Text, pos)
			}
			pos += i + len(tk.Text)
		}
		if strings.TrimSpace(src[pos:]) != "" {
			t.Fatalf("source left after the last token: %q", src[pos:])
		}
		c, err := Classify(src)
		if err == nil && c.Modification && len(c.Verbs) == 0 {
			t.Fatal("modification without a verb")
		}
	})
}
