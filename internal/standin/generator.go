package standin

import (
	"fmt"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin/engine"
	"github.com/queryreplay/queryreplay/internal/standin/sqlfront"
	"github.com/queryreplay/queryreplay/internal/standin/xevents"
)

// TraceEvent is one row as sys.fn_xe_file_target_read_file returns it.
type TraceEvent struct {
	Name       string
	XML        string
	FileOffset int64
	Timestamp  time.Time
}

// Trace is a synthetic trace of one query: its events in file order and its
// actual plan.
type Trace struct {
	Events  []TraceEvent
	PlanXML string
}

// GenerateTrace builds, without any server round trip, the trace of a
// synthetic query over `pages` data pages executed by a plan of `operators`
// operators (a left-deep tree of hash joins over clustered index scans; at
// least 1). Each page costs five events (S page lock acquired and released,
// PAGEIOLATCH_SH wait begin and end, physical_page_read), so
// GenerateTrace(200000, M) gives about 1,000,000 events. The output is
// deterministic (fixed start time, fixed ids), for benchmarks and golden
// tests of the trace parsers.
func GenerateTrace(pages, operators int) (*Trace, error) {
	if pages < 1 {
		return nil, fmt.Errorf("generate trace: pages must be at least 1, got %d", pages)
	}
	if operators < 1 {
		return nil, fmt.Errorf("generate trace: operators must be at least 1, got %d", operators)
	}
	root, ops, scans := genPlanTree(pages, operators)
	// operators beyond the tree (when operators is even) are Compute Scalars
	// on top of the root
	extra := operators - len(ops)
	w := newTraceWriter(pages, operators)
	start := w.clock
	w.add(&xevents.EventData{Name: "sql_batch_starting", Pkg: "sqlserver", Time: w.clock, Fields: []xevents.Field{xevents.FStr("batch_text", w.ec.SQLText)}})
	for _, sc := range scans {
		w.scanPages(sc)
	}
	finishJoins(root)
	for _, op := range ops {
		w.add(&xevents.EventData{Name: "query_thread_profile", Pkg: "sqlserver", Time: w.tick(3 * time.Microsecond), Fields: []xevents.Field{
			xevents.FUint("node_id", "uint32", int64(op.id)), xevents.FUint("thread_id", "uint32", 0), xevents.FUint("total_time_us", "uint64", op.end.Sub(op.start).Microseconds())}})
	}
	w.t.PlanXML = genPlanXML(root, len(ops), extra)
	for i := 0; i < extra; i++ {
		w.add(&xevents.EventData{Name: "query_thread_profile", Pkg: "sqlserver", Time: w.tick(3 * time.Microsecond), Fields: []xevents.Field{
			xevents.FUint("node_id", "uint32", int64(len(ops)+i)), xevents.FUint("thread_id", "uint32", 0), xevents.FUint("total_time_us", "uint64", root.end.Sub(root.start).Microseconds())}})
	}
	dur := w.clock.Sub(start).Microseconds()
	w.add(&xevents.EventData{Name: "query_post_execution_showplan", Pkg: "sqlserver", Time: w.tick(10 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("duration", "uint64", dur), xevents.FUint("dop", "uint32", 1), {Name: "showplan_xml", Typ: "xml", Pkg: "package0", Value: w.t.PlanXML, XMLBody: true}}})
	w.add(&xevents.EventData{Name: "sql_batch_completed", Pkg: "sqlserver", Time: w.tick(20 * time.Microsecond), Fields: []xevents.Field{
		xevents.FUint("cpu_time", "uint64", dur/2), xevents.FUint("duration", "uint64", dur), xevents.FUint("physical_reads", "uint64", int64(pages)),
		xevents.FUint("logical_reads", "uint64", int64(pages)), xevents.FUint("writes", "uint64", 0), xevents.FUint("row_count", "uint64", root.rows),
		xevents.FMap("result", "statement_result", "sqlserver", "OK"), xevents.FStr("batch_text", w.ec.SQLText)}})
	w.seal()
	return w.t, nil
}

// genOp is one operator of GenerateTrace's plan.
type genOp struct {
	id       int
	join     bool
	children []*genOp
	first    int32
	pages    int
	objectID int64
	hobt     int64
	rows     int64
	start    time.Time
	end      time.Time
}

