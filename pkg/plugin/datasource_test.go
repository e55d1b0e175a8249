package plugin

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/queryreplay/queryreplay/internal/grafanarule"
	"github.com/queryreplay/queryreplay/pkg/frames"
)

var bg = context.Background()

func TestTraceThenViewAndBundle(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"allowBufferPoolClear": true})
	r := run(t, d, bg, query("A", map[string]any{"queryType": "trace", "sql": hashJoinSQL, "maxDataPoints": 100000,
		"options": map[string]any{"clearBufferPool": true, "disableReadAhead": true}}))["A"]
	fs := ok(t, r)
	id := traceIDOf(t, fs)
	for _, fr := range fs {
		if custom(t, fr)["traceId"] != id {
			t.Errorf("frame %s carries another trace id", fr.Name)
		}
	}
	tf := frameNamed(t, fs, "trace")
	if got := custom(t, tf)["persona"]; got != "box" {
		t.Errorf("persona = %v", got)
	}
	if n := frameNamed(t, fs, "lane_read").Rows(); n == 0 {
		t.Error("no page reads traced for a hash join over two scans")
	}
	ops := frameNamed(t, fs, "operators")
	rows, _ := ops.FieldByName("actualRows")
	if rows == nil || rows.At(0).(*int64) == nil {
		t.Error("operators lack the actual plan's row counts")
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}

	// view and bundle run nothing on SQL Server: they work with the server gone
	f.run.Close()
	v := run(t, d, bg, query("V", map[string]any{"queryType": "view", "traceId": id, "maxDataPoints": 2}))["V"]
	vs := ok(t, v)
	if len(vs) != 1+len(frames.LaneNames) {
		t.Errorf("view returned %d frames, want trace + lanes", len(vs))
	}
	read := frameNamed(t, vs, "lane_read")
	if c := custom(t, read); c["binned"] != true || read.Rows() > 2 {
		t.Errorf("read lane over a budget of 2: binned %v, %d rows", c["binned"], read.Rows())
	}
	// a window selects part of the trace
	w := run(t, d, bg, query("W", map[string]any{"queryType": "view", "traceId": id, "window": map[string]any{"fromUs": 0, "toUs": 0}}))["W"]
	if c := custom(t, frameNamed(t, ok(t, w), "lane_read")); c["inWindow"].(float64) >= c["total"].(float64) && c["total"].(float64) > 1 {
		t.Errorf("window 0..0 kept %v of %v reads", c["inWindow"], c["total"])
	}
	b := run(t, d, bg, query("B", map[string]any{"queryType": "bundle", "traceId": id}))["B"]
	if bs := ok(t, b); len(bs) != len(fs) {
		t.Errorf("bundle returned %d frames, trace %d", len(bs), len(fs))
	}
}

