package exporter

import (
	"context"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// A trace of a query that spills (the datasource's or the CLI's, which
// connect as sqlconn.TraceApp) is not a production spill: the target's
// session leaves it out, while the same query from an application spills
// once. Replaying the query behind an alert must not re-arm it.
func TestOwnTracesAreNotProductionSpills(t *testing.T) {
	f := newFixture(t, "", "")
	sortSpill := scenarioSQL(t, "sort_spill")
	opener, err := tracer.NewDSNOpener(f.run.DSN)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := tracer.New(opener, tracer.ReadOnlyPolicy, discardLog()).Trace(ctx, tracer.Options{SQL: sortSpill, Timeout: 30 * time.Second, Events: bundle.EventGroups{Waits: true, Memory: true, Splits: true}})
	if err != nil {
		t.Fatal(err)
	}
	traced := 0
	for _, op := range b.Trace.Summary.Operators {
		traced += int(op.Spills)
	}
	if traced == 0 {
		t.Fatal("the trace saw no spill: the test proves nothing")
	}
	f.flushAndPoll(t)
	if n := sum(gather(t, f.e), "queryreplay_spills_total", nil); n != 0 {
		t.Fatalf("a QueryReplay trace counted %v production spills", n)
	}
	runSQL(t, f.db, sortSpill)
	f.flushAndPoll(t)
	if n := sum(gather(t, f.e), "queryreplay_spills_total", nil); n != float64(traced) {
		t.Fatalf("the application's run counted %v spills, want %d", n, traced)
	}
}
