package tracer

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// The live producer (Options.Live, live.go has the contract). While the
// batch runs, one goroutine reads on the control connection about once a
// second, under the lock the blocker sampler shares (the connection runs
// one request at a time):
//
//   - the operators' progress, sys.dm_exec_query_profiles for the traced
//     session (threads summed). It is the lightweight query profiling
//     infrastructure, on by default from SQL Server 2019 (15.x) and in
//     Azure SQL Database; on SQL Server 2016 SP1 and 2017 a query is
//     profiled when trace flag 7412 is on or an event session captures
//     query_thread_profile or query_post_execution_showplan — which the
//     trace's session does, so its batch is profiled on those versions
//     too:
//     https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-profiles-transact-sql
//     https://learn.microsoft.com/en-us/sql/relational-databases/performance/query-profiling-infrastructure
//   - the running plan, once, from sys.dm_exec_query_statistics_xml:
//     https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-statistics-xml-transact-sql
//   - the events dispatched since the last read (the session's
//     MAX_DISPATCH_LATENCY is 1 s), from the event file with
//     sys.fn_xe_file_target_read_file resumed after the last file_name and
//     file_offset read (initial_file_name, initial_offset: the read skips
//     that whole buffer, which was complete when it was read):
//     https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql
//
// The events are decoded as they come into the same collector the XML
// read-back fills (the first pass) and at once into the timeline's
// builders (the second; liveBuilt), which take the plan and the names when
// they build, so when the batch ends only the tail (what was dispatched
// after the last read, flushed by STOP) is left to read and add, and the
// finished bundle is the one the XML read-back builds from the same
// events. When the file the reads resume from has rolled away
// (the file size cap), the reads go on from the files left. A failed or
// refused read stops that part of the live view and never fails the trace:
// when the events could not be read incrementally the read-back after the
// batch reads them whole, as without Live.
//
// A ring_buffer target (Azure SQL Database, Managed Instance, a login that
// cannot see the log directory) is read from sys.dm_xe_session_targets'
// target_data instead, which returns every event the ring still holds each
// time: the live view takes those past the last event_sequence it took.
// Its finished replay is built from the ring read before STOP, as without
// Live (the ring drops its oldest events when full, so the events read
// live are not kept for it). ReadBackBinary is read after the batch as
// before (the live view then has the operators, not the events).

// Live reading limits (variables for tests).
var (
	// liveInterval is the time between two live reads of the events. A
	// quarter of a second, not the session's one-second dispatch latency:
	// an event waits for the next read after its buffer is dispatched, so
	// the wait is about half the interval, and what is left to read when
	// the batch ends (the tail, which the finished replay waits for) is
	// about one interval's worth (issue 29: events reached the panel 2.2 s
	// after they happened with one read a second, 1.0 s with four).
	liveInterval = 250 * time.Millisecond
	// liveOperatorsInterval is the time between two reads of the
	// operators' progress: about once a second is what a person follows,
	// and it spares the server three reads of the profiling DMV in four.
	liveOperatorsInterval = time.Second
	// liveFirst is the wait before the first one: the plan and the first
	// operators reach the view before the first second of events.
	liveFirst = 500 * time.Millisecond
	// liveMinGap is the least time between two live reads, so the blocker
	// sampler gets the control connection in between.
	liveMinGap = 50 * time.Millisecond
	// liveQueryTimeout bounds one live read on the control connection.
	liveQueryTimeout = 30 * time.Second
)

const (
	// maxLiveOperatorRows bounds the rows of one read of
	// sys.dm_exec_query_profiles (operators × threads).
	maxLiveOperatorRows = 20000
	// maxLivePlanBytes bounds the running plan read once.
	maxLivePlanBytes = 32 << 20
)

