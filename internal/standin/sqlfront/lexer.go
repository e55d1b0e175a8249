package sqlfront

import (
	"strings"
	"unicode"
)

// tokKind classifies a T-SQL token.
type tokKind int

const (
	tokEOF      tokKind = iota
	tokIdent            // plain identifier or keyword (keywords are recognised by the parser)
	tokQuoted           // [bracketed] or "double-quoted" identifier: never a keyword
	tokString           // '…' or N'…' literal, '' already unescaped
	tokNumber           // 12, 1.5, 1e3
	tokHex              // 0x… binary literal
	tokVariable         // @name or @@name
	tokPseudo           // %%lockres%%, %%physloc%%
	tokOp               // punctuation and operators
)

// token is one lexeme with its position (1-based line) for error messages.
type token struct {
	kind    tokKind
	text    string // identifier/string value (unquoted), or the operator text
	raw     string // source text as written
	unicode bool   // N'…' literal
	line    int
	pos     int // byte offset in the batch
}

// is matches a keyword. Keywords are ASCII and matched with ordinal,
// ASCII-only case folding: an identifier with any other letter ("ſelect",
// "commıt", a Kelvin sign for K) is a name, never a keyword.
func (t token) is(kw string) bool {
	return t.kind == tokIdent && asciiEqualFold(t.text, kw)
}

// kw is the token's text with a-z folded to A-Z and nothing else, for
// comparing with keywords.
func (t token) kw() string { return asciiUpper(t.text) }

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'a' && x <= 'z' {
			x -= 'a' - 'A'
		}
		if y >= 'a' && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func (t token) isOp(op string) bool { return t.kind == tokOp && t.text == op }

// display is how SQL Server quotes the token in "Incorrect syntax near '…'".
func (t token) display() string {
	if t.kind == tokEOF {
		return ""
	}
	if t.kind == tokString {
		return t.text
	}
	return t.raw
}

