package standin

import (
	"encoding/binary"
	"fmt"
	"time"
	"unicode/utf16"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Transactions, locks and the transaction log (BEGIN/COMMIT/ROLLBACK
// TRANSACTION: https://learn.microsoft.com/en-us/sql/t-sql/language-elements/begin-transaction-transact-sql,
// @@TRANCOUNT nesting as documented there). Modifications change the
// demo tables for real, log records go to an in-memory log that fn_dblog
// reads, and ROLLBACK undoes the changes (writing compensation records and
// LOP_ABORT_XACT, as SQL Server does).

type transaction struct {
	id       int64
	name     string
	depth    int
	begin    time.Time
	undo     []undoRec
	locks    []heldLock
	lastLSN  string
	explicit bool
	// savepoints taken by SAVE TRANSACTION, oldest first (savepoint.go)
	savepoints []savepoint
	held       map[heldLock]bool // locks, as a set (blocking.go's holds)
}

type undoRec struct {
	tbl           *engine.Table
	op            string // insert, delete, update
	before, after []any
}

type heldLock struct {
	resType, mode string
	r0, r1, r2    uint32
	objectID      int64
	hobt          int64
	desc          string
}

type logRecord struct {
	lsn, prevLSN string
	op, context  string
	txnID        int64
	ix           *engine.Index
	page         int32
	slot         int
	txnName      string
	beginTime    time.Time
	endTime      time.Time
	rowlog0      []byte
	rowlog1      []byte
	raw          []byte
}

type txLog struct {
	recs  []*logRecord
	vlf   int
	block int
	slot  int
}

func newTxLog() *txLog { return &txLog{vlf: 0x2b, block: 0x1a0, slot: 1} }

func (l *txLog) nextLSN() string {
	l.slot++
	if l.slot > 0x40 {
		l.slot = 1
		l.block += 8
	}
	return fmt.Sprintf("%08x:%08x:%04x", l.vlf, l.block, l.slot)
}

func txnIDString(id int64) string {
	return fmt.Sprintf("%04x:%08x", uint16(id>>32), uint32(id))
}

func (x *execCtx) beginTxn(name string, fromTSQL bool) {
	c := x.conn
	if c.txn != nil {
		c.txn.depth++
		return
	}
	x.srv.nextTxn++
	c.txn = &transaction{id: x.srv.nextTxn, name: name, depth: 1, begin: x.srv.now(), explicit: true}
	if name == "" {
		c.txn.name = "user_transaction"
	}
	x.ec.TxnID = c.txn.id
	x.logRecord(c.txn, "LOP_BEGIN_XACT", "LCX_NULL", nil, 0, 0, nil, nil)
	x.emitTxnState("Begin")
	if fromTSQL && x.w != nil {
		_, _ = x.w.BeginTransaction()
	}
}

func (x *execCtx) emitTxnState(state string) {
	c := x.conn
	if c.txn == nil || !x.srv.anySessionRunning() {
		return
	}
	x.srv.emit(x.ec, &xevents.EventData{Name: "sql_transaction", Pkg: "sqlserver", Time: x.srv.advance(3 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("transaction_id", "int64", c.txn.id), xevents.FMap("transaction_state", "transaction_state", "sqlserver", state),
		xevents.FMap("transaction_type", "transaction_type", "sqlserver", "User"),
		xevents.FUint("duration", "uint64", x.srv.clock.Sub(c.txn.begin).Microseconds())}})
}

func (x *execCtx) commitTxn(fromTSQL bool) {
	c := x.conn
	t := c.txn
	if t.depth > 1 {
		t.depth--
		return
	}
	x.logRecord(t, "LOP_COMMIT_XACT", "LCX_NULL", nil, 0, 0, nil, nil)
	if len(t.undo) > 0 {
		x.flushLog()
	}
	x.emitTxnState("Commit")
	x.releaseLocks(t)
	c.undoDDL(t.id, false)
	c.txn = nil
	if fromTSQL && x.w != nil {
		_ = x.w.CommitTransaction()
	}
}

// logWriterSessionID is the stand-in's log writer task. System tasks have
// session ids below 51, the first a user connection gets
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql:
// is_user_process 0).
const logWriterSessionID = 3

// systemTask is the event context of a system task working for ec's
// database: no user, text or transaction of the session it works for.
func systemTask(ec *xevents.EventCtx, spid int) *xevents.EventCtx {
	return &xevents.EventCtx{SPID: spid, DBID: ec.DBID, DBName: ec.DBName, ServerName: ec.ServerName, System: true}
}

// flushLog hardens the log at commit: a WRITELOG wait and
// log_flush_complete, as a committing session sees them.
func (x *execCtx) flushLog() {
	s := x.srv
	if !s.anySessionRunning() || x.ec == nil {
		return
	}
	s.log.block += 8
	wait := 300 * time.Microsecond
	res := xevents.FPtr("wait_resource", 0)
	s.emit(x.ec, &xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: s.advance(2 * time.Microsecond), Fields: []xevents.Field{
		xevents.FMap("wait_type", "wait_types", "sqlos", "WRITELOG"), xevents.FMap("opcode", "event_opcode", "sqlos", "Begin"),
		xevents.FUint("duration", "uint64", 0), xevents.FUint("signal_duration", "uint64", 0), res}})
	// The log writer hardens the block, a system task: the committing
	// session only waits (WRITELOG). A session_id predicate on the user's
	// session therefore never sees log_flush_complete, as on SQL Server.
	s.emit(systemTask(x.ec, logWriterSessionID), &xevents.EventData{Name: "log_flush_complete", Pkg: "sqlserver", Time: s.advance(wait), Fields: []xevents.Field{
		xevents.FUint("database_id", "uint32", int64(x.conn.db.ID)), xevents.FUint("log_block_id", "uint64", int64(s.log.vlf)<<32|int64(s.log.block)),
		xevents.FUint("duration", "uint64", 0), xevents.FUint("write_size", "uint32", 4096)}})
	s.emit(x.ec, &xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: s.advance(2 * time.Microsecond), Fields: []xevents.Field{
		xevents.FMap("wait_type", "wait_types", "sqlos", "WRITELOG"), xevents.FMap("opcode", "event_opcode", "sqlos", "End"),
		xevents.FUint("duration", "uint64", wait.Milliseconds()), xevents.FUint("signal_duration", "uint64", 0), res}})
}