// liveReader is the live producer of one trace.
type liveReader struct {
	r     *run
	ctx   context.Context // not cancelled with the batch: a cancelled query could spoil the control connection
	start time.Time       // when the batch was sent

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}

	// the events
	events bool // the event file is read incrementally
	col    *collector
	// built holds the timeline's builders, which take each event as it is
	// read (the whole batch's and the statements'; the plan and the names
	// are given when they build, timeline.Builder.SetPlan and SetNames):
	// the timeline's pass over every event, most of what was left to do
	// when the batch ended, is done while it runs, and no event is kept
	built      *liveBuilt
	pos        filePos // the last file_name and file_offset read (file "": none yet)
	rows       int64   // event rows read so far
	truncated  bool    // MaxEvents was reached with rows left
	eventsNote string  // why incremental reading stopped
	// ring: the session's target is a ring_buffer, whose target_data is
	// read whole each time; ringSeq is the highest event_sequence taken
	// from it, ringSeen counts the events taken (the finished bundle is
	// built from the ring read before STOP, as without Live)
	ring      bool
	ringMaps  xe.MapResolver
	ringSeq   uint64
	ringSeen  int64
	base      time.Time
	haveBase  bool
	batchSeen bool

	// the next update
	seq       int
	opsRead   time.Time // when the operators were last read
	pending   []LiveEvent
	dropped   int64
	plan      string
	planTried bool
	planSent  bool
	objects   map[int]string // node id → schema.table.index, from the plan
	// rebinders: node id → the operators that can execute it again (see
	// planRebinders), from the plan
	rebinders map[int][]int
	ops       []OperatorProgress
	opsOff    bool // sys.dm_exec_query_profiles was refused or failed
	behind    bool // the last event read stopped at liveReadRows
	final     bool // the last update was sent
	// handedOver: the read-back took the events (a second read-back, in
	// tests, reads them whole)
	handedOver bool
}

// startLive starts the live producer when Options.Live is set; the returned
// function stops it and waits for its read in flight.
func (r *run) startLive(ctx context.Context, start time.Time) func() {
	if r.o.Live == nil {
		return func() {}
	}
	l := &liveReader{r: r, ctx: context.WithoutCancel(ctx), start: start, stop: make(chan struct{}), done: make(chan struct{})}
	r.live = l
	l.events = !r.spec.UsesRingBuffer() && r.o.ReadBack != ReadBackBinary
	if l.ring = r.spec.UsesRingBuffer(); l.ring {
		r.ctlMu.Lock()
		if maps := r.t.mapTable(ctx, r.conn); maps != nil {
			l.ringMaps = maps
		}
		r.ctlMu.Unlock()
	}
	if l.events {
		r.ctlMu.Lock() // the blocker sampler may have begun
		maps := r.t.mapTable(ctx, r.conn)
		r.ctlMu.Unlock()
		l.col = &collector{ids: newIdentities(), maps: maps, stmts: timeline.NewStatementSet()}
		built, err := newLiveBuilt(l.col, maps)
		if err != nil {
			l.stopEvents(err.Error())
		} else {
			l.built = built
		}
	}
	go l.loop()
	return func() {
		l.signal()
		<-l.done
	}
}

func (l *liveReader) signal() { l.stopOnce.Do(func() { close(l.stop) }) }

// busy tells whether a live read may be in flight on the control
// connection.
func (l *liveReader) busy() bool {
	if l == nil {
		return false
	}
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

func (l *liveReader) loop() {
	defer close(l.done)
	t := time.NewTimer(liveFirst)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.r.ctlMu.Lock() // connBad is written under it
		bad := l.r.connBad
		l.r.ctlMu.Unlock()
		if bad {
			return
		}
		began := time.Now()
		l.poll()
		l.send(true)
		// liveInterval from the start of one read to the next: a read that
		// took longer (a busy server) is followed at once, so what is left
		// after the batch (the tail) stays near one read's worth
		next := max(liveInterval-time.Since(began), liveMinGap)
		if l.behind { // the last read stopped at its cap: more is waiting
			next = liveMinGap
		}
		t.Reset(next)
	}
}

// poll makes one round of live reads.
func (l *liveReader) poll() {
	opsDue := !l.opsOff && time.Since(l.opsRead) >= liveOperatorsInterval-liveInterval/2
	if opsDue {
		l.opsRead = time.Now()
		l.readOperators()
	}
	if !l.planTried {
		l.readPlan()
	}
	if !l.events && !l.ring {
		return
	}
	if opsDue {
		// The operators' progress goes out before the events are read: on
		// a busy server that read takes a while, and the progress must not
		// wait for it (the loop sends the events read after it).
		l.send(true)
	}
	if l.ring {
		if err := l.readRing(); err != nil {
			l.ring = false
			l.r.t.log.Info("live: the ring buffer is read after the batch only", "err", err)
		}
		return
	}
	more, err := l.readEventsOnce(l.ctx)
	if err != nil {
		l.stopEvents(err.Error())
	}
	l.behind = more
}

