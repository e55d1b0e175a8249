package standin

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

// Message constructors, one per SQL Server error the stand-in raises.

func errInvalidObject(name string) *sqlfront.SQLError { // Msg 208
	return sqlfront.NewError(208, 16, "Invalid object name '%s'.", name)
}
func errInvalidColumn(name string) *sqlfront.SQLError { // Msg 207
	return sqlfront.NewError(207, 16, "Invalid column name '%s'.", name)
}
func errAmbiguousColumn(name string) *sqlfront.SQLError { // Msg 209
	return sqlfront.NewError(209, 16, "Ambiguous column name '%s'.", name)
}
func errMustDeclare(name string) *sqlfront.SQLError { // Msg 137
	return sqlfront.NewError(137, 15, "Must declare the scalar variable \"%s\".", name)
}
func errNotBuiltin(name string) *sqlfront.SQLError { // Msg 195
	return sqlfront.NewError(195, 15, "'%s' is not a recognized built-in function name.", name)
}
func errConversion(from, value, to string) *sqlfront.SQLError { // Msg 245
	return sqlfront.NewError(245, 16, "Conversion failed when converting the %s value '%s' to data type %s.", from, value, to)
}
func errDivideByZero() *sqlfront.SQLError { // Msg 8134
	return sqlfront.NewError(8134, 16, "Divide by zero error encountered.")
}
func errProcNotFound(name string) *sqlfront.SQLError { // Msg 2812
	return sqlfront.NewError(2812, 16, "Could not find stored procedure '%s'.", name)
}
func errNoBeginForRollback() *sqlfront.SQLError { // Msg 3903
	return sqlfront.NewError(3903, 16, "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.")
}
func errNoBeginForCommit() *sqlfront.SQLError { // Msg 3902
	return sqlfront.NewError(3902, 16, "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.")
}
func errDuplicateKey(constraint, object, key string) *sqlfront.SQLError { // Msg 2627, severity 14
	return sqlfront.NewError(2627, 14, "Violation of PRIMARY KEY constraint '%s'. Cannot insert duplicate key in object '%s'. The duplicate key value is (%s).", constraint, object, key)
}
func errDatabaseMissing(name string) *sqlfront.SQLError { // Msg 911
	return sqlfront.NewError(911, 16, "Database '%s' does not exist. Make sure that the name is entered correctly.", name)
}
func errColumnCount() *sqlfront.SQLError { // Msg 110 / 109
	return sqlfront.NewError(110, 15, "There are fewer columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
}
func errNotNull(col, table string) *sqlfront.SQLError { // Msg 515
	return sqlfront.NewError(515, 16, "Cannot insert the value NULL into column '%s', table '%s'; column does not allow nulls. INSERT fails.", col, table)
}
func errAggregateInWhere() *sqlfront.SQLError { // Msg 147
	return sqlfront.NewError(147, 15, "An aggregate may not appear in the WHERE clause unless it is in a subquery contained in a HAVING clause or a select list, and the column being aggregated is an outer reference.")
}
func errNotInGroupBy(col string) *sqlfront.SQLError { // Msg 8120
	return sqlfront.NewError(8120, 16, "Column '%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.", col)
}
func errSubqueryMultipleRows() *sqlfront.SQLError { // Msg 512
	return sqlfront.NewError(512, 16, "Subquery returned more than 1 value. This is not permitted when the subquery follows =, !=, <, <= , >, >= or when the subquery is used as an expression.")
}

// Extended Events DDL errors (learn.microsoft.com … errors 25000 to 25999).

func errXESessionExists(name string) *sqlfront.SQLError { // Msg 25631
	return sqlfront.NewError(25631, 16, "The event session, \"%s\", already exists. Choose a unique name for the event session.", name)
}
func errXEAlreadyStopped() *sqlfront.SQLError { // Msg 25704
	return sqlfront.NewError(25704, 16, "The event session has already been stopped.")
}
func errXEAlreadyStarted() *sqlfront.SQLError { // Msg 25705
	return sqlfront.NewError(25705, 16, "The event session has already been started.")
}
func errXENotInSession(kind, name string) *sqlfront.SQLError { // Msg 25653
	return sqlfront.NewError(25653, 16, "The %s, \"%s\", does not exist in the event session. Object cannot be dropped from the event session.", kind, name)
}
func errXESessionMissing(verb, name string) *sqlfront.SQLError { // Msg 15151
	e := sqlfront.NewError(15151, 16, "Cannot %s the event session '%s', because it does not exist or you do not have permission.", verb, name)
	e.State = 19
	return e
}
func errXEReadFileName(name string) *sqlfront.SQLError { // Msg 25718
	return sqlfront.NewError(25718, 16, "The log file name \"%s\" is invalid. Verify that the file exists and that the SQL Server service account has access to it.", name)
}
func errXEReadPair() *sqlfront.SQLError { // Msg 25719
	return sqlfront.NewError(25719, 16, "Initial file name and initial offset must be specified as a pair. Please correct the parameters and retry your query.")
}
func errXEReadOffset(offset int64, file string) *sqlfront.SQLError { // Msg 25722
	return sqlfront.NewError(25722, 16, "The offset %d is invalid for log file \"%s\". Specify an offset that exists in the log file and retry your query.", offset, file)
}