func sortPages(p []int32) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j] < p[j-1]; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// rollbackAll undoes every change of the connection's transaction.
func (x *execCtx) rollbackAll() {
	c := x.conn
	t := c.txn
	if t == nil {
		return
	}
	if x.ec == nil {
		x.ec = c.eventCtx()
	}
	for i := len(t.undo) - 1; i >= 0; i-- {
		u := t.undo[i]
		switch u.op {
		case "insert":
			x.removeRow(u.tbl, u.after)
			x.logRowOp(t, u.tbl, "LOP_DELETE_ROWS", u.after, nil, nil)
		case "delete":
			x.insertRow(u.tbl, u.before)
			x.logRowOp(t, u.tbl, "LOP_INSERT_ROWS", u.before, nil, nil)
		case "update":
			moved := movedIndexes(u.tbl, u.after, u.before)
			x.replaceRow(u.tbl, u.after, u.before)
			x.logRowOp(t, u.tbl, "LOP_MODIFY_ROW", u.before, u.after, u.before)
			x.logMoves(t, u.tbl, moved, u.after, u.before)
		}
	}
	x.logRecord(t, "LOP_ABORT_XACT", "LCX_NULL", nil, 0, 0, nil, nil)
	x.emitTxnState("Rollback")
	x.releaseLocks(t)
	c.undoDDL(t.id, true) // CREATE/DROP TABLE of the transaction
	c.txn = nil
}

func (x *execCtx) releaseLocks(t *transaction) {
	for i := len(t.locks) - 1; i >= 0; i-- {
		x.lockEvent("lock_released", t.locks[i], t.id)
	}
	t.locks = nil
	x.srv.locksReleased(x.conn)
	x.srv.lockCond.Broadcast() // waiters re-check
}

