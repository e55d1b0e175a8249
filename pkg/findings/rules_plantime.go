package findings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// Rules on where the statement's time went by the plan's own counters:
// scalar user-defined functions (QueryTimeStats UdfElapsedTime) and the
// plan's WaitStats, for a trace that did not capture waits itself.

const (
	refUDFInlining = "https://learn.microsoft.com/en-us/sql/relational-databases/user-defined-functions/scalar-udf-inlining"
	// refPlanWaits: WaitStats in actual plans (SQL Server 2016 SP1 and
	// later) and what each wait type means.
	refPlanWaits = "https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql"
)

// udfTime: scalar UDFs took at least UdfTimeShare of the statement's
// elapsed time, and at least MinUdfMs. A scalar UDF runs once per row,
// row by row, outside the plan's cost and in a serial plan.
func udfTime(a *analysis) []Finding {
	st := a.in.Plan
	if st == nil || st.TimeStats == nil || !st.TimeStats.HasUdfCounters || st.TimeStats.ElapsedMs <= 0 {
		return nil
	}
	ts := st.TimeStats
	share := min(float64(ts.UdfElapsedMs)/float64(ts.ElapsedMs), 1)
	if ts.UdfElapsedMs < a.cfg.MinUdfMs || share < a.cfg.UdfTimeShare {
		return nil
	}
	f := Finding{
		Title: fmt.Sprintf("Scalar user-defined functions took %s of the statement's time: %s ms of %s ms",
			Percent(share), strconv.FormatInt(ts.UdfElapsedMs, 10), strconv.FormatInt(ts.ElapsedMs, 10)),
		Severity: SeverityWarning,
		Numbers: []Number{num("udfElapsedMs", float64(ts.UdfElapsedMs), "ms", "plan"), num("udfCpuMs", float64(ts.UdfCPUMs), "ms", "plan"),
			num("elapsedMs", float64(ts.ElapsedMs), "ms", "plan"), num("udfShare", share*100, "percent", "plan")},
		Detail: "A scalar function runs once per row, one row at a time, and its cost is not in the plan's estimates; " +
			"a query that calls one also cannot use a parallel plan.",
		Hint:      a.udfHint(),
		Reference: refUDFInlining,
	}
	return []Finding{f}
}

// udfHint is the fix this server allows: scalar UDF inlining from SQL
// Server 2019 (15.x) at compatibility level 150, else a rewrite.
func (a *analysis) udfHint() string {
	rewrite := "rewrite the function as an inline table-valued function used with CROSS APPLY, or put its expression in the query"
	major := a.in.Server.Major
	level, guessed := a.compat()
	switch {
	case major >= 15 && level >= 150:
		s := "SQL Server " + strconv.Itoa(major) + ".x at compatibility level " + strconv.Itoa(level)
		if guessed {
			s += " (as the plan's estimator version suggests)"
		}
		return s + " inlines scalar functions that qualify: check sys.sql_modules.is_inlineable for the function; " +
			"if it is 0, the page lists what blocks inlining; otherwise " + rewrite + "."
	case major > 0 && major < 15:
		return "Scalar UDF inlining needs SQL Server 2019 (15.x); this server is " + strconv.Itoa(major) + ".x, so " + rewrite + "."
	case level > 0 && level < 150:
		return "Scalar UDF inlining needs compatibility level 150; this database is at " + strconv.Itoa(level) + ": raise it (after testing), or " + rewrite + "."
	}
	return "On SQL Server 2019 at compatibility level 150 scalar UDF inlining may remove the cost; otherwise " + rewrite + "."
}

// planWaits: the trace captured no waits (the waits group was off), and
// the plan's own WaitStats say the statement's workers waited at least
// PlanWaitShare of the time they could have run (elapsed × workers) and
// at least MinPlanWaitMs. The plan's numbers are sums over its workers,
// so a parallel plan's can exceed its elapsed time.
func planWaits(a *analysis) []Finding {
	st := a.in.Plan
	if st == nil || len(st.WaitStats) == 0 || len(a.in.Trace.Lanes.Wait) > 0 || st.TimeStats == nil || st.TimeStats.ElapsedMs <= 0 {
		return nil
	}
	var total int64
	for _, w := range st.WaitStats {
		total += w.TimeMs
	}
	workers := int64(max(st.DOP, 1))
	share := min(float64(total)/float64(st.TimeStats.ElapsedMs*workers), 1)
	if total < a.cfg.MinPlanWaitMs || share < a.cfg.PlanWaitShare {
		return nil
	}
	waits := slices.Clone(st.WaitStats)
	slices.SortFunc(waits, func(x, y showplan.Wait) int { return int(y.TimeMs - x.TimeMs) })
	var top []string
	for _, w := range waits[:min(3, len(waits))] {
		top = append(top, fmt.Sprintf("%s %d ms (%s)", w.Type, w.TimeMs, timeline.WaitCategory(w.Type)))
	}
	return []Finding{{
		Title:    fmt.Sprintf("The plan's workers waited %d ms (%s of their time); most: %s", total, Percent(share), strings.Join(top, ", ")),
		Severity: SeverityInfo,
		Numbers: []Number{num("planWaitMs", float64(total), "ms", "plan"), num("waitShare", share*100, "percent", "plan"),
			num("workers", float64(workers), "count", "plan")},
		Detail: "These are the actual plan's WaitStats, summed over the statement's workers; this trace did not capture waits, " +
			"so they are not on the timeline.",
		Hint:      "Trace again with the waits event group to see when each wait happened and which operator was waiting.",
		Reference: refPlanWaits,
	}}
}
