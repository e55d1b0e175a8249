package exporter

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/xe"
	"github.com/queryreplay/queryreplay/pkg/xe/xetest"
)

// The aggregation reads projected events directly, field by field; these
// tests hold it to pkg/xe's typed views on fully decoded events, so that
// neither the projection (ingestProjection) nor the direct reads can drift
// from the field tables and units pkg/xe documents.

// addTyped is the reference aggregation: batch.add as written with pkg/xe's
// typed views.
func addTyped(b *batch, ev *xe.Event, c eventContext) {
	k := b.kind(ev.Name)
	if k == kindOther {
		b.decoded[ev.Name]++
		return
	}
	b.kinds[k]++
	switch ev.Name {
	case "wait_info", "wait_completed":
		w, _ := xe.AsWait(ev, nil)
		if !w.Completed && strings.EqualFold(w.Opcode.Text, "Begin") {
			return
		}
		a := accOf(b.waits, waitKey{c.db, w.WaitType.Key})
		if a.count == 0 {
			b.keepText(textWait, w.WaitType)
		}
		a.count++
		a.durUs += float64(w.DurationUs)
		a.signalUs += float64(w.SignalDurationUs)
		if w.DurationUs == 0 {
			a.zeroMs++
		}
	case "physical_page_read", "physical_page_write":
		p, _ := xe.AsPageIO(ev)
		k := pageKey{c.db, p.FileID, p.PageID}
		a := b.pages[k]
		if a == nil {
			if len(b.pages) >= maxPagesPerBatch {
				a = accOf(b.pagesOverflow, pageOverflowKey{c.db})
			} else {
				a = accOf(b.pages, k)
			}
		}
		if p.Write {
			a.writes++
		} else if a.reads++; c.hasHash {
			a.ex = exemplar{queryHash: c.queryHash, at: ev.Timestamp.Time, set: true}
		}
	case "page_split":
		s, _ := xe.AsPageSplit(ev, nil)
		db := s.DatabaseID
		if db == 0 {
			db = c.db
		}
		k := splitKey{db, s.RowsetID, s.SplitOperation.Key}
		if _, seen := b.splits[k]; !seen {
			b.keepText(textSplit, s.SplitOperation)
		}
		b.splits[k]++
	case "sort_warning", "hash_warning", "exchange_spill":
		s, _ := xe.AsSpill(ev, nil)
		if ev.Name == "exchange_spill" && strings.EqualFold(s.WarningType.Text, "Begin") {
			return
		}
		a := accOf(b.spills, spillKey{c.db, spillKind(k), c.queryHash})
		a.count++
		a.written += float64(s.WorktablePhysicalWrites + s.WorkfilePhysicalWrites)
		a.read += float64(s.WorktablePhysicalReads)
		if ev.Timestamp.Time.After(a.last) {
			a.last = ev.Timestamp.Time
		}
	case "query_memory_grant_usage":
		m, _ := xe.AsMemoryGrantUsage(ev)
		a := accOf(b.memory, c.db)
		a.count++
		a.grantedKB += float64(m.GrantedMemoryKB)
		a.usedKB += float64(m.UsedMemoryKB)
	case "log_flush_complete":
		l, _ := xe.AsLogFlush(ev)
		db := c.db
		if l.DatabaseID != 0 {
			db = l.DatabaseID
		}
		a := accOf(b.logs, db)
		a.count++
		a.bytes += float64(l.WriteSize)
	case "sql_statement_completed", "sp_statement_completed":
		s, _ := xe.AsStatementCompleted(ev)
		a := accOf(b.stmts, stmtKey{c.db, c.queryHash})
		a.count++
		a.logical += float64(s.LogicalReads)
		a.physical += float64(s.PhysicalReads)
		a.writes += float64(s.Writes)
		a.durUs += float64(s.DurationUs)
		a.cpuUs += float64(s.CPUTimeUs)
		if ev.Timestamp.Time.After(a.last) {
			a.last = ev.Timestamp.Time
		}
	}
}

