package tsql

import "strings"

// QuoteName quotes an identifier as T-SQL's QUOTENAME does: [name], with
// every ] doubled.
func QuoteName(name string) string {
	return "[" + strings.ReplaceAll(name, "]", "]]") + "]"
}

// QuoteString quotes a Unicode string literal: N'text', with every '
// doubled (docs/design/tracing.md §17 item 4: the reference tool put the path into the
// DDL unescaped).
func QuoteString(s string) string {
	return "N'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// RefusedError is returned when a trace is refused before anything ran on the
// server: its Reason says why, in words a user can act on. For a refused
// statement it reads "line N (statement text, shortened): why".
type RefusedError struct {
	Reason string
	// Line and Statement locate a refused statement (0 and "" when the
	// refusal is not about one statement).
	Line      int
	Statement string
}

func (e *RefusedError) Error() string { return "trace refused: " + e.Reason }
