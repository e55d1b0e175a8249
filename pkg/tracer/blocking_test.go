package tracer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
)

// lockBlockingSQL is the stand-in's lock_blocking scenario, with its
// set-up in place (standin.PrepareScenario; release ends it, at the latest
// at the test's end, and returns once its transaction rolled back):
// another session (SPID 999, login demo_blocker) holds an X lock on order
// 500 until 400 ms after the traced seek began to wait LCK_M_S.
func lockBlockingSQL(t *testing.T, srv *testServer) (sql string, release func()) {
	t.Helper()
	for _, s := range standin.Scenarios() {
		if s.Name == "lock_blocking" {
			release, err := standin.PrepareScenario(context.Background(), srv.running.Server, s)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(release)
			return s.SQL, release
		}
	}
	t.Fatal("the stand-in has no lock_blocking scenario")
	return "", nil
}

// samplerQueries counts the sampling statements the control connection
// sent, by the view they read.
func samplerQueries(log *stmtLog) (requests, sessions, inputBuffer int) {
	for _, q := range log.texts() {
		switch {
		case strings.Contains(q, "FROM sys.dm_exec_requests WHERE session_id = "):
			requests++
		case strings.Contains(q, "SELECT login_name, host_name, program_name, status FROM sys.dm_exec_sessions"):
			sessions++
		case strings.Contains(q, "sys.dm_exec_input_buffer("):
			inputBuffer++
		}
	}
	return
}

// A traced batch blocked by another session names it: the bundle carries
// the blocking interval with the blocker's session, wait, resource, login,
// host and program (and no statement text unless asked for).
func TestTraceSamplesBlocker(t *testing.T) {
	srv := startStandin(t)
	for _, withText := range []bool{false, true} {
		tr, log, db := newTracer(t, srv.dsn, Policy{})
		before := checksum(t, db)
		sql, release := lockBlockingSQL(t, srv)
		b, err := tr.Trace(context.Background(), Options{SQL: sql, Events: bundle.AllEventGroups(), BlockerStatements: withText})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Result.Blocking) != 1 {
			t.Fatalf("blocking %+v (note %q), want one interval", b.Result.Blocking, b.Result.BlockingNote)
		}
		s := b.Result.Blocking[0]
		if s.SessionID != 999 || s.WaitType != "LCK_M_S" || !strings.HasPrefix(s.WaitResource, "KEY: ") || s.Login != "demo_blocker" ||
			s.Program != "QueryReplay demo blocker" || s.Host == "" || s.Status != "sleeping" || s.Note != "" {
			t.Errorf("sample %+v", s)
		}
		// 400 ms of blocking sampled every 100 ms: several samples, one interval
		if s.Samples < 2 || s.Samples > 5 || s.LastSeenUs <= s.FirstSeenUs || s.LastSeenUs > b.Result.DurationUs {
			t.Errorf("samples %d from %d to %d µs (batch %d µs)", s.Samples, s.FirstSeenUs, s.LastSeenUs, b.Result.DurationUs)
		}
		if s.WaitTimeMs < 100 || s.WaitStartUs > s.FirstSeenUs || s.WaitStartUs > 100_000 {
			t.Errorf("wait %d ms, began at %d µs", s.WaitTimeMs, s.WaitStartUs)
		}
		if withText != (s.Statement != "") || withText && !strings.Contains(s.Statement, "UPDATE dbo.Orders SET Status") {
			t.Errorf("statement %q with BlockerStatements %v", s.Statement, withText)
		}
		// the blocker's session is looked up once, however many samples
		if _, sessions, ib := samplerQueries(log); sessions != 1 || ib != map[bool]int{false: 0, true: 1}[withText] {
			t.Errorf("looked the blocker up %d times, its input buffer %d times", sessions, ib)
		}
		// every sampling statement is one docs/security.md lists
		assertListedInSecurityDoc(t, log, b)
		// the timeline's lock wait lies inside what the samples saw
		var wait bool
		for _, w := range b.Trace.Lanes.Wait {
			if w.WaitType == "LCK_M_S" && w.T <= s.FirstSeenUs+50_000 && w.End >= s.LastSeenUs-50_000 {
				wait = true
			}
		}
		if !wait {
			t.Errorf("no LCK_M_S wait on the timeline covers %d–%d µs: %+v", s.FirstSeenUs, s.LastSeenUs, b.Trace.Lanes.Wait)
		}
		// the bundle carries it through a save and load
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		back, err := bundle.Read(strings.NewReader(string(data)))
		if err != nil || len(back.Result.Blocking) != 1 || back.Result.Blocking[0] != s {
			t.Errorf("round trip: %v %+v", err, back.Result.Blocking)
		}
		// the scenario's blocker has rolled back before the next run sets
		// up its own (Release returns once the hold has ended)
		release()
		assertNothingLeft(t, db, before)
	}
}

