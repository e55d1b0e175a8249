package standin

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"

	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
	"github.com/queryreplay/queryreplay/internal/tds"
)

// Running a planned statement: plan, memory grant, execution, and the
// query-level events and actual plan afterwards.

// planStatement plans a query expression for execution at the top level
// of a statement: it decides on parallelism (OPTION (MAXDOP n) with n > 1
// over a table large enough to be worth it; the emulated instance's own
// MAXDOP is 1) and adds the Gather Streams.
func (x *execCtx) planStatement(r *engine.RunCtx, s *sqlfront.SelectStmt, root sqlfront.Stmt) (engine.Iter, *engine.Relation, int, *engine.Planner, *sqlfront.SQLError) {
	p := engine.NewPlanner(x, r)
	p.StmtRoot = root
	p.Opts = sqlfront.QueryOptions{MaxRecursion: -1}
	p.Opts = engine.MergeOptions(p.Opts, s.Opts)
	if p.Opts.MaxDOP > 1 && x.largestTablePages(s) >= 32 {
		p.Parallel = true
		r.DOP = p.Opts.MaxDOP
	}
	it, schema, visible, err := p.PlanQuery(s)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	if p.Parallel {
		it = p.Gather(it)
	}
	return it, schema, visible, p, nil
}

// largestTablePages is the leaf page count of the largest table s reads.
func (x *execCtx) largestTablePages(s *sqlfront.SelectStmt) int {
	best := 0
	engine.WalkSelectWith(s, func(sqlfront.Expr) {}, func(q *sqlfront.SelectStmt) {
		var ref func(sqlfront.TableRef)
		ref = func(t sqlfront.TableRef) {
			switch v := t.(type) {
			case *sqlfront.JoinRef:
				ref(v.Left)
				ref(v.Right)
			case *sqlfront.TableName:
				if tbl, _, err := x.resolveTable(v.Parts); err == nil && tbl != nil {
					best = max(best, len(tbl.Indexes[0].LeafPages))
				}
			}
		}
		if q.From != nil {
			ref(q.From)
		}
	})
	return best
}

// finalizePlan numbers the operators (pre-order, as SQL Server does) and
// divides the memory grant among the memory-consuming ones.
func (x *execCtx) finalizePlan(r *engine.RunCtx, root *engine.PlanNode, opts sqlfront.QueryOptions) {
	id := 0
	var number func(n *engine.PlanNode)
	number = func(n *engine.PlanNode) {
		if !n.Hidden || len(n.Children) != 1 {
			n.ID = id
			id++
		}
		for _, c := range n.Children {
			number(c)
		}
	}
	number(root)
	var total int64
	root.Walk(func(n *engine.PlanNode) {
		if n.Memory {
			total += n.EstMemKB
		}
	})
	if total == 0 {
		return
	}
	grant := max(total, minGrantKB)
	if opts.MinGrant > 0 {
		grant = max(grant, int64(opts.MinGrant*maxQueryMemoryKB/100))
	}
	if opts.MaxGrant > 0 {
		grant = min(grant, max(int64(opts.MaxGrant*maxQueryMemoryKB/100), 512))
	}
	grant = min(grant, maxQueryMemoryKB)
	r.GrantKB = grant
	root.Walk(func(n *engine.PlanNode) {
		if n.Memory {
			n.GrantKB = max(1, grant*n.EstMemKB/total)
		}
	})
}

// queryRun is one statement's execution with its plan.
type queryRun struct {
	r     *engine.RunCtx
	root  *engine.PlanNode
	text  string
	stype string
	start time.Time
	opts  sqlfront.QueryOptions
}

// beginQuery finalizes the plan, takes the memory grant and sets the
// event context's query and plan hashes.
func (x *execCtx) beginQuery(r *engine.RunCtx, root *engine.PlanNode, stype string, opts sqlfront.QueryOptions) (*queryRun, *sqlfront.SQLError) {
	x.finalizePlan(r, root, opts)
	q := &queryRun{r: r, root: root, text: x.stmtText, stype: stype, start: x.srv.now(), opts: opts}
	qh := fnv.New64a()
	qh.Write([]byte(sqlfront.NormalizeSQL(x.stmtText)))
	x.ec.QueryHash = qh.Sum64()
	ph := fnv.New64a()
	root.Walk(func(n *engine.PlanNode) { ph.Write([]byte(n.Physical + "|" + n.Logical + ";")) })
	x.ec.PlanHash = ph.Sum64()
	x.ec.PlanHandle = fmt.Sprintf("06000500%016X%016X0000000000000000000000000000000000000000", x.ec.QueryHash, x.ec.PlanHash)
	if x.conn.txn != nil {
		x.ec.TxnID = x.conn.txn.id
	}
	x.recordPlanCache() // sys.dm_exec_query_stats (plancache.go)
	if err := x.acquireGrant(r); err != nil {
		return nil, err
	}
	x.conn.live = &liveQuery{x: x, q: q} // queryprofiles.go
	return q, nil
}