// query runs one bounded live read on the control connection, holding the
// lock the blocker sampler shares.
func (l *liveReader) query(q string, args []any, each func(*sql.Rows) error) error {
	l.r.ctlMu.Lock()
	defer l.r.ctlMu.Unlock()
	ctx, cancel := context.WithTimeout(l.ctx, liveQueryTimeout)
	defer cancel()
	rows, err := l.r.conn.QueryContext(ctx, q, args...)
	if err != nil {
		l.r.noteConnErr(err)
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			if errors.Is(err, errEnough) {
				break
			}
			return err
		}
	}
	if err := rows.Err(); err != nil {
		l.r.noteConnErr(err)
		return err
	}
	return rows.Close()
}

// errEnough ends a live read early: the rest is not wanted.
var errEnough = errors.New("enough rows")

// readOperators reads the traced session's operators, threads summed.
func (l *liveReader) readOperators() {
	q := fmt.Sprintf("%sSELECT TOP (%d) node_id, physical_operator_name, thread_id, row_count, estimate_row_count, logical_read_count, physical_read_count, "+
		"read_ahead_count, elapsed_time_ms, cpu_time_ms, open_time, first_row_time, close_time FROM sys.dm_exec_query_profiles WHERE session_id = %d ORDER BY node_id, thread_id",
		l.r.spec.Marker(), maxLiveOperatorRows, l.r.info.spid)
	byNode := map[int]*OperatorProgress{}
	states := map[int][3]int{} // node → threads not opened, open, closed
	err := l.query(q, nil, func(rows *sql.Rows) error {
		var node, thread sql.NullInt64
		var name sql.NullString
		var n [10]sql.NullInt64
		if err := rows.Scan(&node, &name, &thread, &n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7], &n[8], &n[9]); err != nil {
			return err
		}
		id := int(node.Int64)
		op := byNode[id]
		if op == nil {
			op = &OperatorProgress{NodeID: id, PhysicalOp: name.String}
			byNode[id] = op
		}
		op.Threads++
		op.Rows += n[0].Int64
		op.EstimateRows += n[1].Int64
		op.LogicalReads += n[2].Int64
		op.PhysicalReads += n[3].Int64
		op.ReadAheadReads += n[4].Int64
		op.ElapsedMs = max(op.ElapsedMs, n[5].Int64) // threads run side by side
		op.CPUMs += n[6].Int64
		s := states[id]
		switch {
		case n[9].Int64 > 0:
			s[2]++
		case n[7].Int64 > 0 || n[8].Int64 > 0:
			s[1]++
		default:
			s[0]++
		}
		states[id] = s
		return nil
	})
	if err != nil {
		l.opsOff = true
		l.r.t.log.Info("live: operator progress is not read", "err", err)
		return
	}
	if len(byNode) == 0 {
		return // between statements, or done: keep the last list
	}
	ops := make([]OperatorProgress, 0, len(byNode))
	for id, op := range byNode {
		s := states[id]
		switch {
		case s[1] > 0:
			op.State = "running"
		case s[2] > 0:
			op.State = "done"
		default:
			op.State = "waiting"
		}
		op.Object = l.objects[id]
		ops = append(ops, *op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].NodeID < ops[j].NodeID })
	holdOpen(ops, l.rebinders)
	l.ops = ops
}

// holdOpen keeps "running" an operator whose threads have all closed while
// an operator that can execute it again is running: the inner side of a
// Nested Loops closes after each outer row and opens again on the next
// (rebind or rewind), so it is done only when that loop is. rebinders
// comes from the plan's tree (planRebinders); states are settled from the
// outermost loop in, so a loop that is itself between executions of an
// outer one holds its inner side open too.
func holdOpen(ops []OperatorProgress, rebinders map[int][]int) {
	if len(rebinders) == 0 {
		return
	}
	at := make(map[int]int, len(ops))
	for i := range ops {
		at[ops[i].NodeID] = i
	}
	settled := map[int]bool{}
	var settle func(id, depth int) string
	settle = func(id, depth int) string {
		i, ok := at[id]
		if !ok {
			return ""
		}
		if settled[id] || depth > len(ops) {
			return ops[i].State
		}
		settled[id] = true
		if ops[i].State == "done" {
			for _, a := range rebinders[id] {
				if settle(a, depth+1) == "running" {
					ops[i].State = "running"
					break
				}
			}
		}
		return ops[i].State
	}
	for i := range ops {
		settle(ops[i].NodeID, 0)
	}
}