// lockEvent emits lock_acquired/lock_released with the [D] field set of
// https://learn.microsoft.com/en-us/sql/relational-databases/extended-events/targets-for-extended-events-in-sql-server
func (x *execCtx) lockEvent(name string, l heldLock, txnID int64) {
	if !x.srv.anySessionRunning() {
		return
	}
	ts := x.srv.advance(2 * time.Microsecond)
	fields := []xevents.Field{
		xevents.FMap("resource_type", "lock_resource_type", "sqlserver", l.resType),
		xevents.FMap("mode", "lock_mode", "sqlserver", l.mode),
		xevents.FMap("owner_type", "lock_owner_type", "sqlserver", "Transaction"),
		xevents.FUint("transaction_id", "int64", txnID),
		xevents.FUint("database_id", "uint32", int64(x.conn.db.ID)),
		xevents.FPtr("lockspace_workspace_id", 0x000001E4C1A62A20+uint64(x.conn.spid)*0x10),
		xevents.FUint("lockspace_sub_id", "uint32", 1),
		xevents.FUint("lockspace_nest_id", "uint32", 1),
		xevents.FUint("resource_0", "uint32", int64(l.r0)),
		xevents.FUint("resource_1", "uint32", int64(l.r1)),
		xevents.FUint("resource_2", "uint32", int64(l.r2)),
		xevents.FUint("object_id", "int32", l.objectID),
		xevents.FUint("associated_object_id", "uint64", l.hobt),
		xevents.FUint("duration", "uint64", 0),
		xevents.FStr("resource_description", l.desc),
		xevents.FStr("database_name", ""),
	}
	x.srv.emit(x.ec, &xevents.EventData{Name: name, Pkg: "sqlserver", Time: ts, Fields: fields})
}

func objectLock(t *engine.Table, mode string) heldLock {
	return heldLock{resType: "OBJECT", mode: mode, r0: uint32(t.ObjectID), objectID: t.ObjectID}
}

func pageLock(ix *engine.Index, page int32, mode string) heldLock {
	return heldLock{resType: "PAGE", mode: mode, r0: uint32(page), r1: 1, hobt: ix.PartitionID, desc: fmt.Sprintf("1:%d", page)}
}

func keyLock(ix *engine.Index, row []any, mode string) heldLock {
	h := ix.KeyHash(row)
	r1, r2 := engine.KeyHashResources(h)
	return heldLock{resType: "KEY", mode: mode, r1: r1, r2: r2, hobt: ix.PartitionID, desc: h}
}

// logRecord appends a log record and emits transaction_log for it.
func (x *execCtx) logRecord(t *transaction, op, ctx string, ix *engine.Index, page int32, slot int, r0, r1 []byte) *logRecord {
	l := x.srv.log
	rec := &logRecord{lsn: l.nextLSN(), prevLSN: t.lastLSN, op: op, context: ctx, txnID: t.id, ix: ix, page: page, slot: slot, rowlog0: r0, rowlog1: r1}
	if rec.prevLSN == "" {
		rec.prevLSN = "00000000:00000000:0000"
	}
	switch op {
	case "LOP_BEGIN_XACT":
		rec.txnName, rec.beginTime = t.name, x.srv.now()
	case "LOP_COMMIT_XACT", "LOP_ABORT_XACT":
		rec.endTime = x.srv.now()
	}
	rec.raw = encodeLogRecord(rec)
	t.lastLSN = rec.lsn
	l.recs = append(l.recs, rec)
	if x.srv.anySessionRunning() && x.ec != nil {
		var au int64
		if ix != nil {
			au = ix.AllocUnitID
		}
		fields := []xevents.Field{
			xevents.FMap("operation", "log_op", "sqlserver", op), xevents.FMap("context", "log_context", "sqlserver", ctx),
			xevents.FUint("alloc_unit_id", "uint64", au), xevents.FUint("database_id", "uint32", int64(x.conn.db.ID)),
			xevents.FUint("transaction_id", "int64", t.id),
		}
		if x.srv.opts.GuessedColumns {
			fields = append(fields, xevents.FUint("log_record_size", "uint32", int64(len(rec.raw))))
		}
		x.srv.emit(x.ec, &xevents.EventData{Name: "transaction_log", Pkg: "sqlserver", Time: x.srv.advance(4 * time.Microsecond), Fields: fields})
	}
	return rec
}

