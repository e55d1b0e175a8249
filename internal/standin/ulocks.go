package standin

import (
	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Update locks. An UPDATE or DELETE reads the rows it may change under U
// locks, not S: a U lock on each row read (intent update, IU, on the pages
// a scan reads), converted to X on the rows it changes and released at
// once on the rows it does not, as the locking guide describes
// (https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-transaction-locking-and-row-versioning-guide,
// "Update locks"). Two sessions updating the same rows so wait at the U
// lock instead of deadlocking on an S→X conversion.

// updateScan is the U-lock state of a modification's search for its rows.
type updateScan struct {
	tbl   *engine.Table
	taken map[heldLock]bool // U key locks the search holds
}

// updTarget reports whether a read of t is the search of the running
// UPDATE/DELETE (which locks with U whatever the isolation level or
// NOLOCK hint: the target of a modification is always locked).
func (x *execCtx) updTarget(t *engine.Table) bool {
	return x.upd != nil && x.upd.tbl == t
}

// updPageLock takes IU on a page the search scans (kept, converted to IX
// when a row of it changes).
func (x *execCtx) updPageLock(ix *engine.Index, page int32) *sqlfront.SQLError {
	t := x.ensureTxn()
	if err := x.acquire(t, objectLock(ix.Tbl, "IX")); err != nil {
		return err
	}
	if t.holdsAtLeast(pageLock(ix, page, "IX")) {
		return nil
	}
	return x.acquire(t, pageLock(ix, page, "IU"))
}

// updRowLock takes U on a row the search reads: on its entry in ix and,
// read through a nonclustered index, on its clustered key too (where a
// Key Lookup would take it), the lock the change converts to X. A row the
// transaction already holds X on (changed by an earlier statement) needs
// none.
func (x *execCtx) updRowLock(ix *engine.Index, row []any) *sqlfront.SQLError {
	if err := x.updKeyLock(ix, row); err != nil {
		return err
	}
	if ci := ix.Tbl.Indexes[0]; ix != ci {
		return x.updKeyLock(ci, row)
	}
	return nil
}

func (x *execCtx) updKeyLock(ix *engine.Index, row []any) *sqlfront.SQLError {
	t := x.ensureTxn()
	if err := x.acquire(t, objectLock(ix.Tbl, "IX")); err != nil {
		return err
	}
	l := keyLock(ix, row, "U")
	if t.holdsAtLeast(l) {
		return nil
	}
	if err := x.acquire(t, l); err != nil {
		return err
	}
	x.upd.taken[l] = true
	return nil
}

// updRelease releases the U locks on a row the search read and will not
// change.
func (x *execCtx) updRelease(ix *engine.Index, row []any) {
	x.updReleaseKey(ix, row)
	if ci := ix.Tbl.Indexes[0]; ix != ci {
		x.updReleaseKey(ci, row)
	}
}

func (x *execCtx) updReleaseKey(ix *engine.Index, row []any) {
	l := keyLock(ix, row, "U")
	if x.upd == nil || !x.upd.taken[l] {
		return
	}
	delete(x.upd.taken, l)
	x.releaseLock(x.conn.txn, l)
}

// updFinish ends the search: the U locks of rows that are not targets
// (rejected above the scan, or read through a nonclustered index) are
// released; the targets' stay, to be converted to X.
func (x *execCtx) updFinish(targets []target) {
	if x.upd == nil {
		return
	}
	keep := map[heldLock]bool{}
	for _, tg := range targets {
		keep[keyLock(x.upd.tbl.Indexes[0], tg.row, "U")] = true
	}
	t := x.conn.txn
	if t == nil {
		return
	}
	kept := t.locks[:0]
	released := false
	for _, l := range t.locks { // one pass, in the order taken
		if x.upd.taken[l] && !keep[l] {
			delete(x.upd.taken, l)
			x.lockEvent("lock_released", l, t.id)
			released = true
			continue
		}
		kept = append(kept, l)
	}
	t.locks, t.held = kept, nil
	if released {
		x.srv.lockCond.Broadcast() // waiters re-check
	}
}

// releaseLock releases one lock of the transaction before it ends.
func (x *execCtx) releaseLock(t *transaction, l heldLock) {
	if t == nil {
		return
	}
	for i := len(t.locks) - 1; i >= 0; i-- {
		if t.locks[i] == l {
			t.locks = append(t.locks[:i], t.locks[i+1:]...)
			if t.held != nil {
				delete(t.held, l)
			}
			x.lockEvent("lock_released", l, t.id)
			x.srv.lockCond.Broadcast() // waiters re-check
			return
		}
	}
}

// convertible is the weaker mode a lock request converts from: a U key
// lock becomes X, an IU page lock IX.
var convertible = map[string]string{"X": "U", "IX": "IU"}

// converts replaces the transaction's weaker lock on l's resource by l
// (a conversion is one lock: released once, in its final mode) and
// reports whether it did.
func (t *transaction) converts(l heldLock) bool {
	from, ok := convertible[l.mode]
	if !ok {
		return false
	}
	weak := l
	weak.mode = from
	if !t.heldSet()[weak] {
		return false
	}
	for i := len(t.locks) - 1; i >= 0; i-- {
		if h := t.locks[i]; h == weak {
			t.locks[i] = l
			set := t.heldSet()
			delete(set, weak)
			set[l] = true
			return true
		}
	}
	return false
}

// holdsAtLeast reports whether the transaction holds l's resource in l's
// mode or a stronger one (X covers U and IX; IX covers IU).
func (t *transaction) holdsAtLeast(l heldLock) bool {
	set := t.heldSet()
	for _, m := range stronger[l.mode] {
		h := l
		h.mode = m
		if set[h] {
			return true
		}
	}
	return false
}

var stronger = map[string][]string{"U": {"U", "X"}, "IU": {"IU", "IX"}, "IX": {"IX"}, "X": {"X"}}
