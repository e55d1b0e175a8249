package findings

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Rules on what the optimizer assumed about how often a subtree runs and
// how many rows it must give: row goals and spools.

const (
	// refRowGoal: USE HINT ('DISABLE_OPTIMIZER_ROWGOAL') is documented on
	// the query hints page, with its trace flag 4138 equivalent.
	refRowGoal = refQueryHints + "#use_hint"
	refSpools  = "https://learn.microsoft.com/en-us/sql/relational-databases/showplan-logical-and-physical-operators-reference"
)

// statementMs is the statement's elapsed time in ms: the plan's
// QueryTimeStats, else its root operator's elapsed counter, else the
// trace's elapsed time. 0 when none is known.
func (a *analysis) statementMs() int64 {
	if st := a.in.Plan; st != nil {
		if st.TimeStats != nil && st.TimeStats.ElapsedMs > 0 {
			return st.TimeStats.ElapsedMs
		}
		if st.Root != nil && st.Root.Actual != nil && st.Root.Actual.HasTiming && st.Root.Actual.ElapsedMs > 0 {
			return st.Root.Actual.ElapsedMs
		}
	}
	return a.in.Trace.Summary.ElapsedUs / 1000
}

// subtreeShare is the share of the statement's elapsed time an operator
// and its inputs took (row-mode ActualElapsedms includes the inputs), and
// whether it is known.
func (a *analysis) subtreeShare(o *OperatorStats) (float64, bool) {
	total := a.statementMs()
	if o == nil || o.Counters == nil || !o.Counters.HasTiming || total <= 0 {
		return 0, false
	}
	return min(float64(o.Counters.ElapsedMs)/float64(total), 1), true
}

// weighByTime makes a warning info when the operator took less than
// WarningTimeShare of the statement's elapsed time: a problem that cost
// little time is worth knowing, not worth a warning. The share is said.
func (a *analysis) weighByTime(f *Finding, o *OperatorStats) {
	sh, ok := a.subtreeShare(o)
	if !ok {
		return
	}
	f.Numbers = append(f.Numbers, num("timeShare", sh*100, "percent", "plan"))
	said := fmt.Sprintf("It and its inputs took %s of the statement's elapsed time.", Percent(sh))
	if f.Severity == SeverityWarning && sh < a.cfg.WarningTimeShare {
		f.Severity = SeverityInfo
		said = fmt.Sprintf("It and its inputs took only %s of the statement's elapsed time, so this is worth knowing rather than a warning.", Percent(sh))
	}
	f.Detail = strings.TrimSpace(f.Detail + " " + said)
}

// rowGoal: an operator the optimizer costed for a row goal (TOP, EXISTS,
// IN, FAST n: EstimateRowsWithoutRowGoal above EstimateRows) had to
// produce RowGoalFactor times the rows the goal promised, and at least
// MinRowGoalRows. The plan chosen for "only a few rows are needed" then
// ran on many.
func rowGoal(a *analysis) []Finding {
	st := a.in.Plan
	if st == nil {
		return nil
	}
	var out []Finding
	for _, po := range st.Operators {
		o := a.p.Op(po.NodeID)
		if o == nil || o.Counters == nil || o.NotExecuted || po.EstimateRowsWithoutRowGoal <= po.EstimateRows {
			continue
		}
		runs := max(o.Counters.Runs(), 1)
		est := po.EstimateRows * float64(runs)
		act := o.Counters.Rows
		if act < a.cfg.MinRowGoalRows || float64(act) < a.cfg.RowGoalFactor*max(est, 1) {
			continue
		}
		out = append(out, a.rowGoalFinding(o, po, est, act, runs))
	}
	return out
}

func (a *analysis) rowGoalFinding(o *OperatorStats, po *showplan.Operator, est float64, act, runs int64) Finding {
	without := po.EstimateRowsWithoutRowGoal * float64(runs)
	f := Finding{
		Title: fmt.Sprintf("Row goal missed: %s was estimated at %s rows for the row goal and produced %s", o.Label(),
			Count(int64(est+0.5)), Count(act)),
		Severity:  SeverityWarning,
		Operators: []OperatorRef{o.Ref()},
		Numbers: []Number{num("estimatedRows", est, "rows", "plan"), num("estimateWithoutRowGoal", without, "rows", "plan"),
			num("actualRows", float64(act), "rows", "plan")},
		Detail: fmt.Sprintf("Without the row goal the optimizer estimated %s rows. It assumed the rows a TOP, EXISTS, IN or "+
			"FAST n needs would turn up early; they did not, so a plan costed for a few rows ran on %s.",
			Count(int64(without+0.5)), Count(act)),
		Reference: refRowGoal,
	}
	f.Hint = "Check the plan without the row goal: " + a.rowGoalHint() + ". If that plan is better, keep the hint, or give " +
		"the optimizer what makes the rows easy to find (an index in the order the TOP or the join needs)."
	a.weighByTime(&f, o)
	return f
}

