package tsql

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The tokenizer follows SQL Server's lexical rules, so that every keyword
// the server will see is a keyword the classifier sees:
//
//   - Constants end where SQL Server ends them
//     (https://learn.microsoft.com/en-us/sql/t-sql/data-types/constants-transact-sql):
//     an integer or decimal is digits with at most one '.', a float adds an
//     exponent E[+|-]digits, a binary constant is 0x and hex digits, a money
//     constant is a currency symbol ($, or \, which SQL Server reads as the
//     yen sign) and a number. "1COMMIT" is the number 1 followed by COMMIT,
//     "0x1FCOMMIT" is 0x1FC followed by OMMIT, ".5COMMIT" is .5 and COMMIT.
//   - Identifiers start with a letter, _, # or @ and go on with letters,
//     decimal digits, @, $, # and _ (regular identifiers,
//     https://learn.microsoft.com/en-us/sql/relational-databases/databases/database-identifiers);
//     "Letters" are Unicode letters.
//   - 'strings' (N'…' too) double ' to escape it, [names] double ], and
//     "names" double "; /* comments */ nest; -- comments end at the line feed.
//   - A backslash followed by a line feed (or CR LF) continues a binary or
//     character constant on the next line and is removed from it
//     (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/sql-server-utilities-statements-backslash):
//     "0x1\<LF>AROLLBACK" is 0x1A followed by ROLLBACK. A backslash before a
//     line break anywhere else (after a number, a word, with spaces before
//     the break) is not documented and is refused.
//   - Keywords are matched with ordinal, ASCII-only case folding: a-z and
//     A-Z are the same letter, nothing else is folded. A word holding any
//     non-ASCII letter is never a keyword ("ſelect", "commıt", "ROLLBACK"
//     spelt with the Kelvin sign are names), so Token.Upper folds ASCII only.
//   - A byte-order mark (U+FEFF) at the start of the batch is skipped.
//
// Where SQL Server's reading is not documented, the tokenizer refuses
// rather than guesses: a character outside strings, comments and quoted
// names that is not ASCII and not a Unicode letter or digit (a no-break
// space, a currency sign other than $ and \); a control character; NUL
// anywhere; ODBC escapes ({ and }); an exponent without digits ("1eX");
// a -- comment holding a carriage return, NEL or line/paragraph separator
// without a line feed (the comment could end there); an unknown %%pseudo
// column%%; text that is not UTF-8. Each is a *SyntaxError.

// TokenKind is the kind of a T-SQL token.
type TokenKind uint8

const (
	TokWord         TokenKind = iota + 1 // keyword or regular identifier
	TokQuotedName                        // [bracketed] or "quoted" identifier
	TokString                            // 'string' or N'string'
	TokNumber                            // 123, 1.5e3, 0x1F, $12.5
	TokVariable                          // @name, @@name
	TokSymbol                            // punctuation and operators
	TokComment                           // -- line or /* block */ comment
	TokPseudoColumn                      // %%physloc%%, %%lockres%%
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
	Pos   int // byte offset of Text in the batch
	// LineStart and LineEnd tell whether nothing but whitespace precedes or
	// follows the token on its line (GO is a separator only on its own line).
	LineStart, LineEnd bool
}

// SyntaxError is text the tokenizer cannot read the way SQL Server would:
// an unterminated string, comment or quoted name, or a character whose
// meaning SQL Server does not document.
type SyntaxError struct {
	What string
	Line int
	// Unterminated: What is the construct that never ends (the message says
	// "unterminated <What> starting on line N"); otherwise What is the whole
	// description.
	Unterminated bool
}

func (e *SyntaxError) Error() string {
	if e.Unterminated {
		return fmt.Sprintf("unterminated %s starting on line %d", e.What, e.Line)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.What)
}

// pseudoColumns are the %%name%% virtual columns SQL Server has.
var pseudoColumns = map[string]bool{"%%PHYSLOC%%": true, "%%LOCKRES%%": true, "%%ROWDUMP%%": true}

// lexer is one run of Tokenize.
type lexer struct {
	src       string
	i         int
	line      int
	lineStart bool // only whitespace since the last newline
	toks      []Token
	lastCode  int // index of the last token that is not a comment, or -1
	lastEnd   int // the line that token ends on
	// dry: only count the tokens (the first pass of Tokenize).
	dry   bool
	count int
}

