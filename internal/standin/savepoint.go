package standin

import "github.com/queryreplay/queryreplay/internal/standin/sqlfront"

// Savepoints: SAVE TRANSACTION and ROLLBACK TRANSACTION <savepoint>
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/save-transaction-transact-sql),
// from T-SQL and from TM requests (tedious' saveTransaction and its nested
// transaction() helper). Rolling back to a savepoint undoes the changes made
// after it, keeps the locks, the savepoint itself and @@TRANCOUNT, and
// forgets the savepoints taken after it.

type savepoint struct {
	name string
	mark int // len(transaction.undo) when it was taken
}

// saveTxn takes a savepoint in the open transaction.
func (x *execCtx) saveTxn(name string) *sqlfront.SQLError {
	c := x.conn
	if c.txn == nil {
		return sqlfront.NewError(628, 16, "Cannot issue SAVE TRANSACTION when there is no active transaction.")
	}
	if name == "" {
		return sqlfront.ErrSyntaxNear("SAVE")
	}
	if len(name) > 32 {
		return sqlfront.NewError(103, 15, "The identifier that starts with '%s' is too long. Maximum length is 32.", name[:32])
	}
	t := c.txn
	x.logRecord(t, "LOP_MARK_SAVEPOINT", "LCX_NULL", nil, 0, 0, nil, nil)
	t.savepoints = append(t.savepoints, savepoint{name: name, mark: len(t.undo)})
	x.emitTxnState("Savepoint")
	return nil
}

// rollbackToSavepoint undoes the work after the latest savepoint called
// name; Msg 6401 when there is none.
func (x *execCtx) rollbackToSavepoint(name string) *sqlfront.SQLError {
	t := x.conn.txn
	for i := len(t.savepoints) - 1; i >= 0; i-- {
		sp := t.savepoints[i]
		if sp.name != name {
			continue
		}
		x.undoSince(sp.mark)
		t.savepoints = t.savepoints[:i+1]
		return nil
	}
	return sqlfront.NewError(6401, 16, "Cannot roll back %s. No transaction or savepoint of that name was found.", name)
}