// rowGoalHint names the switch this server has: the USE HINT from SQL
// Server 2016 SP1 (13.x), trace flag 4138 before.
func (a *analysis) rowGoalHint() string {
	const useHint = "OPTION (USE HINT ('DISABLE_OPTIMIZER_ROWGOAL'))"
	switch m := a.in.Server.Major; {
	case m >= 14:
		return useHint
	case m == 13:
		return useHint + " (SQL Server 2016 needs SP1 for it; before, OPTION (QUERYTRACEON 4138))"
	case m > 0:
		return fmt.Sprintf("OPTION (QUERYTRACEON 4138) (SQL Server %d.x predates the DISABLE_OPTIMIZER_ROWGOAL hint)", m)
	}
	return useHint + " from SQL Server 2016 SP1, OPTION (QUERYTRACEON 4138) before it (server version unknown)"
}

// spoolRebinds: a spool whose input re-ran at least MinSpoolRebinds
// times (rebinds: the correlated values changed, so the cache was
// refilled), or an eager index spool that built a temporary index and
// was sought at least MinSpoolRebinds times (the index SQL Server built
// at run time because none served the seek). A spool built once and
// replayed (rewinds) is the spool doing its job and is not reported.
func spoolRebinds(a *analysis) []Finding {
	st := a.in.Plan
	if st == nil {
		return nil
	}
	var out []Finding
	for _, po := range st.Operators {
		o := a.p.Op(po.NodeID)
		if o == nil || po.Actual == nil || !strings.HasSuffix(po.PhysicalOp, "Spool") {
			continue
		}
		t := po.Actual
		switch {
		case t.Rebinds >= a.cfg.MinSpoolRebinds:
			out = append(out, a.rebindFinding(o, po))
		case po.PhysicalOp == "Index Spool" && po.LogicalOp == "Eager Spool" && t.Rebinds+t.Rewinds >= a.cfg.MinSpoolRebinds:
			out = append(out, a.eagerIndexSpoolFinding(o, po))
		}
	}
	return out
}

func spoolNumbers(t *showplan.Totals) []Number {
	return []Number{num("rebinds", float64(t.Rebinds), "count", "plan"), num("rewinds", float64(t.Rewinds), "count", "plan"),
		num("executions", float64(t.Executions), "count", "plan"), num("rows", float64(t.Rows), "rows", "plan")}
}

func (a *analysis) rebindFinding(o *OperatorStats, po *showplan.Operator) Finding {
	t := po.Actual
	inputRuns := int64(0)
	for _, c := range po.Children {
		if c.Actual != nil {
			inputRuns = max(inputRuns, c.Actual.Executions)
		}
	}
	f := Finding{
		Title:    fmt.Sprintf("%s was rebound %s times and replayed %s times", o.Label(), Count(t.Rebinds), Count(t.Rewinds)),
		Severity: SeverityWarning, Operators: []OperatorRef{o.Ref()}, Numbers: spoolNumbers(t), Reference: refSpools,
		Hint: "Each rebind throws the spool's cache away and runs its input again for new outer values: the spool saves " +
			"little when the outer values rarely repeat. Sorting the outer input on the correlated columns turns rebinds " +
			"into rewinds; an index that serves the inner side's seek removes the spool.",
	}
	if inputRuns > 0 {
		f.Detail = fmt.Sprintf("Its input ran %s times.", Count(inputRuns))
		f.Numbers = append(f.Numbers, num("inputRuns", float64(inputRuns), "count", "plan"))
	}
	a.weighByTime(&f, o)
	return f
}

func (a *analysis) eagerIndexSpoolFinding(o *OperatorStats, po *showplan.Operator) Finding {
	t := po.Actual
	table := ""
	for c := po; c != nil && table == ""; {
		if c != po && c.Object != nil {
			table = strings.Trim(c.Object.Schema+"."+c.Object.Table, ".")
		}
		if len(c.Children) == 0 {
			break
		}
		c = c.Children[0]
	}
	on := "its input"
	if table != "" {
		on = table
	}
	f := Finding{
		Title:    fmt.Sprintf("%s built a temporary index on %s and was sought %s times", o.Label(), on, Count(t.Rebinds+t.Rewinds)),
		Severity: SeverityWarning, Operators: []OperatorRef{o.Ref()}, Numbers: spoolNumbers(t), Reference: refSpools,
		Hint: "An eager index spool is an index SQL Server builds in tempdb at every execution because no index serves the " +
			"seek; it is thrown away afterwards. Create that index on the table, keyed on the columns the spool seeks on",
	}
	if len(po.SeekPredicates) > 0 {
		f.Detail = "The spool's seek: " + clip(po.SeekPredicates[0], 160) + "."
	}
	f.Hint += " with the columns it returns as INCLUDE columns."
	a.weighByTime(&f, o)
	return f
}