// aggregateRows aggregates event rows decoded by dec, with add.
func aggregateRows(t *testing.T, rows [][]byte, dec *xe.Decoder, add func(*batch, *xe.Event, eventContext)) *batch {
	t.Helper()
	b := newBatch()
	for i, row := range rows {
		ev, err := dec.DecodeRow(row)
		if err != nil {
			b.malformed++
			continue
		}
		if ev.Name == "" {
			t.Fatalf("row %d: no event name", i)
		}
		add(b, &ev, contextOf(&ev))
	}
	b.lastName, b.lastKind = "", 0
	return b
}

// sameBatch compares two batches exactly, after checking and setting
// aside got's page index (the reference aggregation keeps none): every
// entry is the accumulator of the page its key packs.
func sameBatch(t *testing.T, what string, got, want *batch) {
	t.Helper()
	for packed, a := range got.pageIndex {
		k := pageKey{packed >> 48, packed >> 32 & 0xFFFF, packed & 0xFFFFFFFF}
		if got.pages[k] != a {
			t.Errorf("%s: page index entry %#x is not the accumulator of page %v", what, packed, k)
		}
	}
	index := got.pageIndex
	got.pageIndex = want.pageIndex
	defer func() { got.pageIndex = index }()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: batches differ\n got %s\nwant %s", what, dumpBatch(got), dumpBatch(want))
	}
}

func dumpBatch(b *batch) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "kinds %v other %v malformed %d texts %v\n", b.kinds, b.decoded, b.malformed, b.texts)
	for k, a := range b.waits {
		fmt.Fprintf(&sb, "wait %v %+v\n", k, *a)
	}
	for k, a := range b.pages {
		fmt.Fprintf(&sb, "page %v %+v\n", k, *a)
	}
	for k, n := range b.splits {
		fmt.Fprintf(&sb, "split %v %v\n", k, n)
	}
	for k, a := range b.spills {
		fmt.Fprintf(&sb, "spill %v %+v\n", k, *a)
	}
	for k, a := range b.memory {
		fmt.Fprintf(&sb, "memory %v %+v\n", k, *a)
	}
	for k, a := range b.logs {
		fmt.Fprintf(&sb, "log %v %+v\n", k, *a)
	}
	for k, a := range b.stmts {
		fmt.Fprintf(&sb, "stmt %v %+v\n", k, *a)
	}
	return sb.String()
}

