package tsql

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/internal/tsqlcorpus"
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

// TestClassifyCorpus: every class of issue 12's inputs is refused, naming
// the statement and why, and every look-alike is traced.
func TestClassifyCorpus(t *testing.T) {
	if len(tsqlcorpus.Cases) < 150 {
		t.Fatalf("the corpus has %d inputs; issue 12 asks for at least 150", len(tsqlcorpus.Cases))
	}
	seen := map[string]bool{}
	for _, c := range tsqlcorpus.Cases {
		if seen[c.SQL] {
			t.Errorf("corpus input %q appears twice", c.SQL)
		}
		seen[c.SQL] = true
		got, err := Classify(c.SQL)
		if c.Refuse != "" {
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(refusalWhy(re), c.Refuse) {
				t.Errorf("Classify(%q) = %+v, %v; want a refusal naming %q", c.SQL, got, err, c.Refuse)
				continue
			}
			if re.Line < 1 || !strings.Contains(re.Reason, fmt.Sprintf("line %d", re.Line)) {
				t.Errorf("Classify(%q): the refusal %q does not name its line", c.SQL, re.Reason)
			}
			if !strings.Contains(err.Error(), "trace refused: ") {
				t.Errorf("Classify(%q): error %q", c.SQL, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Classify(%q): %v", c.SQL, err)
			continue
		}
		if got.Modification != c.Mod {
			t.Errorf("Classify(%q) = %+v, want modification=%v", c.SQL, got, c.Mod)
		}
	}
}

// refusalWhy is a refusal's reason without the statement it names (whose
// text could hold any word a test looks for).
func refusalWhy(re *RefusedError) string {
	if re.Statement == "" {
		return re.Reason
	}
	return strings.TrimPrefix(re.Reason, fmt.Sprintf("line %d (%s)", re.Line, re.Statement))
}

// A refusal names the statement (shortened) and its line.
func TestRefusalNamesTheStatement(t *testing.T) {
	cases := []struct {
		SQL, stmt string
		line      int
		extra     string
	}{
		{"UPDATE dbo.Orders SET Amount = 0 WHERE OrderID = 1COMMIT", "COMMIT", 1, `reads "1COMMIT" as the number 1 followed by COMMIT`},
		{"SELECT 1\nSELECT 2\n\nDROP TABLE #t, dbo.Customers\nSELECT 3", "DROP TABLE #t, dbo.Customers", 4, "dbo is not a #temp table"},
		{"SELECT 1;\n  EXEC   dbo.usp_Cleanup\n   @all = 1", "EXEC dbo.usp_Cleanup @all = 1", 2, "dbo.usp_Cleanup is not one of them"},
		{"update t set a = 1\nrollback tran", "rollback tran", 2, "ROLLBACK would end"},
		{"master..xp_cmdshell 'dir'", "master..xp_cmdshell 'dir'", 1, "the batch begins with master..xp_cmdshell"},
		{"SELECT * FROM dbo.Orders WHERE Note = '" + strings.Repeat("x", 100) + "'; SHUTDOWN", "SHUTDOWN", 1, ""},
		{"UPDATE dbo.Orders SET Note = '" + strings.Repeat("y", 100) + "' WHERE OrderID = 1 COMMIT", "COMMIT", 1, ""},
		{"SELECT * FROM dbo.Orders o JOIN Srv.Db..Lines l ON l.id = o.id WHERE o.Note = '" + strings.Repeat("z", 100) + "'",
			"SELECT * FROM dbo.Orders o JOIN Srv.Db..Lines l ON l.id = o.id WHERE o.Note = '…", 1, ""},
	}
	for _, c := range cases {
		_, err := Classify(c.SQL)
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Errorf("Classify(%q) = %v, want a refusal", c.SQL, err)
			continue
		}
		if re.Statement != c.stmt || re.Line != c.line || !strings.Contains(re.Reason, c.extra) || !strings.HasPrefix(re.Reason, fmt.Sprintf("line %d (%s): ", c.line, c.stmt)) {
			t.Errorf("Classify(%q):\n reason %q\n statement %q line %d\nwant statement %q line %d, mentioning %q", c.SQL, re.Reason, re.Statement, re.Line, c.stmt, c.line, c.extra)
		}
	}
}

// TestTokenizeEndsConstantsAsSQLServer: constants end where SQL Server
// ends them, so the keyword after them is seen.
func TestTokenizeEndsConstantsAsSQLServer(t *testing.T) {
	cases := map[string][]string{
		"1COMMIT":        {"1", "COMMIT"},
		".5COMMIT":       {".5", "COMMIT"},
		"1e1COMMIT":      {"1e1", "COMMIT"},
		"1.5e-3ROLLBACK": {"1.5e-3", "ROLLBACK"},
		"1.COMMIT":       {"1.", "COMMIT"},
		"0x1FCOMMIT":     {"0x1FC", "OMMIT"},
		"0X1g":           {"0X1", "g"},
		"$1COMMIT":       {"$1", "COMMIT"},
		"$.5x":           {"$.5", "x"},
		`\12x`:           {`\12`, "x"},
		"$x":             {"$", "x"},
		"a$1@b#c d":      {"a$1@b#c", "d"},
		"@v1@x.y":        {"@v1@x", ".", "y"},
		"N'a'b":          {"N'a'", "b"},
		"xN'a'":          {"xN", "'a'"},
		"été1 x":         {"été1", "x"},
		"%%physloc%%x":   {"%%physloc%%", "x"},
	}
	for src, want := range cases {
		toks, err := Tokenize(src)
		if err != nil {
			t.Errorf("Tokenize(%q): %v", src, err)
			continue
		}
		var got []string
		for _, tk := range toks {
			got = append(got, tk.Text)
			if src[tk.Pos:tk.Pos+len(tk.Text)] != tk.Text {
				t.Errorf("Tokenize(%q): token %q has position %d", src, tk.Text, tk.Pos)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("Tokenize(%q) = %q, want %q", src, got, want)
		}
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
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		toks, err := Tokenize(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Tokenize error is not a SyntaxError: %v", err)
			}
			return
		}
		// Tokens cover the source in order without overlap, with only
		// whitespace between them (after a leading byte-order mark).
		pos := 0
		if strings.HasPrefix(src, byteOrderMark) {
			pos = len(byteOrderMark)
		}
		for _, tk := range toks {
			if tk.Pos < pos || tk.Pos+len(tk.Text) > len(src) || src[tk.Pos:tk.Pos+len(tk.Text)] != tk.Text || strings.TrimSpace(src[pos:tk.Pos]) != "" {
				t.Fatalf("token %q at %d is not next in the source after %d", tk.Text, tk.Pos, pos)
			}
			pos = tk.Pos + len(tk.Text)
		}
		if strings.TrimSpace(src[pos:]) != "" {
			t.Fatalf("source left after the last token: %q", src[pos:])
		}
		c, err := Classify(src)
		if err == nil && c.Modification && len(c.Verbs) == 0 {
			t.Fatal("modification without a verb")
		}
		var re *RefusedError
		if errors.As(err, &re) && re.Statement != "" && (re.Line < 1 || re.Line > 1+strings.Count(src, "\n")) {
			t.Fatalf("refusal names line %d of a %d-line batch", re.Line, 1+strings.Count(src, "\n"))
		}
	})
}
