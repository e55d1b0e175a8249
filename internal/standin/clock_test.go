package standin

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/tds"
)

// tracedSession records the traced SPID's own events only, as pkg/tracer's
// session does (predicate on sqlserver.session_id).
const tracedSession = `CREATE EVENT SESSION [clk] ON SERVER
ADD EVENT sqlserver.query_thread_profile(WHERE ([sqlserver].[session_id] = (53))),
ADD EVENT sqlserver.query_post_execution_showplan(WHERE ([sqlserver].[session_id] = (53)))
ADD TARGET package0.event_file (SET filename = N'clk.xel')`

// slowClient drains rows the way a client over a network does: they take
// real time (a pause every 500 rows), during which the stand-in runs
// without its latch.
type slowClient struct {
	recorder
	n int
}

func (w *slowClient) Row(values ...any) error {
	if w.n++; w.n%500 == 0 {
		// the pause is what the tests exercise (a client that is slow
		// to drain rows), not a wait for something to happen
		time.Sleep(time.Millisecond)
	}
	return w.recorder.Row(values...)
}

// operatorTimings traces scenario name on spid 53 behind a slow client and
// returns each operator's query_thread_profile time (µs) and
// ActualElapsedms. (The batch's duration is not among them: it ends on the
// wall clock, after the client drained the rows.) With other set, it runs
// every 2 ms while the batch runs, on other sessions.
func operatorTimings(t *testing.T, name string, other func(srv *Server, i int) error) (profile, elapsed map[int]int64) {
	t.Helper()
	srv := New(Options{})
	traced := session(t, srv, 53)
	mustRun(t, traced, tracedSession)
	mustRun(t, traced, "ALTER EVENT SESSION clk ON SERVER STATE = START")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	samples := 0
	if other != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ { // bounded: 2000 × 2 ms at most
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				if err := other(srv, i); err != nil {
					t.Errorf("other session: %v", err)
					return
				}
				samples++
			}
		}()
	}
	w := &slowClient{}
	err := traced.Batch(context.Background(), &tds.Batch{SQL: scenarioSQL(t, name)}, w)
	close(stop)
	wg.Wait()
	if err != nil || len(w.errs) > 0 {
		t.Fatalf("%s: %v %v", name, err, w.errs)
	}
	if other != nil && samples == 0 {
		t.Fatal("the other sessions never ran during the batch")
	}
	mustRun(t, traced, "ALTER EVENT SESSION clk ON SERVER STATE = STOP")
	rows := mustRun(t, traced, "SELECT event_data FROM sys.fn_xe_file_target_read_file('clk*.xel', NULL, NULL, NULL)").sets[0].rows
	var events []tracedEvent
	for _, r := range rows {
		events = append(events, parseEvent(t, r[0].(string)))
	}
	profile = map[int]int64{}
	for id, evs := range profiles(events) {
		profile[id] = totalUs(evs)
	}
	for _, e := range events {
		if e.name == "query_post_execution_showplan" {
			elapsed = elapsedPerNode(t, e.value)
		}
	}
	if len(profile) == 0 || len(elapsed) == 0 {
		t.Fatalf("%s: no timings in %d events", name, len(events))
	}
	return profile, elapsed
}

