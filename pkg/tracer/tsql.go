package tracer

import (
	"fmt"
	"strings"
)

// TokenKind is the kind of a T-SQL token.
type TokenKind uint8

const (
	TokWord       TokenKind = iota + 1 // keyword or regular identifier
	TokQuotedName                      // [bracketed] or "quoted" identifier
	TokString                          // 'string' or N'string'
	TokNumber                          // 123, 1.5e3, 0x1F
	TokVariable                        // @name, @@name
	TokSymbol                          // punctuation and operators
	TokComment                         // -- line or /* block */ comment
)

// Token is one lexical unit of a batch. Text is the source text; for a word
// Upper is its upper-case form, for a quoted name or string Value is the
// unquoted content (escapes undone).
type Token struct {
	Kind  TokenKind
	Text  string
	Upper string
	Value string
	Line  int // 1-based
	// LineStart and LineEnd tell whether nothing but whitespace precedes or
	// follows the token on its line (GO is a separator only on its own line).
	LineStart, LineEnd bool
}

// SyntaxError is an unterminated string, comment or quoted name.
type SyntaxError struct {
	What string
	Line int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("unterminated %s starting on line %d", e.What, e.Line)
}

// Tokenize splits a T-SQL batch into tokens, comments included. Strings keep
// ” escapes, N” literals are strings, /* */ comments nest (as in T-SQL),
// [names]]] escape ]] and "names""" escape "". An unterminated string,
// comment or quoted name is a *SyntaxError.
func Tokenize(src string) ([]Token, error) {
	var toks []Token
	line := 1
	lineStart := true // only whitespace since the last newline
	i := 0
	emit := func(k TokenKind, start, end int, value string, startLine int, atStart bool) {
		t := Token{Kind: k, Text: src[start:end], Value: value, Line: startLine, LineStart: atStart}
		if k == TokWord {
			t.Upper = strings.ToUpper(t.Text)
		}
		toks = append(toks, t)
	}
	countLines := func(s string) { line += strings.Count(s, "\n") }
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			markLineEnd(toks, line)
			line++
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		}
		start, startLine, atStart := i, line, lineStart
		lineStart = false
		switch {
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src)
			} else {
				end += i
			}
			i = end
			emit(TokComment, start, end, "", startLine, atStart)
			// A line comment does not end the "only whitespace" run for
			// the token before it: "GO -- done" is still a separator.
			if n := len(toks); n >= 2 {
				toks[n-1].LineStart = atStart
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			depth := 0
			j := i
			for j < len(src) {
				if strings.HasPrefix(src[j:], "/*") {
					depth++
					j += 2
				} else if strings.HasPrefix(src[j:], "*/") {
					depth--
					j += 2
					if depth == 0 {
						break
					}
				} else {
					j++
				}
			}
			if depth != 0 {
				return nil, &SyntaxError{What: "/* comment", Line: startLine}
			}
			countLines(src[i:j])
			i = j
			emit(TokComment, start, j, "", startLine, atStart)
		case c == '\'' || ((c == 'N' || c == 'n') && i+1 < len(src) && src[i+1] == '\''):
			q := i
			if c != '\'' {
				q++
			}
			val, end, ok := scanQuoted(src, q, '\'', '\'')
			if !ok {
				return nil, &SyntaxError{What: "string", Line: startLine}
			}
			countLines(src[i:end])
			i = end
			emit(TokString, start, end, val, startLine, atStart)
		case c == '[':
			val, end, ok := scanQuoted(src, i, '[', ']')
			if !ok {
				return nil, &SyntaxError{What: "[bracketed] name", Line: startLine}
			}
			countLines(src[i:end])
			i = end
			emit(TokQuotedName, start, end, val, startLine, atStart)
		case c == '"':
			val, end, ok := scanQuoted(src, i, '"', '"')
			if !ok {
				return nil, &SyntaxError{What: `"quoted" name`, Line: startLine}
			}
			countLines(src[i:end])
			i = end
			emit(TokQuotedName, start, end, val, startLine, atStart)
		case c == '@':
			j := i + 1
			for j < len(src) && (isWordByte(src[j]) || src[j] == '@') {
				j++
			}
			i = j
			emit(TokVariable, start, j, "", startLine, atStart)
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			j := i + 1
			for j < len(src) && (isWordByte(src[j]) || src[j] == '.' ||
				((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			i = j
			emit(TokNumber, start, j, "", startLine, atStart)
		case isWordStart(c):
			j := i + 1
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			i = j
			emit(TokWord, start, j, "", startLine, atStart)
		default:
			i++
			emit(TokSymbol, start, i, "", startLine, atStart)
		}
	}
	markLineEnd(toks, line)
	return toks, nil
}

// markLineEnd flags the last non-comment token of line as ending its line.
func markLineEnd(toks []Token, line int) {
	for k := len(toks) - 1; k >= 0; k-- {
		t := &toks[k]
		if t.Kind == TokComment {
			continue
		}
		if t.Line == line || (t.Kind == TokString || t.Kind == TokQuotedName) && t.Line+strings.Count(t.Text, "\n") == line {
			t.LineEnd = true
		}
		return
	}
}

// scanQuoted reads a quoted run starting at src[i] == open, where a doubled
// close character escapes itself. It returns the unescaped content and the
// index after the closing character.
func scanQuoted(src string, i int, open, close byte) (string, int, bool) {
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		if src[j] == close {
			if j+1 < len(src) && src[j+1] == close {
				b.WriteByte(close)
				j += 2
				continue
			}
			return b.String(), j + 1, true
		}
		b.WriteByte(src[j])
		j++
	}
	return "", 0, false
}