// endQuery emits query_thread_profile, query_memory_grant_usage and the
// actual plan (query_post_execution_showplan), and keeps the plan for SET
// STATISTICS XML.
func (x *execCtx) endQuery(q *queryRun, rows int64) {
	defer x.releaseGrant(q.r)
	x.conn.live = nil
	s := x.srv
	end := s.advance(25 * time.Microsecond)
	used := int64(0)
	q.root.Walk(func(n *engine.PlanNode) { used += n.UsedKB })
	q.r.UsedKB = used
	wantPlan := x.conn.statsXML || s.anySessionRunning()
	if !wantPlan {
		return
	}
	engine.ThreadProfiles(x, q.root)
	dop := int64(max(q.r.DOP, 1))
	if q.r.GrantKB > 0 {
		s.emit(x.ec, &xevents.EventData{Name: "query_memory_grant_usage", Pkg: "sqlserver", Time: s.advance(4 * time.Microsecond), Fields: []xevents.Field{
			xevents.FUint("granted_memory_kb", "uint64", q.r.GrantKB), xevents.FUint("used_memory_kb", "uint64", used), xevents.FUint("ideal_memory_kb", "uint64", max(used, q.r.GrantKB)),
			xevents.FUint("granted_percent", "int32", 100), xevents.FUint("usage_percent", "int32", used*100/q.r.GrantKB), xevents.FUint("dop", "uint16", dop)}})
	}
	plan := x.showplanDocument(q, rows)
	x.lastPlan = plan
	if !s.anySessionRunning() {
		return
	}
	dur := end.Sub(q.start).Microseconds()
	objType, objID, nest, objName := x.showplanObject() // procs.go
	s.emit(x.ec, &xevents.EventData{Name: "query_post_execution_showplan", Pkg: "sqlserver", Time: s.advance(10 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("source_database_id", "uint32", int64(x.conn.db.ID)), xevents.FMap("object_type", "object_type", "sqlserver", objType),
		xevents.FUint("object_id", "int32", objID), xevents.FUint("nest_level", "uint16", nest), xevents.FUint("cpu_time", "uint64", dur*6/10), xevents.FUint("duration", "uint64", dur),
		xevents.FUint("estimated_rows", "int32", int64(q.root.EstRows)), xevents.FUint("estimated_cost", "int32", int64(q.root.SubtreeCost)+1), xevents.FUint("serial_ideal_memory_kb", "uint64", q.r.GrantKB),
		xevents.FUint("requested_memory_kb", "uint64", q.r.GrantKB), xevents.FUint("used_memory_kb", "uint64", used), xevents.FUint("ideal_memory_kb", "uint64", q.r.GrantKB),
		xevents.FUint("granted_memory_kb", "uint64", q.r.GrantKB), xevents.FUint("dop", "uint32", dop), xevents.FStr("object_name", objName), xevents.FStr("database_name", x.conn.db.Name),
		{Name: "showplan_xml", Typ: "xml", Pkg: "package0", Value: plan, XMLBody: true}}})
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// showplanDocument renders the whole actual plan document.
func (x *execCtx) showplanDocument(q *queryRun, rows int64) string {
	b := engine.NewXMLBuilder()
	fmt.Fprintf(&b.Buf, `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.6" Build="%s">`, productVersion)
	b.Open("BatchSequence")
	b.Open("Batch")
	b.Open("Statements")
	b.Open("StmtSimple", "StatementText", q.text, "StatementId", "1", "StatementCompId", "1", "StatementType", q.stype,
		"RetrievedFromCache", "false", "StatementSubTreeCost", engine.Ftoa(q.root.SubtreeCost), "StatementEstRows", engine.Ftoa(q.root.EstRows),
		"StatementOptmLevel", "FULL", "QueryHash", fmt.Sprintf("0x%016X", x.ec.QueryHash), "QueryPlanHash", fmt.Sprintf("0x%016X", x.ec.PlanHash),
		"CardinalityEstimationModelVersion", "140")
	b.Empty("StatementSetOptions", "QUOTED_IDENTIFIER", "true", "ARITHABORT", "true", "CONCAT_NULL_YIELDS_NULL", "true", "ANSI_NULLS", "true",
		"ANSI_PADDING", "true", "ANSI_WARNINGS", "true", "NUMERIC_ROUNDABORT", "false")
	dop := max(q.r.DOP, 1)
	b.DOP = dop
	kv := []string{"DegreeOfParallelism", fmt.Sprint(dop)}
	if q.r.GrantKB > 0 {
		kv = append(kv, "MemoryGrant", fmt.Sprint(q.r.GrantKB))
	}
	if dop == 1 {
		kv = append(kv, "NonParallelPlanReason", "MaxDOPSetToOne")
	}
	kv = append(kv, "CachedPlanSize", "40", "CompileTime", "2", "CompileCPU", "2", "CompileMemory", "320")
	b.Open("QueryPlan", kv...)
	if dop > 1 {
		b.Empty("ThreadStat", "Branches", "1", "UsedThreads", fmt.Sprint(dop))
	}
	if q.r.GrantKB > 0 {
		b.Empty("MemoryGrantInfo", "SerialRequiredMemory", "512", "SerialDesiredMemory", fmt.Sprint(q.r.GrantKB), "RequiredMemory", "512",
			"DesiredMemory", fmt.Sprint(q.r.GrantKB), "RequestedMemory", fmt.Sprint(q.r.GrantKB), "GrantWaitTime", fmt.Sprint(q.r.WaitMs/1000),
			"GrantedMemory", fmt.Sprint(q.r.GrantKB), "MaxUsedMemory", fmt.Sprint(q.r.UsedKB), "MaxQueryMemory", fmt.Sprint(maxQueryMemoryKB))
	}
	elapsed := x.srv.clock.Sub(q.start).Milliseconds()
	b.Empty("QueryTimeStats", "CpuTime", fmt.Sprint(elapsed*6/10), "ElapsedTime", fmt.Sprint(elapsed))
	b.Relop(q.root)
	b.Close()
	b.Close()
	b.Close()
	b.Close()
	b.Close()
	b.Buf.WriteString("</ShowPlanXML>")
	return b.Buf.String()
}

// sendStatsXML returns the actual plan as an extra result set when SET
// STATISTICS XML is ON, as SQL Server does
// (https://learn.microsoft.com/en-us/sql/t-sql/statements/set-statistics-xml-transact-sql).
func (x *execCtx) sendStatsXML() error {
	if !x.conn.statsXML || x.lastPlan == "" {
		return nil
	}
	plan := x.lastPlan
	x.lastPlan = ""
	rel := &engine.Relation{Cols: []engine.RelCol{{Name: "Microsoft SQL Server 2005 XML Showplan", Typ: engine.TXML}}, Rows: [][]any{{plan}}}
	return x.sendRelation(rel)
}

// execSelect runs a SELECT and streams its result.
func (x *execCtx) execSelect(s *sqlfront.SelectStmt) error {
	x.lastPlan = ""
	if s.Into != nil {
		return x.execSelectInto(s)
	}
	r := engine.NewRunCtx(x)
	it, schema, visible, p, err := x.planStatement(r, s, s)
	if err != nil {
		return err
	}
	if x.conn.modes.fmtonly {
		// SET FMTONLY ON: the result's columns, nothing executed
		if _, _, werr := x.sendResult(r, it, schema, visible); werr != nil {
			return werr
		}
		return x.done(tds.CmdSelect, 0)
	}
	q, err := x.beginQuery(r, it.Node(), "SELECT", p.Opts)
	if err != nil {
		return err
	}
	if err := r.Open(it, nil); err != nil {
		x.endQuery(q, 0)
		return err
	}
	n, serr, werr := x.sendResult(r, it, schema, visible)
	r.Close(it)
	x.endQuery(q, n)
	if werr != nil {
		return werr
	}
	x.stats.rows += n
	if serr != nil {
		return serr
	}
	if err := x.done(tds.CmdSelect, n); err != nil {
		return err
	}
	return x.sendStatsXML()
}

// subqueryRows evaluates a subquery outside a plan (in an IF condition, a
// SET or DECLARE value, a DML assignment): planned once per statement,
// run with env's rows in scope.
func (x *execCtx) subqueryRows(sel *sqlfront.SelectStmt, env *engine.EvalEnv, limit int) ([][]any, *sqlfront.SQLError) {
	if x.subplans == nil {
		x.subplans = map[*sqlfront.SelectStmt]engine.Iter{}
	}
	it, ok := x.subplans[sel]
	r := x.subRun
	if r == nil {
		r = engine.NewRunCtx(x)
		x.subRun = r
	}
	if !ok {
		p := engine.NewPlanner(x, r)
		p.Opts = sqlfront.QueryOptions{MaxRecursion: -1}
		var chain []*engine.Relation
		for e := env; e != nil; e = e.Outer {
			if e.Rel != nil {
				chain = append(chain, e.Rel)
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			p.Scope = &engine.PScope{Rel: chain[i], Parent: p.Scope}
		}
		var err *sqlfront.SQLError
		if it, _, _, err = p.PlanQuery(sel); err != nil {
			return nil, err
		}
		x.finalizePlan(r, it.Node(), p.Opts)
		x.subplans[sel] = it
	}
	ts, err := r.Drain(it, env, limit, false)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(ts))
	for i, t := range ts {
		rows[i] = t.Vals
	}
	return rows, nil
}

// varType is a declared variable's type.
func (x *execCtx) varType(name string) (sqlfront.SQLType, bool) {
	t, ok := x.conn.sqlState().varTypes[strings.ToLower(name)]
	return t, ok
}