// planRebinders maps each operator of the plan to the operators above it
// that can execute it again while they run: a Nested Loops for what is
// under its inner side (every row input after the first), and any
// operator for a subquery in its expressions (run again per row).
func planRebinders(p *showplan.Plan) map[int][]int {
	out := map[int][]int{}
	for _, st := range p.Statements {
		for _, op := range st.Operators {
			if _, ok := out[op.NodeID]; ok {
				continue
			}
			var rb []int
			for c, a := op, op.Parent; a != nil; c, a = a, a.Parent {
				if c.InExpression || a.PhysicalOp == "Nested Loops" && !firstRowInput(a, c) {
					rb = append(rb, a.NodeID)
				}
			}
			if rb != nil {
				out[op.NodeID] = rb
			}
		}
	}
	return out
}

// firstRowInput tells whether c is a's first row input (the outer side of
// a Nested Loops).
func firstRowInput(a, c *showplan.Operator) bool {
	for _, k := range a.Children {
		if !k.InExpression {
			return k == c
		}
	}
	return false
}

// readPlan reads the running plan once; a refusal or a server without the
// function leaves the live view without it.
func (l *liveReader) readPlan() {
	q := fmt.Sprintf("%sSELECT query_plan FROM sys.dm_exec_query_statistics_xml(%d)", l.r.spec.Marker(), l.r.info.spid)
	var plan string
	err := l.query(q, nil, func(rows *sql.Rows) error {
		var p sql.NullString
		if err := rows.Scan(&p); err != nil {
			return err
		}
		if len(p.String) <= maxLivePlanBytes {
			plan = p.String
		}
		return errEnough
	})
	if err != nil {
		l.planTried = true
		l.r.t.log.Info("live: the running plan is not read", "err", err)
		return
	}
	if plan == "" {
		return // not running yet: try again
	}
	l.planTried, l.plan = true, plan
	if p, err := showplan.ParseBytes([]byte(plan)); err == nil {
		l.objects, l.rebinders = planObjects(p), planRebinders(p)
	}
	for i := range l.ops {
		l.ops[i].Object = l.objects[l.ops[i].NodeID]
	}
	holdOpen(l.ops, l.rebinders)
}

// planObjects names each operator's object (schema.table.index) from the
// plan's first statement that has the node.
func planObjects(p *showplan.Plan) map[int]string {
	out := map[int]string{}
	for _, st := range p.Statements {
		for _, op := range st.Operators {
			if _, ok := out[op.NodeID]; ok || op.Object == nil {
				continue
			}
			name := op.Object.Schema + "." + op.Object.Table
			if op.Object.Index != "" {
				name += "." + op.Object.Index
			}
			out[op.NodeID] = name
		}
	}
	return out
}

// readEvents reads the events dispatched since the last read into the
// collector and the builders, and the live events of the next update. A read
// takes every row there is (bounded by MaxEvents over the trace): a read
// stopped early would still have the server send the rest of the result,
// only for the client to drop it.
// readEvents reads every event dispatched so far, in capped reads (at most
// enough of them for MaxEvents, or the files' worth, so it ends).
func (l *liveReader) readEvents(ctx context.Context) error {
	for range maxLiveReads(l.r.o.MaxEvents) {
		more, err := l.readEventsOnce(ctx)
		if err != nil || !more {
			return err
		}
	}
	return fmt.Errorf("read events: more than %d reads of %d rows after the batch", maxLiveReads(l.r.o.MaxEvents), liveReadRows)
}

// maxLiveReads bounds the capped reads of the tail: enough for maxEvents
// (or the default event bound) and some reads of held-back buffers.
func maxLiveReads(maxEvents int) int {
	if maxEvents <= 0 {
		maxEvents = DefaultMaxEvents
	}
	return maxEvents/liveReadRows + 16
}

