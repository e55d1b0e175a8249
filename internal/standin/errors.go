package standin

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

func sqlErr(number int32, class uint8, format string, args ...any) *SQLError {
	return &SQLError{Number: number, Class: class, State: 1, Message: fmt.Sprintf(format, args...), Line: 1}
}

// Message constructors, one per SQL Server error the stand-in raises.

func errSyntaxNear(tok string) *SQLError { // Msg 102, severity 15
	return sqlErr(102, 15, "Incorrect syntax near '%s'.", tok)
}
func errNestedTooDeeply() *SQLError { // Msg 191, severity 15; see maxNesting
	return sqlErr(191, 15, "Some part of your SQL statement is nested too deeply. Rewrite the query or break it up into smaller queries.")
}
func errSyntaxNearKeyword(kw string) *SQLError { // Msg 156
	return sqlErr(156, 15, "Incorrect syntax near the keyword '%s'.", kw)
}
func errUnclosedQuote(rest string) *SQLError { // Msg 105
	return sqlErr(105, 15, "Unclosed quotation mark after the character string '%s'.", rest)
}
func errMissingEndComment() *SQLError { // Msg 113
	return sqlErr(113, 15, "Missing end comment mark '*/'.")
}
func errInvalidObject(name string) *SQLError { // Msg 208
	return sqlErr(208, 16, "Invalid object name '%s'.", name)
}
func errInvalidColumn(name string) *SQLError { // Msg 207
	return sqlErr(207, 16, "Invalid column name '%s'.", name)
}
func errAmbiguousColumn(name string) *SQLError { // Msg 209
	return sqlErr(209, 16, "Ambiguous column name '%s'.", name)
}
func errMustDeclare(name string) *SQLError { // Msg 137
	return sqlErr(137, 15, "Must declare the scalar variable \"%s\".", name)
}
func errNotBuiltin(name string) *SQLError { // Msg 195
	return sqlErr(195, 15, "'%s' is not a recognized built-in function name.", name)
}
func errConversion(from, value, to string) *SQLError { // Msg 245
	return sqlErr(245, 16, "Conversion failed when converting the %s value '%s' to data type %s.", from, value, to)
}
func errDivideByZero() *SQLError { // Msg 8134
	return sqlErr(8134, 16, "Divide by zero error encountered.")
}
func errProcNotFound(name string) *SQLError { // Msg 2812
	return sqlErr(2812, 16, "Could not find stored procedure '%s'.", name)
}
func errNoBeginForRollback() *SQLError { // Msg 3903
	return sqlErr(3903, 16, "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.")
}
func errNoBeginForCommit() *SQLError { // Msg 3902
	return sqlErr(3902, 16, "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.")
}
func errDuplicateKey(constraint, object, key string) *SQLError { // Msg 2627, severity 14
	return sqlErr(2627, 14, "Violation of PRIMARY KEY constraint '%s'. Cannot insert duplicate key in object '%s'. The duplicate key value is (%s).", constraint, object, key)
}
func errDatabaseMissing(name string) *SQLError { // Msg 911
	return sqlErr(911, 16, "Database '%s' does not exist. Make sure that the name is entered correctly.", name)
}
func errColumnCount() *SQLError { // Msg 110 / 109
	return sqlErr(110, 15, "There are fewer columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
}
func errNotNull(col, table string) *SQLError { // Msg 515
	return sqlErr(515, 16, "Cannot insert the value NULL into column '%s', table '%s'; column does not allow nulls. INSERT fails.", col, table)
}
func errUnsupported(what string) *SQLError {
	// Not a SQL Server message: the stand-in refuses a construct it does not
	// emulate with a syntax-class error naming it, so nothing is silently faked.
	return sqlErr(102, 15, "Incorrect syntax near '%s'.", what)
}
func errAggregateInWhere() *SQLError { // Msg 147
	return sqlErr(147, 15, "An aggregate may not appear in the WHERE clause unless it is in a subquery contained in a HAVING clause or a select list, and the column being aggregated is an outer reference.")
}
func errNotInGroupBy(col string) *SQLError { // Msg 8120
	return sqlErr(8120, 16, "Column '%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.", col)
}
func errSubqueryMultipleRows() *SQLError { // Msg 512
	return sqlErr(512, 16, "Subquery returned more than 1 value. This is not permitted when the subquery follows =, !=, <, <= , >, >= or when the subquery is used as an expression.")
}

// Extended Events DDL errors (learn.microsoft.com … errors 25000 to 25999).

func errXEObjectInvalid(kind, name string) *SQLError { // Msg 25623
	return sqlErr(25623, 16, "The %s name, \"%s\", is invalid, or the object could not be found", kind, name)
}
func errXEAttrMissing(kind, name, attr string) *SQLError { // Msg 25629
	return sqlErr(25629, 16, "For %s, \"%s\", the customizable attribute, \"%s\", does not exist.", kind, name, attr)
}
func errXESessionExists(name string) *SQLError { // Msg 25631
	return sqlErr(25631, 16, "The event session, \"%s\", already exists. Choose a unique name for the event session.", name)
}
func errXEDuplicate(kind, name string) *SQLError { // Msg 25625
	return sqlErr(25625, 16, "The %s, \"%s\", already exists in the event session. Object cannot be added to the event session.", kind, name)
}
func errXEMandatoryMissing(kind, name string) *SQLError { // Msg 25642
	return sqlErr(25642, 16, "Mandatory customizable attributes are missing for %s, \"%s\".", kind, name)
}
func errXEConfig(kind, name, detail string) *SQLError { // Msg 25602, severity 17
	return sqlErr(25602, 17, "The %s, \"%s\", encountered a configuration error during initialization. Object cannot be added to the event session. %s", kind, name, detail)
}
func errXEBufferTooSmall() *SQLError { // Msg 25632
	return sqlErr(25632, 16, "The specified buffer size is less than the minimum size. The minimum allowed size is %d bytes.", 204800)
}
func errXELatencyTooSmall() *SQLError { // Msg 25634
	return sqlErr(25634, 16, "The dispatch latency specified is below the minimum size.")
}
func errXEOptionTwice(opt string) *SQLError { // Msg 25702
	return sqlErr(25702, 16, "The event session option, \"%s\", is set more than once. Remove the duplicate session option and re-issue the statement.", opt)
}
func errXEOptionInvalid(opt string) *SQLError { // Msg 25703
	return sqlErr(25703, 16, "The event session option, \"%s\", has an invalid value. Correct the value and re-issue the statement.", opt)
}
func errXEAlreadyStopped() *SQLError { // Msg 25704
	return sqlErr(25704, 16, "The event session has already been stopped.")
}
func errXEAlreadyStarted() *SQLError { // Msg 25705
	return sqlErr(25705, 16, "The event session has already been started.")
}
func errXENotInSession(kind, name string) *SQLError { // Msg 25653
	return sqlErr(25653, 16, "The %s, \"%s\", does not exist in the event session. Object cannot be dropped from the event session.", kind, name)
}
func errXEOptionWhileRunning(opt string) *SQLError { // Msg 25707
	return sqlErr(25707, 16, "Event session option \"%s\" cannot be changed while the session is running. Stop the event session before changing this session option.", opt)
}
func errXESessionMissing(verb, name string) *SQLError { // Msg 15151
	e := sqlErr(15151, 16, "Cannot %s the event session '%s', because it does not exist or you do not have permission.", verb, name)
	e.State = 19
	return e
}
func errXEPredicateOperator() *SQLError { // Msg 25712
	return sqlErr(25712, 16, "An invalid comparison operator was specified for an event predicate.")
}
func errXEReadFileName(name string) *SQLError { // Msg 25718
	return sqlErr(25718, 16, "The log file name \"%s\" is invalid. Verify that the file exists and that the SQL Server service account has access to it.", name)
}
func errXEReadPair() *SQLError { // Msg 25719
	return sqlErr(25719, 16, "Initial file name and initial offset must be specified as a pair. Please correct the parameters and retry your query.")
}
func errXEReadOffset(offset int64, file string) *SQLError { // Msg 25722
	return sqlErr(25722, 16, "The offset %d is invalid for log file \"%s\". Specify an offset that exists in the log file and retry your query.", offset, file)
}

// errLoginFailed is Msg 18456, severity 14, the answer to a wrong password.
func errLoginFailed(user string) *SQLError {
	return sqlErr(18456, 14, "Login failed for user '%s'.", user)
}
