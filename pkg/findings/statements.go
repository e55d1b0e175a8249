package findings

import (
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// StatementInput is the rules' input for one statement of a bundle's
// statement tree (issue 30): its own timeline and its own plan, so a rule
// never ties an event of one statement to an operator of another's plan.
type StatementInput struct {
	ID    int
	Text  string
	Input Input
}

// FromStatements returns one input per statement that has a plan and a
// timeline, in tree order; nil for a bundle without a tree. A plan that
// does not parse leaves the statement's figures to its events alone.
func FromStatements(b *bundle.Bundle) []StatementInput {
	var out []StatementInput
	for _, st := range b.Statements {
		if in, ok := StatementInputOf(b, st); ok {
			out = append(out, in)
		}
	}
	return out
}

// StatementInputOf is the rules' input for one node of b's statement tree:
// its own timeline, plan and text. ok is false for a node without a plan
// or a timeline (the batch, an EXEC), which has no operators to judge.
func StatementInputOf(b *bundle.Bundle, st timeline.Statement) (StatementInput, bool) {
	if st.Plan == "" || st.Trace == nil {
		return StatementInput{}, false
	}
	plan, _ := showplan.ParseBytes([]byte(st.Plan))
	one := *b
	one.Trace, one.Plan = st.Trace, st.Plan
	in := FromBundle(&one, plan)
	in.Run.BatchText = st.Text
	return StatementInput{ID: st.ID, Text: st.Text, Input: in}, true
}

// BatchFacts are the headline figures of a batch that ran more than one
// statement (issue 30): the batch's elapsed time; reads and waits summed
// over every node of the statement tree (each event is on exactly one
// node, the batch's own between statements included); the plans' read
// counters summed over the planned statements, known only when every plan
// has them; the lead-in up to the first operator of any statement and the
// operators' time from there to the last operator's end. n is the number
// of statements; ok is false for a bundle without such a tree, whose
// figures are its one statement's (Profile.Facts).
func BatchFacts(b *bundle.Bundle) (f Facts, n int, ok bool) {
	if len(b.Statements) <= 2 || b.Trace == nil {
		return Facts{}, 0, false
	}
	f = FactsOf(b.Trace, true, 0, 0, 0)
	f.PageReads, f.Waits, f.WaitUs, f.WaitsUnknown = 0, 0, 0, 0
	first, last := int64(-1), int64(-1)
	for _, st := range b.Statements {
		if st.Kind == "statement" {
			n++
		}
		if st.Trace == nil {
			continue
		}
		one := FactsOf(st.Trace, false, 0, 0, 0)
		f.PageReads += one.PageReads
		f.Waits, f.WaitUs, f.WaitsUnknown = f.Waits+one.Waits, f.WaitUs+one.WaitUs, f.WaitsUnknown+one.WaitsUnknown
		if st.Plan == "" {
			continue
		}
		plan, _ := showplan.ParseBytes([]byte(st.Plan))
		p := NewProfile(st.Trace, PlanStatement(plan, st.Trace))
		f.HasCounters = f.HasCounters && p.HasCounters
		f.LogicalReads, f.PhysicalReads, f.ReadAheads = f.LogicalReads+p.LogicalReads, f.PhysicalReads+p.PhysicalReads, f.ReadAheads+p.ReadAheads
		if len(p.Operators) > 0 {
			if first < 0 || one.LeadInUs < first {
				first = one.LeadInUs
			}
			last = max(last, one.LeadInUs+one.OperatorUs)
		}
	}
	if !f.HasCounters {
		f.LogicalReads, f.PhysicalReads, f.ReadAheads = 0, 0, 0
	}
	if first >= 0 {
		f.LeadInUs, f.OperatorUs = first, last-first
	}
	return f, n, true
}
