package findings

import (
	"strings"
	"testing"
)

// many_to_many_merge_plan: TOP (100) over a merge join. The row goal
// costed the Sort on dbo.Votes (node 4) at 1 row (52,928,700 without the
// goal); it produced 3,756,598 and took 31.9 s of 42.4 s.
func TestRowGoalMissed(t *testing.T) {
	in := studioPlan(t, studio, "many_to_many_merge_plan.sqlplan", nil)
	f := one(t, analyze(t, in), "row-goal")
	if len(f.Operators) != 1 || f.Operators[0].NodeID != 4 {
		t.Fatalf("operators %+v (want the Sort, node 4; node 2's Sort made its goal: 1 row)", f.Operators)
	}
	if numberOf(t, f, "estimatedRows") != 1 || numberOf(t, f, "actualRows") != 3756598 || numberOf(t, f, "estimateWithoutRowGoal") < 5e7 {
		t.Errorf("numbers %+v", f.Numbers)
	}
	if f.Severity != SeverityWarning || !strings.Contains(f.Title, "3,756,598") {
		t.Errorf("severity %s title %q", f.Severity, f.Title)
	}
	// Build 16.0: the documented USE HINT, not the trace flag.
	if !strings.Contains(f.Hint, "DISABLE_OPTIMIZER_ROWGOAL") || strings.Contains(f.Hint, "4138") {
		t.Errorf("hint %q", f.Hint)
	}
	// The same plan on SQL Server 2014 (12.x): the hint does not exist there.
	in.Server.Major = 12
	if g := one(t, analyze(t, in), "row-goal"); !strings.Contains(g.Hint, "QUERYTRACEON 4138") || strings.Contains(g.Hint, "USE HINT") {
		t.Errorf("12.x hint %q", g.Hint)
	}
}

// Look-alikes: row goals that held. cte_multi_ref_plan's TopN Sorts
// (goal 100, got 100); lazy_spool_plan's TopN Sort under CROSS APPLY
// (goal 1 per execution, 957,829 rows over 1,087,409 executions).
func TestRowGoalHeldIsSilent(t *testing.T) {
	for _, name := range []string{"cte_multi_ref_plan.sqlplan", "lazy_spool_plan.sqlplan"} {
		none(t, analyze(t, studioPlan(t, studio, name, nil)), "row-goal")
	}
}

// lazy_spool_plan: the lazy Index Spool (node 2) was rebound 2,895,709
// times; the eager Index Spool under it (node 4) is a temporary index on
// dbo.Badges sought 1,087,409 times.
func TestSpoolRebinds(t *testing.T) {
	fs := byRule(analyze(t, studioPlan(t, studio, "lazy_spool_plan.sqlplan", nil)), "spool-rebinds")
	if len(fs) != 2 {
		t.Fatalf("%d spool findings: %+v", len(fs), fs)
	}
	byNode := map[int]Finding{}
	for _, f := range fs {
		byNode[f.Operators[0].NodeID] = f
	}
	lazy, eager := byNode[2], byNode[4]
	if numberOf(t, lazy, "rebinds") != 2895709 || numberOf(t, lazy, "rewinds") != 3104514 || numberOf(t, lazy, "inputRuns") != 1087409 {
		t.Errorf("lazy spool numbers %+v", lazy.Numbers)
	}
	// 37,690 of 44,091 ms: a warning.
	if lazy.Severity != SeverityWarning || numberOf(t, lazy, "timeShare") < 80 {
		t.Errorf("lazy spool severity %s numbers %+v", lazy.Severity, lazy.Numbers)
	}
	if !strings.Contains(eager.Title, "temporary index on dbo.Badges") || !strings.Contains(eager.Title, "1,087,409") {
		t.Errorf("eager spool title %q", eager.Title)
	}
	if !strings.Contains(eager.Hint, "Create that index") {
		t.Errorf("eager spool hint %q", eager.Hint)
	}
}

// Look-alike: cte_multi_ref_plan's Table Spool was built once and
// replayed 99 times (rebinds 1, rewinds 99): the spool doing its job.
func TestSpoolReplayedIsSilent(t *testing.T) {
	none(t, analyze(t, studioPlan(t, studio, "cte_multi_ref_plan.sqlplan", nil)), "spool-rebinds")
}

// An operator that took a small share of the time is info, said so.
func TestWeighByTime(t *testing.T) {
	in := studioPlan(t, studio, "lazy_spool_plan.sqlplan", nil)
	cfg := DefaultConfig()
	cfg.WarningTimeShare = 0.9 // the lazy spool took 85%
	r, err := Analyze(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range byRule(r, "spool-rebinds") {
		if f.Severity != SeverityInfo || !strings.Contains(f.Detail, "worth knowing rather than a warning") {
			t.Errorf("node %d: severity %s detail %q", f.Operators[0].NodeID, f.Severity, f.Detail)
		}
	}
}

// reads-concentrated is a warning only when the operator read at least
// readsWarning pages and took at least warningTimeShare of the time: the
// inequality_index scan read 9,839,880 pages in 98% of the time.
func TestReadsSeverityWeighedByTime(t *testing.T) {
	in := planOnly(t, "stack_overflow-inequality_index.sqlplan")
	f := one(t, analyze(t, in), "reads-concentrated")
	if f.Severity != SeverityWarning || numberOf(t, f, "timeShare") < 90 {
		t.Errorf("severity %s numbers %+v", f.Severity, f.Numbers)
	}
	// The same reads in a small share of the time: info, and said.
	cfg := DefaultConfig()
	cfg.WarningTimeShare = 0.99
	r, err := Analyze(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g := one(t, r, "reads-concentrated"); g.Severity != SeverityInfo || !strings.Contains(g.Detail, "only 98%") {
		t.Errorf("time-weighed: severity %s detail %q", g.Severity, g.Detail)
	}
	// Many reads but under readsWarning pages: info.
	cfg = DefaultConfig()
	cfg.ReadsWarning = 10_000_000
	if r, _ = Analyze(in, cfg); one(t, r, "reads-concentrated").Severity != SeverityInfo {
		t.Error("9.8 M pages under readsWarning 10 M is still a warning")
	}
}