// liveReadRows bounds one live read of the event files (TOP in the query):
// a reader that fell behind a busy batch would otherwise read its whole
// backlog in one query, past liveQueryTimeout, and a cancelled query spoils
// the control connection (seen: 300k rows behind, the trace failed). The
// reads that follow a capped one start at once.
var liveReadRows = 20000 // a variable for the tests of capped reads only

// readEventsOnce makes one capped read; more is true when the cap was
// reached (more events may be waiting).
func (l *liveReader) readEventsOnce(ctx context.Context) (more bool, err error) {
	if l.truncated || !l.events {
		return false, nil
	}
	l.r.ctlMu.Lock()
	defer l.r.ctlMu.Unlock()
	qctx, cancel := context.WithTimeout(ctx, liveQueryTimeout)
	defer cancel()
	batch, err := l.fetchWhole(qctx)
	if err != nil {
		l.r.noteConnErr(err)
		if isXENoFile(err) && l.pos.file == "" {
			return false, nil // nothing dispatched yet
		}
		return false, fmt.Errorf("read events: %w", err)
	}
	kept, more := batch.whole()
	if max := int64(l.r.o.MaxEvents); max > 0 && l.rows+int64(len(kept)) > max {
		kept, l.truncated, more = kept[:max-l.rows], true, false
	}
	if len(kept) > 0 {
		l.pos = kept[len(kept)-1].pos
	}
	l.rows += int64(len(kept))
	bad, err := decodeRows(batch.textOf(kept), kept, l.add)
	l.col.badRows += bad
	if err != nil {
		return false, fmt.Errorf("read events: %w", err)
	}
	return more, nil
}

// decodeRowsParallel is the number of rows from which a live read's
// events are decoded on two goroutines (a variable for tests).
var decodeRowsParallel = 2000

// decodeRows runs fn over the events of rows, whose lines are text, in
// order; fn must copy what it keeps of an event (the decoder may reuse its
// memory, as in every read-back). Many rows are decoded in two halves: the
// second on another goroutine, into events of their own, while the first
// is decoded and taken in place — decoding is most of the tracer's own
// work in a live read, and the tail the finished replay waits for is one
// such read (issue 29). Rows that do not decode are counted in bad.
func decodeRows(text []byte, rows []liveRow, fn func(*xe.Event)) (bad int64, err error) {
	if len(rows) < decodeRowsParallel {
		return decodeAll(bytes.NewReader(text), fn)
	}
	mid := rows[len(rows)/2-1].end // a row boundary: each half holds whole rows
	var second []xe.Event
	var secondBad int64
	var secondErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		second, secondBad, secondErr = decodeOwned(text[mid:])
	}()
	bad, err = decodeAll(bytes.NewReader(text[:mid]), fn)
	<-done
	if err != nil {
		return bad + secondBad, err
	}
	for i := range second {
		fn(&second[i])
	}
	return bad + secondBad, secondErr
}

// decodeOwned decodes every event of text, each owning its memory (the
// decoder does not reuse it).
func decodeOwned(text []byte) (events []xe.Event, bad int64, err error) {
	bad, err = decodeEach(xe.NewDecoder(bytes.NewReader(text)), func(ev *xe.Event) { events = append(events, *ev) })
	return events, bad, err
}

// maxLiveBufferRows bounds the retries of a read that is one buffer
// larger than the cap (an XE buffer is a share of the session's
// MAX_MEMORY, so its events are bounded).
const maxLiveBufferRows = 1 << 20

// fetchWhole makes one capped read from the last position. A read that
// stopped inside its only buffer is made again with a larger cap: the next
// read resumes after that buffer, so its rest would be lost.
func (l *liveReader) fetchWhole(ctx context.Context) (liveRows, error) {
	for limit := liveReadRows; ; limit *= 4 {
		batch, err := l.fetchOnce(ctx, limit)
		if err != nil || !batch.capped || !batch.oneBuffer() || limit >= maxLiveBufferRows {
			return batch, err
		}
	}
}