// genPlanTree builds the left-deep tree of hash joins over scans, in node
// id order, and shares the pages out among the scans.
func genPlanTree(pages, operators int) (root *genOp, ops, scans []*genOp) {
	// a left-deep tree of j hash joins has j+1 scans; an even operator
	// count gets one Compute Scalar on top
	joins := (operators - 1) / 2
	leaves := joins + 1
	nextID := 0
	var build func(nJoins, nLeaves int) *genOp
	build = func(nJoins, nLeaves int) *genOp {
		if nJoins == 0 {
			op := &genOp{id: nextID}
			nextID++
			ops = append(ops, op)
			return op
		}
		op := &genOp{id: nextID, join: true}
		nextID++
		ops = append(ops, op)
		left := build(nJoins-1, nLeaves-1)
		right := build(0, 1)
		op.children = []*genOp{left, right}
		return op
	}
	root = build(joins, leaves)
	for _, op := range ops {
		if !op.join {
			scans = append(scans, op)
		}
	}
	page := int32(1000)
	for i, sc := range scans {
		n := pages / len(scans)
		if i < pages%len(scans) {
			n++
		}
		sc.first, sc.pages = page, n
		sc.objectID = 1000000000 + int64(i)*1000
		sc.hobt = engine.HobtBase + int64(5000+i)<<16
		sc.rows = int64(n) * 100
		page += int32(n) + 8
	}
	return root, ops, scans
}

// finishJoins gives each join its children's time span and its probe
// side's row count.
func finishJoins(op *genOp) {
	for _, c := range op.children {
		finishJoins(c)
	}
	if op.join {
		op.start = op.children[0].start
		op.end = op.children[1].end
		op.rows = op.children[1].rows
	}
}

// traceWriter renders GenerateTrace's events on a fixed clock, with file
// offsets as an event file of 4 MiB buffers would have them.
type traceWriter struct {
	t       *Trace
	ec      *xevents.EventCtx
	actions []sqlfront.XEName
	clock   time.Time
	seq     int64
	stamps  xevents.StampCache
	offset  int64
	// bufBytes is what the current event-file buffer holds so far.
	bufBytes int
	// Events are rendered into 16 MiB chunks and sliced out of them, so a
	// million events cost a few hundred allocations rather than millions.
	b           strings.Builder
	ends        []int
	pendingFrom int
}

const traceChunk = 16 << 20

func newTraceWriter(pages, operators int) *traceWriter {
	w := &traceWriter{
		ec:      &xevents.EventCtx{SPID: 57, DBID: demoDBID, DBName: demoDBName, SQLText: "/* generated */ SELECT ...", PlanHandle: "0600050051A8D2117018D9C70400000001000000000000000000000000000000000000000000000000000000", QueryHash: 0x1234ABCD5678EF01, PlanHash: 0x0FEDCBA987654321},
		actions: []sqlfront.XEName{{Package: "sqlserver", Name: "session_id"}, {Package: "package0", Name: "event_sequence"}, {Package: "sqlserver", Name: "plan_handle"}},
		clock:   time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
		t:       &Trace{Events: make([]TraceEvent, 0, pages*5+operators+4)},
		offset:  xevents.FileHeaderBytes,
	}
	w.b.Grow(traceChunk)
	w.pendingFrom = len(w.t.Events)
	return w
}

// seal slices the events rendered since the last seal out of the current
// chunk and starts a new one.
func (w *traceWriter) seal() {
	all := w.b.String()
	startAt := 0
	for i, end := range w.ends {
		w.t.Events[w.pendingFrom+i].XML = all[startAt:end]
		startAt = end
	}
	w.pendingFrom += len(w.ends)
	w.ends = w.ends[:0]
	w.b = strings.Builder{}
	w.b.Grow(traceChunk)
}

func (w *traceWriter) add(ev *xevents.EventData) {
	w.seq++
	before := w.b.Len()
	xevents.RenderEvent(&w.b, ev, w.actions, w.ec, w.seq, false, &w.stamps)
	w.ends = append(w.ends, w.b.Len())
	w.t.Events = append(w.t.Events, TraceEvent{Name: ev.Name, FileOffset: w.offset, Timestamp: ev.Time})
	w.bufBytes += (w.b.Len() - before) / 2
	if w.b.Len() > traceChunk-64<<10 {
		w.seal()
	}
	if w.bufBytes >= 4096*1024/3 {
		w.offset += int64((w.bufBytes + 64 + 511) / 512 * 512)
		w.bufBytes = 0
	}
}

func (w *traceWriter) tick(d time.Duration) time.Time { w.clock = w.clock.Add(d); return w.clock }

