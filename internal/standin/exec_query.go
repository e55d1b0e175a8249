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
func (x *execCtx) planStatement(r *runCtx, s *sqlfront.SelectStmt, root sqlfront.Stmt) (iter, *engine.Relation, int, *planner, *sqlfront.SQLError) {
	p := newPlanner(x, r)
	p.stmtRoot = root
	p.opts = sqlfront.QueryOptions{MaxRecursion: -1}
	p.opts = mergeOptions(p.opts, s.Opts)
	if p.opts.MaxDOP > 1 && x.largestTablePages(s) >= 32 {
		p.parallel = true
		r.dop = p.opts.MaxDOP
	}
	it, schema, visible, err := p.planQuery(s)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	if p.parallel {
		it = p.gather(it)
	}
	return it, schema, visible, p, nil
}

// largestTablePages is the leaf page count of the largest table s reads.
func (x *execCtx) largestTablePages(s *sqlfront.SelectStmt) int {
	best := 0
	walkSelectWith(s, func(sqlfront.Expr) {}, func(q *sqlfront.SelectStmt) {
		var ref func(sqlfront.TableRef)
		ref = func(t sqlfront.TableRef) {
			switch v := t.(type) {
			case *sqlfront.JoinRef:
				ref(v.Left)
				ref(v.Right)
			case *sqlfront.TableName:
				if tbl, _, err := x.resolveTable(v.Parts); err == nil && tbl != nil {
					best = max(best, len(tbl.indexes[0].leafPages))
				}
			}
		}
		if q.From != nil {
			ref(q.From)
		}
	})
	return best
}

// gather puts the Gather Streams of a parallel plan below the operators
// that must run serially (Top, and a final column selection), merging in
// sort order when the parallel part ends with a Sort.
func (p *planner) gather(it iter) iter {
	switch t := it.(type) {
	case *topIter:
		t.in = p.gather(t.in)
		t.n.children = []*planNode{t.in.node()}
		return t
	case *projectIter:
		if t.n.hidden {
			t.in = p.gather(t.in)
			t.n.children = []*planNode{t.in.node()}
			return t
		}
	}
	var order []sortKey
	if s, ok := it.(*sortIter); ok {
		order = s.keys
	}
	g := p.exchange(it, "Gather Streams", nil, order)
	for _, c := range g.node().children {
		c.walk(func(n *planNode) { n.parallel = true })
	}
	for _, s := range p.scansOf(it) {
		s.dop = p.opts.MaxDOP
	}
	return g
}

// scansOf lists the scan operators in a plan.
func (p *planner) scansOf(it iter) []*scanIter {
	var out []*scanIter
	var walk func(it iter)
	walk = func(it iter) {
		switch t := it.(type) {
		case *scanIter:
			if !t.lookup {
				out = append(out, t)
			}
		case *nlIter:
			walk(t.outer)
			walk(t.inner)
		case *hashJoinIter:
			walk(t.build)
			walk(t.probe)
		case *mergeJoinIter:
			walk(t.left)
			walk(t.right)
		case *filterIter:
			walk(t.in)
		case *projectIter:
			walk(t.in)
		case *sortIter:
			walk(t.in)
		case *topIter:
			walk(t.in)
		case *aggIter:
			walk(t.in)
		case *distinctIter:
			walk(t.in)
		case *exchangeIter:
			walk(t.in)
		case *windowIter:
			walk(t.in)
		case *renameIter:
			walk(t.in)
		case *positionIter:
			walk(t.in)
		case *concatIter:
			for _, c := range t.ins {
				walk(c)
			}
		}
	}
	walk(it)
	return out
}

