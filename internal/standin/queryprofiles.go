package standin

import (
	"sort"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
)

// Live query progress: sys.dm_exec_query_profiles and
// sys.dm_exec_query_statistics_xml, the lightweight query profiling views
// SSMS's Live Query Statistics reads while a query runs.
//
// sys.dm_exec_query_profiles has one row per operator and thread of every
// query that is running now, with its counters so far
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-profiles-transact-sql);
// a query that has ended has no row. sys.dm_exec_query_statistics_xml
// (session_id) returns the running request's plan with its statistics so
// far
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-statistics-xml-transact-sql).
// Both need VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE on SQL
// Server 2022 and later; Msg 300 without it), and both read the query
// profiling infrastructure
// (https://learn.microsoft.com/en-us/sql/relational-databases/performance/query-profiling-infrastructure):
// lightweight profiling is on by default from SQL Server 2019 (15.x) and
// Azure SQL Database; before that a query is profiled only when trace
// flag 7412 is on, when an event session captures
// query_thread_profile, query_post_execution_showplan or
// query_post_execution_profile, or when the session asked for SET
// STATISTICS XML. An unprofiled query has no rows here.
//
// The stand-in serves the counters its operators keep (planNode.threads):
// row_count, the reads, and the operator times of optiming.go on the
// session's event clock. open_time, first_row_time, last_row_time and
// close_time are milliseconds since the server started, 0 while the
// operator has not got there. cpu_time_ms equals elapsed_time_ms: the
// stand-in does not split CPU from waiting inside an operator.

// liveQuery is the query a session runs now (connState.live), set by
// beginQuery and cleared by endQuery.
type liveQuery struct {
	x *execCtx
	q *queryRun
}

func init() {
	extraSysViews["dm_exec_query_profiles"] = dmExecQueryProfiles
	extraTableFunctions["dm_exec_query_statistics_xml"] = (*execCtx).queryStatisticsXML
}

// profiled tells whether c's running query is seen by the profiling
// infrastructure, by the rules above.
func (s *Server) profiled(c *connState) bool {
	if s.persona.Version.Major >= 15 || s.persona.EngineEdition == 5 || c.traceFlag(7412) || c.statsXML {
		return true
	}
	for _, sess := range s.sessions {
		if !sess.Running {
			continue
		}
		for _, e := range sess.Events {
			switch e.Name {
			case "query_thread_profile", "query_post_execution_showplan", "query_post_execution_profile":
				return true
			}
		}
	}
	return false
}

// liveQueries lists the profiled queries running now that x may see, by
// session id.
func (x *execCtx) liveQueries() []*connState {
	var out []*connState
	for _, id := range x.visibleSessions() {
		c := x.srv.conns[id]
		if c != nil && c.live != nil && !c.killed && x.srv.profiled(c) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].spid < out[j].spid })
	return out
}

// dmExecQueryProfiles is sys.dm_exec_query_profiles.
func dmExecQueryProfiles(x *execCtx, _ *database) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("session_id", engine.TSmallInt, "request_id", engine.TInt, "physical_operator_name", engine.TNVar(256),
		"node_id", engine.TInt, "thread_id", engine.TInt, "row_count", engine.TBigInt, "rewind_count", engine.TBigInt, "rebind_count", engine.TBigInt,
		"end_of_scan_count", engine.TBigInt, "estimate_row_count", engine.TBigInt, "first_active_time", engine.TBigInt, "last_active_time", engine.TBigInt,
		"open_time", engine.TBigInt, "first_row_time", engine.TBigInt, "last_row_time", engine.TBigInt, "close_time", engine.TBigInt,
		"elapsed_time_ms", engine.TBigInt, "cpu_time_ms", engine.TBigInt, "database_id", engine.TSmallInt, "object_id", engine.TInt,
		"index_id", engine.TInt, "scan_count", engine.TBigInt, "logical_read_count", engine.TBigInt, "physical_read_count", engine.TBigInt,
		"read_ahead_count", engine.TBigInt, "write_page_count", engine.TBigInt, "actual_read_row_count", engine.TBigInt,
		"estimated_read_row_count", engine.TBigInt)}
	if x.schemaOnly {
		return r, nil
	}
	if err := x.checkViewState(); err != nil {
		return nil, err
	}
	for _, c := range x.liveQueries() {
		c.live.q.root.walk(func(n *planNode) {
			if n.hidden {
				return // the showplan shows its child in its place
			}
			r.Rows = append(r.Rows, x.srv.profileRows(c, n)...)
		})
	}
	return r, nil
}

// profileRows are one operator's rows: one per thread that ran it, or one
// for thread 0 with nothing counted while none has.
func (s *Server) profileRows(c *connState, n *planNode) [][]any {
	threads := make([]int, 0, len(n.threads))
	for t := range n.threads {
		threads = append(threads, t)
	}
	sort.Ints(threads)
	if len(threads) == 0 {
		threads = []int{0}
	}
	var obj, ix any = int64(0), int64(0)
	if n.ix != nil {
		obj, ix = n.ix.tbl.objectID, int64(n.ix.id)
	}
	est := int64(n.estRows*max(n.estExecs, 1) + 0.5)
	out := make([][]any, 0, len(threads))
	for _, t := range threads {
		tc := threadCounters{}
		if p := n.threads[t]; p != nil {
			tc = *p
		}
		ms := func(at time.Time) int64 {
			if at.IsZero() {
				return 0
			}
			return max(at.Sub(s.start).Milliseconds(), 1)
		}
		last := tc.lastRow
		if tc.exhausted.After(last) {
			last = tc.exhausted
		}
		active := tc.active.Milliseconds()
		out = append(out, []any{int64(c.spid), int64(0), n.physical, int64(n.id), int64(t), tc.rows, tc.rewinds, tc.rebinds, tc.endOfScans, est,
			ms(tc.opened), ms(last), ms(tc.opened), ms(tc.firstRow), ms(tc.lastRow), ms(tc.closed), active, active, int64(c.db.id), obj, ix,
			tc.scans, tc.logical, tc.physical, tc.readAheads, int64(0), tc.rowsRead, int64(n.estRowsRead + 0.5)})
	}
	return out
}

// queryStatisticsXML is sys.dm_exec_query_statistics_xml(session_id): the
// running request's plan with its counters so far; no row for a session
// without a profiled running query, or one the caller may not see.
func (x *execCtx) queryStatisticsXML(args []any) (*engine.Relation, *sqlfront.SQLError) {
	r := &engine.Relation{Cols: cols("session_id", engine.TSmallInt, "request_id", engine.TInt, "sql_handle", engine.TVarBin(64),
		"plan_handle", engine.TVarBin(64), "query_plan", engine.TXML)}
	if len(args) != 1 {
		return nil, sqlfront.NewError(8144, 16, "Procedure or function dm_exec_query_statistics_xml has too many arguments specified.")
	}
	if x.schemaOnly {
		return r, nil
	}
	if err := x.checkViewState(); err != nil {
		return nil, err
	}
	id, ok := args[0].(int64)
	if !ok {
		return r, nil
	}
	for _, c := range x.liveQueries() {
		if int64(c.spid) != id {
			continue
		}
		lq := c.live
		rows := lq.q.root.total().rows
		r.Rows = append(r.Rows, []any{id, int64(0), nil, nil, lq.x.showplanDocument(lq.q, rows)})
	}
	return r, nil
}
