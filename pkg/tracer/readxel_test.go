package tracer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/xe"
)

// ptrText matches pointer values: XELReader prints them in upper case, the
// stand-in's XML in lower case (the value is the same).
var ptrText = regexp.MustCompile(`"0x[0-9A-Fa-f]{16}"`)

// eventJSON renders an event for comparison across the two read-backs:
// timestamps from the instant (XML prints 3 fractional digits, .xel 7) and
// pointers in lower case.
func eventJSON(ev *xe.Event) string {
	e := *ev
	e.Timestamp.Raw = e.Timestamp.Time.UTC().Format(time.RFC3339Nano)
	return ptrText.ReplaceAllStringFunc(string(e.AppendJSON(nil)), strings.ToLower)
}

func typedJSON(t *testing.T, ev *xe.Event) string {
	t.Helper()
	e := *ev
	e.Timestamp.Raw = e.Timestamp.Time.UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(xe.Typed(&e, nil))
	if err != nil {
		t.Fatal(err)
	}
	return ptrText.ReplaceAllStringFunc(string(b), strings.ToLower)
}

// The same traced run, read back through the binary path and through the
// XML path, gives equal events (generic and typed) and an equal timeline.
func TestReadBackBinaryEqualsXML(t *testing.T) {
	srv := startStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{AllowClearBufferPool: true})
	var xmlBundle *bundle.Bundle
	var xmlErr error
	// the update_orders demo scenario: reads, locks, waits, log records
	const update = "UPDATE dbo.Orders SET Status = N'Shipped' WHERE OrderID BETWEEN 100 AND 120"
	o := Options{SQL: update, ClearBufferPool: true, Events: bundle.AllEventGroups(), ReadBack: ReadBackBinary,
		readBackAgain: &readBackAgain{mode: ReadBackXML, got: func(b *bundle.Bundle, err error) { xmlBundle, xmlErr = b, err }}}
	bin, err := tr.Trace(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if xmlErr != nil {
		t.Fatalf("XML read-back: %v", xmlErr)
	}
	if bin.Run.ReadBack != "binary" || xmlBundle.Run.ReadBack != "xml" {
		t.Fatalf("read back as %q and %q, want binary and xml", bin.Run.ReadBack, xmlBundle.Run.ReadBack)
	}
	// ~80 events: the update locks and logs the clustered index only (no
	// index holds Status), each row U then X
	if bin.Result.Events < 60 || bin.Result.Events != xmlBundle.Result.Events || bin.Result.Batches != xmlBundle.Result.Batches {
		t.Fatalf("events %d/%d, batches %d/%d", bin.Result.Events, xmlBundle.Result.Events, bin.Result.Batches, xmlBundle.Result.Batches)
	}
	jb, _ := json.Marshal(bin.Result.Resolution)
	jx, _ := json.Marshal(xmlBundle.Result.Resolution)
	if !bytes.Equal(jb, jx) {
		t.Errorf("resolution differs:\nbinary %s\nxml    %s", jb, jx)
	}
	tb, _ := json.Marshal(bin.Trace)
	tx, _ := json.Marshal(xmlBundle.Trace)
	if len(bin.Trace.Lanes.Lock) == 0 || len(bin.Trace.Lanes.Read) == 0 {
		t.Fatalf("timeline too thin to compare: %d locks, %d reads", len(bin.Trace.Lanes.Lock), len(bin.Trace.Lanes.Read))
	}
	if !bytes.Equal(tb, tx) {
		t.Errorf("timelines differ (%d vs %d bytes of JSON)", len(tb), len(tx))
	}

	// The file stays on the server after DROP: fetch it both ways and
	// compare event by event.
	var file string
	for _, s := range log.texts() {
		if i := strings.Index(s, "OPENROWSET(BULK N'"); i >= 0 {
			file = s[i+len("OPENROWSET(BULK N'"):]
			file = file[:strings.Index(file, "'")]
		}
	}
	if file == "" {
		t.Fatal("no OPENROWSET statement sent")
	}
	var blob []byte
	if err := db.QueryRow("SELECT BulkColumn FROM OPENROWSET(BULK N'" + file + "', SINGLE_BLOB) AS f").Scan(&blob); err != nil {
		t.Fatal(err)
	}
	var fromXEL []xe.Event
	for ev, err := range xe.NewXELReader(bytes.NewReader(blob)).All() {
		if err != nil {
			t.Fatal(err)
		}
		fromXEL = append(fromXEL, ev.Clone())
	}
	rows, err := db.Query("SELECT event_data FROM sys.fn_xe_file_target_read_file(N'" + file + "', NULL, NULL, NULL)")
	if err != nil {
		t.Fatal(err)
	}
	var fromXML []xe.Event
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		d := xe.NewDecoder(strings.NewReader(s))
		for {
			ev, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			fromXML = append(fromXML, ev.Clone())
		}
	}
	rows.Close()
	if len(fromXML) != len(fromXEL) || int64(len(fromXML)) != bin.Result.Events {
		t.Fatalf("%d events from XML, %d from .xel, %d in the trace", len(fromXML), len(fromXEL), bin.Result.Events)
	}
	names := map[string]bool{}
	for i := range fromXML {
		names[fromXML[i].Name] = true
		if a, b := eventJSON(&fromXML[i]), eventJSON(&fromXEL[i]); a != b {
			t.Fatalf("event %d differs:\nxml  %s\n.xel %s", i+1, a, b)
		}
		if a, b := typedJSON(t, &fromXML[i]), typedJSON(t, &fromXEL[i]); a != b {
			t.Fatalf("typed event %d differs:\nxml  %s\n.xel %s", i+1, a, b)
		}
	}
	t.Logf("%d events compared, %d event types; timelines equal (%d bytes of JSON)", len(fromXML), len(names), len(tb))
	for _, want := range []string{"lock_acquired", "physical_page_read", "wait_info", "query_post_execution_showplan", "transaction_log", "sql_batch_completed"} {
		if !names[want] {
			t.Errorf("the compared trace has no %s event", want)
		}
	}
}

