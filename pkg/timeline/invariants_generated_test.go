package timeline_test

import (
	"fmt"
	"testing"

	"github.com/queryreplay/queryreplay/internal/testtrace"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Generated plans (left-deep hash joins over clustered index scans, the
// stand-in's synthetic traces) keep the invariants at every size.
func TestInvariantsGeneratedPlans(t *testing.T) {
	for _, size := range []struct{ pages, operators int }{{1, 1}, {10, 2}, {200, 3}, {500, 5}, {2000, 9}, {3000, 15}} {
		t.Run(fmt.Sprintf("%dx%d", size.pages, size.operators), func(t *testing.T) {
			b, err := testtrace.Generated(size.pages, size.operators)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := showplan.ParseBytes([]byte(b.Plan))
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Trace.Operators) == 0 || b.Trace.Summary.Lanes["read"] == 0 {
				t.Fatalf("nothing to check: %d operators, lanes %v", len(b.Trace.Operators), b.Trace.Summary.Lanes)
			}
			for _, v := range timeline.Check(b.Trace, plan.Statements[0]) {
				t.Errorf("invariant: %s", v)
			}
		})
	}
}

// Check finds what breaks: an operator ending before its own event, a
// Sort emitting before its input's last event, phases running backwards.
func TestCheckFindsViolations(t *testing.T) {
	b, err := testtrace.Generated(50, 3)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := showplan.ParseBytes([]byte(b.Plan))
	if err != nil {
		t.Fatal(err)
	}
	stmt := plan.Statements[0]
	if v := timeline.Check(b.Trace, stmt); len(v) != 0 {
		t.Fatalf("clean trace: %v", v)
	}
	var scan *timeline.Operator
	for i := range b.Trace.Operators {
		if o := &b.Trace.Operators[i]; o.PhysicalOp == "Clustered Index Scan" {
			scan = o
		}
	}
	if scan == nil {
		t.Fatal("no scan")
	}
	scan.End = scan.Start // before its reads
	scan.FirstEmit = scan.Start
	got := map[string]bool{}
	for _, v := range timeline.Check(b.Trace, stmt) {
		got[v.Invariant] = true
	}
	if !got[timeline.InvOwnEvents] || !got[timeline.InvPhases] {
		t.Errorf("violations %v: want own-events and phases", got)
	}
	join := &b.Trace.Operators[0]
	if ph := join.Phases; len(ph) > 0 {
		ph[0].End = join.Start // the build over before the build input read anything
	}
	got = map[string]bool{}
	for _, v := range timeline.Check(b.Trace, stmt) {
		got[v.Invariant] = true
	}
	if !got[timeline.InvBlocking] {
		t.Errorf("violations %v: want blocking (a build ended before its input's reads)", got)
	}
}
