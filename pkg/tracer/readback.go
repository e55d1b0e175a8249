package tracer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/tsql"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// rowsReader turns the event_data column of a result set into one stream of
// <event> elements for xe.Decoder, holding one row at a time. The read-back
// after the batch and the live reads (livetrace.go) share it.
type rowsReader struct {
	rows *sql.Rows
	cur  []byte
	buf  sql.RawBytes
	// n counts the rows read; max bounds it (0: none)
	n, max    int64
	truncated bool // max was reached with rows left
	// onRow, when set, is called every 10,000 rows
	onRow func(n int64)
}

func (r *rowsReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.max > 0 && r.n >= r.max {
			if r.rows.Next() {
				r.truncated = true
			}
			return 0, io.EOF
		}
		if !r.rows.Next() {
			if err := r.rows.Err(); err != nil {
				return 0, fmt.Errorf("read event rows: %w", err)
			}
			return 0, io.EOF
		}
		if err := r.rows.Scan(&r.buf); err != nil {
			return 0, fmt.Errorf("read event row %d: %w", r.n+1, err)
		}
		r.n++
		r.buf = append(r.buf, '\n')
		r.cur = r.buf
		if r.onRow != nil && r.n%10000 == 0 {
			r.onRow(r.n)
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// collector gathers, in the first pass over the events, what resolution
// needs and the plan.
type collector struct {
	ids      identities
	planXML  string
	plans    int
	events   int64
	badRows  int64
	minSeq   uint64
	haveSeq  bool
	maps     xe.MapResolver
	sessions map[int64]bool
	batches  int
	// ringOmitted: events the ring held that its truncated target_data
	// left out (the newest).
	ringOmitted uint64
	// stmts is the statement tree (statements.go); seqs counts events by
	// event_sequence for the session's losses when the timeline is split.
	stmts *timeline.StatementSet
	seqs  seqSpan
}

func (c *collector) add(ev *xe.Event) {
	c.events++
	if v, ok := ev.Action("event_sequence"); ok {
		if s, ok := v.Uint(); ok {
			if !c.haveSeq || s < c.minSeq {
				c.minSeq, c.haveSeq = s, true
			}
			c.seqs.add(s)
		}
	}
	if c.stmts == nil {
		c.stmts = timeline.NewStatementSet()
	}
	c.stmts.Observe(ev, c.maps)
	if v, ok := ev.Action("session_id"); ok {
		if id, ok := v.Int(); ok {
			if c.sessions == nil {
				c.sessions = map[int64]bool{}
			}
			c.sessions[id] = true
		}
	}
	if ev.Name == "sql_batch_starting" {
		c.batches++
	}
	db := uint64(0)
	if v, ok := ev.Action("database_id"); ok {
		db, _ = v.Uint()
	}
	switch ev.Name {
	case "physical_page_read", "physical_page_write":
		if p, ok := xe.AsPageIO(ev); ok {
			c.ids.addPage(db, p.FileID, p.PageID)
		}
	case "lock_acquired", "lock_released":
		l, ok := xe.AsLock(ev, c.maps)
		if !ok {
			return
		}
		if l.DatabaseID != 0 {
			db = l.DatabaseID
		}
		switch {
		case l.AssociatedObjectID != 0:
			c.ids.addHoBT(db, l.AssociatedObjectID)
			if strings.EqualFold(l.ResourceType.String(), "KEY") {
				if d := strings.TrimSpace(l.ResourceDescription); d != "" {
					c.ids.addKey(db, l.AssociatedObjectID, strings.Clone(d))
				}
			}
		case l.ObjectID > 0:
			c.ids.addObject(db, uint64(l.ObjectID))
		}
	case "page_split":
		if s, ok := xe.AsPageSplit(ev, c.maps); ok {
			if s.DatabaseID != 0 {
				db = s.DatabaseID
			}
			c.ids.addPage(db, s.FileID, s.PageID)
			if s.RowsetID != 0 {
				c.ids.addHoBT(db, s.RowsetID)
			}
		}
	case "transaction_log":
		if l, ok := xe.AsTransactionLog(ev, c.maps); ok && l.AllocUnitID != 0 {
			if l.DatabaseID != 0 {
				db = l.DatabaseID
			}
			c.ids.addAllocUnit(db, l.AllocUnitID)
		}
	case "query_post_execution_showplan":
		if s, ok := xe.AsShowplan(ev, c.maps); ok && s.ShowplanXML != "" {
			c.plans++
			if c.planXML == "" {
				c.planXML = strings.Clone(s.ShowplanXML)
			}
		}
	}
}

// decodeAll runs every event of r through fn; malformed rows are counted,
// any other error ends decoding.
func decodeAll(r io.Reader, fn func(*xe.Event)) (bad int64, err error) {
	d := xe.NewDecoder(r)
	d.ReuseEvents()
	return decodeEach(d, fn)
}

// decodeEach runs fn over every event d decodes, counting the rows that do
// not decode.
func decodeEach(d *xe.Decoder, fn func(*xe.Event)) (bad int64, err error) {
	for {
		ev, err := d.Next()
		if err == io.EOF {
			return bad, nil
		}
		var rowErr *xe.RowError
		if errors.As(err, &rowErr) {
			bad++
			continue
		}
		if err != nil {
			return bad, err
		}
		fn(&ev)
	}
}

// resolverOf is maps as a MapResolver: nil when there is no table (a nil
// *xe.MapTable in the interface would not be nil).
func resolverOf(maps *xe.MapTable) xe.MapResolver {
	if maps == nil {
		return nil
	}
	return maps
}

// readBack reads the events (from the event file, or from ring, the
// ring_buffer document read before STOP), resolves names and builds the
// timeline into b. Partial results stay in b when a later step fails.
func (r *run) readBack(ctx context.Context, b *bundle.Bundle, ring string) error {
	// the second pass reads the files and spool the first pass left, so
	// they go only when readBack returns
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	maps := r.t.mapTable(ctx, r.conn)
	read, err := r.readEvents(ctx, b, ring, maps, &cleanups)
	if err != nil {
		return err
	}
	noteEventsRead(b, read.col, read.truncated, r.o.MaxEvents)
	return r.buildTimeline(ctx, b, read, maps)
}

// eventsRead is what the first pass over the captured events leaves.
type eventsRead struct {
	col *collector
	// second runs every event through fn again: the timeline needs the
	// plan, which comes last, before its first event.
	second    func(fn func(*xe.Event)) error
	truncated bool
	// built, when set, holds the timeline's builders a live trace fed as
	// it read (livetrace.go): there is no second pass, and second is nil
	built *liveBuilt
}

// readEvents makes the first pass over the events: the binary .xel files
// when allowed (falling back to XML when the server refuses them, unless
// binary was asked for), the file target as XML rows, or the ring buffer.
// What the second pass needs to be removed afterwards goes on cleanups.
func (r *run) readEvents(ctx context.Context, b *bundle.Bundle, ring string, maps *xe.MapTable, cleanups *[]func()) (eventsRead, error) {
	if r.spec.UsesRingBuffer() {
		col := &collector{ids: newIdentities(), maps: maps}
		second, err := readRingBuffer(b, col, ring)
		return eventsRead{col: col, second: second}, err
	}
	if read, ok, err := r.live.finishEvents(ctx); ok {
		// read while the batch ran (livetrace.go): only the tail was left
		b.Run.ReadBack = "xml"
		r.live.send(false)
		return read, err
	}
	if r.o.ReadBack != ReadBackXML {
		read, ok, err := r.readBinary(ctx, b, maps, cleanups)
		if err != nil || ok {
			return read, err
		}
	}
	col := &collector{ids: newIdentities(), maps: maps}
	second, truncated, err := r.readXMLRows(ctx, b, col, cleanups)
	return eventsRead{col: col, second: second, truncated: truncated}, err
}

// readBinary reads the event files as .xel; ok is false (and err nil) when
// the XML path should be tried instead.
func (r *run) readBinary(ctx context.Context, b *bundle.Bundle, maps *xe.MapTable, cleanups *[]func()) (read eventsRead, ok bool, err error) {
	bcol := &collector{ids: newIdentities(), maps: maps}
	files, cleanup, err := r.fetchXEL(ctx)
	truncated := false
	if err == nil {
		*cleanups = append(*cleanups, cleanup)
		truncated, err = readXELFiles(files, r.o.MaxEvents, func(ev *xe.Event) {
			bcol.add(ev)
			if bcol.events%10000 == 0 {
				r.progress("reading events", bcol.events)
			}
		})
	}
	switch {
	case err == nil:
		b.Run.ReadBack = "binary"
		second := func(fn func(*xe.Event)) error {
			_, err := readXELFiles(files, r.o.MaxEvents, fn)
			return err
		}
		return eventsRead{col: bcol, second: second, truncated: truncated}, true, nil
	case r.o.ReadBack == ReadBackBinary:
		return eventsRead{}, false, fmt.Errorf("read events as .xel files: %w", err)
	default:
		if ctx.Err() != nil {
			return eventsRead{}, false, fmt.Errorf("read events: %w", ctx.Err())
		}
		b.Run.ReadBackFallback = err.Error()
		r.t.log.Info("read back as XML: the binary path was refused", "reason", err.Error())
		return eventsRead{}, false, nil
	}
}

// readXMLRows reads the file target's events as XML rows into col.
func (r *run) readXMLRows(ctx context.Context, b *bundle.Bundle, col *collector, cleanups *[]func()) (second func(fn func(*xe.Event)) error, truncated bool, err error) {
	b.Run.ReadBack = "xml"
	// sys.fn_xe_file_target_read_file:
	// https://learn.microsoft.com/en-us/sql/relational-databases/system-functions/sys-fn-xe-file-target-read-file-transact-sql
	q := r.spec.Marker() + "SELECT event_data FROM sys.fn_xe_file_target_read_file(" + tsql.QuoteString(r.spec.ReadPattern()) + ", NULL, NULL, NULL)"
	rows, err := r.conn.QueryContext(ctx, q)
	if err != nil {
		r.noteConnErr(err)
		return nil, false, fmt.Errorf("read events: %w", err)
	}
	*cleanups = append(*cleanups, func() { rows.Close() })
	// The first pass streams rows into the decoder and a local spool,
	// which the second pass (the timeline needs the plan, which comes
	// last, before its first event) decodes again: one read of the
	// server's file, memory bounded by the largest event.
	spool, err := os.CreateTemp("", "queryreplay-trace-*.xml")
	if err != nil {
		return nil, false, fmt.Errorf("read events: spool: %w", err)
	}
	*cleanups = append(*cleanups, func() { spool.Close(); os.Remove(spool.Name()) })
	rr := &rowsReader{rows: rows, max: int64(r.o.MaxEvents)}
	rr.onRow = func(n int64) { r.progress("reading events", n) }
	bad, err := decodeAll(io.TeeReader(rr, spool), col.add)
	col.badRows = bad
	if err != nil {
		r.noteConnErr(err)
		return nil, false, fmt.Errorf("read events: %w", err)
	}
	rows.Close()
	second = func(fn func(*xe.Event)) error {
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := decodeAll(spool, fn)
		return err
	}
	return second, rr.truncated, nil
}

// readRingBuffer decodes the ring_buffer document into col and notes what
// the server dropped or truncated.
func readRingBuffer(b *bundle.Bundle, col *collector, ring string) (second func(fn func(*xe.Event)) error, err error) {
	b.Run.ReadBack = "ring_buffer"
	d := xe.NewDecoder(strings.NewReader(ring))
	n := int64(0)
	for {
		ev, err := d.Next()
		if err == io.EOF {
			break
		}
		var rowErr *xe.RowError
		if errors.As(err, &rowErr) {
			col.badRows++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read ring buffer: %w", err)
		}
		n++
		col.add(&ev)
	}
	if rb, ok := d.RingBuffer(); ok {
		b.Result.DroppedEvents = int64(rb.DroppedCount)
		if rb.Truncated {
			// target_data is capped near 4 MB and the NEWEST events are
			// left out (sys.dm_xe_session_targets,
			// https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-session-targets-transact-sql):
			// those that fire last, the plan and the batch's completion.
			b.Result.Truncated = true
			if rb.EventCount > uint64(n) {
				col.ringOmitted = rb.EventCount - uint64(n)
			}
			w := fmt.Sprintf("the server truncated the ring_buffer target_data (capped near 4 MB) and left out its newest %d events", col.ringOmitted)
			if col.plans == 0 {
				w += "; the plan was among them, so the timeline has no plan"
			}
			b.Result.Warnings = append(b.Result.Warnings, w)
		}
	}
	return func(fn func(*xe.Event)) error {
		_, err := decodeAll(strings.NewReader(ring), fn)
		return err
	}, nil
}

// noteEventsRead records the first pass's counts and sessions in b, with
// warnings for a truncated read and rows that could not be decoded.
func noteEventsRead(b *bundle.Bundle, col *collector, truncated bool, maxEvents int) {
	b.Result.Events, b.Result.BadRows, b.Result.Batches = col.events, col.badRows, col.batches
	for id := range col.sessions {
		b.Result.SessionIDs = append(b.Result.SessionIDs, id)
	}
	slices.Sort(b.Result.SessionIDs)
	if truncated {
		b.Result.Truncated = true
		b.Result.Warnings = append(b.Result.Warnings, fmt.Sprintf(bundle.MaxEventsWarningPrefix+"%d events were read (maximum events); the timeline is incomplete", maxEvents))
	}
	if col.badRows > 0 {
		b.Result.Warnings = append(b.Result.Warnings, fmt.Sprintf("%d event rows could not be decoded and were left out", col.badRows))
	}
}

// buildTimeline resolves names, parses the captured plan and builds the
// timeline from the second pass, then its call stacks and page headers.
func (r *run) buildTimeline(ctx context.Context, b *bundle.Bundle, read eventsRead, maps *xe.MapTable) error {
	col := read.col
	r.progress("resolving names", col.events)
	// The names are resolved on the control connection while the events go
	// through the timeline's builders, which read names only when they
	// build (timeline.Names): when a live trace ends both are left to do,
	// and its finished replay waits for them (issue 29). The goroutine
	// touches neither b nor the events.
	var names timeline.Names
	var res bundle.Resolution
	resolved := make(chan struct{})
	go func() {
		defer close(resolved)
		var cat *timeline.Catalog
		var lockRows map[timeline.LockKey]string
		cat, lockRows, res = r.resolve(ctx, &col.ids)
		names = timeline.Names{Catalog: cat, LockRows: lockRows, Stacks: r.stackParseOptions(ctx, r.spec.CallstackRVA, &res)}
	}()
	opts := timeline.Options{Statement: -1, ExpectedEvents: int(col.events)}
	tr, err := buildTraces(b, read, col, func() timeline.Names { <-resolved; return names }, resolverOf(maps), opts)
	<-resolved // on every path: the connection is free, and res is complete
	b.Result.Resolution = res
	if len(res.Errors) > 0 {
		b.Result.Warnings = append(b.Result.Warnings, "name resolution was partial: "+strings.Join(res.Errors, "; "))
	}
	if err != nil {
		return err
	}
	r.progress("resolving call stacks and page headers", col.events)
	// every timeline the bundle keeps, not the bundle's own alone: each
	// statement's stacks and pages are its own (statements.go)
	all := timelinesOf(tr, b.Statements)
	merged := forResolution(all)
	r.resolveStacks(ctx, merged, &b.Result.Resolution)
	r.readPageHeaders(ctx, merged, &b.Result.Resolution)
	sharePages(all, merged.Pages)
	b.Trace = tr
	noteLostEvents(b, col, tr.Summary.Lost)
	noteSystemTasks(b, r.spec.Events, tr)
	return nil
}

// capturedPlan keeps the plan XML in b and parses it; a plan that does not
// parse is a warning, not an error.
func capturedPlan(b *bundle.Bundle, planXML string) *showplan.Plan {
	b.Plan = planXML
	if planXML == "" {
		return nil
	}
	p, err := showplan.ParseBytes([]byte(planXML))
	if err != nil {
		b.Result.Warnings = append(b.Result.Warnings, "the captured plan could not be parsed: "+err.Error())
		return nil
	}
	return p
}

// noteLostEvents records events lost to sequence gaps (lost, from the
// timeline), to the file size cap and to the server's drops.
func noteLostEvents(b *bundle.Bundle, col *collector, lost uint64) {
	b.Result.Lost = lost + col.ringOmitted
	if col.haveSeq && col.minSeq > 1 && !b.Result.Truncated {
		// event_sequence starts at 1 in a new session; a higher first number
		// means the file cap rolled the oldest events away.
		b.Result.Lost += col.minSeq - 1
		b.Result.Warnings = append(b.Result.Warnings, fmt.Sprintf("the first %d events were lost to the trace file size cap; raise the maximum trace file size", col.minSeq-1))
	}
	if b.Result.Lost > 0 || b.Result.DroppedEvents > 0 {
		b.Result.Warnings = append(b.Result.Warnings, fmt.Sprintf("the session lost events (%d by event_sequence gaps, %d dropped by the server)", b.Result.Lost, b.Result.DroppedEvents))
	}
}

// mapNames are the XE maps the decoder may need when an event lacks <text>.
var mapNames = []string{"wait_types", "lock_mode", "lock_resource_type", "lock_owner_type", "event_opcode", "latch_mode",
	"latch_class", "page_split_operation", "log_op", "log_context", "hash_warning_type", "sort_warning_type",
	"transaction_state", "transaction_type", "statement_result", "file_io_mode"}

// mapTable loads sys.dm_xe_map_values once per tracer (one server); map keys
// differ between builds, so names are never hard-coded
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-xe-map-values-transact-sql).
// A failure leaves nil: event_file XML carries <text> itself.
func (t *Tracer) mapTable(ctx context.Context, c Conn) *xe.MapTable {
	t.mapsMu.Lock()
	defer t.mapsMu.Unlock()
	if t.maps != nil {
		return t.maps
	}
	quoted := make([]string, len(mapNames))
	for i, n := range mapNames {
		quoted[i] = tsql.QuoteString(n)
	}
	rows, err := c.QueryContext(ctx, "SELECT name, map_key, map_value FROM sys.dm_xe_map_values WHERE name IN ("+strings.Join(quoted, ", ")+")")
	if err != nil {
		t.log.Warn("could not read sys.dm_xe_map_values", "err", err)
		return nil
	}
	defer rows.Close()
	m := &xe.MapTable{}
	for rows.Next() {
		var name, text sql.NullString
		var key sql.NullInt64
		if err := rows.Scan(&name, &key, &text); err != nil {
			t.log.Warn("could not read sys.dm_xe_map_values", "err", err)
			return nil
		}
		m.Add(name.String, uint64(key.Int64), text.String)
	}
	if rows.Err() != nil {
		return nil
	}
	t.maps = m
	return m
}