// startStandinWith starts a stand-in with the given options (login sa).
func startStandinWith(t testing.TB, opts standin.Options) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run, err := standin.Start(ctx, "127.0.0.1:0", opts)
	if err != nil {
		cancel()
		t.Fatalf("start stand-in: %v", err)
	}
	t.Cleanup(func() { run.Close(); cancel() })
	return &testServer{dsn: run.DSN, running: run}
}

// Without the bulk permission (or without .xel files to fetch), Auto falls
// back to the XML read-back and says why; Binary fails the trace.
func TestReadBackFallback(t *testing.T) {
	cases := []struct {
		name       string
		opts       standin.Options
		wantReason string
		wantSent   []string
		notSent    []string
	}{
		{"no bulk permission", standin.Options{XELEncoder: xe.EncodeXMLAsXEL, BulkPermission: map[string]bool{"sa": false}},
			"ADMINISTER BULK OPERATIONS", []string{"HAS_PERMS_BY_NAME(NULL, NULL, N'ADMINISTER BULK OPERATIONS')", "ADMINISTER DATABASE BULK OPERATIONS", "fn_xe_file_target_read_file"},
			[]string{"OPENROWSET", "dm_os_enumerate_filesystem"}},
		{"file cannot be read (Msg 4860)", standin.Options{},
			"4860", []string{"OPENROWSET", "fn_xe_file_target_read_file"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startStandinWith(t, tc.opts)
			tr, log, db := newTracer(t, srv.dsn, Policy{})
			b, err := tr.Trace(context.Background(), Options{SQL: selectSQL, Events: bundle.EventGroups{Locks: true}})
			if err != nil {
				t.Fatal(err)
			}
			if b.Run.ReadBack != "xml" || !strings.Contains(b.Run.ReadBackFallback, tc.wantReason) {
				t.Fatalf("read back as %q, fallback %q; want xml because of %q", b.Run.ReadBack, b.Run.ReadBackFallback, tc.wantReason)
			}
			if b.Result.Events == 0 || b.Result.Batches != 1 || b.Trace == nil || len(b.Trace.Lanes.Lock) == 0 {
				t.Fatalf("the XML read-back did not produce the trace: %+v", b.Result)
			}
			all := strings.Join(log.texts(), "\n")
			for _, s := range tc.wantSent {
				if !strings.Contains(all, s) {
					t.Errorf("no statement contains %q", s)
				}
			}
			for _, s := range tc.notSent {
				if strings.Contains(all, s) {
					t.Errorf("a statement contains %q", s)
				}
			}
			// ReadBackBinary does not fall back
			_, err = tr.Trace(context.Background(), Options{SQL: selectSQL, ReadBack: ReadBackBinary})
			if err == nil || !strings.Contains(err.Error(), tc.wantReason) {
				t.Fatalf("binary-only read-back: %v, want an error naming %q", err, tc.wantReason)
			}
			if s := sessions(t, db); len(s) != 0 {
				t.Fatalf("sessions left: %v", s)
			}
		})
	}
}

func TestParseReadBack(t *testing.T) {
	for _, m := range []ReadBackMode{ReadBackAuto, ReadBackXML, ReadBackBinary} {
		got, err := ParseReadBack(strings.ToUpper(m.String()))
		if err != nil || got != m {
			t.Errorf("ParseReadBack(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseReadBack("ring"); err == nil {
		t.Error("ParseReadBack accepted \"ring\"")
	}
	if _, err := (Options{SQL: "SELECT 1", ReadBack: 7}).Validate(Policy{}); err == nil || !strings.Contains(err.Error(), "read-back mode 7") {
		t.Errorf("Validate of read-back mode 7: %v", err)
	}
}

// BenchmarkReadBack measures the read-back of one traced run (from the
// first "reading events" report to the end of Trace: the events read,
// names resolved, timeline built) through each path, against the stand-in.
// On the stand-in the binary path includes the stand-in rendering its
// in-memory event XML as .xel on every OPENROWSET, work a real server does
// not do.
//
//	go test ./pkg/tracer -run '^$' -bench ReadBack -benchtime 5x
func BenchmarkReadBack(b *testing.B) {
	srv := startStandin(b)
	tr, _, _ := newTracer(b, srv.dsn, Policy{AllowClearBufferPool: true})
	// the sort_spill demo scenario over a cold buffer pool without read-ahead, every event group
	const query = "SELECT l.OrderID, l.ProductID, l.Quantity, l.Price FROM dbo.OrderLines AS l ORDER BY l.Price DESC, l.OrderID"
	for _, mode := range []ReadBackMode{ReadBackXML, ReadBackBinary} {
		b.Run(mode.String(), func(b *testing.B) {
			var total time.Duration
			var events int64
			for i := 0; i < b.N; i++ {
				var began time.Time
				o := Options{SQL: query, ClearBufferPool: true, DisableReadAhead: true, Events: bundle.AllEventGroups(), ReadBack: mode,
					Progress: func(p Progress) {
						if p.Step == "reading events" && began.IsZero() {
							began = time.Now()
						}
					}}
				traced, err := tr.Trace(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(began)
				events = traced.Result.Events
				if traced.Run.ReadBack != mode.String() {
					b.Fatalf("read back as %s", traced.Run.ReadBack)
				}
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "readback-ms/op")
			b.ReportMetric(float64(events), "events")
		})
	}
}