// lex splits a batch into tokens. Comments ("--" to end of line and nested
// "/* */") are dropped. It fails with SQL Server's own messages for an
// unclosed string (Msg 105) or comment (Msg 113). A byte-order mark
// (U+FEFF) opening the batch is skipped. A backslash followed by a line
// feed (or CR LF) inside a character or binary constant continues it on
// the next line and is removed
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/sql-server-utilities-statements-backslash).
func lex(src string) ([]token, *SQLError) {
	var out []token
	line := 1
	i := 0
	n := len(src)
	if strings.HasPrefix(src, "\uFEFF") {
		i = len("\uFEFF")
	}
	for i < n {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && src[i+1] == '-':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			depth := 0
			for {
				if i >= n {
					return nil, errMissingEndComment()
				}
				if src[i] == '/' && i+1 < n && src[i+1] == '*' {
					depth++
					i += 2
					continue
				}
				if src[i] == '*' && i+1 < n && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				if src[i] == '\n' {
					line++
				}
				i++
			}
		case c == '\'' || ((c == 'N' || c == 'n') && i+1 < n && src[i+1] == '\''):
			start := i
			uni := c != '\''
			if uni {
				i++
			}
			text, end, newlines, closed := scanDelimited(src, i+1, '\'')
			line += newlines
			if !closed {
				return nil, errUnclosedQuote(text)
			}
			text = removeContinuations(text)
			i = end
			out = append(out, token{kind: tokString, text: text, raw: src[start:i], unicode: uni, line: line, pos: start})
		case c == '[':
			start := i
			text, end, _, closed := scanDelimited(src, i+1, ']')
			if !closed {
				return nil, errUnclosedQuote(text)
			}
			i = end
			out = append(out, token{kind: tokQuoted, text: text, raw: src[start:i], line: line, pos: start})
		case c == '"':
			start := i
			text, end, _, closed := scanDelimited(src, i+1, '"')
			if !closed {
				return nil, errUnclosedQuote(text)
			}
			i = end
			out = append(out, token{kind: tokQuoted, text: text, raw: src[start:i], line: line, pos: start})
		case c == '0' && i+1 < n && (src[i+1] == 'x' || src[i+1] == 'X'):
			start := i
			var digits strings.Builder
			for i += 2; i < n; {
				if isHexDigit(src[i]) {
					digits.WriteByte(src[i])
					i++
				} else if k := lineContinuation(src, i); k > 0 {
					i += k
					line++
				} else {
					break
				}
			}
			out = append(out, token{kind: tokHex, text: digits.String(), raw: src[start:i], line: line, pos: start})
		case c >= '0' && c <= '9' || (c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9'):
			start := i
			for i < n && (src[i] >= '0' && src[i] <= '9' || src[i] == '.') {
				i++
			}
			if i < n && (src[i] == 'e' || src[i] == 'E') {
				j := i + 1
				if j < n && (src[j] == '+' || src[j] == '-') {
					j++
				}
				if j < n && src[j] >= '0' && src[j] <= '9' {
					i = j
					for i < n && src[i] >= '0' && src[i] <= '9' {
						i++
					}
				}
			}
			out = append(out, token{kind: tokNumber, text: src[start:i], raw: src[start:i], line: line, pos: start})
		case c == '@':
			start := i
			i++
			if i < n && src[i] == '@' {
				i++
			}
			for i < n && (isIdentChar(rune(src[i])) || src[i] >= 0x80) { // UTF-8 bytes of a name, as for identifiers
				i++
			}
			out = append(out, token{kind: tokVariable, text: src[start:i], raw: src[start:i], line: line, pos: start})
		case c == '%' && i+1 < n && src[i+1] == '%':
			start := i
			end := strings.Index(src[i+2:], "%%")
			if end < 0 {
				return nil, ErrSyntaxNear("%")
			}
			i += 2 + end + 2
			out = append(out, token{kind: tokPseudo, text: strings.ToLower(src[start:i]), raw: src[start:i], line: line, pos: start})
		case isIdentStart(c):
			start := i
			for i < n && (isIdentChar(rune(src[i])) || src[i] >= 0x80) {
				i++
			}
			out = append(out, token{kind: tokIdent, text: src[start:i], raw: src[start:i], line: line, pos: start})
		default:
			start := i
			op := string(c)
			if i+1 < n {
				two := src[i : i+2]
				switch two {
				case "<>", "!=", "<=", ">=", "!<", "!>", "::", "+=", "-=", "*=", "/=":
					op = two
				}
			}
			if !strings.ContainsAny(op[:1], "=<>!+-*/%(),.;:&|^~") {
				return nil, ErrSyntaxNear(op)
			}
			i += len(op)
			out = append(out, token{kind: tokOp, text: op, raw: op, line: line, pos: start})
		}
	}
	out = append(out, token{kind: tokEOF, line: line, pos: n})
	return out, nil
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '#' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(r rune) bool {
	return r == '_' || r == '#' || r == '$' || r == '@' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// NormalizeSQL reduces a statement to its token sequence with keywords and
// identifiers folded to upper case, so that scenario texts match however the
// client spaces, comments or cases them. Literals keep their exact value.
func NormalizeSQL(src string) string {
	toks, err := lex(src)
	if err != nil {
		return ""
	}
	var parts []string
	for _, t := range toks {
		switch t.kind {
		case tokEOF:
		case tokIdent, tokQuoted:
			parts = append(parts, "["+strings.ToUpper(t.text)+"]")
		case tokString:
			parts = append(parts, "'"+strings.ReplaceAll(t.text, "'", "''")+"'")
		case tokOp:
			if t.text == ";" {
				continue
			}
			parts = append(parts, t.text)
		default:
			parts = append(parts, strings.ToUpper(t.raw))
		}
	}
	return strings.Join(parts, " ")
}

// scanDelimited reads from src[i] up to the closing delimiter, where a
// doubled delimiter stands for one ('it”s', [a]]b], "a""b"). It returns the
// unescaped text, the index just past the closing delimiter, the newlines
// inside, and whether the delimiter was found.
func scanDelimited(src string, i int, delim byte) (text string, end, newlines int, closed bool) {
	var b strings.Builder
	n := len(src)
	for i < n {
		if src[i] == delim {
			if i+1 < n && src[i+1] == delim {
				b.WriteByte(delim)
				i += 2
				continue
			}
			return b.String(), i + 1, newlines, true
		}
		if src[i] == '\n' {
			newlines++
		}
		b.WriteByte(src[i])
		i++
	}
	return b.String(), i, newlines, false
}

// lineContinuation is the length of a backslash followed by LF or CR LF at
// src[i], or 0.
func lineContinuation(src string, i int) int {
	if i < len(src) && src[i] == '\\' {
		if strings.HasPrefix(src[i+1:], "\n") {
			return 2
		}
		if strings.HasPrefix(src[i+1:], "\r\n") {
			return 3
		}
	}
	return 0
}

// removeContinuations drops every line continuation from a string
// constant's value.
func removeContinuations(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if k := lineContinuation(s, i); k > 0 {
			i += k
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
