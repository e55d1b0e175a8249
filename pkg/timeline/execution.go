package timeline

import (
	"fmt"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// markExecution flags the operators that never ran, top-down: those the
// runtime counters say ran 0 times (ActualExecutions), the input an
// adaptive join did not choose (ActualJoinType), and everything below them.
// Operators without runtime counters (often Compute Scalar) ran as far as
// anyone knows. A query_thread_profile window for the operator or anything
// below it overrides the plan: it ran.
func (m *matcher) markExecution() {
	if m.root == nil {
		return
	}
	ranBelow := map[*showplan.Operator]bool{}
	var profiled func(op *showplan.Operator) bool
	profiled = func(op *showplan.Operator) bool {
		ran := false
		if info := m.byID[op.NodeID]; info != nil && info.hasWindow {
			ran = true
		}
		for _, c := range op.Children {
			ran = profiled(c) || ran
		}
		ranBelow[op] = ran
		return ran
	}
	profiled(m.root)
	var walk func(op *showplan.Operator, why string)
	walk = func(op *showplan.Operator, why string) {
		info := m.byID[op.NodeID]
		if why == "" && op.Actual != nil && op.Actual.Executions == 0 {
			why = "ActualExecutions is 0"
		}
		if info != nil && why != "" {
			if ranBelow[op] {
				m.notes = append(m.notes, fmt.Sprintf("node %d: the plan says it never ran (%s), but query_thread_profile saw it or an operator below it; taken as executed", op.NodeID, why))
				why = ""
			} else {
				info.notExecuted, info.whyNot = true, why
			}
		}
		unused := op.UnusedAdaptiveInput()
		for _, c := range op.Children {
			childWhy := ""
			switch {
			case why != "":
				childWhy = fmt.Sprintf("node %d above it never ran", op.NodeID)
			case c == unused:
				childWhy = fmt.Sprintf("the adaptive join (node %d) ran as %s; this input never ran", op.NodeID, op.ActualJoinType)
			}
			walk(c, childWhy)
		}
	}
	walk(m.root, "")
}

// executions returns the most executions one thread made and that
// thread's rebinds and rewinds (0 without runtime counters).
func executions(op *showplan.Operator) (execs, rebinds, rewinds int64) {
	for _, t := range op.Threads {
		if t.Executions > execs {
			execs, rebinds, rewinds = t.Executions, t.Rebinds, t.Rewinds
		}
	}
	return execs, rebinds, rewinds
}

// consumeCycles is how often a re-executed operator read its input again:
// its rebinds where the plan counts them (spools, sorts, table-valued
// functions — a rewind replays the stored result without reading the input,
// https://learn.microsoft.com/sql/relational-databases/showplan-logical-and-physical-operators-reference,
// "ActualRebinds and ActualRewinds"), else every execution.
func consumeCycles(execs, rebinds, rewinds int64) int64 {
	if rebinds+rewinds > 0 && rebinds > 0 {
		return min(rebinds, execs)
	}
	return execs
}