// finalizePlan numbers the operators (pre-order, as SQL Server does) and
// divides the memory grant among the memory-consuming ones.
func (x *execCtx) finalizePlan(r *runCtx, root *planNode, opts sqlfront.QueryOptions) {
	id := 0
	var number func(n *planNode)
	number = func(n *planNode) {
		if !n.hidden || len(n.children) != 1 {
			n.id = id
			id++
		}
		for _, c := range n.children {
			number(c)
		}
	}
	number(root)
	var total int64
	root.walk(func(n *planNode) {
		if n.memory {
			total += n.estMemKB
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
	r.grantKB = grant
	root.walk(func(n *planNode) {
		if n.memory {
			n.grantKB = max(1, grant*n.estMemKB/total)
		}
	})
}

// queryRun is one statement's execution with its plan.
type queryRun struct {
	r     *runCtx
	root  *planNode
	text  string
	stype string
	start time.Time
	opts  sqlfront.QueryOptions
}

// beginQuery finalizes the plan, takes the memory grant and sets the
// event context's query and plan hashes.
func (x *execCtx) beginQuery(r *runCtx, root *planNode, stype string, opts sqlfront.QueryOptions) (*queryRun, *sqlfront.SQLError) {
	x.finalizePlan(r, root, opts)
	q := &queryRun{r: r, root: root, text: x.stmtText, stype: stype, start: x.srv.now(), opts: opts}
	qh := fnv.New64a()
	qh.Write([]byte(sqlfront.NormalizeSQL(x.stmtText)))
	x.ec.QueryHash = qh.Sum64()
	ph := fnv.New64a()
	root.walk(func(n *planNode) { ph.Write([]byte(n.physical + "|" + n.logical + ";")) })
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
	q.root.walk(func(n *planNode) { used += n.usedKB })
	q.r.usedKB = used
	wantPlan := x.conn.statsXML || s.anySessionRunning()
	if !wantPlan {
		return
	}
	x.threadProfiles(q.root)
	dop := int64(max(q.r.dop, 1))
	if q.r.grantKB > 0 {
		s.emit(x.ec, &xevents.EventData{Name: "query_memory_grant_usage", Pkg: "sqlserver", Time: s.advance(4 * time.Microsecond), Fields: []xevents.Field{
			xevents.FUint("granted_memory_kb", "uint64", q.r.grantKB), xevents.FUint("used_memory_kb", "uint64", used), xevents.FUint("ideal_memory_kb", "uint64", max(used, q.r.grantKB)),
			xevents.FUint("granted_percent", "int32", 100), xevents.FUint("usage_percent", "int32", used*100/q.r.grantKB), xevents.FUint("dop", "uint16", dop)}})
	}
	plan := x.showplanDocument(q, rows)
	x.lastPlan = plan
	if !s.anySessionRunning() {
		return
	}
	dur := end.Sub(q.start).Microseconds()
	objType, objID, nest, objName := x.showplanObject() // procs.go
	s.emit(x.ec, &xevents.EventData{Name: "query_post_execution_showplan", Pkg: "sqlserver", Time: s.advance(10 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("source_database_id", "uint32", int64(x.conn.db.id)), xevents.FMap("object_type", "object_type", "sqlserver", objType),
		xevents.FUint("object_id", "int32", objID), xevents.FUint("nest_level", "uint16", nest), xevents.FUint("cpu_time", "uint64", dur*6/10), xevents.FUint("duration", "uint64", dur),
		xevents.FUint("estimated_rows", "int32", int64(q.root.estRows)), xevents.FUint("estimated_cost", "int32", int64(q.root.subtreeCost)+1), xevents.FUint("serial_ideal_memory_kb", "uint64", q.r.grantKB),
		xevents.FUint("requested_memory_kb", "uint64", q.r.grantKB), xevents.FUint("used_memory_kb", "uint64", used), xevents.FUint("ideal_memory_kb", "uint64", q.r.grantKB),
		xevents.FUint("granted_memory_kb", "uint64", q.r.grantKB), xevents.FUint("dop", "uint32", dop), xevents.FStr("object_name", objName), xevents.FStr("database_name", x.conn.db.name),
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
	b := newXMLBuilder()
	fmt.Fprintf(&b.b, `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.6" Build="%s">`, productVersion)
	b.open("BatchSequence")
	b.open("Batch")
	b.open("Statements")
	b.open("StmtSimple", "StatementText", q.text, "StatementId", "1", "StatementCompId", "1", "StatementType", q.stype,
		"RetrievedFromCache", "false", "StatementSubTreeCost", ftoa(q.root.subtreeCost), "StatementEstRows", ftoa(q.root.estRows),
		"StatementOptmLevel", "FULL", "QueryHash", fmt.Sprintf("0x%016X", x.ec.QueryHash), "QueryPlanHash", fmt.Sprintf("0x%016X", x.ec.PlanHash),
		"CardinalityEstimationModelVersion", "140")
	b.empty("StatementSetOptions", "QUOTED_IDENTIFIER", "true", "ARITHABORT", "true", "CONCAT_NULL_YIELDS_NULL", "true", "ANSI_NULLS", "true",
		"ANSI_PADDING", "true", "ANSI_WARNINGS", "true", "NUMERIC_ROUNDABORT", "false")
	dop := max(q.r.dop, 1)
	b.dop = dop
	kv := []string{"DegreeOfParallelism", fmt.Sprint(dop)}
	if q.r.grantKB > 0 {
		kv = append(kv, "MemoryGrant", fmt.Sprint(q.r.grantKB))
	}
	if dop == 1 {
		kv = append(kv, "NonParallelPlanReason", "MaxDOPSetToOne")
	}
	kv = append(kv, "CachedPlanSize", "40", "CompileTime", "2", "CompileCPU", "2", "CompileMemory", "320")
	b.open("QueryPlan", kv...)
	if dop > 1 {
		b.empty("ThreadStat", "Branches", "1", "UsedThreads", fmt.Sprint(dop))
	}
	if q.r.grantKB > 0 {
		b.empty("MemoryGrantInfo", "SerialRequiredMemory", "512", "SerialDesiredMemory", fmt.Sprint(q.r.grantKB), "RequiredMemory", "512",
			"DesiredMemory", fmt.Sprint(q.r.grantKB), "RequestedMemory", fmt.Sprint(q.r.grantKB), "GrantWaitTime", fmt.Sprint(q.r.waitMs/1000),
			"GrantedMemory", fmt.Sprint(q.r.grantKB), "MaxUsedMemory", fmt.Sprint(q.r.usedKB), "MaxQueryMemory", fmt.Sprint(maxQueryMemoryKB))
	}
	elapsed := x.srv.clock.Sub(q.start).Milliseconds()
	b.empty("QueryTimeStats", "CpuTime", fmt.Sprint(elapsed*6/10), "ElapsedTime", fmt.Sprint(elapsed))
	b.relop(q.root)
	b.close()
	b.close()
	b.close()
	b.close()
	b.close()
	b.b.WriteString("</ShowPlanXML>")
	return b.b.String()
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
	r := newRunCtx(x)
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
	q, err := x.beginQuery(r, it.node(), "SELECT", p.opts)
	if err != nil {
		return err
	}
	if err := r.open(it, nil); err != nil {
		x.endQuery(q, 0)
		return err
	}
	n, serr, werr := x.sendResult(r, it, schema, visible)
	r.close(it)
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
		x.subplans = map[*sqlfront.SelectStmt]iter{}
	}
	it, ok := x.subplans[sel]
	r := x.subRun
	if r == nil {
		r = newRunCtx(x)
		x.subRun = r
	}
	if !ok {
		p := newPlanner(x, r)
		p.opts = sqlfront.QueryOptions{MaxRecursion: -1}
		var chain []*engine.Relation
		for e := env; e != nil; e = e.Outer {
			if e.Rel != nil {
				chain = append(chain, e.Rel)
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			p.scope = &pscope{rel: chain[i], parent: p.scope}
		}
		var err *sqlfront.SQLError
		if it, _, _, err = p.planQuery(sel); err != nil {
			return nil, err
		}
		x.finalizePlan(r, it.node(), p.opts)
		x.subplans[sel] = it
	}
	ts, err := r.drain(it, env, limit, false)
	if err != nil {
		return nil, err
	}
	rows := make([][]any, len(ts))
	for i, t := range ts {
		rows[i] = t.vals
	}
	return rows, nil
}

// varType is a declared variable's type.
func (x *execCtx) varType(name string) (sqlfront.SQLType, bool) {
	t, ok := x.conn.sqlState().varTypes[strings.ToLower(name)]
	return t, ok
}
