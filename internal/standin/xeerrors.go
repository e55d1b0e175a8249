package standin

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

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
