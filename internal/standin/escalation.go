package standin

import (
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// Lock escalation, as far as the trace sees it. SQL Server tries to
// escalate when one Transact-SQL statement has acquired at least 5,000
// locks on a single nonpartitioned table or index, and, when another
// session's lock on the table makes the attempt fail, tries again every
// 1,250 further locks
// (https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-transaction-locking-and-row-versioning-guide#lock-escalation-thresholds).
// The stand-in emits lock_escalation where that rule says an attempt
// succeeds; it keeps its row and page locks rather than trading them for
// the table lock (doc.go).
const (
	escalationThreshold = 5000
	escalationRetry     = 1250
)

// stmtLockCount counts one statement's row and page locks per HoBT and
// the count at which it next tries to escalate.
type stmtLockCount struct {
	n, next   int
	escalated bool
}

// noteLock counts a row or page lock the statement acquired and emits
// lock_escalation when the count reaches the threshold and no other
// session holds a lock on the table that the escalated lock would wait
// for.
func (x *execCtx) noteLock(l heldLock, txnID int64) {
	if l.hobt == 0 || (l.resType != "KEY" && l.resType != "PAGE" && l.resType != "RID") {
		return
	}
	if x.stmtLocks == nil {
		x.stmtLocks = map[int64]*stmtLockCount{}
	}
	c := x.stmtLocks[l.hobt]
	if c == nil {
		c = &stmtLockCount{next: escalationThreshold}
		x.stmtLocks[l.hobt] = c
	}
	c.n++
	if c.escalated || c.n < c.next {
		return
	}
	tbl := x.tableOfHoBT(l.hobt)
	if tbl == nil {
		return
	}
	mode := "S"
	if l.mode != "S" && l.mode != "IS" {
		mode = "X"
	}
	if x.lockBlocker(objectLock(tbl, mode)) != nil {
		c.next += escalationRetry
		return
	}
	c.escalated = true
	x.escalationEvent(tbl, l.hobt, mode, c.n, txnID)
}

func (x *execCtx) tableOfHoBT(hobt int64) *engine.Table {
	for _, t := range x.conn.db.Tables {
		for _, ix := range t.Indexes {
			if ix.PartitionID == hobt {
				return t
			}
		}
	}
	return nil
}

// escalationEvent emits lock_escalation with the fields the event
// catalog lists (xevents "lock_escalation").
func (x *execCtx) escalationEvent(tbl *engine.Table, hobt int64, mode string, locks int, txnID int64) {
	if !x.srv.anySessionRunning() {
		return
	}
	ts := x.srv.advance(2 * time.Microsecond)
	fields := []xevents.Field{
		xevents.FMap("escalation_cause", "lock_escalation_cause", "sqlserver", "LOCK_THRESHOLD"),
		xevents.FUint("escalated_lock_count", "uint32", int64(locks)),
		xevents.FUint("hobt_lock_count", "uint32", int64(locks)),
		xevents.FUint("hobt_id", "uint64", hobt),
		xevents.FMap("resource_type", "lock_resource_type", "sqlserver", "OBJECT"),
		xevents.FMap("mode", "lock_mode", "sqlserver", mode),
		xevents.FMap("owner_type", "lock_owner_type", "sqlserver", "Transaction"),
		xevents.FUint("object_id", "int32", tbl.ObjectID),
		xevents.FUint("transaction_id", "int64", txnID),
		xevents.FUint("database_id", "uint32", int64(x.conn.db.ID)),
	}
	x.srv.emit(x.ec, &xevents.EventData{Name: "lock_escalation", Pkg: "sqlserver", Time: ts, Fields: fields})
}
