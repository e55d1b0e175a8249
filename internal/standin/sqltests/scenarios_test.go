package sqltests

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// TestScenariosTrace traces every demo scenario with the real tracer and
// the options it is meant for, and checks the timeline shows what the
// scenario claims: its plan, and the waits, spills, splits and log
// records on their lanes.
func TestScenariosTrace(t *testing.T) {
	run, db := startStandin(t)
	tr := tracer.New(tracer.DBOpener{DB: db}, tracer.Policy{AllowClearBufferPool: true}, slog.New(slog.DiscardHandler))
	for _, sc := range standin.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			release, err := standin.PrepareScenario(ctx, run.Server, sc)
			if err != nil {
				t.Fatal(err)
			}
			b, err := tr.Trace(ctx, tracer.Options{SQL: sc.SQL, ClearBufferPool: sc.ClearBufferPool, DisableReadAhead: sc.DisableReadAhead,
				CallStacks: sc.CallStacks, Events: bundle.AllEventGroups()})
			release()
			if err != nil {
				t.Fatal(err)
			}
			if b.Trace == nil || len(b.Trace.Operators) == 0 || len(b.Trace.Lanes.Plan) == 0 {
				t.Fatal("no plan on the timeline")
			}
			waits := map[string]bool{}
			for _, w := range b.Trace.Lanes.Wait {
				waits[w.WaitType] = true
			}
			spills := 0
			for _, m := range b.Trace.Lanes.Memory {
				if m.Spill {
					spills++
				}
			}
			for _, show := range sc.Shows {
				switch {
				case strings.HasPrefix(show, "wait:"):
					if !waits[strings.TrimPrefix(show, "wait:")] {
						t.Errorf("no %s on the wait lane (%v)", show, waits)
					}
				case show == "sort_warning" || show == "hash_warning" || show == "exchange_spill":
					if spills == 0 {
						t.Errorf("no spill on the memory lane")
					}
				case show == "page_split":
					if len(b.Trace.Lanes.Split) == 0 {
						t.Error("empty split lane")
					}
				case show == "transaction_log":
					if len(b.Trace.Lanes.Log) == 0 || !b.Result.RolledBack {
						t.Errorf("log lane %d entries, rolled back %v", len(b.Trace.Lanes.Log), b.Result.RolledBack)
					}
				case show == "physical_page_read":
					if len(b.Trace.Lanes.Read) == 0 {
						t.Error("empty read lane")
					}
				}
			}
		})
	}
}

// The stand-in does not act on a statement's text: traced with the real
// tracer, the blocking scenario's query waits LCK_M_S in every spelling
// (another alias, an added no-op predicate, other whitespace and case,
// bracketed names) while the scenario's set-up holds the lock, and in none
// without it.
func TestBlockingDoesNotDependOnSpelling(t *testing.T) {
	run, db := startStandin(t)
	tr := tracer.New(tracer.DBOpener{DB: db}, tracer.Policy{}, slog.New(slog.DiscardHandler))
	var sc standin.Scenario
	for _, s := range standin.Scenarios() {
		if s.Name == "lock_blocking" {
			sc = s
		}
	}
	spellings := []string{
		sc.SQL,
		sc.SQL + " AND 1 = 1",
		"select ORD.orderid, ORD.status, ORD.amount\n  from [dbo].[Orders] as ORD\n where 500 = ORD.OrderID",
	}
	lockWaits := func(t *testing.T, sql string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		b, err := tr.Trace(ctx, tracer.Options{SQL: sql, Events: bundle.EventGroups{Locks: true, Waits: true}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range b.Trace.Lanes.Wait {
			if strings.HasPrefix(w.WaitType, "LCK_M_") {
				n++
			}
		}
		return n
	}
	for _, sql := range spellings {
		if n := lockWaits(t, sql); n != 0 {
			t.Errorf("without a hold, %q waited for a lock %d times", sql, n)
		}
		release, err := standin.PrepareScenario(context.Background(), run.Server, sc)
		if err != nil {
			t.Fatal(err)
		}
		n := lockWaits(t, sql)
		release()
		if n == 0 {
			t.Errorf("with the blocker holding the lock, %q did not wait", sql)
		}
	}
	// and a statement no scenario has reaches the plan cache
	var count int
	if err := db.QueryRow("SELECT COUNT(*) FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st WHERE st.text LIKE @p1",
		"%"+spellings[2][len(spellings[2])-20:]+"%").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count == 0 {
		t.Error("the traced statement is not in sys.dm_exec_query_stats")
	}
}
