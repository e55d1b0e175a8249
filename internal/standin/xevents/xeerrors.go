package xevents

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

// Event-session messages raised while a session definition is validated
// (https://learn.microsoft.com/en-us/sql/relational-databases/errors-events/database-engine-events-and-errors-25000-to-25999).

func errXEAttrMissing(kind, name, attr string) *sqlfront.SQLError { // Msg 25629
	return sqlfront.NewError(25629, 16, "For %s, \"%s\", the customizable attribute, \"%s\", does not exist.", kind, name, attr)
}
func errXEBufferTooSmall() *sqlfront.SQLError { // Msg 25632
	return sqlfront.NewError(25632, 16, "The specified buffer size is less than the minimum size. The minimum allowed size is %d bytes.", 204800)
}
func errXEConfig(kind, name, detail string) *sqlfront.SQLError { // Msg 25602, severity 17
	return sqlfront.NewError(25602, 17, "The %s, \"%s\", encountered a configuration error during initialization. Object cannot be added to the event session. %s", kind, name, detail)
}
func errXEDuplicate(kind, name string) *sqlfront.SQLError { // Msg 25625
	return sqlfront.NewError(25625, 16, "The %s, \"%s\", already exists in the event session. Object cannot be added to the event session.", kind, name)
}
func errXELatencyTooSmall() *sqlfront.SQLError { // Msg 25634
	return sqlfront.NewError(25634, 16, "The dispatch latency specified is below the minimum size.")
}
func errXEMandatoryMissing(kind, name string) *sqlfront.SQLError { // Msg 25642
	return sqlfront.NewError(25642, 16, "Mandatory customizable attributes are missing for %s, \"%s\".", kind, name)
}
func errXEOptionTwice(opt string) *sqlfront.SQLError { // Msg 25702
	return sqlfront.NewError(25702, 16, "The event session option, \"%s\", is set more than once. Remove the duplicate session option and re-issue the statement.", opt)
}
func errXEOptionWhileRunning(opt string) *sqlfront.SQLError { // Msg 25707
	return sqlfront.NewError(25707, 16, "Event session option \"%s\" cannot be changed while the session is running. Stop the event session before changing this session option.", opt)
}

// ErrNumPredicateTooLong is the number the stand-in gives an event
// predicate over MaxPredicateChars. The limit is documented ("Predicates
// are limited to 3,000 characters",
// https://learn.microsoft.com/en-us/sql/t-sql/statements/create-event-session-transact-sql);
// the number SQL Server raises for it is not [unverified number: 25716 is
// the stand-in's choice, next to 25715, the other predicate refusal].
const ErrNumPredicateTooLong = 25716

// MaxPredicateChars is the documented predicate limit.
const MaxPredicateChars = 3000

func errXEPredicateTooLong(event string, n int) *sqlfront.SQLError {
	return sqlfront.NewError(ErrNumPredicateTooLong, 16, "The predicate on event \"%s\" is %d characters long; predicates are limited to %d characters.", event, n, MaxPredicateChars)
}

// Msg 25743 and 25744: a database-scoped session (Azure SQL Database) is
// refused whole when one of its events or actions is not available to
// database-scoped sessions. The texts are those public reports quote
// (microsoft/azuredatastudio issue 6353: "The event 'sqlserver.logout' is
// not available for Azure SQL Database."); which objects are unavailable:
// https://learn.microsoft.com/en-us/azure/azure-sql/database/xevent-db-diff-from-svr
func errXEEventUnavailable(name, product string) *sqlfront.SQLError {
	return sqlfront.NewError(25743, 16, "The event '%s' is not available for %s.", name, product)
}
func errXEActionUnavailable(name, product string) *sqlfront.SQLError {
	return sqlfront.NewError(25744, 16, "The action '%s' is not available for %s.", name, product)
}

// errXEEventSizeBelowMemory: the refusal is documented on the CREATE EVENT
// SESSION page (MAX_EVENT_SIZE below MAX_MEMORY "raises an error"); the
// number and wording are ours, not verified on a server.
func errXEEventSizeBelowMemory() *sqlfront.SQLError { // Msg 25641 (number unverified)
	return sqlfront.NewError(25641, 16, "For this event session, the value of MAX_EVENT_SIZE must be greater than or equal to MAX_MEMORY, or 0.")
}