// shapeRows are event rows in the forms the aggregation must read alike:
// ring_buffer XML (with <type>), Begin and End opcodes, repeated, missing
// and non-numeric fields, texts with entities, maps without text.
func shapeRows() [][]byte {
	ts := `timestamp="2026-01-01T00:00:00.000Z"`
	acts := `<action name="event_sequence" package="package0"><value>9</value></action>` +
		`<action name="database_id" package="sqlserver"><value>6</value></action>` +
		`<action name="query_hash_signed" package="sqlserver"><value>-42</value></action>`
	typed := func(name, typ, val string) string {
		return `<data name="` + name + `"><type name="` + typ + `" package="package0"/><value>` + val + `</value></data>`
	}
	rows := []string{
		`<event name="wait_info" package="sqlos" ` + ts + `>` + typed("duration", "uint64", "15") + typed("signal_duration", "uint64", "2") +
			`<data name="wait_type"><type name="wait_types" package="sqlos"/><value>66</value><text>PAGEIOLATCH_SH</text></data>` +
			`<data name="opcode"><type name="event_opcode" package="sqlos"/><value>1</value><text>End</text></data>` + acts + `</event>`,
		`<event name="wait_info" package="sqlos" ` + ts + `><data name="wait_type"><value>66</value></data><data name="opcode"><value>0</value><text>BEGIN</text></data>` +
			`<data name="duration"><value>7</value></data>` + acts + `</event>`,
		`<event name="wait_info" package="sqlos" ` + ts + `><data name="wait_type"><value>x</value></data><data name="duration"><value>18446744073709551615</value></data>` + acts + `</event>`,
		`<event name="wait_completed" package="sqlos" ` + ts + `><data name="wait_type"><value>99</value><text>A&amp;B</text></data><data name="wait_type"><value>98</value></data>` +
			`<data name="duration"><value>1</value></data><data name="duration"><value>2</value></data>` + acts + `</event>`,
		`<event name="physical_page_write" package="sqlserver" ` + ts + `><data name="page_id"><value>0x10</value></data><data name="file_id"><value>3</value></data>` + acts + `</event>`,
		`<event name="physical_page_read" package="sqlserver" ` + ts + `><data name="page_id"><value>-1</value></data>` + acts + `</event>`,
		`<event name="page_split" package="sqlserver" ` + ts + `><data name="rowset_id"><value>72057594049789952</value></data>` +
			`<data name="splitOperation"><value>3</value></data>` + acts + `</event>`,
		`<event name="page_split" package="sqlserver" ` + ts + `><data name="database_id"><value>9</value></data><data name="splitOperation"><value>0</value><text>SPLIT_FOR_INSERT</text></data>` + acts + `</event>`,
		`<event name="exchange_spill" package="sqlserver" ` + ts + `><data name="opcode"><value>0</value><text>begin</text></data>` + acts + `</event>`,
		`<event name="exchange_spill" package="sqlserver" ` + ts + `><data name="opcode"><value>1</value><text>End</text></data><data name="worktable_physical_writes"><value>5</value></data>` + acts + `</event>`,
		`<event name="hash_warning" package="sqlserver" timestamp="2026-01-01T00:00:01.000Z"><data name="hash_warning_type"><value>0</value><text>Recursion</text></data>` +
			`<data name="workfile_physical_writes"><value>4</value></data><data name="worktable_physical_writes"><value>3</value></data><data name="worktable_physical_reads"><value>8</value></data>` + acts + `</event>`,
		`<event name="sort_warning" package="sqlserver" ` + ts + `><data name="sort_warning_type"><value>2</value></data><data name="worktable_physical_reads"><value>11</value></data>` +
			`<action name="database_id" package="sqlserver"><value>6</value></action></event>`,
		`<event name="query_memory_grant_usage" package="sqlserver" ` + ts + `>` + typed("granted_memory_kb", "uint64", "4096") + typed("used_memory_kb", "uint64", "-3") + acts + `</event>`,
		`<event name="log_flush_complete" package="sqlserver" ` + ts + `><data name="write_size"><value>512</value></data>` + acts + `</event>`,
		`<event name="log_flush_complete" package="sqlserver" ` + ts + `><data name="database_id"><value>2</value></data><data name="write_size"><value>61440</value></data>` + acts + `</event>`,
		`<event name="sp_statement_completed" package="sqlserver" ` + ts + `><data name="duration"><value>10</value></data><data name="cpu_time"><value>4</value></data>` +
			`<data name="logical_reads"><value>7</value></data><data name="physical_reads"><value>1</value></data><data name="writes"><value>2</value></data>` +
			`<data name="row_count"><value>3</value></data><data name="statement"><value><![CDATA[SELECT '</data>']]></value></data>` + acts + `</event>`,
		`<event name="sql_statement_completed" package="sqlserver" ` + ts + `><data name="logical_reads"><value>1.5</value></data>` +
			`<action name="query_hash" package="sqlserver"><value>0</value></action></event>`,
		`<event name="lock_acquired" package="sqlserver" ` + ts + `><data name="mode"><value>3</value></data>` + acts + `</event>`,
		`<event name="sql_batch_completed" package="sqlserver" ` + ts + `/>`,
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		out[i] = []byte(r)
	}
	return out
}

// realRows are the event rows of pkg/xe's real captures (its testdata,
// with their attribution) and of generated streams.
func realRows(t *testing.T) [][]byte {
	t.Helper()
	var rows [][]byte
	files, _ := filepath.Glob("../xe/testdata/realdata/xe_event_xml/*/*.xml")
	files = append(files, "../xe/testdata/realdata/xe_event_xml/ringbuffer_error_reported_callstack_sql2017_error701.xml")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := xe.NewDecoder(bytes.NewReader(raw))
		n := 0
		for ev, err := range d.All() {
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			rows = append(rows, ev.AppendXML(nil, xe.FormEventFile), ev.AppendXML(nil, xe.FormRingBuffer))
			n++
		}
		if n == 1 {
			rows = append(rows, raw) // as captured
		}
	}
	if len(files) < 8 {
		t.Fatalf("only %d real captures", len(files))
	}
	for seed := uint64(1); seed <= 2; seed++ {
		stream, _ := xetest.NewGenerator(seed).AppendStream(nil, 512<<10)
		rows = append(rows, bytes.Split(bytes.TrimSpace(stream), []byte("\n"))...)
	}
	return rows
}

