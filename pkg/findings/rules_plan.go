package findings

import (
	"fmt"
	"math"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Rules that read what the plan itself records: the values it was compiled
// for, its warnings and the optimizer's own notes. They need no events.

const (
	refParamSniff = "https://learn.microsoft.com/en-us/sql/relational-databases/query-processing-architecture-guide#parameter-sensitivity"
	refConversion = "https://learn.microsoft.com/en-us/sql/t-sql/data-types/data-type-conversion-database-engine"
	refStatistics = "https://learn.microsoft.com/en-us/sql/relational-databases/statistics/statistics"
	refOptimizer  = "https://learn.microsoft.com/en-us/sql/relational-databases/query-processing-architecture-guide#optimizing-select-statements"
)

// misestimateFactor: an operator whose actual rows are this many times
// off its estimate (either way) shows the compiled value mattered.
const misestimateFactor = 10

// parameterSensitivity: the plan was compiled for other parameter values
// than it ran with. A warning when some operator's rows are
// misestimateFactor off the estimate (the sniffed value mattered), info
// otherwise.
func parameterSensitivity(a *analysis) []Finding {
	st := a.in.Plan
	if st == nil {
		return nil
	}
	var diff []showplan.Parameter
	for _, p := range st.Parameters {
		if p.Compiled != "" && p.Runtime != "" && p.Compiled != p.Runtime {
			diff = append(diff, p)
		}
	}
	if len(diff) == 0 {
		return nil
	}
	var parts []string
	for _, p := range diff[:min(len(diff), 3)] {
		parts = append(parts, fmt.Sprintf("%s = %s (ran with %s)", p.Name, clip(p.Compiled, 40), clip(p.Runtime, 40)))
	}
	f := Finding{
		Title:    "Plan compiled for other parameter values: " + strings.Join(parts, ", "),
		Severity: SeverityInfo,
		Numbers:  []Number{num("parameters", float64(len(diff)), "count", "plan")},
		Hint: "The optimizer built the plan for the values sniffed at compile time and reuses it for these. When their row " +
			"counts differ, the plan fits one and not the other. OPTION (RECOMPILE) plans for each value; OPTIMIZE FOR names a " +
			"representative value; SQL Server 2022 at compatibility level 160 can keep several plans (parameter sensitive plan " +
			"optimization).",
		Reference: refParamSniff,
	}
	if o, est, act := a.worstMisestimate(); o != nil {
		f.Severity = SeverityWarning
		f.Operators = []OperatorRef{o.Ref()}
		f.Detail = fmt.Sprintf("The plan's largest misestimate: %s estimated %s rows and got %s. The sniffed values are one "+
			"possible cause; check whether this operator filters on the parameters.", o.Label(), Count(int64(est)), Count(act))
		f.Numbers = append(f.Numbers, num("estimatedRows", est, "rows", "plan"), num("actualRows", float64(act), "rows", "plan"))
	}
	return []Finding{f}
}

// worstMisestimate is the operator whose actual rows are furthest (at
// least misestimateFactor) from its estimate for all its executions.
func (a *analysis) worstMisestimate() (*OperatorStats, float64, int64) {
	var best *OperatorStats
	var bestEst float64
	var bestAct int64
	worst := float64(misestimateFactor)
	for i := range a.p.Operators {
		o := &a.p.Operators[i]
		if o.Counters == nil || o.NotExecuted {
			continue
		}
		est := o.EstimatedRows * float64(max(o.Counters.Runs(), 1))
		act := o.Counters.Rows
		r := (float64(act) + 1) / (est + 1)
		if r < 1 {
			r = 1 / r
		}
		if r >= worst && !math.IsInf(r, 0) {
			worst, best, bestEst, bestAct = r, o, est, act
		}
	}
	return best, bestEst, bestAct
}

// planWarnings reports the plan's warnings of one kind, statement-level
// and per operator.
func (a *analysis) planWarnings(kind string) (stmt []showplan.Warning, ops []OperatorRef) {
	if a.in.Plan == nil {
		return nil, nil
	}
	for _, w := range a.in.Plan.Warnings {
		if w.Kind == kind {
			stmt = append(stmt, w)
		}
	}
	for _, po := range a.in.Plan.Operators {
		for _, w := range po.Warnings {
			if w.Kind == kind {
				stmt = append(stmt, w)
				ops = append(ops, a.opRefs(po.NodeID)...)
				break
			}
		}
	}
	return stmt, ops
}

// implicitConversion: PlanAffectingConvert warnings. A conversion that
// affects a seek plan (ConvertIssue "Seek Plan") is a warning; one that
// only affects cardinality estimates is info.
func implicitConversion(a *analysis) []Finding {
	ws, _ := a.planWarnings("PlanAffectingConvert")
	if len(ws) == 0 {
		return nil
	}
	f := Finding{Severity: SeverityInfo, Numbers: []Number{num("conversions", float64(len(ws)), "count", "plan")}, Reference: refConversion}
	var exprs []string
	for _, w := range ws {
		if strings.EqualFold(w.Attributes["ConvertIssue"], "Seek Plan") {
			f.Severity = SeverityWarning
		}
		e := clip(w.Attributes["Expression"], 100)
		if len(exprs) < 2 && !containsStr(exprs, e) {
			exprs = append(exprs, e)
		}
	}
	f.Title = "Type conversion affects the plan: " + strings.Join(exprs, "; ")
	f.Hint = "A column is converted to compare it with a value of another type (CONVERT_IMPLICIT): with a seek issue, no " +
		"index on the column can be sought; with a cardinality issue, its estimate is a guess. Give the parameter or " +
		"variable the column's own data type (nvarchar vs varchar is the usual one)."
	return []Finding{f}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// noJoinPredicate: a join the plan warns has no predicate (a cross
// product), unless the query asked for one (CROSS JOIN is in the text).
func noJoinPredicate(a *analysis) []Finding {
	ws, ops := a.planWarnings("NoJoinPredicate")
	if len(ws) == 0 {
		return nil
	}
	f := Finding{Title: "Join without a predicate: every row of one input meets every row of the other", Severity: SeverityWarning,
		Operators: ops, Numbers: []Number{num("joins", float64(len(ws)), "count", "plan")}, Reference: refJoins,
		Hint: "The plan joins two inputs with no join condition. Check the ON and WHERE clauses for a missing or mistyped " +
			"condition; the optimizer also reports this when a condition on a constant made the join predicate redundant."}
	if a.in.Plan != nil && strings.Contains(strings.ToUpper(a.in.Plan.Text), "CROSS JOIN") {
		f.Severity = SeverityInfo
		f.Detail = "The statement asks for a CROSS JOIN."
	}
	return []Finding{f}
}

// compileTimeout: the optimizer stopped searching
// (StatementOptmEarlyAbortReason TimeOut): the plan is the best found in
// the time allowed, not the best there is.
func compileTimeout(a *analysis) []Finding {
	st := a.in.Plan
	if st == nil || !strings.EqualFold(st.EarlyAbort, "TimeOut") {
		return nil
	}
	return []Finding{{
		Title:    "The optimizer timed out: the plan is the best it found in the time it allowed itself",
		Severity: SeverityInfo,
		Numbers:  []Number{num("compileMs", float64(st.CompileTimeMs), "ms", "plan")},
		Hint: "A complex statement (many joins, views on views) exhausted the optimizer's search budget. Simplify it: split it " +
			"with temporary tables, remove unneeded joins, or reduce nesting; plans found under a timeout can change between compilations.",
		Reference: refOptimizer,
	}}
}

// nonParallel: the plan says why it could not go parallel
// (NonParallelPlanReason), for a statement costly enough to have wanted
// to (SubtreeCost above SmallQueryCost).
func nonParallel(a *analysis) []Finding {
	st := a.in.Plan
	if st == nil || st.NonParallelWhy == "" || st.SubtreeCost <= a.cfg.SmallQueryCost {
		return nil
	}
	return []Finding{{
		Title:    "Serial plan: " + st.NonParallelWhy,
		Severity: SeverityInfo,
		Numbers:  []Number{num("subtreeCost", st.SubtreeCost, "count", "plan")},
		Hint: "The plan could not use parallelism for the reason SQL Server gives. Scalar user-defined functions, table " +
			"variables being modified and some system functions force a serial plan; MAXDOP 1 (server, database, hint) asks for one.",
		Reference: refParallelQuery,
	}}
}

// noStatistics: columns the optimizer found no statistics on
// (ColumnsWithNoStatistics), so it guessed their selectivity.
func noStatistics(a *analysis) []Finding {
	ws, ops := a.planWarnings("ColumnsWithNoStatistics")
	if len(ws) == 0 {
		return nil
	}
	var cols []string
	for _, w := range ws {
		for _, c := range w.Columns {
			if !containsStr(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	title := "Columns with no statistics: the optimizer guessed their selectivity"
	if len(cols) > 0 {
		title = "No statistics on " + clip(strings.Join(cols, ", "), 160) + ": the optimizer guessed their selectivity"
	}
	return []Finding{{
		Title: title, Severity: SeverityWarning, Operators: ops,
		Numbers: []Number{num("columns", float64(len(cols)), "count", "plan")},
		Hint: "Without statistics the estimate for these columns is a fixed guess. AUTO_CREATE_STATISTICS may be off for the " +
			"database, or the database is read-only: create the statistics (CREATE STATISTICS) or turn the option on.",
		Reference: refStatistics,
	}}
}
