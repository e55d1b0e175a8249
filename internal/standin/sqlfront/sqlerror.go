package sqlfront

import "fmt"

// SQLError is an error exactly as SQL Server would report it: message number,
// severity (class), state and text. The TDS layer turns it into an ERROR token.
//
// Message texts are SQL Server's, taken from the "Database engine events and
// errors" pages on learn.microsoft.com, e.g.
// https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-0-to-999
// and https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-25000-to-25999
type SQLError struct {
	Number  int32
	Class   uint8
	State   uint8
	Message string
	Line    int32
}

func (e *SQLError) Error() string {
	return fmt.Sprintf("Msg %d, Level %d, State %d, Line %d: %s", e.Number, e.Class, e.State, e.Line, e.Message)
}

func NewError(number int32, class uint8, format string, args ...any) *SQLError {
	return &SQLError{Number: number, Class: class, State: 1, Message: fmt.Sprintf(format, args...), Line: 1}
}

// Syntax-level messages the front end raises.

func ErrSyntaxNear(tok string) *SQLError { // Msg 102, severity 15
	return NewError(102, 15, "Incorrect syntax near '%s'.", tok)
}
func errNestedTooDeeply() *SQLError { // Msg 191, severity 15; see maxNesting
	return NewError(191, 15, "Some part of your SQL statement is nested too deeply. Rewrite the query or break it up into smaller queries.")
}
func errSyntaxNearKeyword(kw string) *SQLError { // Msg 156
	return NewError(156, 15, "Incorrect syntax near the keyword '%s'.", kw)
}
func errUnclosedQuote(rest string) *SQLError { // Msg 105
	return NewError(105, 15, "Unclosed quotation mark after the character string '%s'.", rest)
}
func errMissingEndComment() *SQLError { // Msg 113
	return NewError(113, 15, "Missing end comment mark '*/'.")
}
func ErrUnsupported(what string) *SQLError {
	// Not a SQL Server message: the stand-in refuses a construct it does not
	// emulate with a syntax-class error naming it, so nothing is silently faked.
	return NewError(102, 15, "Incorrect syntax near '%s'.", what)
}

// Event-session DDL messages the parser raises.

func ErrXEObjectInvalid(kind, name string) *SQLError { // Msg 25623
	return NewError(25623, 16, "The %s name, \"%s\", is invalid, or the object could not be found", kind, name)
}
func ErrXEOptionInvalid(opt string) *SQLError { // Msg 25703
	return NewError(25703, 16, "The event session option, \"%s\", has an invalid value. Correct the value and re-issue the statement.", opt)
}
func errXEPredicateOperator() *SQLError { // Msg 25712
	return NewError(25712, 16, "An invalid comparison operator was specified for an event predicate.")
}
