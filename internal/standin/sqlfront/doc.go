// Package sqlfront is the stand-in's T-SQL front end: the lexer, the
// recursive-descent parser and the statement and expression trees it
// builds (Stmt, Expr, TableRef and the event-session DDL model), plus the
// two vocabularies a parse result is written in — SQL Server's error
// message (SQLError) and data type (SQLType).
//
// It stands to internal/standin as a grammar stands to an engine, the way
// net/http's protocol half stands to a Handler: it says what a batch means,
// never what it does. It must not know the catalog (which tables, columns
// or functions exist), must not evaluate or plan anything, and must not
// emit or know about Extended Events; name resolution, typing of results,
// execution and every side effect belong to internal/standin. It imports
// the standard library only.
//
// Errors a parse returns are the ones SQL Server raises for the same text
// (Msg 102, 105, 113, 156, 191 and the event-session DDL messages), with
// the documentation URL next to each constructor.
package sqlfront
