package tsql

import (
	"maps"
	"slices"
)

// T-SQL's reserved keywords
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/reserved-keywords-transact-sql).
// A reserved keyword is a keyword wherever it stands unquoted: SQL Server
// never reads it as a name. So every reserved keyword in a batch is looked
// up here, and one that no traceable statement needs refuses the batch —
// an allowlist over the whole language, with no position to get wrong.
//
//   - allowed: needed by the statements a trace may run (queries, DML, the
//     control-of-flow around them, variables, #temp tables) and harmless
//     wherever it appears.
//   - contextual: allowed in some shapes only, decided in classify.go
//     (BEGIN TRY but not BEGIN TRAN, CREATE TABLE #t but not CREATE TABLE t,
//     SET NOCOUNT but not SET NOEXEC ON, …).
//   - any other: refused with the reason given.
var reservedKeywords = map[string]keywordRule{}

type keywordRule struct {
	allowed    bool
	contextual bool
	why        string // the refusal, for neither
}

const (
	whyDDL      = "DDL is refused (only #temp tables may be created and dropped): some DDL cannot be rolled back (CREATE/ALTER DATABASE, full-text, endpoints, event sessions), and it is not what a trace is for"
	whySecurity = "security statements (GRANT, DENY, REVOKE, SETUSER, EXECUTE AS/REVERT, AUTHORIZATION) are refused"
	whyRemote   = "OPENQUERY, OPENROWSET and OPENDATASOURCE reach other servers or files, whose changes QueryReplay's rollback does not cover"
	whyBackup   = "backup, restore and file statements act outside any transaction"
	whyCursor   = "cursors (DECLARE CURSOR, OPEN, CLOSE, DEALLOCATE) and OPEN/CLOSE of keys are refused"
	whyText     = "text-pointer statements (READTEXT, WRITETEXT, UPDATETEXT) are refused"
	whyGoto     = "GOTO and the old DB-Library keywords (EXIT, ERRLVL, LINENO) are refused"
	whyExec     = "EXEC runs a procedure or dynamic SQL whose statements QueryReplay cannot inspect; only the read-only catalog procedures listed in docs/security.md may be called"
	whyBroker   = "Service Broker statements (RECEIVE, SEND, BEGIN DIALOG, END/MOVE/GET CONVERSATION) change queues and conversations; a rollback does not undo what was delivered. If this is a name, quote it ([Send])"
)

