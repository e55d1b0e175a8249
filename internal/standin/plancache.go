package standin

import (
	"crypto/sha1"
	"encoding/binary"
	"strings"
	"time"
)

// The plan cache, as far as sys.dm_exec_query_stats and
// sys.dm_exec_sql_text show it: one entry per cached statement of a
// scenario query (the statements that carry a query hash), with the batch
// text, the statement's offsets in it, the query and plan hashes and the
// execution counts. A service restart empties it, as on SQL Server.
//
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-stats-transact-sql
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sql-text-transact-sql

// planCacheEntry is one row of sys.dm_exec_query_stats.
type planCacheEntry struct {
	sqlHandle  []byte // varbinary(64): identifies the batch text
	planHandle []byte
	start, end int64 // statement offsets in bytes of UTF-16; end -1 = end of batch
	queryHash  uint64
	planHash   uint64
	created    time.Time
	last       time.Time
	execs      int64
	dbID       int
}

// planCache holds the entries and the batch texts by sql_handle.
type planCache struct {
	entries []*planCacheEntry
	texts   map[string]string // string(sql_handle) → batch text
}

// sqlHandleOf derives a stable sql_handle from a batch text: SQL Server's
// handle is a hash of the text too (0x02 marks an ad hoc batch); this one
// is SHA-1 based, 20 bytes after a 4-byte prefix, in the documented
// varbinary(64) column.
func sqlHandleOf(text string) []byte {
	sum := sha1.Sum([]byte(text))
	return append([]byte{0x02, 0x00, 0x00, 0x00}, sum[:]...)
}

// recordPlanCache notes one execution of the scenario statement being run:
// called by simStart once the query hash is known.
func (x *execCtx) recordPlanCache() {
	s := x.srv
	if s.plans.texts == nil {
		s.plans.texts = map[string]string{}
	}
	handle := sqlHandleOf(x.sql)
	start, end := int64(0), int64(-1)
	if i := strings.Index(x.sql, x.stmtText); i >= 0 && x.stmtText != "" {
		start = int64(2 * len([]rune(x.sql[:i])))
		end = start + int64(2*len([]rune(x.stmtText))) - 2
	}
	now := s.now()
	for _, e := range s.plans.entries {
		if string(e.sqlHandle) == string(handle) && e.start == start {
			e.execs++
			e.last = now
			return
		}
	}
	plan := make([]byte, 64)
	binary.BigEndian.PutUint64(plan[8:], x.ec.queryHash)
	binary.BigEndian.PutUint64(plan[16:], x.ec.planHash)
	plan[0] = 0x06
	s.plans.texts[string(handle)] = x.sql
	s.plans.entries = append(s.plans.entries, &planCacheEntry{sqlHandle: handle, planHandle: plan, start: start, end: end,
		queryHash: x.ec.queryHash, planHash: x.ec.planHash, created: now, last: now, execs: 1, dbID: x.conn.db.id})
}

// clearPlanCache empties the cache (service restart; DBCC FREEPROCCACHE is
// not emulated).
func (s *Server) clearPlanCache() { s.plans = planCache{} }

func hash8(h uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, h)
	return b
}

// dmExecQueryStats is sys.dm_exec_query_stats with the columns QueryReplay
// reads and the main counters.
func dmExecQueryStats(x *execCtx, db *database) (*relation, *SQLError) {
	r := &relation{cols: cols("sql_handle", tVarBin(64), "statement_start_offset", tInt, "statement_end_offset", tInt,
		"plan_handle", tVarBin(64), "creation_time", tDT2, "last_execution_time", tDT2, "execution_count", tBigInt,
		"query_hash", tVarBin(8), "query_plan_hash", tVarBin(8))}
	for _, e := range x.srv.plans.entries {
		r.rows = append(r.rows, []any{e.sqlHandle, e.start, e.end, e.planHandle, e.created, e.last, e.execs, hash8(e.queryHash), hash8(e.planHash)})
	}
	return r, nil
}

// sqlTextFunction is sys.dm_exec_sql_text(sql_handle): dbid, objectid,
// number, encrypted, text; an unknown handle gives no row.
func (x *execCtx) sqlTextFunction(args []any) (*relation, *SQLError) {
	r := &relation{cols: cols("dbid", tSmallInt, "objectid", tInt, "number", tSmallInt, "encrypted", tBit, "text", tNMax)}
	if len(args) != 1 {
		return nil, sqlErr(216, 16, "Parameters supplied for object '%s' which is not a function. If the parameters are intended as a table hint, a WITH keyword is required.", "dm_exec_sql_text")
	}
	h, ok := args[0].([]byte)
	if !ok {
		return r, nil
	}
	text, ok := x.srv.plans.texts[string(h)]
	if !ok {
		return r, nil
	}
	var dbid any
	for _, e := range x.srv.plans.entries {
		if string(e.sqlHandle) == string(h) {
			dbid = int64(e.dbID)
			break
		}
	}
	r.rows = append(r.rows, []any{dbid, nil, nil, false, text})
	return r, nil
}

// extraSysViews and extraTableFunctions are views and functions defined
// outside sources.go; its lookups consult them.
var extraSysViews = map[string]viewFunc{
	"dm_exec_query_stats": dmExecQueryStats,
}

var extraTableFunctions = map[string]func(x *execCtx, args []any) (*relation, *SQLError){
	"dm_exec_sql_text": (*execCtx).sqlTextFunction,
}