// encodeLogRecord builds [Log Record] bytes with the layout docs/design/tracing.md
// §13 describes (modelled, not byte-identical to SQL Server's): a fixed
// part with operation/context/page identity, then the variable part with
// the row images.
func encodeLogRecord(r *logRecord) []byte {
	fixed := 60
	if r.ix != nil {
		fixed = 64
	}
	b := make([]byte, fixed)
	binary.LittleEndian.PutUint16(b[2:], uint16(fixed))
	var vlf, blk uint32
	var slot uint16
	fmt.Sscanf(r.prevLSN, "%x:%x:%x", &vlf, &blk, &slot)
	binary.LittleEndian.PutUint32(b[4:], vlf)
	binary.LittleEndian.PutUint32(b[8:], blk)
	binary.LittleEndian.PutUint16(b[12:], slot)
	binary.LittleEndian.PutUint32(b[16:], uint32(r.txnID))
	binary.LittleEndian.PutUint16(b[20:], uint16(r.txnID>>32))
	b[22] = byte(xevents.MapKey("log_op", r.op))
	b[23] = byte(xevents.MapKey("log_context", r.context))
	var elems [][]byte
	switch {
	case r.op == "LOP_BEGIN_XACT":
		days := int32(r.beginTime.Sub(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)).Hours() / 24)
		mid := r.beginTime.Truncate(24 * time.Hour)
		ticks := uint32(r.beginTime.Sub(mid).Seconds() * 300)
		binary.LittleEndian.PutUint32(b[40:], ticks)
		binary.LittleEndian.PutUint32(b[44:], uint32(days))
		elems = append(elems, utf16le(r.txnName))
	case r.op == "LOP_COMMIT_XACT" || r.op == "LOP_ABORT_XACT":
		binary.LittleEndian.PutUint32(b[24:], uint32(r.endTime.Unix()))
	case r.ix != nil:
		binary.LittleEndian.PutUint32(b[24:], uint32(r.page))
		binary.LittleEndian.PutUint16(b[28:], 1)
		binary.LittleEndian.PutUint16(b[30:], uint16(r.slot))
		binary.LittleEndian.PutUint64(b[48:], uint64(r.ix.PartitionID))
		if r.rowlog0 != nil {
			elems = append(elems, r.rowlog0)
		}
		if r.rowlog1 != nil {
			elems = append(elems, r.rowlog1)
		}
	}
	v := make([]byte, 2+2*len(elems))
	binary.LittleEndian.PutUint16(v, uint16(len(elems)))
	for i, e := range elems {
		binary.LittleEndian.PutUint16(v[2+2*i:], uint16(len(e)))
	}
	for len(v)%4 != 0 {
		v = append(v, 0)
	}
	for _, e := range elems {
		v = append(v, e...)
		for len(v)%4 != 0 {
			v = append(v, 0)
		}
	}
	return append(b, v...)
}

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

// encodeRow renders a row in the FixedVar record format: status bytes,
// fixed-length end offset, fixed columns, column count, null bitmap,
// variable column count and end offsets, variable data.
func encodeRow(t *engine.Table, row []any) []byte {
	var fixed, vars [][]byte
	for i, c := range t.Columns {
		v := row[i]
		switch c.Type.Kind {
		case sqlfront.TypeNVarChar:
			s, _ := v.(string)
			vars = append(vars, utf16le(s))
		case sqlfront.TypeFloat:
			f, _ := v.(float64)
			bb := make([]byte, 8)
			binary.LittleEndian.PutUint64(bb, engine.MathFloat64bits(f))
			fixed = append(fixed, bb)
		case sqlfront.TypeDateTime2:
			tm, _ := v.(time.Time)
			bb := make([]byte, 8)
			binary.LittleEndian.PutUint64(bb, uint64(tm.Unix()))
			fixed = append(fixed, bb)
		default:
			n, _ := v.(int64)
			bb := make([]byte, 4)
			binary.LittleEndian.PutUint32(bb, uint32(n))
			fixed = append(fixed, bb)
		}
	}
	out := []byte{0x30, 0x00, 0, 0}
	for _, f := range fixed {
		out = append(out, f...)
	}
	binary.LittleEndian.PutUint16(out[2:], uint16(len(out)))
	out = append(out, byte(len(t.Columns)), byte(len(t.Columns)>>8))
	out = append(out, make([]byte, (len(t.Columns)+7)/8)...)
	if len(vars) > 0 {
		out[0] |= 0x20
		out = append(out, byte(len(vars)), byte(len(vars)>>8))
		end := len(out) + 2*len(vars)
		for _, v := range vars {
			end += len(v)
			out = append(out, byte(end), byte(end>>8))
		}
		for _, v := range vars {
			out = append(out, v...)
		}
	}
	return out
}

// Row changes with index maintenance.