func init() {
	allow := func(words ...string) {
		for _, w := range words {
			reservedKeywords[w] = keywordRule{allowed: true}
		}
	}
	contextual := func(words ...string) {
		for _, w := range words {
			reservedKeywords[w] = keywordRule{contextual: true}
		}
	}
	refuse := func(why string, words ...string) {
		for _, w := range words {
			reservedKeywords[w] = keywordRule{why: why}
		}
	}
	allow("ALL", "AND", "ANY", "AS", "ASC", "BETWEEN", "BREAK", "BROWSE", "BY", "CASCADE", "CASE", "CHECK",
		"CLUSTERED", "COALESCE", "COLLATE", "COLUMN", "COMPUTE", "CONSTRAINT", "CONTAINS", "CONTAINSTABLE", "CONTINUE",
		"CONVERT", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER", "DECLARE",
		"DEFAULT", "DELETE", "DESC", "DISTINCT", "DOUBLE", "ELSE", "ESCAPE", "EXCEPT", "EXISTS", "FETCH", "FILLFACTOR",
		"FOR", "FOREIGN", "FREETEXT", "FREETEXTTABLE", "FROM", "FULL", "GROUP", "HAVING", "HOLDLOCK", "IDENTITY",
		"IDENTITY_INSERT", "IDENTITYCOL", "IF", "IN", "INDEX", "INNER", "INSERT", "INTERSECT", "INTO", "IS", "JOIN",
		"KEY", "LEFT", "LIKE", "MERGE", "NATIONAL", "NONCLUSTERED", "NOT", "NULL", "NULLIF", "OF", "OFF", "ON",
		"OPENXML", "OPTION", "OR", "ORDER", "OUTER", "OVER", "PERCENT", "PIVOT", "PLAN", "PRECISION", "PRIMARY",
		"PRINT", "RAISERROR", "READ", "REFERENCES", "REPLICATION", "RESTRICT", "RETURN", "RIGHT", "ROWCOUNT",
		"ROWGUIDCOL", "SELECT", "SEMANTICKEYPHRASETABLE", "SEMANTICSIMILARITYDETAILSTABLE", "SEMANTICSIMILARITYTABLE",
		"SESSION_USER", "SOME", "SYSTEM_USER", "TABLE", "TABLESAMPLE", "TEXTSIZE", "THEN", "TO", "TOP", "TRY_CONVERT",
		"TSEQUAL", "UNION", "UNIQUE", "UNPIVOT", "USER", "VALUES", "VARYING", "WHEN", "WHERE", "WHILE", "WITH", "WITHIN")
	contextual("BEGIN", "END", "CREATE", "DROP", "EXEC", "EXECUTE", "SET", "TRAN", "TRANSACTION", "STATISTICS",
		"USE", "WAITFOR", "UPDATE", "TRUNCATE")
	refuse("COMMIT would end QueryReplay's transaction and make the batch's changes permanent", "COMMIT")
	refuse("ROLLBACK would end QueryReplay's transaction early; what the batch did after it would not be rolled back", "ROLLBACK")
	refuse("SAVE TRANSACTION manipulates QueryReplay's transaction", "SAVE")
	refuse("distributed transactions reach other servers", "DISTRIBUTED")
	refuse(whyDDL, "ALTER", "ADD", "DATABASE", "EXTERNAL", "FUNCTION", "NOCHECK", "PROC", "PROCEDURE", "RULE",
		"SCHEMA", "TRIGGER", "VIEW")
	refuse("DBCC commands are refused: several act outside any transaction", "DBCC")
	refuse(whyBackup, "BACKUP", "RESTORE", "DUMP", "LOAD", "DISK", "FILE")
	refuse("KILL ends other sessions", "KILL")
	refuse("SHUTDOWN stops the server", "SHUTDOWN")
	refuse("RECONFIGURE changes the server's configuration outside any transaction", "RECONFIGURE")
	refuse("CHECKPOINT is run by QueryReplay itself when it clears the buffer pool, never inside the traced batch", "CHECKPOINT")
	refuse(whySecurity, "GRANT", "REVOKE", "DENY", "SETUSER", "REVERT", "AUTHORIZATION", "PUBLIC", "SECURITYAUDIT")
	refuse("BULK INSERT reads files on the server", "BULK")
	refuse(whyText, "READTEXT", "WRITETEXT", "UPDATETEXT")
	refuse(whyRemote, "OPENQUERY", "OPENROWSET", "OPENDATASOURCE")
	refuse(whyCursor, "CURSOR", "OPEN", "CLOSE", "DEALLOCATE")
	refuse(whyGoto, "GOTO", "EXIT", "ERRLVL", "LINENO")
	refuse("SET OFFSETS is refused", "OFFSETS")
}

// batchStarters are the words a batch may begin with. Any other name at the
// start of a batch is a procedure call: SQL Server runs a batch's first
// statement as EXEC when it is a bare procedure name
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/execute-transact-sql).
var batchStarters = map[string]bool{
	"SELECT": true, "WITH": true, "INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "DECLARE": true,
	"SET": true, "IF": true, "WHILE": true, "BEGIN": true, "PRINT": true, "RAISERROR": true, "THROW": true,
	"RETURN": true, "WAITFOR": true, "CREATE": true, "DROP": true, "TRUNCATE": true, "EXEC": true, "EXECUTE": true,
}

// readOnlyProcedures may be called (with EXEC, or bare as a batch's first
// statement), unqualified or in schema sys, with constant or variable
// arguments. Each only reads catalog views or session state:
//
//	sp_help, sp_helpindex, sp_helptext, sp_helpconstraint: https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-help-transact-sql (and siblings)
//	sp_columns, sp_tables, sp_pkeys, sp_fkeys: catalog procedures, https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/catalog-stored-procedures-transact-sql
//	sp_who: https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-who-transact-sql
var readOnlyProcedures = map[string]bool{
	"SP_HELP": true, "SP_HELPINDEX": true, "SP_HELPTEXT": true, "SP_HELPCONSTRAINT": true, "SP_COLUMNS": true,
	"SP_TABLES": true, "SP_PKEYS": true, "SP_FKEYS": true, "SP_WHO": true,
}

// ReadOnlyProcedures lists the procedures a traced batch may call, for
// documentation and user interfaces.
func ReadOnlyProcedures() []string {
	return slices.Sorted(maps.Keys(readOnlyProcedures))
}

