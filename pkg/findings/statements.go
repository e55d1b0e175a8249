package findings

import (
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
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
		if st.Plan == "" || st.Trace == nil {
			continue
		}
		plan, _ := showplan.ParseBytes([]byte(st.Plan))
		one := *b
		one.Trace, one.Plan = st.Trace, st.Plan
		in := FromBundle(&one, plan)
		in.Run.BatchText = st.Text
		out = append(out, StatementInput{ID: st.ID, Text: st.Text, Input: in})
	}
	return out
}