func (l *liveReader) fetchOnce(ctx context.Context, limit int) (liveRows, error) {
	rows, err := l.queryEvents(ctx, limit)
	if err != nil && isXENoFile(err) && l.pos.file != "" {
		// The file the reads resume from is gone: the file size cap
		// (MAX_ROLLOVER_FILES) rolled it away, with any file older than
		// it, so every file left is newer, none of it read yet. Read them
		// from the first; what rolled away before it was read is a gap in
		// event_sequence, counted as lost like any other.
		l.r.t.log.Warn("live: the event file the reads resume from rolled over; reading the files left from the first")
		l.pos = filePos{}
		rows, err = l.queryEvents(ctx, limit)
	}
	if err != nil {
		return liveRows{}, err
	}
	defer rows.Close()
	batch, err := fetchLiveRows(rows, limit)
	if err != nil {
		return batch, err
	}
	return batch, rows.Close()
}

// filePos is a position in the event files, as
// sys.fn_xe_file_target_read_file reports it (file_name, file_offset).
type filePos struct {
	file   string // "": none, read from the first file
	offset int64
}

// liveRow is one row of a live read: its buffer's position, and where its
// event's line ends in the read's text.
type liveRow struct {
	pos filePos
	end int
}

// liveRows is one capped read: its events one per line in text (as the
// decoder reads them, copied once out of the driver's strings), and its
// rows.
type liveRows struct {
	text   []byte
	rows   []liveRow
	capped bool // the read returned as many rows as its TOP allowed
}

// textOf is the lines of rows, a prefix of b.rows.
func (b liveRows) textOf(rows []liveRow) []byte {
	if len(rows) == 0 {
		return nil
	}
	return b.text[:rows[len(rows)-1].end]
}

func fetchLiveRows(rows *sql.Rows, limit int) (liveRows, error) {
	var out liveRows
	for rows.Next() {
		var file, data sql.NullString // a string is scanned without a copy
		var offset sql.NullInt64
		if err := rows.Scan(&file, &offset, &data); err != nil {
			return out, fmt.Errorf("read event row: %w", err)
		}
		out.text = append(append(out.text, data.String...), '\n')
		out.rows = append(out.rows, liveRow{pos: filePos{file: file.String, offset: offset.Int64}, end: len(out.text)})
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read event rows: %w", err)
	}
	out.capped = len(out.rows) >= limit
	return out, nil
}

// oneBuffer is true when every row is from the same buffer.
func (b liveRows) oneBuffer() bool {
	return len(b.rows) > 0 && b.rows[0].pos == b.rows[len(b.rows)-1].pos
}

// whole returns the rows of whole buffers: a capped read may have stopped
// inside its last buffer, and the next read resumes after a buffer (the
// function's initial_offset), so that buffer's rows are left for the next
// read to return whole. A read that is one buffer only keeps it (a buffer
// of more events than the cap is not split further). more says another
// read should follow at once.
func (b liveRows) whole() (kept []liveRow, more bool) {
	if !b.capped || len(b.rows) == 0 {
		return b.rows, false
	}
	last := b.rows[len(b.rows)-1].pos
	i := len(b.rows)
	for i > 0 && b.rows[i-1].pos == last {
		i--
	}
	if i == 0 {
		return b.rows, true
	}
	return b.rows[:i], true
}

// queryEvents reads the event files after the last position read (the
// whole buffer at it was read: sys.fn_xe_file_target_read_file resumes
// after initial_offset, and takes initial_file_name and initial_offset
// both or neither), at most limit rows.
func (l *liveReader) queryEvents(ctx context.Context, limit int) (*sql.Rows, error) {
	q := l.r.spec.Marker() + "SELECT TOP (" + strconv.Itoa(limit) + ") file_name, file_offset, event_data FROM sys.fn_xe_file_target_read_file(" + tsql.QuoteString(l.r.spec.ReadPattern()) + ", NULL, "
	if l.pos.file == "" {
		return l.r.conn.QueryContext(ctx, q+"NULL, NULL)")
	}
	return l.r.conn.QueryContext(ctx, q+"@p1, @p2)", l.pos.file, l.pos.offset)
}

// maxLiveRingBytes bounds one live read of the ring_buffer's target_data
// (the server caps it near 4 MB; sys.dm_xe_session_targets,
// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql).
const maxLiveRingBytes = 64 << 20