func (x *execCtx) insertRow(t *engine.Table, row []any) {
	i, _ := t.FindRow(t.KeyOf(row))
	t.Rows = append(t.Rows, nil)
	copy(t.Rows[i+1:], t.Rows[i:])
	t.Rows[i] = row
	for _, ix := range t.Indexes[1:] {
		ix.InsertEntry(row) // each nonclustered index in place, not rebuilt
	}
	x.relayout(t)
}

func (x *execCtx) removeRow(t *engine.Table, row []any) {
	if i, ok := t.FindRow(t.KeyOf(row)); ok {
		t.Rows = append(t.Rows[:i], t.Rows[i+1:]...)
		for _, ix := range t.Indexes[1:] {
			ix.RemoveEntry(row)
		}
	}
	x.relayout(t)
}

func (x *execCtx) replaceRow(t *engine.Table, old, repl []any) {
	if sameIndexKeys(t, old, repl) {
		// no index key changed: the row keeps its place in every index
		if i, ok := t.FindRow(t.KeyOf(old)); ok {
			t.Rows[i] = repl
			return
		}
	}
	x.removeRow(t, old)
	x.insertRow(t, repl)
}

// sameIndexKeys reports whether two versions of a row have the same key
// Values in every index of t.
func sameIndexKeys(t *engine.Table, a, b []any) bool {
	for _, ix := range t.Indexes {
		for _, c := range ix.KeyCols {
			if cmp, err := engine.CompareValues(a[c], b[c]); err != nil || cmp != 0 || (a[c] == nil) != (b[c] == nil) {
				return false
			}
		}
	}
	for _, c := range t.PK {
		if cmp, err := engine.CompareValues(a[c], b[c]); err != nil || cmp != 0 {
			return false
		}
	}
	return true
}

func (x *execCtx) relayout(t *engine.Table) {
	for _, ix := range t.Indexes {
		before := len(ix.LeafPages)
		ix.LayoutPages()
		for _, p := range ix.LeafPages[before:] {
			x.srv.cached[p] = true
			if before > 0 && x.srv.anySessionRunning() {
				x.srv.emit(x.ec, &xevents.EventData{Name: "page_split", Pkg: "sqlserver", Time: x.srv.advance(20 * time.Microsecond), Fields: []xevents.Field{
					xevents.FUint("file_id", "uint16", 1), xevents.FUint("page_id", "uint32", int64(ix.LeafPages[before-1])),
					xevents.FUint("database_id", "uint16", int64(t.DB.ID)), xevents.FUint("rowset_id", "uint64", ix.PartitionID),
					xevents.FMap("splitOperation", "page_split_operation", "sqlserver", "SPLIT_FOR_INSERT"),
					xevents.FUint("new_page_file_id", "uint16", 1), xevents.FUint("new_page_page_id", "uint32", int64(p))}})
			}
		}
		if ix.RootPage != 0 {
			x.srv.cached[ix.RootPage] = x.srv.cached[ix.RootPage]
		}
	}
}

// logRowOp writes the log record(s) of one row change for every index of
// the table, marking the pages dirty.
func (x *execCtx) logRowOp(t *transaction, tbl *engine.Table, op string, row, before, after []any) {
	for _, ix := range tbl.Indexes {
		ctx := "LCX_CLUSTERED"
		if ix.ID != 1 {
			ctx = "LCX_INDEX_LEAF"
			if op == "LOP_MODIFY_ROW" {
				continue // the nonclustered key did not change
			}
		}
		page, slot := ix.Location(ix.EntryPos(row))
		var r0, r1 []byte
		switch op {
		case "LOP_MODIFY_ROW":
			r0, r1 = encodeRow(tbl, before), encodeRow(tbl, after)
		default:
			r0 = encodeRow(tbl, row)
		}
		x.logRecord(t, op, ctx, ix, page, slot, r0, r1)
		x.srv.cached[page] = true
	}
}

// acquire takes a lock for the transaction (emitting lock_acquired) and
// keeps it until the transaction ends.
func (x *execCtx) acquire(t *transaction, l heldLock) *sqlfront.SQLError {
	if t.holds(l) {
		return nil
	}
	if err := x.waitWhile(func() *connState { return x.lockBlocker(l) }, "LCK_M_"+l.mode); err != nil {
		return err
	}
	x.lockEvent("lock_acquired", l, t.id)
	if !t.converts(l) { // U→X, IU→IX: one lock, now in the stronger mode
		t.locks = append(t.locks, l)
		x.noteLock(l, t.id)
	}
	return nil
}