// scanPages emits a scan's five events per page: S page lock acquired,
// PAGEIOLATCH_SH wait begin, physical_page_read, wait end, lock released.
func (w *traceWriter) scanPages(sc *genOp) {
	sc.start = w.clock
	for p := 0; p < sc.pages; p++ {
		pid := sc.first + int32(p)
		lock := heldLock{resType: "PAGE", mode: "S", r0: uint32(pid), r1: 1, hobt: sc.hobt, desc: fmt.Sprintf("1:%d", pid)}
		lockFields := func() []xevents.Field {
			return []xevents.Field{xevents.FMap("resource_type", "lock_resource_type", "sqlserver", "PAGE"), xevents.FMap("mode", "lock_mode", "sqlserver", "S"),
				xevents.FMap("owner_type", "lock_owner_type", "sqlserver", "Transaction"), xevents.FUint("transaction_id", "int64", 0),
				xevents.FUint("database_id", "uint32", demoDBID), xevents.FUint("resource_0", "uint32", int64(lock.r0)), xevents.FUint("resource_1", "uint32", 1),
				xevents.FUint("resource_2", "uint32", 0), xevents.FUint("object_id", "int32", 0), xevents.FUint("associated_object_id", "uint64", sc.hobt),
				xevents.FUint("duration", "uint64", 0), xevents.FStr("resource_description", lock.desc)}
		}
		w.add(&xevents.EventData{Name: "lock_acquired", Pkg: "sqlserver", Time: w.tick(2 * time.Microsecond), Fields: lockFields()})
		res := xevents.FPtr("wait_resource", 0x000001E4A1000000+uint64(pid)*0x40)
		w.add(&xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: w.tick(3 * time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("wait_type", "wait_types", "sqlos", "PAGEIOLATCH_SH"), xevents.FMap("opcode", "event_opcode", "sqlos", "Begin"),
			xevents.FUint("duration", "uint64", 0), xevents.FUint("signal_duration", "uint64", 0), res}})
		wait := time.Duration(60+int(pid%5)*20) * time.Microsecond
		w.add(&xevents.EventData{Name: "physical_page_read", Pkg: "sqlserver", Time: w.tick(wait), Fields: []xevents.Field{
			xevents.FUint("file_id", "uint16", 1), xevents.FUint("page_id", "uint32", int64(pid))}})
		w.add(&xevents.EventData{Name: "wait_info", Pkg: "sqlos", Time: w.tick(time.Microsecond), Fields: []xevents.Field{
			xevents.FMap("wait_type", "wait_types", "sqlos", "PAGEIOLATCH_SH"), xevents.FMap("opcode", "event_opcode", "sqlos", "End"),
			xevents.FUint("duration", "uint64", wait.Milliseconds()), xevents.FUint("signal_duration", "uint64", 0), res}})
		w.add(&xevents.EventData{Name: "lock_released", Pkg: "sqlserver", Time: w.tick(2 * time.Microsecond), Fields: lockFields()})
	}
	sc.end = w.clock
}

// genPlanXML renders the actual plan: extra Compute Scalars (node ids from
// nOps on) over the join tree.
func genPlanXML(root *genOp, nOps, extra int) string {
	var pb strings.Builder
	fmt.Fprintf(&pb, `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.6" Build="%s"><BatchSequence><Batch><Statements><StmtSimple StatementText="generated" StatementId="1" StatementCompId="1" StatementType="SELECT"><QueryPlan DegreeOfParallelism="1">`, productVersion)
	var rel func(op *genOp, depth int)
	emitOp := func(id int, phys, logical string, rows int64, start, end time.Time) {
		fmt.Fprintf(&pb, `<RelOp NodeId="%d" PhysicalOp="%s" LogicalOp="%s" EstimateRows="%d" EstimateIO="0.003125" EstimateCPU="0.0001581" AvgRowSize="40" EstimatedTotalSubtreeCost="1" Parallel="false" EstimateRebinds="0" EstimateRewinds="0" EstimatedExecutionMode="Row"><OutputList/><RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="%d" ActualEndOfScans="1" ActualExecutions="1" ActualElapsedms="%d"/></RunTimeInformation>`,
			id, phys, logical, rows, rows, end.Sub(start).Milliseconds())
	}
	rel = func(op *genOp, depth int) {
		if op.join {
			emitOp(op.id, "Hash Match", "Inner Join", op.rows, op.start, op.end)
			pb.WriteString("<Hash><DefinedValues/>")
			for _, c := range op.children {
				rel(c, depth+1)
			}
			pb.WriteString("</Hash></RelOp>")
			return
		}
		emitOp(op.id, "Clustered Index Scan", "Clustered Index Scan", op.rows, op.start, op.end)
		fmt.Fprintf(&pb, `<IndexScan Ordered="false"><DefinedValues/><Object Database="[%s]" Schema="[dbo]" Table="[T%d]" Index="[PK_T%d]" IndexKind="Clustered"/></IndexScan></RelOp>`, demoDBName, op.id, op.id)
	}
	for i := 0; i < extra; i++ {
		emitOp(nOps+i, "Compute Scalar", "Compute Scalar", root.rows, root.start, root.end)
		pb.WriteString("<ComputeScalar>")
	}
	rel(root, 0)
	for i := 0; i < extra; i++ {
		pb.WriteString("</ComputeScalar></RelOp>")
	}
	pb.WriteString(`</QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`)
	return pb.String()
}
