package sqlfront

import (
	"strings"
	"testing"
)

// Issue 23: deeply nested input ended in minutes of parsing. SQL Server
// answers it with Msg 191; so does the stand-in, at once, in every nesting
// form (parentheses, function arguments, subqueries, derived tables).
func TestDeepNestingIsMsg191(t *testing.T) {
	const n = 50_000
	for name, src := range map[string]string{
		"raiserror":   "SELECT " + strings.Repeat("RAISERROR(", n) + strings.Repeat(")", n),
		"parentheses": "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n),
		"functions":   "SELECT " + strings.Repeat("ABS(", n) + "1" + strings.Repeat(")", n),
		"subqueries":  "SELECT " + strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n),
		"derived":     "SELECT * FROM " + strings.Repeat("(SELECT * FROM ", n) + "t" + strings.Repeat(") d", n),
		"queries":     strings.Repeat("(", n) + "SELECT 1" + strings.Repeat(")", n),
	} {
		_, err := ParseBatch(src)
		if err == nil || err.Number != 191 {
			t.Errorf("%s: %v, want Msg 191", name, err)
		}
	}
	for _, depth := range []int{10, 100} {
		src := "SELECT " + strings.Repeat("(", depth) + "1" + strings.Repeat(")", depth)
		if _, err := ParseBatch(src); err != nil {
			t.Errorf("%d nested parentheses: %v", depth, err)
		}
	}
}

// The stand-in's lexer reads the same documented rules as the tracer's:
// line continuations in binary and character constants, ASCII-only keyword
// folding, a leading byte-order mark.
func TestLexerRound3(t *testing.T) {
	toks, err := lex("\uFEFFSELECT 0x1\\\nAROLLBACK, 'ab\\\r\ncd'")
	if err != nil {
		t.Fatal(err)
	}
	if toks[0].pos != 3 || !toks[0].is("SELECT") || toks[1].text != "1A" || !toks[2].is("ROLLBACK") || toks[4].text != "abcd" {
		t.Errorf("tokens %+v", toks)
	}
	for _, w := range []string{"ſelect", "ROLLBAC\u212A", "commıt", "ＳＥＬＥＣＴ"} {
		toks, err := lex(w)
		if err != nil {
			t.Fatal(err)
		}
		if toks[0].is("SELECT") || toks[0].is("ROLLBACK") || toks[0].is("COMMIT") || reserved[toks[0].kw()] {
			t.Errorf("%q read as a keyword", w)
		}
	}
}
