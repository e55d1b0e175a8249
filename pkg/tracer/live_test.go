package tracer

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/queryreplay/queryreplay/pkg/sqlconn"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// liveQuery takes seconds on a stand-in paced to the wall clock: a cross
// join counted (nothing in it is special to the stand-in).
const liveQuery = "SELECT COUNT(*) FROM dbo.Products AS a CROSS JOIN dbo.Orders AS b WHERE b.OrderID <= 3000"

// liveRecorder keeps the updates a live trace hands over.
type liveRecorder struct {
	mu      sync.Mutex
	updates []LiveUpdate
	on      func(LiveUpdate) // called after recording, outside the lock
}

func (l *liveRecorder) add(u LiveUpdate) {
	l.mu.Lock()
	l.updates = append(l.updates, u)
	l.mu.Unlock()
	if l.on != nil {
		l.on(u)
	}
}

func (l *liveRecorder) all() []LiveUpdate {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LiveUpdate(nil), l.updates...)
}

func startPacedStandin(t testing.TB) *testServer {
	return startStandinWith(t, standin.Options{PaceToWallClock: true, XELEncoder: xe.EncodeXMLAsXEL})
}

func rowsOf(u LiveUpdate) int64 {
	var n int64
	for _, op := range u.Operators {
		n += op.Rows
	}
	return n
}