func TestTraceOnAzureSQLDatabase(t *testing.T) {
	f := startPersona(t, "azure-sql-database")
	d := f.datasource(t, "ds1", nil)
	fs := ok(t, run(t, d, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"])
	if got := custom(t, frameNamed(t, fs, "trace"))["persona"]; got != "azure-sql-database" {
		t.Errorf("persona = %v", got)
	}
	// Azure SQL Database has no DBCC DROPCLEANBUFFERS: refused before anything runs
	d2 := f.datasource(t, "ds2", map[string]any{"allowBufferPoolClear": true})
	fails(t, run(t, d2, bg, query("B", map[string]any{"sql": hashJoinSQL, "options": map[string]any{"clearBufferPool": true}}))["B"],
		backend.StatusBadRequest, backend.ErrorSourcePlugin, "Azure SQL Database")
}

func TestProbeIsNumericAndReadOnly(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"allowModifications": true})
	rs := run(t, d, bg,
		query("P", map[string]any{"queryType": "probe", "sql": hashJoinSQL}),
		query("U", map[string]any{"queryType": "probe", "sql": updateSQL}))
	fs := ok(t, rs["P"])
	if len(fs) != 1 || fs[0].Meta.Type != data.FrameTypeNumericWide {
		t.Fatalf("probe frames: %v", fs)
	}
	dur, _ := fs[0].FieldByName("duration")
	locks, _ := fs[0].FieldByName("locks")
	if dur == nil || locks == nil || locks.At(0).(float64) == 0 || dur.At(0).(float64) <= 0 {
		t.Errorf("probe values missing: %v", fs[0].RowCopy(0))
	}
	fails(t, rs["U"], backend.StatusBadRequest, backend.ErrorSourcePlugin, "read-only", "UPDATE")
	checkProbeForAlerting(t, fs, 12)
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

func TestErrorPaths(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	cases := []struct {
		name   string
		q      map[string]any
		status backend.Status
		source backend.ErrorSource
		words  []string
	}{
		{"sql server error", map[string]any{"sql": "SELECT * FROM dbo.NoSuchTable"}, backend.StatusBadRequest, backend.ErrorSourceDownstream,
			[]string{"Msg 208", "State", "Line 1", "NoSuchTable"}},
		{"classifier refusal", map[string]any{"sql": "SELECT 1\nCOMMIT TRANSACTION"}, backend.StatusBadRequest, backend.ErrorSourcePlugin,
			[]string{"line 2 (COMMIT TRANSACTION)", "COMMIT"}},
		{"modification refused", map[string]any{"sql": updateSQL}, backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{"modifies data", "UPDATE"}},
		{"buffer pool clear refused", map[string]any{"sql": hashJoinSQL, "options": map[string]any{"clearBufferPool": true}},
			backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{"buffer pool"}},
		{"empty sql", map[string]any{"queryType": "trace"}, backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{"sql is empty"}},
		{"bad event group", map[string]any{"sql": "SELECT 1", "options": map[string]any{"events": []string{"nope"}}},
			backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{`"nope"`}},
		{"unknown trace", map[string]any{"queryType": "view", "traceId": strings.Repeat("ab", 16)}, backend.StatusNotFound, backend.ErrorSourcePlugin,
			[]string{"not found"}},
		{"malformed trace id", map[string]any{"queryType": "bundle", "traceId": "../x"}, backend.StatusNotFound, backend.ErrorSourcePlugin, nil},
		{"view without id", map[string]any{"queryType": "view"}, backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{"traceId is empty"}},
		{"compare one trace", map[string]any{"queryType": "compare", "traceIds": []string{strings.Repeat("ab", 16)}}, backend.StatusBadRequest,
			backend.ErrorSourcePlugin, []string{"traceIds must name two stored traces"}},
		{"compare unknown traces", map[string]any{"queryType": "compare", "traceIds": []string{strings.Repeat("ab", 16), strings.Repeat("cd", 16)}},
			backend.StatusNotFound, backend.ErrorSourcePlugin, []string{"not found"}},
		{"unknown type", map[string]any{"queryType": "explain"}, backend.StatusBadRequest, backend.ErrorSourcePlugin, []string{`"explain"`}},
	}
	var qs []backend.DataQuery
	for i, c := range cases {
		qs = append(qs, query(string(rune('A'+i)), c.q))
	}
	qs = append(qs, backend.DataQuery{RefID: "Z", JSON: []byte(`{"sql": 5}`)})
	rs := run(t, d, bg, qs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { fails(t, rs[string(rune('A'+i))], c.status, c.source, c.words...) })
	}
	fails(t, rs["Z"], backend.StatusBadRequest, backend.ErrorSourcePlugin, "not valid JSON")
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}