// setOption describes one SET option a traced batch may use.
type setOption struct {
	// refuseOn, when set, refuses the option turned ON (OFF is harmless).
	refuseOn string
}

// harmlessSetOptions are the SET options a traced batch may change
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-statements-transact-sql).
// They change how the batch's own statements run, never data; the traced
// connection is discarded afterwards, and QueryReplay's statements that
// follow on it reset what could affect them (NOEXEC, PARSEONLY, FMTONLY,
// ROWCOUNT). The options that would stop the batch from running at all, or
// let it end QueryReplay's transaction, are refused turned ON.
var harmlessSetOptions = map[string]setOption{
	"NOCOUNT": {}, "ANSI_NULLS": {}, "ANSI_PADDING": {}, "ANSI_WARNINGS": {}, "ANSI_NULL_DFLT_ON": {},
	"ANSI_NULL_DFLT_OFF": {}, "ARITHABORT": {}, "ARITHIGNORE": {}, "CONCAT_NULL_YIELDS_NULL": {},
	"NUMERIC_ROUNDABORT": {}, "QUOTED_IDENTIFIER": {}, "CURSOR_CLOSE_ON_COMMIT": {}, "DATEFIRST": {},
	"DATEFORMAT": {}, "LANGUAGE": {}, "LOCK_TIMEOUT": {}, "DEADLOCK_PRIORITY": {}, "QUERY_GOVERNOR_COST_LIMIT": {},
	"FORCEPLAN": {}, "ROWCOUNT": {}, "TEXTSIZE": {}, "CONTEXT_INFO": {}, "IDENTITY_INSERT": {}, "NO_BROWSETABLE": {},
	// SET TRANSACTION ISOLATION LEVEL and SET STATISTICS IO|TIME|XML|PROFILE
	// are handled with their second word.
	"TRANSACTION": {}, "STATISTICS": {},
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-noexec-transact-sql and its siblings:
	// with these ON nothing of the batch would run (nothing to trace), and
	// QueryReplay's own statements after it would compile without running.
	"NOEXEC":        {refuseOn: "SET NOEXEC ON compiles the batch without running it: there would be nothing to trace, and QueryReplay's own statements after it would not run"},
	"PARSEONLY":     {refuseOn: "SET PARSEONLY ON only parses the batch: there would be nothing to trace, and QueryReplay's own statements after it would not run"},
	"FMTONLY":       {refuseOn: "SET FMTONLY ON returns only metadata without running the batch: there would be nothing to trace, and QueryReplay's own statements after it would not run"},
	"SHOWPLAN_XML":  {refuseOn: "SET SHOWPLAN_XML ON returns estimated plans without running the batch: there would be nothing to trace (QueryReplay captures the actual plan itself)"},
	"SHOWPLAN_ALL":  {refuseOn: "SET SHOWPLAN_ALL ON returns estimated plans without running the batch: there would be nothing to trace"},
	"SHOWPLAN_TEXT": {refuseOn: "SET SHOWPLAN_TEXT ON returns estimated plans without running the batch: there would be nothing to trace"},
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-xact-abort-transact-sql
	"XACT_ABORT": {refuseOn: "SET XACT_ABORT ON lets an error end QueryReplay's transaction, after which the trace could no longer tell whether anything was committed"},
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-implicit-transactions-transact-sql
	"IMPLICIT_TRANSACTIONS": {refuseOn: "SET IMPLICIT_TRANSACTIONS ON changes how transactions start and end under QueryReplay"},
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-ansi-defaults-transact-sql (includes IMPLICIT_TRANSACTIONS)
	"ANSI_DEFAULTS": {refuseOn: "SET ANSI_DEFAULTS ON turns IMPLICIT_TRANSACTIONS on, which changes how transactions start and end under QueryReplay"},
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-fips-flagger-transact-sql:
	// OFF is the default and harmless; a level adds warnings to every later
	// statement, QueryReplay's own included.
	"FIPS_FLAGGER": {refuseOn: "SET FIPS_FLAGGER with a level adds compliance warnings to every later statement, QueryReplay's own included; only SET FIPS_FLAGGER OFF may be traced"},
	// https://learn.microsoft.com/en-us/sql/t-sql/statements/set-remote-proc-transactions-transact-sql
	"REMOTE_PROC_TRANSACTIONS": {refuseOn: "SET REMOTE_PROC_TRANSACTIONS ON reaches other servers"},
}
