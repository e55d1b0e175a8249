package engine

import (
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Host is what evaluating an expression asks of the server that runs the
// statement: the engine knows no session, catalog or persona, so variables,
// subqueries, the functions that read server state and the clock come
// through here (the server's request context implements it).
type Host interface {
	// Variable is @name's value in the current batch (Msg 137 when it is
	// not declared).
	Variable(name string) (any, *sqlfront.SQLError)
	// SubqueryRows runs sel for env's current row and returns at most
	// limit rows (0: all).
	SubqueryRows(sel *sqlfront.SelectStmt, env *EvalEnv, limit int) ([][]any, *sqlfront.SQLError)
	// ServerFunc evaluates the metadata and security functions, which read
	// the catalog, the session and the persona; ok is false for any other
	// name.
	ServerFunc(f FuncArgs) (v any, ok bool, err *sqlfront.SQLError)
	// Now is the server clock (GETDATE, SYSDATETIME).
	Now() time.Time
	// SQL2022Functions says whether the server's version has the functions
	// SQL Server 2022 added (DATETRUNC, GREATEST, LEAST).
	SQL2022Functions() bool
	// InSetCache is the request's cache of long constant IN lists, built
	// once per request; never nil.
	InSetCache() map[*sqlfront.InExpr]*InSet
}

// RowIndex is the base-table index a row was read from, as the
// %%lockres%% and %%physloc%% pseudo-columns see it.
type RowIndex interface {
	// LockRes is the row's key-lock hash, as %%lockres%% shows it.
	LockRes(row []any) string
	// PhysLoc is the row's page and slot, encoded as %%physloc%%.
	PhysLoc(row []any) []byte
}