func TestInvalidSettingsAnswerEveryQuery(t *testing.T) {
	inst, err := NewDatasource(bg, backend.DataSourceInstanceSettings{JSONData: []byte(`{"port": 70000}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := inst.(*Datasource)
	defer d.Dispose()
	rs := run(t, d, bg, query("A", map[string]any{"sql": "SELECT 1"}), query("B", map[string]any{"queryType": "view"}))
	for _, ref := range []string{"A", "B"} {
		fails(t, rs[ref], backend.StatusBadRequest, backend.ErrorSourceDownstream, "host is missing", "port 70000")
	}
	h, _ := d.CheckHealth(bg, &backend.CheckHealthRequest{})
	if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "host is missing") {
		t.Fatalf("health = %+v", h)
	}
}

// TestStoppedTracesLeaveNoSession: Grafana cancelling the request and
// traceTimeout passing both stop a running trace, answer at once and leave
// no event session behind.
func TestStoppedTracesLeaveNoSession(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]any
		ctx      func() (context.Context, context.CancelFunc)
		status   backend.Status
		words    []string
		// timeout is the query's options.timeoutSeconds (60 when 0)
		timeout float64
	}{
		{"cancelled", nil, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(bg)
			time.AfterFunc(300*time.Millisecond, cancel)
			return ctx, cancel
		}, backend.StatusBadRequest, []string{"cancelled", "dropped"}, 0},
		{"traceTimeout", map[string]any{"traceTimeout": "500ms"}, func() (context.Context, context.CancelFunc) { return context.WithCancel(bg) },
			backend.StatusTimeout, []string{"traceTimeout (500ms)", "dropped"}, 0},
		// the query's own, shorter timeout is the one the message names
		{"timeoutSeconds", nil, func() (context.Context, context.CancelFunc) { return context.WithCancel(bg) },
			backend.StatusTimeout, []string{"options.timeoutSeconds (500ms)", "dropped"}, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := startStandin(t)
			d := f.datasource(t, "ds1", c.settings)
			f.run.Faults().Delay("c.Region = N'West'", 10*time.Second)
			ctx, cancel := c.ctx()
			defer cancel()
			began := time.Now()
			timeout := c.timeout
			if timeout == 0 {
				timeout = 60
			}
			r := run(t, d, ctx, query("A", map[string]any{"sql": hashJoinSQL, "options": map[string]any{"timeoutSeconds": timeout}}))["A"]
			fails(t, r, c.status, backend.ErrorSourceDownstream, c.words...)
			if c.name == "timeoutSeconds" && strings.Contains(r.Error.Error(), "traceTimeout") {
				t.Errorf("the query's own timeout is reported as traceTimeout: %v", r.Error)
			}
			if el := time.Since(began); el > 5*time.Second {
				t.Errorf("the stopped trace took %s", el)
			}
			if s := f.sessions(t); len(s) != 0 {
				t.Fatalf("sessions left: %v", s)
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"maxConcurrentTraces": 1, "traceQueueTimeout": 0.2})
	f.run.Faults().Delay("c.Region = N'West'", 1500*time.Millisecond)
	rs := run(t, d, bg, query("A", map[string]any{"sql": hashJoinSQL}), query("B", map[string]any{"sql": hashJoinSQL}))
	var okN, refused int
	for _, r := range rs {
		switch {
		case r.Error == nil:
			okN++
		case r.Status == backend.StatusTooManyRequests:
			refused++
			if !strings.Contains(r.Error.Error(), "maxConcurrentTraces") || r.ErrorSource != backend.ErrorSourcePlugin {
				t.Errorf("refusal: %v (%s)", r.Error, r.ErrorSource)
			}
		default:
			t.Errorf("unexpected failure: %v", r.Error)
		}
	}
	if okN != 1 || refused != 1 {
		t.Fatalf("%d ran, %d refused; want 1 and 1", okN, refused)
	}
	// a waiting trace runs when the slot frees within the queue timeout
	d2 := f.datasource(t, "ds2", map[string]any{"maxConcurrentTraces": 1, "traceQueueTimeout": "30s"})
	rs = run(t, d2, bg, query("A", map[string]any{"sql": hashJoinSQL}), query("B", map[string]any{"sql": hashJoinSQL}))
	for ref, r := range rs {
		if r.Error != nil {
			t.Errorf("%s: %v", ref, r.Error)
		}
	}
}

func TestHAReplicasServeEachOthersTraces(t *testing.T) {
	f := startStandin(t)
	one := f.datasource(t, "shared", nil)
	two := f.datasource(t, "shared", nil) // another Grafana replica, same directory
	id := traceIDOf(t, ok(t, run(t, one, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"]))
	vs := ok(t, run(t, two, bg, query("V", map[string]any{"queryType": "view", "traceId": id}))["V"])
	if traceIDOf(t, vs) != id {
		t.Fatal("replica two served another trace")
	}
	id2 := traceIDOf(t, ok(t, run(t, two, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"]))
	ok(t, run(t, one, bg, query("B", map[string]any{"queryType": "bundle", "traceId": id2}))["B"])
	// a datasource with another uid has its own traces
	other := f.datasource(t, "other", nil)
	fails(t, run(t, other, bg, query("V", map[string]any{"queryType": "view", "traceId": id}))["V"], backend.StatusNotFound, backend.ErrorSourcePlugin)
}

// oldSessionName is a tracer-made name (UUID v7) created an hour ago.
func oldSessionName() string {
	b := make([]byte, 16)
	ms := time.Now().Add(-time.Hour).UnixMilli()
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6], b[8] = 0x70, 0x80
	return "queryreplay_" + hex.EncodeToString(b)
}

func TestStartSweepsOrphanedSessions(t *testing.T) {
	f := startStandin(t)
	name := oldSessionName()
	if _, err := f.db.Exec("CREATE EVENT SESSION [" + name + "] ON SERVER ADD EVENT sqlserver.sql_batch_starting ADD TARGET package0.ring_buffer"); err != nil {
		t.Fatal(err)
	}
	if s := f.sessions(t); len(s) != 1 {
		t.Fatalf("setup: sessions %v", s)
	}
	d := f.datasource(t, "ds1", nil)
	if d.sweepErr != nil || d.sweepCount != 1 {
		t.Fatalf("sweep: %d, %v", d.sweepCount, d.sweepErr)
	}
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("orphan left after start: %v", s)
	}
}

func TestConcurrentViewsOfOneTrace(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	id := traceIDOf(t, ok(t, run(t, d, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"]))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(t, d, bg, query("V", map[string]any{"queryType": "view", "traceId": id, "maxDataPoints": 3 + i}))["V"]
			if r.Error != nil {
				t.Error(r.Error)
			}
		}()
	}
	wg.Wait()
}

func TestUnreachableServerIsDownstream(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", map[string]any{"connectTimeoutSeconds": 2})
	f.run.Close()
	r := run(t, d, bg, query("A", map[string]any{"sql": hashJoinSQL}))["A"]
	fails(t, r, backend.StatusBadGateway, backend.ErrorSourceDownstream, "cannot reach SQL Server")
	if strings.Contains(r.Error.Error(), standinPass) {
		t.Fatal("the error leaks the password")
	}
}

// checkProbeForAlerting holds a probe response of the real datasource to the
// data plane numeric contract and to alert evaluation's rule that no two
// numbers share a label set (internal/grafanarule cites Grafana's source).
func checkProbeForAlerting(t *testing.T, fs data.Frames, want int) {
	t.Helper()
	ns, err := grafanarule.NumericContract(fs)
	if err != nil {
		t.Fatalf("data plane numeric contract: %v", err)
	}
	keys, err := grafanarule.AlertInstances(ns)
	if err != nil {
		t.Fatalf("alert evaluation: %v", err)
	}
	if len(keys) != want {
		t.Errorf("alert instances %v, want %d", keys, want)
	}
}

// A probe asked for some metrics returns those numbers only, so an alert
// rule's threshold applies to the measure it is about.
func TestProbeMetricsForAnAlertRule(t *testing.T) {
	f := startStandin(t)
	d := f.datasource(t, "ds1", nil)
	rs := run(t, d, bg,
		query("D", map[string]any{"queryType": "probe", "sql": hashJoinSQL, "metrics": []string{"duration"}}),
		query("X", map[string]any{"queryType": "probe", "sql": hashJoinSQL, "metrics": []string{"nosuch"}}))
	fs := ok(t, rs["D"])
	checkProbeForAlerting(t, fs, 1)
	if len(fs[0].Fields) != 1 || fs[0].Fields[0].Labels["metric"] != "duration" {
		t.Errorf("probe with metrics [duration]: fields %v", fs[0].Fields)
	}
	fails(t, rs["X"], backend.StatusBadRequest, backend.ErrorSourcePlugin, "nosuch", "not a probe metric")
	if s := f.sessions(t); len(s) != 0 {
		t.Fatalf("sessions left: %v", s)
	}
}