// ensureTxn opens the statement's autocommit transaction when the session
// has none.
func (x *execCtx) ensureTxn() *transaction {
	c := x.conn
	if c.txn == nil {
		x.beginTxn("", false)
		c.txn.explicit = false
	}
	return c.txn
}

// lockRow takes the locks an insert or delete of row needs: IX on the
// table and its pages, X on its key in every index. It may wait for other
// transactions.
func (x *execCtx) lockRow(tbl *engine.Table, row []any) *sqlfront.SQLError {
	t := x.ensureTxn()
	for _, ix := range tbl.Indexes {
		if err := x.lockEntry(t, tbl, ix, row); err != nil {
			return err
		}
	}
	return nil
}

// lockEntry takes IX on the table and on the page of row's entry in ix,
// and X on the entry's key.
func (x *execCtx) lockEntry(t *transaction, tbl *engine.Table, ix *engine.Index, row []any) *sqlfront.SQLError {
	if err := x.acquire(t, objectLock(tbl, "IX")); err != nil {
		return err
	}
	page, _ := ix.Location(ix.EntryPos(row))
	if err := x.acquire(t, pageLock(ix, page, "IX")); err != nil {
		return err
	}
	return x.acquire(t, keyLock(ix, row, "X"))
}

// movedIndexes are the nonclustered indexes whose entry for a row an
// update changes: those with a changed key column, or all of them when
// the clustered key (which every entry carries) changed. SQL Server
// writes and locks only these
// (https://learn.microsoft.com/en-us/sql/relational-databases/sql-server-index-design-guide:
// a nonclustered index is maintained when its columns change).
func movedIndexes(tbl *engine.Table, before, after []any) []*engine.Index {
	var out []*engine.Index
	for _, ix := range tbl.Indexes[1:] {
		if !sameValues(ix.EntryOf(before), ix.EntryOf(after)) {
			out = append(out, ix)
		}
	}
	return out
}

func sameValues(a, b []any) bool {
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) {
			return false
		}
		if c, err := engine.CompareValues(a[i], b[i]); err != nil || c != 0 {
			return false
		}
	}
	return true
}

