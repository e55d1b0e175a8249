package standin

import (
	"context"
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
		time.Sleep(time.Millisecond)
	}
	return w.recorder.Row(values...)
}

// operatorTimings traces scenario name on spid 53 behind a slow client and
// returns each operator's query_thread_profile time (µs) and
// ActualElapsedms. (The batch's duration is not among them: it ends on the
// wall clock, after the client drained the rows.) With sampler set, a second session runs
// sampler every few milliseconds while the batch runs, as the tracer's
// blocker sampling does.
func operatorTimings(t *testing.T, name, sampler string) (profile, elapsed map[int]int64) {
	t.Helper()
	srv := New(Options{})
	traced := session(t, srv, 53)
	mustRun(t, traced, tracedSession)
	mustRun(t, traced, "ALTER EVENT SESSION clk ON SERVER STATE = START")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	samples := 0
	if sampler != "" {
		other := session(t, srv, 54)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ { // bounded: 2000 × 2 ms at most
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				if _, err := run(other, sampler); err != nil {
					t.Errorf("sampler: %v", err)
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
	if sampler != "" && samples < 3 {
		t.Fatalf("the sampler ran only %d times during the batch", samples)
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

// Every session has its own simulated time: another session's statements
// running while a traced batch gives up the latch (between rows, while the
// client drains them) do not move the traced batch's clock, so its
// operators time the same with sys.dm_exec_requests sampled beside it as
// without.
func TestOtherSessionsDoNotStretchTimings(t *testing.T) {
	const sampler = "SELECT r.session_id, r.blocking_session_id, r.wait_type, r.wait_resource FROM sys.dm_exec_requests AS r WHERE r.session_id <> @@SPID"
	for _, name := range []string{"sort_spill", "hash_join"} {
		t.Run(name, func(t *testing.T) {
			prof, elapsed := operatorTimings(t, name, "")
			sProf, sElapsed := operatorTimings(t, name, sampler)
			near := func(a, b, slack int64) bool { return a-b <= slack && b-a <= slack }
			for id, us := range prof {
				if !near(us, sProf[id], 500) {
					t.Errorf("node %d: query_thread_profile %d µs alone, %d µs with a sampler", id, us, sProf[id])
				}
			}
			for id, ms := range elapsed {
				if !near(ms, sElapsed[id], 1) {
					t.Errorf("node %d: ActualElapsedms %d alone, %d with a sampler", id, ms, sElapsed[id])
				}
			}
		})
	}
}