func benchRowData(n int) [][]byte {
	var rows [][]byte
	for _, r := range benchRows(n) {
		rows = append(rows, r.data)
	}
	return rows
}

// checkAggregation compares, on rows: the aggregation of fully decoded
// events with the typed-view reference, and the aggregation of projected
// events (as the exporter decodes them) with the same reference.
func checkAggregation(t *testing.T, what string, rows [][]byte) {
	t.Helper()
	full := xe.NewDecoder(nil)
	want := aggregateRows(t, rows, full, addTyped)
	if want.malformed != 0 {
		t.Fatalf("%s: %d malformed rows", what, want.malformed)
	}
	sameBatch(t, what+", full events", aggregateRows(t, rows, full, (*batch).add), want)
	sameBatch(t, what+", projected events", aggregateRows(t, rows, newEventDecoder(), (*batch).add), want)
}

// Page I/O past maxPagesPerBatch distinct pages goes to the overflow
// counters, and ids too large to pack into the page index still count
// apart: the aggregation against the reference on more distinct pages than
// the limit, each read twice.
func TestPageAccumulatorsPastTheLimit(t *testing.T) {
	var rows [][]byte
	ts := `timestamp="2026-01-01T00:00:00.000Z"`
	row := func(db, file, page uint64) []byte {
		return fmt.Appendf(nil, `<event name="physical_page_read" package="sqlserver" %s><data name="file_id"><value>%d</value></data>`+
			`<data name="page_id"><value>%d</value></data><action name="database_id" package="sqlserver"><value>%d</value></action></event>`, ts, file, page, db)
	}
	for _, k := range []pageKey{{1 << 16, 1, 7}, {5, 1 << 16, 7}, {5, 1, 1 << 32}, {5, 1, 7}, {5, 2, 7}, {6, 1, 7}, {65535, 65535, 1<<32 - 1}} {
		rows = append(rows, row(k.db, k.file, k.page), row(k.db, k.file, k.page))
	}
	for i := range uint64(maxPagesPerBatch + 50) {
		rows = append(rows, row(5+i%3, 1, i/3), row(5+i%3, 1, i/3))
	}
	full := xe.NewDecoder(nil)
	want := aggregateRows(t, rows, full, addTyped)
	got := aggregateRows(t, rows, newEventDecoder(), (*batch).add)
	if len(want.pagesOverflow) == 0 || len(want.pages) != maxPagesPerBatch {
		t.Fatalf("setup: %d pages, %d overflow counters", len(want.pages), len(want.pagesOverflow))
	}
	if len(got.pageIndex) != maxPagesPerBatch-3 {
		t.Errorf("page index holds %d pages, want all but the 3 that do not pack", len(got.pageIndex))
	}
	sameBatch(t, "pages past the limit", got, want)
}

func TestAggregationReadsAsTypedViews(t *testing.T) {
	checkAggregation(t, "shapes", shapeRows())
	checkAggregation(t, "real captures and generated streams", realRows(t))
	checkAggregation(t, "benchmark rows", benchRowData(20_000))
}

// The same on what the stand-in's event sessions write, read back with
// fn_xe_file_target_read_file as the exporter reads it.
func TestProjectionKeepsWhatAggregationReads(t *testing.T) {
	f := newFixture(t, "", "")
	for round := 0; round < 2; round++ {
		f.round(t, round)
	}
	insertOrders(t, f.db, 9, 150) // a page split
	f.run.Server.FlushEventSessions()
	c := fileCursor{pattern: f.e.targets[0].cursor.pattern}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.e.targets[0].db.QueryContext(ctx, c.readQuery())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var rows [][]byte
	names := map[string]int{}
	for res.Next() {
		var object, file string
		var data []byte
		var offset int64
		if err := res.Scan(&object, &data, &file, &offset); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, data)
		names[object]++
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"sort_warning", "wait_info", "physical_page_read", "page_split", "sql_statement_completed", "query_memory_grant_usage"} {
		if names[ev] == 0 {
			t.Errorf("the stand-in wrote no %s event (%v)", ev, names)
		}
	}
	checkAggregation(t, "stand-in event file", rows)
}