// lockUpdate takes the locks an update of a row needs: X on its clustered
// key, and on the old and the new entry of each nonclustered index the
// update moves. Indexes that hold no changed column are not locked.
func (x *execCtx) lockUpdate(tbl *engine.Table, before, after []any) *sqlfront.SQLError {
	t := x.ensureTxn()
	if err := x.lockEntry(t, tbl, tbl.Indexes[0], after); err != nil {
		return err
	}
	for _, ix := range movedIndexes(tbl, before, after) {
		for _, row := range [][]any{before, after} {
			if err := x.lockEntry(t, tbl, ix, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// logMoves writes the nonclustered index records of an update: the old
// entry deleted, the new one inserted, in each index it moved.
func (x *execCtx) logMoves(t *transaction, tbl *engine.Table, moved []*engine.Index, before, after []any) {
	for _, ix := range moved {
		for _, rec := range []struct {
			op  string
			row []any
		}{{"LOP_DELETE_ROWS", before}, {"LOP_INSERT_ROWS", after}} {
			page, slot := ix.Location(ix.EntryPos(rec.row))
			x.logRecord(t, rec.op, "LCX_INDEX_LEAF", ix, page, slot, encodeRow(tbl, rec.row), nil)
			x.srv.cached[page] = true
		}
	}
}

// undoSince rolls back the changes of a failed statement (those recorded
// after mark), leaving earlier work of the transaction in place.
func (x *execCtx) undoSince(mark int) {
	t := x.conn.txn
	if t == nil {
		return
	}
	if !t.explicit {
		x.rollbackAll()
		return
	}
	for i := len(t.undo) - 1; i >= mark; i-- {
		u := t.undo[i]
		switch u.op {
		case "insert":
			x.removeRow(u.tbl, u.after)
			x.logRowOp(t, u.tbl, "LOP_DELETE_ROWS", u.after, nil, nil)
		case "delete":
			x.insertRow(u.tbl, u.before)
			x.logRowOp(t, u.tbl, "LOP_INSERT_ROWS", u.before, nil, nil)
		case "update":
			moved := movedIndexes(u.tbl, u.after, u.before)
			x.replaceRow(u.tbl, u.after, u.before)
			x.logRowOp(t, u.tbl, "LOP_MODIFY_ROW", u.before, u.after, u.before)
			x.logMoves(t, u.tbl, moved, u.after, u.before)
		}
	}
	t.undo = t.undo[:mark]
}

// modify runs one DML row change inside the connection's transaction
// (an autocommit one when none is open), with locks and log records.
func (x *execCtx) modify(tbl *engine.Table, op string, before, after []any) *sqlfront.SQLError {
	t := x.ensureTxn()
	var err *sqlfront.SQLError
	switch op {
	case "insert":
		err = x.lockRow(tbl, after)
	case "delete":
		err = x.lockRow(tbl, before)
	case "update":
		err = x.lockUpdate(tbl, before, after)
	}
	if err != nil {
		return err
	}
	switch op {
	case "insert":
		x.insertRow(tbl, after)
		x.logRowOp(t, tbl, "LOP_INSERT_ROWS", after, nil, nil)
	case "delete":
		x.logRowOp(t, tbl, "LOP_DELETE_ROWS", before, nil, nil)
		x.removeRow(tbl, before)
	case "update":
		moved := movedIndexes(tbl, before, after)
		x.replaceRow(tbl, before, after)
		x.logRowOp(t, tbl, "LOP_MODIFY_ROW", after, before, after)
		x.logMoves(t, tbl, moved, before, after)
	}
	t.undo = append(t.undo, undoRec{tbl: tbl, op: op, before: before, after: after})
	x.stats.writes++
	return nil
}

// endAutocommit commits the autocommit transaction a DML statement opened.
func (x *execCtx) endAutocommit() {
	if c := x.conn; c.txn != nil && !c.txn.explicit {
		x.commitTxn(false)
	}
}

// checkpoint writes dirty pages and truncates the inactive log (the demo
// database uses the simple recovery model), as
// https://learn.microsoft.com/en-us/sql/t-sql/language-elements/checkpoint-transact-sql
// describes.
func (x *execCtx) checkpoint() {
	s := x.srv
	var dirtyPages []int32
	for p, dirty := range s.cached {
		if dirty {
			dirtyPages = append(dirtyPages, p)
		}
	}
	sortPages(dirtyPages)
	for _, p := range dirtyPages {
		s.cached[p] = false
		x.stats.writes++
		if s.anySessionRunning() && x.ec != nil {
			// CHECKPOINT issued by a session writes on that session's thread
			s.emit(x.ec, &xevents.EventData{Name: "physical_page_write", Pkg: "sqlserver", Time: s.advance(3 * time.Microsecond), Fields: []xevents.Field{
				xevents.FUint("file_id", "uint16", 1), xevents.FUint("page_id", "uint32", int64(p))}})
			s.emit(x.ec, &xevents.EventData{Name: "file_write_completed", Pkg: "sqlserver", Time: s.advance(120 * time.Microsecond), Fields: []xevents.Field{
				xevents.FUint("database_id", "uint32", int64(x.conn.db.ID)), xevents.FUint("file_id", "uint16", 1), xevents.FUint("page_id", "uint32", int64(p)),
				xevents.FUint("file_group_id", "uint16", 1), xevents.FUint("offset", "uint64", int64(p)*8192), xevents.FUint("size", "uint32", 8192),
				xevents.FMap("mode", "file_io_mode", "sqlserver", "Contiguous"), xevents.FUint("duration", "uint64", 0)}})
		}
	}
	active := map[int64]bool{}
	for _, c := range x.srv.conns {
		if c.txn != nil {
			active[c.txn.id] = true
		}
	}
	var kept []*logRecord
	for _, r := range x.srv.log.recs {
		if active[r.txnID] {
			kept = append(kept, r)
		}
	}
	x.srv.log.recs = kept
	sys := &transaction{id: 0}
	for _, op := range []string{"LOP_BEGIN_CKPT", "LOP_XACT_CKPT", "LOP_END_CKPT"} {
		l := x.srv.log
		rec := &logRecord{lsn: l.nextLSN(), prevLSN: "00000000:00000000:0000", op: op, context: "LCX_NULL", txnID: sys.id}
		rec.raw = encodeLogRecord(rec)
		l.recs = append(l.recs, rec)
	}
}

var _ = tds.CmdNone