func isWordStart(c byte) bool {
	return c == '_' || c == '#' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isWordByte(c byte) bool {
	return isWordStart(c) || c >= '0' && c <= '9' || c == '$'
}

// Classification is what the safety classifier found in a batch.
type Classification struct {
	// Modification: the batch changes data (INSERT, UPDATE, DELETE, MERGE,
	// SELECT INTO, TRUNCATE TABLE), so it runs only inside a rolled-back
	// transaction.
	Modification bool
	// Verbs lists the modifying statements found, e.g. ["UPDATE"].
	Verbs []string
	// Warnings are side effects a rollback does not undo but that change no
	// rows (identity values, sequence numbers).
	Warnings []string
}

// refusedWords maps a leading keyword to why a batch holding it is refused.
var refusedWords = map[string]string{
	"COMMIT":         "COMMIT would end the tracer's transaction and make the changes permanent",
	"ROLLBACK":       "a ROLLBACK inside the batch would end the tracer's transaction early, and work after it would not be rolled back",
	"SAVE":           "SAVE TRANSACTION manipulates the tracer's transaction",
	"EXEC":           "EXEC/EXECUTE runs code the tracer cannot inspect (a procedure or dynamic SQL could commit, or change data outside the rollback)",
	"EXECUTE":        "EXEC/EXECUTE runs code the tracer cannot inspect (a procedure or dynamic SQL could commit, or change data outside the rollback)",
	"SP_EXECUTESQL":  "sp_executesql runs dynamic SQL the tracer cannot inspect",
	"CREATE":         "DDL is refused: some of it cannot be rolled back (CREATE/ALTER DATABASE, full-text, endpoints, event sessions) and it is not what a trace is for",
	"ALTER":          "DDL is refused: some of it cannot be rolled back (CREATE/ALTER DATABASE, full-text, endpoints, event sessions) and it is not what a trace is for",
	"DROP":           "DDL is refused: some of it cannot be rolled back (CREATE/ALTER DATABASE, full-text, endpoints, event sessions) and it is not what a trace is for",
	"DBCC":           "DBCC commands are refused: several act outside any transaction",
	"BACKUP":         "BACKUP cannot run inside a transaction and is not a query",
	"RESTORE":        "RESTORE cannot run inside a transaction and changes databases",
	"KILL":           "KILL ends other sessions",
	"SHUTDOWN":       "SHUTDOWN stops the server",
	"RECONFIGURE":    "RECONFIGURE changes server configuration outside any transaction",
	"CHECKPOINT":     "CHECKPOINT is run by the tracer itself when asked, not inside the traced batch",
	"GRANT":          "security statements (GRANT/REVOKE/DENY) are refused",
	"REVOKE":         "security statements (GRANT/REVOKE/DENY) are refused",
	"DENY":           "security statements (GRANT/REVOKE/DENY) are refused",
	"BULK":           "BULK INSERT reads server files and is refused",
	"WRITETEXT":      "WRITETEXT/UPDATETEXT can be minimally logged and are refused",
	"UPDATETEXT":     "WRITETEXT/UPDATETEXT can be minimally logged and are refused",
	"OPENQUERY":      "OPENQUERY/OPENROWSET/OPENDATASOURCE reach other servers, whose changes the tracer's rollback does not cover",
	"OPENROWSET":     "OPENQUERY/OPENROWSET/OPENDATASOURCE reach other servers, whose changes the tracer's rollback does not cover",
	"OPENDATASOURCE": "OPENQUERY/OPENROWSET/OPENDATASOURCE reach other servers, whose changes the tracer's rollback does not cover",
	"ENABLE":         "ENABLE/DISABLE TRIGGER is DDL and is refused",
	"DISABLE":        "ENABLE/DISABLE TRIGGER is DDL and is refused",
	"USE":            "USE would change the database under the tracer; pass the database as an option instead",
}

// Classify tokenizes a batch and decides whether it may be traced: it
// returns a *RefusedError naming the reason (and line) when a statement
// could escape the tracer's rollback or the batch is several batches, and
// otherwise says whether the batch modifies data.
func Classify(src string) (Classification, error) {
	var c Classification
	toks, err := Tokenize(src)
	if err != nil {
		return c, &RefusedError{Reason: "the batch cannot be tokenized: " + err.Error()}
	}
	// Comments carry no meaning; drop them.
	code := toks[:0:0]
	for _, t := range toks {
		if t.Kind != TokComment {
			code = append(code, t)
		}
	}
	refuse := func(t Token, why string) (Classification, error) {
		return Classification{}, &RefusedError{Reason: fmt.Sprintf("line %d: %s", t.Line, why)}
	}
	addVerb := func(v string) {
		c.Modification = true
		for _, have := range c.Verbs {
			if have == v {
				return
			}
		}
		c.Verbs = append(c.Verbs, v)
	}
	lastVerb := ""
	warned := map[string]bool{}
	warn := func(w string) {
		if !warned[w] {
			warned[w] = true
			c.Warnings = append(c.Warnings, w)
		}
	}
	for k, t := range code {
		next := func(n int) string {
			if k+n < len(code) && code[k+n].Kind == TokWord {
				return code[k+n].Upper
			}
			return ""
		}
		if t.Kind == TokWord && t.Upper == "GO" && t.LineStart {
			// GO [count] alone on its line is the client's batch separator.
			if t.LineEnd || (k+1 < len(code) && code[k+1].Kind == TokNumber && code[k+1].LineEnd && code[k+1].Line == t.Line) {
				return refuse(t, "GO separates several batches; trace one batch at a time (the tracer's session and transaction span exactly one batch)")
			}
		}
		if t.Kind == TokSymbol && t.Text == "." {
			// A four-part name (server.database.schema.object) reaches a
			// linked server.
			if isNamePart(code, k-1) && isNamePart(code, k+1) && k+5 < len(code)+0 &&
				code[k+2].Kind == TokSymbol && code[k+2].Text == "." && isNamePart(code, k+3) &&
				code[k+4].Kind == TokSymbol && code[k+4].Text == "." && isNamePart(code, k+5) &&
				(k < 2 || !(code[k-2].Kind == TokSymbol && code[k-2].Text == ".")) {
				return refuse(t, "a four-part name reaches a linked server, whose changes the tracer's rollback does not cover")
			}
		}
		if t.Kind != TokWord {
			continue
		}
		switch t.Upper {
		case "BEGIN":
			switch next(1) {
			case "TRAN", "TRANSACTION":
				return refuse(t, "BEGIN TRANSACTION inside the batch would nest in the tracer's transaction; a COMMIT of it, or a ROLLBACK, would escape the trace's rollback")
			case "DISTRIBUTED":
				return refuse(t, "BEGIN DISTRIBUTED TRANSACTION reaches other servers")
			}
			continue
		case "UPDATE":
			if next(1) == "STATISTICS" {
				return refuse(t, "UPDATE STATISTICS is maintenance, not a query, and is refused")
			}
			if k+1 < len(code) && code[k+1].Kind == TokSymbol && code[k+1].Text == "(" {
				continue // the UPDATE() function
			}
			addVerb("UPDATE")
			lastVerb = "UPDATE"
			continue
		case "SET":
			switch next(1) {
			case "IMPLICIT_TRANSACTIONS":
				return refuse(t, "SET IMPLICIT_TRANSACTIONS changes how transactions start and end under the tracer")
			case "REMOTE_PROC_TRANSACTIONS":
				return refuse(t, "SET REMOTE_PROC_TRANSACTIONS reaches other servers")
			}
			continue
		case "INSERT", "DELETE", "MERGE":
			if t.Upper != "DELETE" {
				warn("identity values consumed by an insert are not given back by ROLLBACK")
			}
			if t.Upper == "INSERT" && k > 0 && code[k-1].Kind == TokWord && code[k-1].Upper == "BULK" {
				return refuse(code[k-1], refusedWords["BULK"])
			}
			addVerb(t.Upper)
			lastVerb = t.Upper
			continue
		case "TRUNCATE":
			if next(1) == "TABLE" {
				addVerb("TRUNCATE TABLE")
				lastVerb = "TRUNCATE"
			}
			continue
		case "SELECT", "FETCH":
			if lastVerb != "INSERT" || t.Upper == "FETCH" {
				lastVerb = t.Upper
			}
			continue
		case "INTO":
			if lastVerb == "SELECT" {
				addVerb("SELECT INTO")
			}
			continue
		case "NEXT":
			if next(1) == "VALUE" && next(2) == "FOR" {
				warn("sequence numbers drawn with NEXT VALUE FOR are not given back by ROLLBACK")
			}
			continue
		}
		if (t.Upper == "CREATE" || t.Upper == "DROP") && next(1) == "TABLE" && tempTableFollows(code, k+2) {
			// A #temp table is private to the session and its DDL rolls
			// back with the tracer's transaction; run the batch in
			// rollback mode.
			addVerb(t.Upper + " TABLE #temp")
			continue
		}
		if why, ok := refusedWords[t.Upper]; ok {
			if (t.Upper == "ENABLE" || t.Upper == "DISABLE") && next(1) != "TRIGGER" {
				continue
			}
			return refuse(t, why)
		}
		if k == 0 && (strings.HasPrefix(t.Upper, "XP_") || strings.HasPrefix(t.Upper, "SP_")) {
			// A procedure may be called without EXEC as a batch's first statement.
			return refuse(t, "calling a procedure is refused: the tracer cannot inspect what it does")
		}
	}
	return c, nil
}

// tempTableFollows tells whether the table name at code[k] (after an
// optional IF EXISTS) is a #temp table.
func tempTableFollows(code []Token, k int) bool {
	if k+1 < len(code) && code[k].Kind == TokWord && code[k].Upper == "IF" && code[k+1].Kind == TokWord && code[k+1].Upper == "EXISTS" {
		k += 2
	}
	if k >= len(code) {
		return false
	}
	name := code[k].Text
	if code[k].Kind == TokQuotedName {
		name = code[k].Value
	}
	return strings.HasPrefix(name, "#")
}

func isNamePart(code []Token, k int) bool {
	return k >= 0 && k < len(code) && (code[k].Kind == TokWord || code[k].Kind == TokQuotedName)
}