// Tokenize splits a T-SQL batch into tokens, comments included, by SQL
// Server's lexical rules (see the top of lex.go). Text it cannot read as SQL
// Server would is a *SyntaxError.
func Tokenize(src string) ([]Token, error) {
	if !utf8.ValidString(src) {
		return nil, &SyntaxError{What: "the batch is not valid UTF-8 text", Line: 1}
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		return nil, &SyntaxError{What: "the batch holds a NUL character", Line: 1 + strings.Count(src[:i], "\n")}
	}
	// Two passes: the first only counts the tokens, so that the second
	// allocates the slice once at its final size. Appending instead would
	// allocate several times the final size on the way (issue 23: a 10 MB
	// batch took 4.7 GB).
	counter := newLexer(src, true)
	if err := counter.run(); err != nil {
		return nil, err
	}
	l := newLexer(src, false)
	l.toks = make([]Token, 0, counter.count)
	if err := l.run(); err != nil {
		return nil, err
	}
	return l.toks, nil
}

// byteOrderMark is U+FEFF in UTF-8; SSMS and other editors start files
// with it.
const byteOrderMark = "\uFEFF"

func newLexer(src string, dry bool) *lexer {
	l := &lexer{src: src, line: 1, lineStart: true, lastCode: -1, dry: dry}
	if strings.HasPrefix(src, byteOrderMark) {
		l.i = len(byteOrderMark)
	}
	return l
}

func (l *lexer) run() error {
	for l.i < len(l.src) {
		if err := l.next(); err != nil {
			return err
		}
	}
	l.markLineEnd()
	return nil
}

func (l *lexer) emit(k TokenKind, start int, value string, line int, atStart bool) {
	if l.dry {
		l.count++
		return
	}
	t := Token{Kind: k, Text: l.src[start:l.i], Value: value, Line: line, Pos: start, LineStart: atStart}
	if k == TokWord {
		t.Upper = upperASCII(t.Text)
	}
	if k != TokComment {
		l.lastCode, l.lastEnd = len(l.toks), line+strings.Count(t.Text, "\n")
	}
	l.toks = append(l.toks, t)
}

func (l *lexer) fail(what string) error { return &SyntaxError{What: what, Line: l.line} }