// TestLiveTrace: while the batch runs the tracer hands over updates whose
// operators' rows grow, the running plan once, and the events read so far;
// the last update ends the run; and the bundle built from the events read
// live is the one the whole read-back builds from the same events.
func TestLiveTrace(t *testing.T) {
	srv := startPacedStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	rec := &liveRecorder{}
	var again *bundle.Bundle
	o := Options{SQL: liveQuery, ClearBufferPool: true, DisableReadAhead: true, Events: bundle.EventGroups{Waits: true}, Live: rec.add,
		readBackAgain: readXMLAgainInto(t, &again)}
	b, err := tr.Trace(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ups := rec.all()
	var running []LiveUpdate
	plans := 0
	var liveEvents int64
	for i, u := range ups {
		if u.Seq != i+1 {
			t.Fatalf("update %d has Seq %d", i+1, u.Seq)
		}
		if u.Running {
			running = append(running, u)
		} else if i != len(ups)-1 {
			t.Fatalf("update %d of %d is not running", i+1, len(ups))
		}
		if u.PlanXML != "" {
			plans++
		}
		if len(u.Events) > MaxLiveEvents {
			t.Fatalf("update %d carries %d events", u.Seq, len(u.Events))
		}
		liveEvents += int64(len(u.Events)) + u.EventsDropped
		for _, e := range u.Events {
			if e.Lane == "" || e.TUs < 0 {
				t.Fatalf("live event without a lane or before the batch: %+v", e)
			}
		}
	}
	if len(running) < 2 || ups[len(ups)-1].Running {
		t.Fatalf("%d updates while running, last running %v; want at least 2 and a last one", len(running), ups[len(ups)-1].Running)
	}
	grew := false
	for i := 1; i < len(running); i++ {
		grew = grew || rowsOf(running[i]) > rowsOf(running[i-1]) && rowsOf(running[i-1]) > 0
	}
	if !grew {
		counts := []int64{}
		for _, u := range running {
			counts = append(counts, rowsOf(u))
		}
		t.Fatalf("the operators' rows did not grow while running: %v", counts)
	}
	if plans != 1 {
		t.Fatalf("the running plan was sent %d times", plans)
	}
	for _, u := range running {
		for _, op := range u.Operators {
			if op.PhysicalOp == "" || op.State == "" || op.Threads == 0 {
				t.Fatalf("operator progress incomplete: %+v", op)
			}
		}
	}
	if last := ups[len(ups)-1]; last.EventsSoFar != b.Result.Events {
		t.Fatalf("the last update counts %d events, the bundle %d", last.EventsSoFar, b.Result.Events)
	}
	if liveEvents == 0 {
		t.Fatal("no live event")
	}
	if b.Run.ReadBack != "xml" || b.Trace == nil || len(b.Trace.Lanes.Read) == 0 {
		t.Fatalf("live bundle: read back %q, trace %v", b.Run.ReadBack, b.Trace != nil)
	}
	// the live reads resumed from the last file and offset, with parameters
	resumed := false
	for _, q := range log.texts() {
		resumed = resumed || strings.Contains(q, "fn_xe_file_target_read_file(") && strings.Contains(q, "@p1, @p2)")
	}
	if !resumed {
		t.Fatal("no live read resumed after the last offset")
	}
	// the same events read whole give the same bundle
	if again == nil {
		t.Fatal("the events were not read again")
	}
	sameBundle(t, b, again)
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// sameBundle compares what a read-back builds from the events.
func sameBundle(t *testing.T, live, whole *bundle.Bundle) {
	t.Helper()
	for _, c := range []struct {
		name string
		a, b any
	}{
		{"trace", live.Trace, whole.Trace}, {"plan", live.Plan, whole.Plan}, {"statements", live.Statements, whole.Statements},
		{"events", live.Result.Events, whole.Result.Events}, {"batches", live.Result.Batches, whole.Result.Batches},
		{"bad rows", live.Result.BadRows, whole.Result.BadRows}, {"sessions", live.Result.SessionIDs, whole.Result.SessionIDs},
		{"lost", live.Result.Lost, whole.Result.Lost}, {"truncated", live.Result.Truncated, whole.Result.Truncated},
		{"resolution", live.Result.Resolution, whole.Result.Resolution},
	} {
		ja, _ := json.Marshal(c.a)
		jb, _ := json.Marshal(c.b)
		if string(ja) != string(jb) {
			t.Errorf("%s differs between the live read-back and the whole one (%d and %d bytes of JSON)", c.name, len(ja), len(jb))
		}
	}
}

// TestLiveTraceMatchesNonLive: the same query traced without Live gives
// the same replay, timing aside — with the live reads' row cap as shipped,
// and with a cap so small that nearly every read stops inside a buffer and
// must leave that buffer to the next read (none lost, none twice).
func TestLiveTraceMatchesNonLive(t *testing.T) {
	srv := startPacedStandin(t)
	tr, _, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	// every event group on a smaller batch: thousands of events, so that
	// capped reads matter, none lost to the file cap
	const query = "SELECT COUNT(*) FROM dbo.OrderLines AS a CROSS JOIN dbo.Products AS b WHERE a.OrderID <= 200"
	o := Options{SQL: query, ClearBufferPool: true, DisableReadAhead: true, ReadBack: ReadBackXML, Events: bundle.AllEventGroups()}
	plain, err := tr.Trace(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	shape := func(b *bundle.Bundle) map[string]any {
		l := b.Trace.Lanes
		return map[string]any{"events": b.Result.Events, "rows": b.Result.Rows, "batches": b.Result.Batches, "read": len(l.Read),
			"lock": len(l.Lock), "wait": len(l.Wait), "operators": len(b.Trace.Operators), "readback": b.Run.ReadBack, "truncated": b.Result.Truncated,
			"lost": b.Result.Lost}
	}
	for _, limit := range []int{liveReadRows, 97} {
		t.Run(fmt.Sprintf("cap %d", limit), func(t *testing.T) {
			defer func(was int) { liveReadRows = was }(liveReadRows)
			liveReadRows = limit
			if plain.Result.Events < int64(3*limit) && limit < 1000 {
				t.Fatalf("%d events: too few for reads capped at %d to matter", plain.Result.Events, limit)
			}
			rec := &liveRecorder{}
			o.Live = rec.add
			live, err := tr.Trace(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := shape(plain), shape(live); !reflect.DeepEqual(a, b) {
				t.Fatalf("non-live %v\nlive     %v", a, b)
			}
			// built from the live reads, not from the safety net's whole read
			if last := rec.updates[len(rec.updates)-1]; last.EventsSoFar != live.Result.Events {
				t.Fatalf("the live reads took %d events, the replay has %d", last.EventsSoFar, live.Result.Events)
			}
		})
	}
}

// TestLiveReadCadence: the events are read every liveInterval, the
// operators' progress every liveOperatorsInterval — here an hour, so once,
// on the first read — and an update follows each read of the events.
func TestLiveReadCadence(t *testing.T) {
	defer func(was time.Duration) { liveOperatorsInterval = was }(liveOperatorsInterval)
	liveOperatorsInterval = time.Hour
	srv := startPacedStandin(t)
	tr, log, _ := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	rec := &liveRecorder{}
	o := Options{SQL: "SELECT COUNT(*) FROM dbo.Products AS a CROSS JOIN dbo.Orders AS b WHERE b.OrderID <= 1500", ClearBufferPool: true,
		DisableReadAhead: true, Events: bundle.EventGroups{Waits: true}, Live: rec.add}
	if _, err := tr.Trace(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	operators, events := 0, 0
	for _, q := range log.texts() {
		switch {
		case strings.Contains(q, "sys.dm_exec_query_profiles"):
			operators++
		case strings.Contains(q, "sys.fn_xe_file_target_read_file("):
			events++
		}
	}
	if operators != 1 || events < 3 {
		t.Fatalf("%d reads of the operators (want 1: the first) and %d of the events (want several)", operators, events)
	}
	if len(rec.updates) < events {
		t.Fatalf("%d updates for %d reads of the events", len(rec.updates), events)
	}
}

// TestLiveRowsWhole: a capped read leaves its last, maybe partial, buffer
// to the next read; a read that is one buffer keeps it; a read under its
// cap keeps everything.
func TestLiveRowsWhole(t *testing.T) {
	row := func(off int64) liveRow { return liveRow{pos: filePos{file: "f.xel", offset: off}} }
	cases := []struct {
		name     string
		in       liveRows
		kept     int
		wantMore bool
	}{
		{"under the cap", liveRows{rows: []liveRow{row(0), row(0), row(512)}}, 3, false},
		{"capped inside a buffer", liveRows{rows: []liveRow{row(0), row(0), row(512), row(512)}, capped: true}, 2, true},
		{"capped, one buffer", liveRows{rows: []liveRow{row(0), row(0)}, capped: true}, 2, true},
		{"capped, next file", liveRows{rows: []liveRow{row(0), {pos: filePos{file: "g.xel", offset: 0}}}, capped: true}, 1, true},
		{"empty", liveRows{}, 0, false},
	}
	for _, c := range cases {
		kept, more := c.in.whole()
		if len(kept) != c.kept || more != c.wantMore {
			t.Errorf("%s: kept %d more %v, want %d %v", c.name, len(kept), more, c.kept, c.wantMore)
		}
	}
}

// TestLiveTraceCancelled: cancelling a live trace mid-run stops the batch,
// sends a last update and leaves no session.
func TestLiveTraceCancelled(t *testing.T) {
	srv := startPacedStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &liveRecorder{on: func(u LiveUpdate) {
		if u.Seq == 2 {
			cancel()
		}
	}}
	_, err := tr.Trace(ctx, Options{SQL: liveQuery, Live: rec.add})
	if err == nil || !strings.Contains(err.Error(), "cancel") {
		t.Fatalf("cancelled live trace: %v", err)
	}
	ups := rec.all()
	if len(ups) < 3 || ups[len(ups)-1].Running {
		t.Fatalf("%d updates, the last running: want a last update after the cancel", len(ups))
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// TestLiveTraceControlConnectionLost: the control connection dropped in
// the middle of the live reads ends the trace with an error and no
// session left.
func TestLiveTraceControlConnectionLost(t *testing.T) {
	srv := startPacedStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	rec := &liveRecorder{on: func(u LiveUpdate) {
		if u.Seq == 1 {
			// the event read follows the first update (the operators' progress)
			srv.running.Faults().DropConnection("fn_xe_file_target_read_file")
		}
	}}
	_, err := tr.Trace(context.Background(), Options{SQL: liveQuery, Live: rec.add})
	if err == nil {
		t.Fatal("a trace whose control connection was lost succeeded")
	}
	ups := rec.all()
	if len(ups) == 0 || ups[len(ups)-1].Running {
		t.Fatalf("%d updates; want a last one", len(ups))
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// TestLiveTraceKeepsThePlanAcrossRollover: with every event group and a
// 1 MB event file cap the files roll over under the live reads. The file
// the reads resume from rolls away (sys.fn_xe_file_target_read_file then
// answers Msg 25718, which the reads took for "nothing dispatched yet", so
// they stopped, the tail and its plan with them: seen in the viewer as a
// finished live replay with no operators). The reads must go on from the
// files left, and the finished replay is the one built from the live reads
// (not a read of everything again, which would lose the events that rolled
// away after the live reads took them).
func TestLiveTraceKeepsThePlanAcrossRollover(t *testing.T) {
	srv := startPacedStandin(t)
	tr, _, db := newTracer(t, srv.dsn, Policy{})
	rec := &liveRecorder{}
	b, err := tr.Trace(context.Background(), Options{SQL: liveQuery, Events: bundle.AllEventGroups(), MaxFileSizeMB: 1, Live: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	if b.Plan == "" || b.Trace == nil || len(b.Trace.Operators) == 0 {
		t.Fatalf("live trace across a rollover: plan %d bytes, trace %v", len(b.Plan), b.Trace != nil)
	}
	ups := rec.all()
	if len(ups) < 2 {
		t.Fatalf("%d live updates", len(ups))
	}
	if last := ups[len(ups)-1]; last.EventsSoFar != b.Result.Events {
		t.Fatalf("the live reads took %d events, the finished replay has %d: it was not built from the live reads", last.EventsSoFar, b.Result.Events)
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// TestLiveTraceRingBuffer: a session with a ring_buffer target (Managed
// Instance, whose event_file takes only blob URLs) gets its events live
// too, from target_data read while the batch runs; each read returns the
// whole ring, so the events already handed over must not come again.
func TestLiveTraceRingBuffer(t *testing.T) {
	srv := startStandinWith(t, standin.Options{PaceToWallClock: true, Persona: "azure-sql-managed-instance"})
	tr, _, db := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	rec := &liveRecorder{}
	b, err := tr.Trace(context.Background(), Options{SQL: liveQuery, ClearBufferPool: true, Live: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	if b.Run.Target != "ring_buffer" {
		t.Fatalf("target %q, want a ring_buffer session", b.Run.Target)
	}
	var live, running int64
	for _, u := range rec.all() {
		n := int64(len(u.Events)) + u.EventsDropped
		live += n
		if u.Running {
			running += n
		}
	}
	if running == 0 {
		t.Fatal("no event reached a live update while the batch ran")
	}
	if live > b.Result.Events {
		t.Fatalf("the live updates carried %d events, the ring held %d: events came again", live, b.Result.Events)
	}
	if s := sessions(t, db); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

// A trace's connections ask for sqlconn.TracePacketSize packets unless the
// DSN names a size, which they keep (the server negotiates either).
func TestTraceConnectionsPacketSize(t *testing.T) {
	srv := startStandin(t)
	for dsn, want := range map[string]int{srv.dsn: sqlconn.TracePacketSize, sqlconn.DefaultPacketSize(srv.dsn, 4096): 4096} {
		o, err := NewDSNOpener(dsn)
		if err != nil {
			t.Fatal(err)
		}
		c, err := o.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rows, err := c.QueryContext(context.Background(), "SELECT net_packet_size FROM sys.dm_exec_connections WHERE session_id = @@SPID")
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for rows.Next() {
			if err := rows.Scan(&size); err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
		c.Close()
		if size != want {
			t.Errorf("packet size %d, want %d", size, want)
		}
	}
}

// TestLiveStatementsMatchWholeReadBack: a live trace's timelines are built
// while the events are read, statements found as they come (the builders
// take their plans at the end); for a batch of two statements and a
// procedure that calls another, the bundle is the one the whole read-back
// builds from the same events, statement tree and timelines included.
func TestLiveStatementsMatchWholeReadBack(t *testing.T) {
	srv := startPacedStandin(t)
	tr, _, _ := newTracer(t, srv.dsn, Policy{})
	for _, sql := range []string{
		"SELECT CustomerID, Name FROM dbo.Customers WHERE Region = N'West';\nSELECT OrderID, Amount FROM dbo.Orders WHERE Amount > 4000;",
		"EXEC dbo.RegionReport @region = N'West'",
	} {
		var again *bundle.Bundle
		rec := &liveRecorder{}
		o := Options{SQL: sql, Events: bundle.AllEventGroups(), Live: rec.add,
			readBackAgain: readXMLAgainInto(t, &again)}
		b, err := tr.Trace(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if planned := b.Statements; len(planned) < 3 || again == nil {
			t.Fatalf("%s: %d statements, read again %v", sql, len(planned), again != nil)
		}
		if last := rec.updates[len(rec.updates)-1]; last.EventsSoFar != b.Result.Events {
			t.Fatalf("%s: the live reads took %d events, the bundle has %d: not built from them", sql, last.EventsSoFar, b.Result.Events)
		}
		sameBundle(t, b, again)
	}
}

// readXMLAgainInto has a trace read its events again, whole, as XML, into
// *again (the reference a live bundle is compared with).
func readXMLAgainInto(t *testing.T, again **bundle.Bundle) *readBackAgain {
	return &readBackAgain{mode: ReadBackXML, got: func(b *bundle.Bundle, err error) {
		if err != nil {
			t.Errorf("read back again: %v", err)
		}
		*again = b
	}}
}