// readRing reads the ring_buffer's target_data, which holds every event
// the ring still has each time, and takes those past the last
// event_sequence taken (events without one cannot be told apart from those
// already taken and stay for the finished replay).
func (l *liveReader) readRing() error {
	var doc string
	err := l.query(l.r.ringBufferQuery(), nil, func(rows *sql.Rows) error {
		var d sql.NullString
		if err := rows.Scan(&d); err != nil {
			return err
		}
		doc = d.String
		return errEnough
	})
	if err != nil {
		return fmt.Errorf("read ring buffer: %w", err)
	}
	if len(doc) > maxLiveRingBytes {
		return fmt.Errorf("read ring buffer: target_data of %d bytes is over %d", len(doc), maxLiveRingBytes)
	}
	last := l.ringSeq
	_, err = decodeAll(strings.NewReader(doc), func(ev *xe.Event) {
		s, ok := eventSequence(ev)
		if !ok || s <= l.ringSeq {
			return
		}
		last = max(last, s)
		l.ringSeen++
		l.pend(ev, l.ringMaps)
	})
	l.ringSeq = last
	if err != nil {
		return fmt.Errorf("read ring buffer: %w", err)
	}
	return nil
}

// eventSequence is an event's package0.event_sequence action.
func eventSequence(ev *xe.Event) (uint64, bool) {
	v, ok := ev.Action("event_sequence")
	if !ok {
		return 0, false
	}
	return v.Uint()
}

// isXENoFile: the pattern matches no file yet (SQL Server's Msg 25718).
func isXENoFile(err error) bool {
	var se mssql.Error
	return errors.As(err, &se) && se.Number == 25718
}

// add takes one decoded event, which it does not keep: into the collector
// (the first pass, which finds its statement), the timeline's builders
// (the second), and the next update when it belongs to a lane.
func (l *liveReader) add(ev *xe.Event) {
	l.col.add(ev)
	l.built.add(ev)
	l.pend(ev, l.col.maps)
}

// liveBuilt is the timeline's builders a live trace feeds as it reads:
// the whole batch's and the statements', without a plan or names yet.
// Which of them the bundle uses is known only at the end (buildTraces).
type liveBuilt struct {
	whole *timeline.Builder
	sb    *timeline.StatementBuilder
}

func newLiveBuilt(col *collector, maps *xe.MapTable) (*liveBuilt, error) {
	resolver := resolverOf(maps)
	whole, err := timeline.NewBuilder(nil, nil, resolver, &timeline.Options{Statement: -1})
	if err != nil {
		return nil, err
	}
	sb, err := timeline.NewStatementBuilder(col.stmts, nil, resolver, timeline.Options{})
	if err != nil {
		return nil, err
	}
	return &liveBuilt{whole: whole, sb: sb}, nil
}

func (b *liveBuilt) add(ev *xe.Event) {
	b.whole.Add(ev)
	b.sb.Add(ev)
}

// pend puts ev into the next update when it belongs to a lane.
func (l *liveReader) pend(ev *xe.Event, maps xe.MapResolver) {
	if !l.haveBase || !l.batchSeen && (ev.Name == "sql_batch_starting" || ev.Name == "rpc_starting") {
		// times count from the batch's start, else from the first event
		l.base, l.haveBase = ev.Timestamp.Time, true
		l.batchSeen = ev.Name == "sql_batch_starting" || ev.Name == "rpc_starting"
	}
	e, ok := liveEvent(ev, maps)
	if !ok {
		return
	}
	e.TUs = ev.Timestamp.Time.Sub(l.base).Microseconds()
	if len(l.pending) >= MaxLiveEvents {
		l.dropped++
		return
	}
	l.pending = append(l.pending, e)
}

// stopEvents ends the incremental read: the read-back after the batch
// reads every event again, whole.
func (l *liveReader) stopEvents(why string) {
	if !l.events {
		return
	}
	l.events, l.eventsNote = false, why
	l.built = nil
	l.r.t.log.Info("live: events are read after the batch", "reason", why)
}