// next reads one token (or whitespace) at l.i.
func (l *lexer) next() error {
	src := l.src
	c := src[l.i]
	switch c {
	case '\n':
		l.markLineEnd()
		l.line++
		l.lineStart = true
		l.i++
		return nil
	case ' ', '\t', '\r':
		l.i++
		return nil
	}
	start, line, atStart := l.i, l.line, l.lineStart
	l.lineStart = false
	switch {
	case c == '-' && l.peek(1) == '-':
		return l.lineComment(start, line, atStart)
	case c == '/' && l.peek(1) == '*':
		return l.blockComment(start, line, atStart)
	case c == '\'' || (c == 'N' || c == 'n') && l.peek(1) == '\'':
		q := l.i
		if c != '\'' {
			q++
		}
		return l.quoted(q, '\'', TokString, "string", start, line, atStart)
	case c == '[':
		return l.quoted(l.i, ']', TokQuotedName, "[bracketed] name", start, line, atStart)
	case c == '"':
		return l.quoted(l.i, '"', TokQuotedName, `"quoted" name`, start, line, atStart)
	case c == '@':
		l.i++
		l.identRest()
		l.emit(TokVariable, start, "", line, atStart)
	case c == '0' && (l.peek(1) == 'x' || l.peek(1) == 'X'):
		l.i += 2
		l.hexDigits()
		l.emit(TokNumber, start, "", line, atStart)
	case isDigit(c) || c == '.' && isDigit(l.peek(1)):
		if err := l.number(); err != nil {
			return err
		}
		if l.i < len(src) && src[l.i] == '.' {
			// "1.2.e5": one number or two? A decimal has one point, but
			// SQL Server's reading of a second one is not documented.
			return l.fail(fmt.Sprintf("%q: a number followed by another decimal point (SQL Server's reading is not documented; add a space)", src[start:l.i+1]))
		}
		l.emit(TokNumber, start, "", line, atStart)
	case c == '\\' && l.breakAfterBackslash(l.i):
		return l.fail("a backslash before a line break outside a string or binary constant; SQL Server documents it only as a continuation of those constants (remove it)")
	case c == '$' || c == '\\':
		// money: a currency symbol, then an optional number
		l.i++
		if l.i < len(src) && (isDigit(src[l.i]) || src[l.i] == '.' && isDigit(l.peek(1))) {
			if err := l.number(); err != nil {
				return err
			}
		}
		l.emit(TokNumber, start, "", line, atStart)
	case c == '%' && l.peek(1) == '%':
		end := strings.Index(src[l.i+2:], "%%")
		if end < 0 {
			return l.fail("%% without a closing %%")
		}
		l.i += 2 + end + 2
		if name := upperASCII(src[start:l.i]); !pseudoColumns[name] {
			return l.fail(fmt.Sprintf("unknown pseudo-column %s", src[start:l.i]))
		}
		l.emit(TokPseudoColumn, start, "", line, atStart)
	case c == '{' || c == '}':
		return l.fail(fmt.Sprintf("%q: ODBC escape sequences are not traced", c))
	case c < 0x20 || c == 0x7f:
		return l.fail(fmt.Sprintf("control character U+%04X outside a string or comment", c))
	case c < utf8.RuneSelf:
		if isIdentStart(rune(c)) {
			l.i++
			l.identRest()
			l.emit(TokWord, start, "", line, atStart)
			return nil
		}
		l.i++
		l.emit(TokSymbol, start, "", line, atStart)
	default:
		r, _ := utf8.DecodeRuneInString(src[l.i:])
		if !unicode.IsLetter(r) {
			return l.fail(fmt.Sprintf("character %q (U+%04X) outside a string, comment or quoted name; SQL Server's reading of it is not documented (replace it, or quote the name)", r, r))
		}
		l.identRest()
		l.emit(TokWord, start, "", line, atStart)
	}
	return nil
}

func (l *lexer) peek(k int) byte {
	if l.i+k < len(l.src) {
		return l.src[l.i+k]
	}
	return 0
}

// identRest consumes the rest of an identifier (or variable name) from l.i.
func (l *lexer) identRest() {
	for l.i < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.i:])
		if !isIdentPart(r) {
			return
		}
		l.i += n
	}
}

// number consumes digits[.digits][E[+|-]digits] or .digits[…] from l.i.
func (l *lexer) number() error {
	src := l.src
	for l.i < len(src) && isDigit(src[l.i]) {
		l.i++
	}
	if l.i < len(src) && src[l.i] == '.' {
		l.i++
		for l.i < len(src) && isDigit(src[l.i]) {
			l.i++
		}
	}
	if l.i < len(src) && (src[l.i] == 'e' || src[l.i] == 'E') {
		j := l.i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			l.i = j
			return nil
		}
		return l.fail(fmt.Sprintf("%q: a number followed by E without exponent digits (SQL Server's reading is not documented; add a space)", src[l.i-1:min(len(src), j+1)]))
	}
	return nil
}

// lineComment reads -- to the line feed. A carriage return, NEL or
// line/paragraph separator inside it is refused: whether SQL Server ends the
// comment there is not documented, and text after it would be code.
func (l *lexer) lineComment(start, line int, atStart bool) error {
	end := strings.IndexByte(l.src[l.i:], '\n')
	if end < 0 {
		end = len(l.src)
	} else {
		end += l.i
	}
	body := l.src[l.i:end]
	body = strings.TrimSuffix(body, "\r") // CR LF ends the line as LF does
	if strings.ContainsAny(body, "\r\u0085\u2028\u2029") {
		return l.fail("a -- comment holds a line break other than a line feed; the comment may end there (use line feeds, or /* */)")
	}
	l.i = end
	l.emit(TokComment, start, "", line, atStart)
	// A line comment does not end the "only whitespace" run for the token
	// before it: "GO -- done" is still a separator.
	if n := len(l.toks); n >= 2 {
		if !l.dry {
			l.toks[n-1].LineStart = atStart
		}
	}
	return nil
}