// A batch nobody blocks has no samples, and sampling stops with the batch:
// a fast batch is never sampled, a slow one about once per interval while
// it runs and never after.
func TestTraceSamplerBoundedByBatch(t *testing.T) {
	srv := startStandin(t)
	tr, log, _ := newTracer(t, srv.dsn, Policy{})
	b, err := tr.Trace(context.Background(), Options{SQL: selectSQL})
	if err != nil {
		t.Fatal(err)
	}
	if req, _, _ := samplerQueries(log); len(b.Result.Blocking) != 0 || b.Result.BlockingNote != "" || req > int(b.Result.DurationUs/100_000) {
		t.Errorf("fast batch: %d samples, blocking %+v, note %q", req, b.Result.Blocking, b.Result.BlockingNote)
	}

	tr, log, _ = newTracer(t, srv.dsn, Policy{})
	b, err = tr.Trace(context.Background(), Options{SQL: "WAITFOR DELAY '00:00:00.600'; " + selectSQL, BlockerInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	req, _, _ := samplerQueries(log)
	if most := int(b.Result.DurationUs/50_000) + 1; req < 5 || req > most {
		t.Errorf("600 ms batch sampled every 50 ms: %d samples, want 5..%d", req, most)
	}
	if len(b.Result.Blocking) != 0 || b.Result.BlockingNote != "" {
		t.Errorf("unblocked batch: blocking %+v, note %q", b.Result.Blocking, b.Result.BlockingNote)
	}
	assertListedInSecurityDoc(t, log, b) // the request's row and, in WAITFOR, the visibility check
	// nothing is sampled once the batch is over: the last sample comes
	// before the statements after the batch
	texts := log.texts()
	last, after := -1, -1
	for i, q := range texts {
		if strings.Contains(q, "FROM sys.dm_exec_requests WHERE session_id = ") {
			last = i
		}
		if after < 0 && strings.Contains(q, "dropped_event_count") {
			after = i
		}
	}
	if last < 0 || after < 0 || last > after {
		t.Errorf("last sample at statement %d, the stop's first statement at %d", last, after)
	}

	// negative interval: never sampled
	tr, log, _ = newTracer(t, srv.dsn, Policy{})
	if _, err := tr.Trace(context.Background(), Options{SQL: "WAITFOR DELAY '00:00:00.300'; " + selectSQL, BlockerInterval: -1}); err != nil {
		t.Fatal(err)
	}
	if req, _, _ := samplerQueries(log); req != 0 {
		t.Errorf("BlockerInterval -1 sampled %d times", req)
	}
}

// At most MaxBlockerSamples intervals are kept; the rest are counted in
// the note.
func TestBlockerSamplesCapped(t *testing.T) {
	s := &blockerSampler{r: &run{}, start: time.Now(), max: 2, sessions: map[int]*blockerSession{}}
	for i := range 5 {
		s.sessions[60+i] = &blockerSession{login: "app"}
		s.record(blockerRow{session: 60 + i, waitType: "LCK_M_S", waitMs: 10}, time.Now())
		s.record(blockerRow{session: 60 + i, waitType: "LCK_M_S", waitMs: 20}, time.Now()) // the same wait: extends
	}
	// a new wait by the same session (wait_time went down) is a new interval
	s.current = nil
	b := &bundle.Bundle{}
	s.finish(b)
	if len(b.Result.Blocking) != 2 || b.Result.Blocking[0].Samples != 2 || b.Result.Blocking[1].SessionID != 61 {
		t.Fatalf("kept %+v", b.Result.Blocking)
	}
	if !strings.Contains(b.Result.BlockingNote, "3 further blocking intervals were not kept (the cap is 2; raise MaxBlockerSamples)") {
		t.Errorf("note %q", b.Result.BlockingNote)
	}
	s2 := &blockerSampler{r: &run{}, start: time.Now(), max: 5, sessions: map[int]*blockerSession{61: {}}}
	s2.record(blockerRow{session: 61, waitType: "LCK_M_X", waitMs: 300}, time.Now())
	s2.record(blockerRow{session: 61, waitType: "LCK_M_X", waitMs: 5}, time.Now())
	if len(s2.samples) != 2 {
		t.Errorf("a wait whose wait_time went back is a new interval: %+v", s2.samples)
	}
}

// A refused sampling query is noted once, sampling stops, and the trace
// goes on.
func TestBlockerSamplingRefused(t *testing.T) {
	for _, c := range []struct {
		number  int32
		message string
		note    string
	}{
		{300, "VIEW SERVER STATE permission was denied on object 'server', database 'master'.", "who blocked the batch was not sampled: read sys.dm_exec_requests was refused (it needs VIEW SERVER STATE"},
		{701, "There is insufficient system memory in resource pool 'default' to run this query.", "who blocked the batch was sampled only in part: read sys.dm_exec_requests failed: mssql: There is insufficient system memory"},
	} {
		testBlockerSamplingFails(t, c.number, c.message, c.note)
	}
}

func testBlockerSamplingFails(t *testing.T, number int32, message, note string) {
	t.Helper()
	srv := startStandin(t)
	srv.running.Faults().Error("FROM sys.dm_exec_requests WHERE session_id", number, 16, message)
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	sql, _ := lockBlockingSQL(t, srv)
	b, err := tr.Trace(context.Background(), Options{SQL: sql, Events: bundle.AllEventGroups()})
	if err != nil {
		t.Fatal(err)
	}
	if req, _, _ := samplerQueries(log); req != 1 {
		t.Errorf("Msg %d: sampled %d times after it, want 1", number, req)
	}
	if len(b.Result.Blocking) != 0 || !strings.Contains(b.Result.BlockingNote, note) {
		t.Errorf("Msg %d: blocking %+v note %q", number, b.Result.Blocking, b.Result.BlockingNote)
	}
	n := 0
	for _, w := range b.Result.Warnings {
		if w == b.Result.BlockingNote {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the refusal is in the warnings %d times: %q", n, b.Result.Warnings)
	}
	if b.Trace == nil || len(b.Trace.Lanes.Wait) == 0 {
		t.Error("the trace itself must stand")
	}
	assertNothingLeft(t, db, before)
}

// Older bundles, without the blocking fields, still load.
func TestBundleWithoutBlockingLoads(t *testing.T) {
	old := `{"format":"queryreplay-trace","version":1,"sql":"SELECT 1","server":{},"run":{"session":"s","startedAt":"2026-01-01T00:00:00Z","events":null,"clearBufferPool":false,"disableReadAhead":false,"modification":false,"callStacks":false,"target":"","groups":{"Locks":false,"Waits":false,"Memory":false,"Splits":false,"Log":false,"FileIO":false}},"result":{"rows":[1],"durationUs":5,"events":0,"batches":1,"resolution":{"pages":0,"pagesNamed":0,"hobts":0,"hobtsNamed":0,"keyLocks":0,"keyLocksResolved":0}},"trace":{"schema":1}}`
	b, err := bundle.Read(strings.NewReader(old))
	if err != nil || b.Result.Blocking != nil || b.Result.BlockingNote != "" {
		t.Fatalf("%v %+v", err, b)
	}
}

// A batch that outlives its timeout while blocked: the watchdog, on its own
// connection, tells the sampler to stop and does not wait for it; at most
// the sampling round in flight (the request, then the blocker's session and
// last batch) is sent after its STOP.
func TestBlockerSamplerStopsOnTimeout(t *testing.T) {
	srv := startStandin(t)
	tr, log, db := newTracer(t, srv.dsn, Policy{})
	before := checksum(t, db)
	sql, release := lockBlockingSQL(t, srv)
	_, err := tr.Trace(context.Background(), Options{SQL: sql, Timeout: 250 * time.Millisecond, BlockerInterval: 20 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err %v, want the timeout", err)
	}
	texts := log.texts()
	stop, samples, after := -1, 0, 0
	for i, q := range texts {
		if stop < 0 && strings.Contains(q, "STATE = STOP") {
			stop = i
		}
		if strings.Contains(q, "FROM sys.dm_exec_requests WHERE session_id = ") || strings.Contains(q, "FROM sys.dm_exec_sessions WHERE session_id = ") &&
			!strings.Contains(q, "login_time") || strings.Contains(q, "sys.dm_exec_input_buffer(") {
			samples++
			if stop >= 0 {
				after++
			}
		}
	}
	if samples == 0 || stop < 0 || after > 3 {
		t.Errorf("%d sampling statements, %d of them after the watchdog's STOP (at %d); want some, and at most one round after", samples, after, stop)
	}
	if stopConn, killConn := watchdogStatements(log); stopConn != 3 || killConn != 3 {
		t.Errorf("STOP came from connection %d and KILL from %d; want the watchdog's (3)", stopConn, killConn)
	}
	release() // the scenario's blocker rolls back (the trace gave up before it ended)
	assertNothingLeft(t, db, before)
}

// assertListedInSecurityDoc checks that each sampling statement the
// control connection sent appears in docs/security.md, with the session
// ids written as <traced session> and <blocker>.
func assertListedInSecurityDoc(t *testing.T, log *stmtLog, b *bundle.Bundle) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`(session_id = |input_buffer\()(\d+)`)
	n := 0
	for _, q := range log.texts() {
		q = strings.TrimPrefix(q, "/* "+b.Run.Session+" */ ")
		if !strings.Contains(q, "sys.dm_exec_requests WHERE") && !strings.Contains(q, "sys.dm_exec_input_buffer") && !strings.Contains(q, "login_name, host_name") &&
			!strings.Contains(q, "COUNT(*) FROM sys.dm_exec_sessions WHERE session_id") {
			continue
		}
		n++
		q = id.ReplaceAllStringFunc(q, func(m string) string {
			sub := id.FindStringSubmatch(m)
			if sub[2] == fmt.Sprint(b.Server.SPID) {
				return sub[1] + "<traced session>"
			}
			return sub[1] + "<blocker>"
		})
		if !strings.Contains(string(doc), "`"+q+"`") {
			t.Errorf("docs/security.md does not list %q", q)
		}
	}
	if n == 0 {
		t.Error("no sampling statement was sent")
	}
}
