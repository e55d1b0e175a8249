package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

func TestOperatorBar(t *testing.T) {
	phase := func(k timeline.PhaseKind, s, e int64) timeline.Phase {
		return timeline.Phase{Kind: k, Start: s, End: e}
	}
	for _, tc := range []struct {
		name string
		op   timeline.Operator
		want string
	}{
		{"build then probe", timeline.Operator{Start: 0, End: 99, Phases: []timeline.Phase{phase(timeline.PhaseBuild, 0, 59), phase(timeline.PhaseProbe, 60, 99)}}, "▒▒▒▒▒▒▓▓▓▓"},
		{"emit in the middle", timeline.Operator{Start: 30, End: 69, Phases: []timeline.Phase{phase(timeline.PhaseEmit, 30, 69)}}, "   ████   "},
		{"open without phases", timeline.Operator{Start: 0, End: 49}, "·····     "},
		{"gap between phases", timeline.Operator{Start: 0, End: 99, Phases: []timeline.Phase{phase(timeline.PhaseConsume, 0, 29), phase(timeline.PhaseEmit, 70, 99)}}, "░░░····███"},
		// A phase shorter than a column's middle still shows where it ends.
		{"short probe", timeline.Operator{Start: 0, End: 99, Phases: []timeline.Phase{phase(timeline.PhaseBuild, 0, 98), phase(timeline.PhaseProbe, 98, 99)}}, "▒▒▒▒▒▒▒▒▒▓"},
		{"instant operator", timeline.Operator{Start: 42, End: 42}, "    ·     "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := operatorBar(tc.op, 0, 100, 10)
			if got != tc.want {
				t.Errorf("bar = %q, want %q", got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n != 10 {
				t.Errorf("bar has %d columns, want 10", n)
			}
		})
	}
}

func TestOperatorOrderIsDepthFirst(t *testing.T) {
	p := func(i int) *int { return &i }
	ops := []timeline.Operator{{ID: 3, Parent: p(1)}, {ID: 0}, {ID: 2, Parent: p(0)}, {ID: 1, Parent: p(0)}, {ID: 7, Parent: p(99)}}
	var got []string
	for _, r := range operatorOrder(ops) {
		got = append(got, strings.Repeat(">", r.depth)+string(rune('0'+r.op.ID)))
	}
	if want := "0 >1 >>3 >2 7"; strings.Join(got, " ") != want {
		t.Errorf("order = %v, want %s", got, want)
	}
}

func TestThousandsAndPlural(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 29953: "29,953", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if plural(1, "row") != "1 row" || plural(2395, "row") != "2,395 rows" {
		t.Error("plural")
	}
}

// The replay of a small hand-made trace: figures per operator from its
// lanes, the batch's elapsed time with its lead-in, waits ranked by time,
// every spill with its operator, notes.
func TestWriteReplay(t *testing.T) {
	p := func(i int) *int { return &i }
	on := func(n timeline.NodeID) timeline.Match { return timeline.Match{NodeID: n} }
	var reads []timeline.PageEvent
	for i := range 12 {
		reads = append(reads, timeline.PageEvent{T: int64(1000 + 500*i), Match: on(1), PageID: uint64(i)})
	}
	var locks []timeline.LockInterval
	for i := range 13 {
		locks = append(locks, timeline.LockInterval{T: int64(1000 + 400*i), End: int64(1100 + 400*i), Match: on(1)})
	}
	b := &bundle.Bundle{
		SQL:    "SELECT * FROM dbo.T ORDER BY x",
		Run:    bundle.RunInfo{ClearBufferPool: true, CallStacks: true},
		Result: bundle.Result{Rows: []int64{1500}, DurationUs: 12_500, Events: 40, Warnings: []string{"name resolution was partial"}},
		Trace: &timeline.Trace{
			Start: 0, End: 10_000,
			Operators: []timeline.Operator{
				{ID: 0, PhysicalOp: "Sort", LogicalOp: "Sort", Start: 1000, End: 9000, Phases: []timeline.Phase{{Kind: timeline.PhaseConsume, Start: 1000, End: 8000}, {Kind: timeline.PhaseEmit, Start: 8000, End: 9000}}},
				{ID: 1, Parent: p(0), PhysicalOp: "Clustered Index Scan", LogicalOp: "Clustered Index Scan", Object: "dbo.T.PK_T", Start: 1000, End: 8000, Phases: []timeline.Phase{{Kind: timeline.PhaseEmit, Start: 1000, End: 8000}}},
				{ID: 2, Parent: p(0), PhysicalOp: "Compute Scalar", NotExecuted: true, NotExecutedReason: "ActualExecutions 0"},
			},
			Lanes: timeline.Lanes{
				Read: reads,
				Lock: locks,
				Wait: []timeline.WaitInterval{
					{T: 1000, End: 1100, Match: on(1), WaitType: "PAGEIOLATCH_SH", DurationUs: 100, DurationSource: "events", UnderOneMs: true},
					{T: 2000, End: 2100, Match: on(1), WaitType: "PAGEIOLATCH_SH", DurationUs: 100, DurationSource: "events", UnderOneMs: true},
					{T: 3000, End: 6000, Match: on(0), WaitType: "IO_COMPLETION", DurationUs: 3000, DurationMs: 3, DurationSource: "duration_ms"},
					{T: 6500, End: 6500, Match: on(0), WaitType: "IO_COMPLETION", DurationSource: "duration_ms", UnderOneMs: true},
				},
				Memory: []timeline.MemoryEvent{{T: 7500, Match: timeline.Match{NodeID: 0}, Kind: "sort_warning", Detail: "Single pass", GrantedMemoryKB: 1024, UsedMemoryKB: 1024, Spill: true}},
			},
			Summary: timeline.Summary{
				ElapsedUs: 10_000, ElapsedSource: "batch_events", LeadInUs: 1000, OperatorUs: 8000,
				Notes: []string{"timing from events"},
			},
		},
	}
	var buf bytes.Buffer
	writeReplay(&buf, "sorting", "a sort that spills", b, replayOptions{Width: 20})
	out := buf.String()
	for _, want := range []string{
		"━━ sorting ━━ a sort that spills",
		"1,500 rows · 10.0 ms elapsed · 40 events (0 lost) · cold cache · call stacks",
		"Time: elapsed 10.0 ms (lead-in 1.0 ms before the first operator; operators 8.0 ms)",
		"Reads: 12 page reads in the trace (the plan has no runtime counters: logical reads unknown)",
		"Waits: 3.20 ms waited in 4 waits (1 shorter than 1 ms, not timed: XE reports whole ms)",
		"|0.0 ms       10.0 ms|",
		"lead-in (before the first operator)            |──                  |  1.0 ms",
		"Clustered Index Scan dbo.T.PK_T",
		"|not executed: Actua…|",
		"Top waits: IO_COMPLETION ×2 (3.00 ms; 1 shorter than 1 ms, not timed), PAGEIOLATCH_SH ×2 (0.20 ms)",
		"Spills: 1",
		"7.5 ms  sort_warning in operator 0 Sort (granted 1024 KB, used 1024 KB): Single pass",
		"Note: timing from events",
		"Warning: name resolution was partial",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("replay lacks %q:\n%s", want, out)
		}
	}
	// Sort is not written "Sort (Sort)"; the client's round trip (12.5 ms)
	// is not a second elapsed time.
	if strings.Contains(out, "Sort (Sort)") || strings.Contains(out, "12.5 ms") {
		t.Errorf("logical op repeated or a second elapsed time:\n%s", out)
	}
	scan := lineWith(out, "Clustered Index Scan")
	if f := strings.Fields(scan[strings.LastIndex(scan, "|")+1:]); strings.Join(f, " ") != "— — — 12 0.20ms 13 0" {
		t.Errorf("scan figures = %v, want no plan counters, 12 page reads, 0.20 ms waited, 13 locks, 0 spills", f)
	}
}