// blockComment reads a /* comment */, which nests as in T-SQL.
func (l *lexer) blockComment(start, line int, atStart bool) error {
	depth := 0
	j := l.i
	for j < len(l.src) {
		switch {
		case strings.HasPrefix(l.src[j:], "/*"):
			depth++
			j += 2
		case strings.HasPrefix(l.src[j:], "*/"):
			depth--
			j += 2
		default:
			j++
		}
		if depth == 0 {
			break
		}
	}
	if depth != 0 {
		return &SyntaxError{What: "/* comment", Line: line, Unterminated: true}
	}
	l.line += strings.Count(l.src[l.i:j], "\n")
	l.i = j
	l.emit(TokComment, start, "", line, atStart)
	return nil
}

// quoted reads a run opened at src[q] and closed by close, where a doubled
// close character escapes itself. In a character string a backslash
// before a line feed (or CR LF) is a line continuation: both are removed
// from the value.
func (l *lexer) quoted(q int, close byte, kind TokenKind, what string, start, line int, atStart bool) error {
	src := l.src
	plain := true // no escape or continuation: the value is a substring
	j := q + 1
	for j < len(src) {
		switch {
		case src[j] == close && j+1 < len(src) && src[j+1] == close:
			plain = false
			j += 2
			continue
		case src[j] == close:
			l.line += strings.Count(src[l.i:j], "\n")
			value := ""
			if !l.dry {
				value = src[q+1 : j]
				if !plain {
					value = unescape(value, close, kind == TokString)
				}
			}
			l.i = j + 1
			l.emit(kind, start, value, line, atStart)
			return nil
		case kind == TokString && continuationLen(src, j) > 0:
			plain = false
		}
		j++
	}
	return &SyntaxError{What: what, Line: line, Unterminated: true}
}

// unescape undoes doubled close characters and, in strings, removes line
// continuations.
func unescape(s string, close byte, continuations bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for j := 0; j < len(s); j++ {
		if s[j] == close && j+1 < len(s) && s[j+1] == close {
			j++
		} else if n := continuationLen(s, j); continuations && n > 0 {
			j += n - 1
			continue
		}
		b.WriteByte(s[j])
	}
	return b.String()
}

// continuationLen is the length of the line continuation (backslash, then
// LF or CR LF) at s[j], or 0.
func continuationLen(s string, j int) int {
	switch {
	case strings.HasPrefix(s[j:], "\\\n"):
		return 2
	case strings.HasPrefix(s[j:], "\\\r\n"):
		return 3
	}
	return 0
}

// hexDigits consumes the hex digits of a binary constant, across line
// continuations.
func (l *lexer) hexDigits() {
	for l.i < len(l.src) {
		if isHexDigit(l.src[l.i]) {
			l.i++
			continue
		}
		n := continuationLen(l.src, l.i)
		if n == 0 {
			return
		}
		l.i += n
		l.line++
	}
}

// breakAfterBackslash: the backslash at src[i] is followed by a line break
// (a line feed or a carriage return), with only spaces or tabs between.
func (l *lexer) breakAfterBackslash(i int) bool {
	for i++; i < len(l.src); i++ {
		switch l.src[i] {
		case ' ', '\t':
		case '\n', '\r':
			return true
		default:
			return false
		}
	}
	return false
}

// upperASCII folds a-z to A-Z and nothing else: SQL Server's keywords are
// ASCII, and a word with any other letter is a name, never a keyword.
func upperASCII(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'a' || s[i] > 'z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

// markLineEnd flags the last non-comment token of the current line as
// ending it.
func (l *lexer) markLineEnd() {
	if l.lastCode < 0 || l.dry {
		return
	}
	if l.lastEnd == l.line {
		l.toks[l.lastCode].LineEnd = true
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isIdentStart: the first character of a regular identifier (@ starts a
// variable and is handled apart).
func isIdentStart(r rune) bool {
	return r == '_' || r == '#' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= utf8.RuneSelf && unicode.IsLetter(r)
}

// isIdentPart: the characters that go on a regular identifier.
func isIdentPart(r rune) bool {
	return isIdentStart(r) || r >= '0' && r <= '9' || r == '@' || r == '$' || r >= utf8.RuneSelf && unicode.IsDigit(r)
}
