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
	_, db := startStandin(t)
	tr := tracer.New(tracer.DBOpener{DB: db}, tracer.Policy{AllowClearBufferPool: true}, slog.New(slog.DiscardHandler))
	for _, sc := range standin.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			b, err := tr.Trace(ctx, tracer.Options{SQL: sc.SQL, ClearBufferPool: sc.ClearBufferPool, DisableReadAhead: sc.DisableReadAhead,
				CallStacks: sc.CallStacks, Events: bundle.AllEventGroups()})
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
