package findings

import (
	"strings"
	"testing"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

func TestUDFTime(t *testing.T) {
	// udf_plan: UdfElapsedTime 2,402 of ElapsedTime 3,031 ms
	f := one(t, analyze(t, studioPlan(t, studio, "udf_plan.sqlplan", nil)), "udf-time")
	if numberOf(t, f, "udfElapsedMs") != 2402 || numberOf(t, f, "elapsedMs") != 3031 || !strings.Contains(f.Title, "79%") {
		t.Errorf("title %q numbers %+v", f.Title, f.Numbers)
	}
	if !strings.Contains(f.Hint, "inlin") {
		t.Errorf("hint %q", f.Hint)
	}
	// the same plan with the functions taking a small share
	small := studioPlan(t, studio, "udf_plan.sqlplan", func(s string) string {
		return strings.Replace(s, `UdfElapsedTime="2402"`, `UdfElapsedTime="300"`, 1)
	})
	none(t, analyze(t, small), "udf-time")
	// no UDF counters at all
	none(t, analyze(t, studioPlan(t, studio, "non_sargable_function_plan.sqlplan", nil)), "udf-time")
}

func TestUDFHintFollowsTheVersion(t *testing.T) {
	in := studioPlan(t, studio, "udf_plan.sqlplan", nil)
	in.Server.Major, in.Server.CompatLevel = 14, 140
	if f := one(t, analyze(t, in), "udf-time"); !strings.Contains(f.Hint, "needs SQL Server 2019 (15.x); this server is 14.x") {
		t.Errorf("2017: %q", f.Hint)
	}
	in.Server.Major, in.Server.CompatLevel = 16, 160
	if f := one(t, analyze(t, in), "udf-time"); !strings.Contains(f.Hint, "is_inlineable") {
		t.Errorf("2022: %q", f.Hint)
	}
	in.Server.Major, in.Server.CompatLevel = 16, 130
	if f := one(t, analyze(t, in), "udf-time"); !strings.Contains(f.Hint, "compatibility level 150; this database is at 130") {
		t.Errorf("2022 at 130: %q", f.Hint)
	}
}

func TestPlanWaits(t *testing.T) {
	// spill_plan: 415,708 ms of waits over its workers in 26,819 ms
	f := one(t, analyze(t, studioPlan(t, studio, "spill_plan.sqlplan", nil)), "plan-waits")
	if numberOf(t, f, "planWaitMs") != 415708 || f.Severity != SeverityInfo {
		t.Errorf("%q %+v", f.Title, f.Numbers)
	}
	// a small share of the workers' time
	none(t, analyze(t, studioPlan(t, studio, "many_to_many_merge_plan.sqlplan", nil)), "plan-waits")
	// waits the trace captured itself are on the timeline: the plan's are not repeated
	traced := studioPlan(t, studio, "spill_plan.sqlplan", nil)
	traced.Trace.Lanes.Wait = append(traced.Trace.Lanes.Wait, timeline.WaitInterval{T: 10, End: 20, WaitType: "CXPACKET"})
	none(t, analyze(t, traced), "plan-waits")
}