// Every session has its own simulated time: what other sessions do while
// a traced batch gives up the latch (between rows, while the client drains
// them) does not move the traced batch's clock, so its operators time the
// same as when it runs alone: with sys.dm_exec_requests sampled beside it
// (the tracer's blocker sampling), and with other connections logging in
// and out (a previous trace's connections closing).
func TestOtherSessionsDoNotStretchTimings(t *testing.T) {
	const requests = "SELECT r.session_id, r.blocking_session_id, r.wait_type, r.wait_resource FROM sys.dm_exec_requests AS r WHERE r.session_id <> @@SPID"
	login := func(srv *Server, spid uint16) (*connState, error) {
		res, err := srv.Login(context.Background(), &tds.Session{SPID: spid}, &tds.LoginRequest{User: srv.opts.User, Password: srv.opts.Password, AppName: "other"})
		if err != nil {
			return nil, err
		}
		return res.Session.(*connState), nil
	}
	var sampler *connState
	others := map[string]func(srv *Server, i int) error{
		"sampler": func(srv *Server, i int) (err error) {
			if i == 0 {
				if sampler, err = login(srv, 54); err != nil {
					return err
				}
			}
			_, terr := run(sampler, requests)
			if terr != nil {
				return terr
			}
			return nil
		},
		"logins": func(srv *Server, i int) error {
			c, err := login(srv, 60)
			if err != nil {
				return err
			}
			c.Close()
			return nil
		},
	}
	for _, name := range []string{"sort_spill", "hash_join"} {
		prof, elapsed := operatorTimings(t, name, nil)
		for what, other := range others {
			t.Run(name+"/"+what, func(t *testing.T) {
				sProf, sElapsed := operatorTimings(t, name, other)
				near := func(a, b, slack int64) bool { return a-b <= slack && b-a <= slack }
				for id, us := range prof {
					if !near(us, sProf[id], 500) {
						t.Errorf("node %d: query_thread_profile %d µs alone, %d µs beside %s", id, us, sProf[id], what)
					}
				}
				for id, ms := range elapsed {
					if !near(ms, sElapsed[id], 1) {
						t.Errorf("node %d: ActualElapsedms %d alone, %d beside %s", id, ms, sElapsed[id], what)
					}
				}
			})
		}
	}
}

// The waits that take real time end on the wall clock: a traced lock wait
// (lock_blocking: the other session, set up by PrepareScenario, holds the
// key until 400 ms after the statement began to wait) and a memory grant
// wait (memory_grant_wait: 300 ms) span that time on the event clock too,
// from wait_info Begin to End, as their duration says. (The test asks for
// a wait, and for its span and duration to match, not for 400 ms: a
// loaded machine stretches them.)
func TestRealWaitsSpanTheirTime(t *testing.T) {
	for _, c := range []struct {
		scenario, waitType string
		atLeast            time.Duration
	}{{"lock_blocking", "LCK_M_S", time.Millisecond}, {"memory_grant_wait", "RESOURCE_SEMAPHORE", time.Millisecond}} {
		t.Run(c.scenario, func(t *testing.T) {
			srv := New(Options{})
			traced := session(t, srv, 53)
			mustRun(t, traced, "CREATE EVENT SESSION [w] ON SERVER ADD EVENT sqlos.wait_info(WHERE ([sqlserver].[session_id] = (53))) ADD TARGET package0.event_file (SET filename = N'w.xel')")
			mustRun(t, traced, "ALTER EVENT SESSION w ON SERVER STATE = START")
			release, err := PrepareScenario(context.Background(), srv, *scenarioByName(c.scenario))
			if err != nil {
				t.Fatal(err)
			}
			mustRun(t, traced, scenarioSQL(t, c.scenario))
			release()
			mustRun(t, traced, "ALTER EVENT SESSION w ON SERVER STATE = STOP")
			var begin, end time.Time
			var durMs int64
			for _, r := range mustRun(t, traced, "SELECT event_data FROM sys.fn_xe_file_target_read_file('w*.xel', NULL, NULL, NULL)").sets[0].rows {
				xml := r[0].(string)
				e := parseEvent(t, xml)
				if !strings.Contains(xml, "CDATA["+c.waitType+"]") {
					continue
				}
				i := strings.Index(xml, `timestamp="`) + len(`timestamp="`)
				ts, err := time.Parse(time.RFC3339Nano, xml[i:i+strings.IndexByte(xml[i:], '"')])
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(xml, "CDATA[Begin]") {
					begin = ts
				} else {
					end, durMs = ts, mustInt(t, e.data["duration"])
				}
			}
			if begin.IsZero() || end.IsZero() {
				t.Fatalf("no %s Begin and End", c.waitType)
			}
			span := end.Sub(begin)
			if span < c.atLeast || durMs < c.atLeast.Milliseconds() || (span-time.Duration(durMs)*time.Millisecond).Abs() > 5*time.Millisecond {
				t.Errorf("%s: Begin to End %v on the event clock, duration %d ms; want both ≥ %v and alike", c.waitType, span, durMs, c.atLeast)
			}
		})
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
