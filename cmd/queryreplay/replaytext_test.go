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

// The replay of a small hand-made trace: counts per operator from the
// summary, waits ranked by time, every spill with its operator, notes.
func TestWriteReplay(t *testing.T) {
	p := func(i int) *int { return &i }
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
				Wait: []timeline.WaitInterval{
					{T: 1000, End: 1100, WaitType: "PAGEIOLATCH_SH"}, {T: 2000, End: 2100, WaitType: "PAGEIOLATCH_SH"},
					{T: 3000, End: 6000, WaitType: "IO_COMPLETION"},
				},
				Memory: []timeline.MemoryEvent{{T: 7500, Match: timeline.Match{NodeID: 0}, Kind: "sort_warning", Detail: "Single pass", GrantedMemoryKB: 1024, UsedMemoryKB: 1024, Spill: true}},
			},
			Summary: timeline.Summary{
				Operators: []timeline.OperatorSummary{{ID: 0, Spills: 1, Waits: map[string]int{"IO_COMPLETION": 1}}, {ID: 1, Reads: 12, Locks: 13, Waits: map[string]int{"PAGEIOLATCH_SH": 2}}},
				Notes:     []string{"timing from events"},
			},
		},
	}
	var buf bytes.Buffer
	writeReplay(&buf, "sorting", "a sort that spills", b, replayOptions{Width: 16})
	out := buf.String()
	for _, want := range []string{
		"━━ sorting ━━ a sort that spills",
		"1,500 rows · 12.5 ms · 40 events (0 lost) · cold cache · call stacks",
		"|1.0 ms    9.0 ms|",
		"Clustered Index Scan dbo.T.PK_T",
		"|not executed: A…|",
		"Top waits: IO_COMPLETION ×1 (3.00 ms), PAGEIOLATCH_SH ×2 (0.20 ms)",
		"Spills: 1",
		"7.5 ms  sort_warning in operator 0 Sort (granted 1024 KB, used 1024 KB): Single pass",
		"Note: timing from events",
		"Warning: name resolution was partial",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("replay lacks %q:\n%s", want, out)
		}
	}
	// Sort is not written "Sort (Sort)"; the scan row carries its counts.
	if strings.Contains(out, "Sort (Sort)") {
		t.Error("logical op repeated")
	}
	scan := lineWith(out, "Clustered Index Scan")
	if f := strings.Fields(scan[strings.LastIndex(scan, "|")+1:]); strings.Join(f, " ") != "12 13 2 0" {
		t.Errorf("scan counts = %v, want reads 12 locks 13 waits 2 spills 0", f)
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
