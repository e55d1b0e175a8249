package engine

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

// Message constructors, one per SQL Server error the stand-in raises.

func ErrInvalidObject(name string) *sqlfront.SQLError { // Msg 208
	return sqlfront.NewError(208, 16, "Invalid object name '%s'.", name)
}
func ErrInvalidColumn(name string) *sqlfront.SQLError { // Msg 207
	return sqlfront.NewError(207, 16, "Invalid column name '%s'.", name)
}
func ErrAmbiguousColumn(name string) *sqlfront.SQLError { // Msg 209
	return sqlfront.NewError(209, 16, "Ambiguous column name '%s'.", name)
}
func ErrMustDeclare(name string) *sqlfront.SQLError { // Msg 137
	return sqlfront.NewError(137, 15, "Must declare the scalar variable \"%s\".", name)
}
func ErrNotBuiltin(name string) *sqlfront.SQLError { // Msg 195
	return sqlfront.NewError(195, 15, "'%s' is not a recognized built-in function name.", name)
}
func ErrConversion(from, value, to string) *sqlfront.SQLError { // Msg 245
	return sqlfront.NewError(245, 16, "Conversion failed when converting the %s value '%s' to data type %s.", from, value, to)
}
func ErrDivideByZero() *sqlfront.SQLError { // Msg 8134
	return sqlfront.NewError(8134, 16, "Divide by zero error encountered.")
}
func ErrProcNotFound(name string) *sqlfront.SQLError { // Msg 2812
	return sqlfront.NewError(2812, 16, "Could not find stored procedure '%s'.", name)
}
func ErrNoBeginForRollback() *sqlfront.SQLError { // Msg 3903
	return sqlfront.NewError(3903, 16, "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.")
}
func ErrNoBeginForCommit() *sqlfront.SQLError { // Msg 3902
	return sqlfront.NewError(3902, 16, "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.")
}
func ErrDuplicateKey(constraint, object, key string) *sqlfront.SQLError { // Msg 2627, severity 14
	return sqlfront.NewError(2627, 14, "Violation of PRIMARY KEY constraint '%s'. Cannot insert duplicate key in object '%s'. The duplicate key value is (%s).", constraint, object, key)
}
func ErrDatabaseMissing(name string) *sqlfront.SQLError { // Msg 911
	return sqlfront.NewError(911, 16, "Database '%s' does not exist. Make sure that the name is entered correctly.", name)
}
func ErrColumnCount() *sqlfront.SQLError { // Msg 110 / 109
	return sqlfront.NewError(110, 15, "There are fewer columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
}
func ErrNotNull(col, table string) *sqlfront.SQLError { // Msg 515
	return sqlfront.NewError(515, 16, "Cannot insert the value NULL into column '%s', table '%s'; column does not allow nulls. INSERT fails.", col, table)
}
func ErrAggregateInWhere() *sqlfront.SQLError { // Msg 147
	return sqlfront.NewError(147, 15, "An aggregate may not appear in the WHERE clause unless it is in a subquery contained in a HAVING clause or a select list, and the column being aggregated is an outer reference.")
}
func ErrNotInGroupBy(col string) *sqlfront.SQLError { // Msg 8120
	return sqlfront.NewError(8120, 16, "Column '%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.", col)
}
func ErrSubqueryMultipleRows() *sqlfront.SQLError { // Msg 512
	return sqlfront.NewError(512, 16, "Subquery returned more than 1 value. This is not permitted when the subquery follows =, !=, <, <= , >, >= or when the subquery is used as an expression.")
}