// send hands one update to Options.Live.
func (l *liveReader) send(running bool) {
	if l.final {
		return
	}
	l.seq++
	u := LiveUpdate{Seq: l.seq, Elapsed: time.Since(l.start), Running: running, Operators: append([]OperatorProgress(nil), l.ops...),
		Events: l.pending, EventsDropped: l.dropped}
	switch {
	case l.col != nil:
		u.EventsSoFar = l.col.events
	case l.ringSeen > 0:
		u.EventsSoFar = l.ringSeen
	}
	if l.plan != "" && !l.planSent {
		u.PlanXML, l.planSent = l.plan, true
	}
	if !running {
		l.final = true
		for i := range u.Operators {
			u.Operators[i].State = "done"
		}
	}
	l.pending, l.dropped = nil, 0
	l.r.o.Live(u)
}

// finishEvents reads the tail after STOP and hands the read-back what the
// live reads collected; ok is false when the events must be read whole.
func (l *liveReader) finishEvents(ctx context.Context) (eventsRead, bool, error) {
	if l == nil || !l.events || l.handedOver {
		return eventsRead{}, false, nil
	}
	l.handedOver = true
	if err := l.readEvents(ctx); err != nil {
		if ctx.Err() != nil || l.r.connBad {
			return eventsRead{}, true, err
		}
		l.stopEvents(err.Error())
		return eventsRead{}, false, nil
	}
	if l.col.plans == 0 && !l.truncated {
		// Safety net: the plan comes last, so a tail without it means the
		// resumed reads missed events in a way not understood (a file that
		// rolled away is handled in readEvents). The read-back reads every
		// event again, whole, rather than build a replay without operators.
		l.r.t.log.Warn("live: the live reads did not reach the actual plan; the events are read again, whole", "events", l.rows)
		l.stopEvents("the live reads did not reach the plan")
		return eventsRead{}, false, nil
	}
	return eventsRead{col: l.col, built: l.built, truncated: l.truncated}, true, nil
}

// end sends the last update (Running false) if it was not sent; safe on a
// nil reader.
func (l *liveReader) end() {
	if l == nil {
		return
	}
	l.send(false)
}

// liveEvent maps an event to its lane the way the timeline's lanes take
// them (pkg/frames' lane names); false for events of no lane (the batch's
// and statements' events, the plan, thread profiles).
func liveEvent(ev *xe.Event, maps xe.MapResolver) (LiveEvent, bool) {
	e := LiveEvent{Name: ev.Name}
	switch ev.Name {
	case "physical_page_read", "physical_page_write":
		p, _ := xe.AsPageIO(ev)
		e.Lane = "read"
		if p.Write {
			e.Lane = "write"
		}
		e.Detail = fmt.Sprintf("%d:%d", p.FileID, p.PageID)
	case "lock_acquired", "lock_released", "lock_escalation":
		e.Lane = "lock"
		if ev.Name == "lock_escalation" {
			x, _ := xe.AsLockEscalation(ev, maps)
			e.Detail = x.Mode.String() + " " + x.ResourceType.String() + " escalation"
			break
		}
		x, _ := xe.AsLock(ev, maps)
		e.DurationUs = int64(x.DurationUs)
		e.Detail = strings.TrimSpace(x.Mode.String() + " " + x.ResourceType.String() + " " + strings.TrimSpace(x.ResourceDescription))
	case "wait_info", "wait_completed":
		w, _ := xe.AsWait(ev, maps)
		// a copy: the ring buffer's events are decoded in place (ReuseEvents),
		// so the name's bytes are overwritten by the events after it
		e.Lane, e.Detail, e.DurationUs = "wait", strings.Clone(w.WaitType.String()), int64(w.DurationUs)
	case "query_memory_grant_usage", "hash_warning", "sort_warning", "hash_spill_details", "exchange_spill":
		e.Lane = "memory"
	case "page_split":
		s, _ := xe.AsPageSplit(ev, maps)
		e.Lane, e.Detail = "split", fmt.Sprintf("%d:%d %s", s.FileID, s.PageID, s.SplitOperation.String())
	case "transaction_log", "log_flush_complete":
		e.Lane = "log"
	case "file_read", "file_read_completed", "file_write_completed":
		f, _ := xe.AsFileIO(ev, maps)
		e.Lane, e.DurationUs = "io", int64(f.DurationUs)
		e.Detail = fmt.Sprintf("file %d offset %d size %d", f.FileID, f.Offset, f.Size)
	default:
		return e, false
	}
	return e, true
}