// A key lookup is named as SSMS names it in the terminal.
func TestOperatorLabelKeyLookup(t *testing.T) {
	op := timeline.Operator{PhysicalOp: "Clustered Index Seek", LogicalOp: "Clustered Index Seek", Name: "Key Lookup", Object: "dbo.Orders.PK_Orders"}
	if got := operatorLabel(op); got != "Key Lookup dbo.Orders.PK_Orders" {
		t.Errorf("label %q", got)
	}
	op.Name = "" // a trace saved before names
	if got := operatorLabel(op); got != "Clustered Index Seek dbo.Orders.PK_Orders" {
		t.Errorf("label %q", got)
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// An UPDATE returns no rows: the headline says the rows it affected
// (sql_batch_completed's row_count), named as affected, never "0 rows".
func TestHeadlineSaysRowsAffected(t *testing.T) {
	for _, c := range []struct {
		returned []int64
		batch    int64
		want     string
	}{
		{nil, 21, "0 rows returned, 21 affected"},
		{[]int64{2395}, 2395, "2,395 rows ·"},
		{[]int64{5}, 0, "5 rows ·"},
	} {
		b := &bundle.Bundle{Result: bundle.Result{Rows: c.returned}, Trace: &timeline.Trace{Summary: timeline.Summary{BatchRowCount: c.batch}}}
		var out strings.Builder
		writeReplayHeadline(&out, b, nil)
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("returned %v, batch row_count %d: %q lacks %q", c.returned, c.batch, out.String(), c.want)
		}
	}
}
