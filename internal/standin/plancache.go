package standin

import (
	"container/list"
	"crypto/sha1"
	"encoding/binary"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// The plan cache, as far as sys.dm_exec_query_stats and
// sys.dm_exec_sql_text show it: one entry per cached statement — every
// statement that is compiled into a plan (SELECT, INSERT, UPDATE, DELETE,
// MERGE; the ones that carry a query hash), from any session, as on SQL
// Server — with the batch text, the statement's offsets in it, the query
// and plan hashes and the execution counts. A service restart empties it,
// as on SQL Server. It is bounded like a cache: past planCacheEntries
// entries the least recently executed goes (LRU by entries; SQL Server
// evicts under memory pressure by cost, which the stand-in does not model),
// and a batch text goes with its last entry.
//
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-stats-transact-sql
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sql-text-transact-sql

// planCacheEntries bounds the plan cache.
const planCacheEntries = 2000

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

// planKey identifies an entry: the batch and the statement's offset in it.
type planKey struct {
	handle string
	start  int64
}

// planCache holds the entries (most recently executed first) and the
// batch texts by sql_handle with how many entries use each.
type planCache struct {
	lru     *list.List // of *planCacheEntry
	byKey   map[planKey]*list.Element
	texts   map[string]string // string(sql_handle) → batch text
	textUse map[string]int
	limit   int // planCacheEntries unless a test lowers it
}

func (p *planCache) init() {
	if p.lru == nil {
		p.lru, p.byKey, p.texts, p.textUse = list.New(), map[planKey]*list.Element{}, map[string]string{}, map[string]int{}
	}
	if p.limit <= 0 {
		p.limit = planCacheEntries
	}
}

// add stores a new entry, evicting the least recently executed ones past
// the limit.
func (p *planCache) add(e *planCacheEntry, text string) {
	h := string(e.sqlHandle)
	p.byKey[planKey{h, e.start}] = p.lru.PushFront(e)
	p.texts[h] = text
	p.textUse[h]++
	for p.lru.Len() > p.limit {
		old := p.lru.Remove(p.lru.Back()).(*planCacheEntry)
		oh := string(old.sqlHandle)
		delete(p.byKey, planKey{oh, old.start})
		if p.textUse[oh]--; p.textUse[oh] <= 0 {
			delete(p.textUse, oh)
			delete(p.texts, oh)
		}
	}
}

// sqlHandleOf derives a stable sql_handle from a batch text: SQL Server's
// handle is a hash of the text too (0x02 marks an ad hoc batch); this one
// is SHA-1 based, 20 bytes after a 4-byte prefix, in the documented
// varbinary(64) column.
func sqlHandleOf(text string) []byte {
	sum := sha1.Sum([]byte(text))
	return append([]byte{0x02, 0x00, 0x00, 0x00}, sum[:]...)
}

// recordPlanCache notes one execution of the statement being run: called
// by beginQuery once the query hash is known, for every statement.
func (x *execCtx) recordPlanCache() {
	p := &x.srv.plans
	p.init()
	handle := sqlHandleOf(x.sql)
	start, end := int64(0), int64(-1)
	if i := strings.Index(x.sql, x.stmtText); i >= 0 && x.stmtText != "" {
		start = int64(2 * len([]rune(x.sql[:i])))
		end = start + int64(2*len([]rune(x.stmtText))) - 2
	}
	now := x.srv.now()
	if el, ok := p.byKey[planKey{string(handle), start}]; ok {
		e := el.Value.(*planCacheEntry)
		e.execs++
		e.last = now
		p.lru.MoveToFront(el)
		return
	}
	plan := make([]byte, 64)
	binary.BigEndian.PutUint64(plan[8:], x.ec.QueryHash)
	binary.BigEndian.PutUint64(plan[16:], x.ec.PlanHash)
	plan[0] = 0x06
	p.add(&planCacheEntry{sqlHandle: handle, planHandle: plan, start: start, end: end,
		queryHash: x.ec.QueryHash, planHash: x.ec.PlanHash, created: now, last: now, execs: 1, dbID: x.conn.db.ID}, x.sql)
}

// clearPlanCache empties the cache (service restart; DBCC FREEPROCCACHE is
// not emulated).
func (s *Server) clearPlanCache() { s.plans = planCache{limit: s.plans.limit} }

func hash8(h uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, h)
	return b
}

// dmExecQueryStats is sys.dm_exec_query_stats with the columns QueryReplay
// reads and the main counters.
func dmExecQueryStats(x *execCtx, db *engine.Database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("sql_handle", engine.TVarBin(64), "statement_start_offset", engine.TInt, "statement_end_offset", engine.TInt,
		"plan_handle", engine.TVarBin(64), "creation_time", engine.TDT2, "last_execution_time", engine.TDT2, "execution_count", engine.TBigInt,
		"query_hash", engine.TVarBin(8), "query_plan_hash", engine.TVarBin(8))}
	if l := x.srv.plans.lru; l != nil {
		for el := l.Back(); el != nil; el = el.Prev() { // oldest first
			e := el.Value.(*planCacheEntry)
			r.Rows = append(r.Rows, []any{e.sqlHandle, e.start, e.end, e.planHandle, e.created, e.last, e.execs, hash8(e.queryHash), hash8(e.planHash)})
		}
	}
	return r, nil
}

// sqlTextFunction is sys.dm_exec_sql_text(sql_handle): dbid, objectid,
// number, encrypted, text; an unknown handle gives no row.
func (x *execCtx) sqlTextFunction(args []any) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("dbid", engine.TSmallInt, "objectid", engine.TInt, "number", engine.TSmallInt, "encrypted", engine.TBit, "text", engine.TNMax)}
	if len(args) != 1 {
		return nil, sqlfront.NewError(216, 16, "Parameters supplied for object '%s' which is not a function. If the parameters are intended as a table hint, a WITH keyword is required.", "dm_exec_sql_text")
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
	for el := x.srv.plans.lru.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*planCacheEntry); string(e.sqlHandle) == string(h) {
			dbid = int64(e.dbID)
			break
		}
	}
	r.Rows = append(r.Rows, []any{dbid, nil, nil, false, text})
	return r, nil
}

// extraSysViews and extraTableFunctions are views and functions defined
// outside sources.go; its lookups consult them.
var extraSysViews = map[string]viewFunc{
	"dm_exec_query_stats": dmExecQueryStats,
}

var extraTableFunctions = map[string]func(x *execCtx, args []any) (*engine.Relation, *sqlfront.SQLError){
	"dm_exec_sql_text": (*execCtx).sqlTextFunction,
}
