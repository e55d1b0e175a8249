package compare

import (
	"fmt"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// StatementSide is one planned statement of a side's statement tree: its
// own timeline and its own plan (issue 30).
type StatementSide struct {
	ID   int
	Text string
	// Position is the statement's place among the side's planned
	// statements, from 0.
	Position int
	Trace    *timeline.Trace
	Plan     *showplan.Statement
	// ElapsedUs is the statement's own elapsed time (its completed
	// events; 0 when none was seen) and StartUs its start on the batch's
	// clock: its timeline's summary has the batch's elapsed.
	ElapsedUs int64
	StartUs   int64
}

// StatementRef names the statement (pair) of an operator row: the node
// ids of each side's statement tree (-1 where the side lacks it) and the
// statement's text.
type StatementRef struct {
	A    int    `json:"a"`
	B    int    `json:"b"`
	Text string `json:"text"`
	// How says how the pair was matched: "text" (same text), "position"
	// (same place, other text); empty for a removed or added statement.
	How string `json:"how,omitempty"`
}

// StatementDiff compares one statement (pair).
type StatementDiff struct {
	StatementRef
	Status  string   `json:"status"`
	Metrics []Metric `json:"metrics"`
	Counts  Counts   `json:"counts"`
	// Verdict is the statement's one line: its totals and operators for a
	// matched pair, "removed …"/"added …" for a statement only one side ran.
	Verdict string `json:"verdict"`
}

// StatementsOf returns the planned statements of b's statement tree, in
// tree order; nil for a bundle without a tree. A plan that does not parse
// leaves the statement's operators to its events alone.
func StatementsOf(b *bundle.Bundle) []StatementSide {
	var out []StatementSide
	for _, st := range b.Statements {
		if st.Plan == "" || st.Trace == nil {
			continue
		}
		plan, _ := showplan.ParseBytes([]byte(st.Plan))
		out = append(out, StatementSide{ID: st.ID, Text: st.Text, Position: len(out), Trace: st.Trace,
			Plan: findings.PlanStatement(plan, st.Trace), ElapsedUs: int64(st.ElapsedUs), StartUs: st.StartUs})
	}
	return out
}

// normText is a statement's text for matching: whitespace runs as one
// space, case folded (T-SQL keywords and, under the usual collations,
// identifiers are case-insensitive).
func normText(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// statementPair is a matched pair of indexes into the two sides.
type statementPair struct {
	a, b int
	how  string
}

// matchStatements pairs the statements of a and b: first by text (of
// equal texts, the nearest in position), then the rest by position (in
// order among those left).
// Pairs are in A's order.
func matchStatements(a, b []StatementSide) []statementPair {
	ab := fill(len(a))
	used := make([]bool, len(b))
	how := make([]string, len(a))
	for i := range a {
		best := -1
		for j := range b {
			if used[j] || normText(a[i].Text) != normText(b[j].Text) {
				continue
			}
			if best < 0 || abs(j-i) < abs(best-i) {
				best = j
			}
		}
		if best >= 0 {
			ab[i], used[best], how[i] = best, true, "text"
		}
	}
	// the rest in order: the k-th unpaired of A with the k-th unpaired of B
	j := 0
	for i := range a {
		if ab[i] >= 0 {
			continue
		}
		for j < len(b) && used[j] {
			j++
		}
		if j == len(b) {
			break
		}
		ab[i], used[j], how[i] = j, true, "position"
	}
	var out []statementPair
	for i, j := range ab {
		if j >= 0 {
			out = append(out, statementPair{a: i, b: j, how: how[i]})
		}
	}
	return out
}

// compareStatements matches the statements, then the operators within
// each matched pair; a statement without a partner has its operators
// removed (A) or added (B). Reads are logical only when every statement
// has the plans' runtime counters.
// It returns each side's batch totals over all its statements.
func (r *Result) compareStatements(a, b []StatementSide) (ta, tb totals) {
	pa, pb := make([]*findings.Profile, len(a)), make([]*findings.Profile, len(b))
	logical := true
	for i, s := range a {
		pa[i] = findings.NewProfile(s.Trace, s.Plan)
		logical = logical && pa[i].HasCounters
	}
	for i, s := range b {
		pb[i] = findings.NewProfile(s.Trace, s.Plan)
		logical = logical && pb[i].HasCounters
	}
	r.ReadsSource = readsSource(logical)
	pairs := matchStatements(a, b)
	usedA, usedB := make([]bool, len(a)), make([]bool, len(b))
	for _, p := range pairs {
		usedA[p.a], usedB[p.b] = true, true
		ref := StatementRef{A: a[p.a].ID, B: b[p.b].ID, Text: a[p.a].Text, How: p.how}
		ms := totalMetrics(ownTotals(a[p.a], pa[p.a], logical), ownTotals(b[p.b], pb[p.b], logical), logical)
		r.addStatement(ref, operatorDiffs(pa[p.a], pb[p.b], logical), ms)
	}
	empty := findings.NewProfile(&timeline.Trace{}, nil)
	for i := range a {
		if !usedA[i] {
			ref := StatementRef{A: a[i].ID, B: -1, Text: a[i].Text}
			r.addStatement(ref, operatorDiffs(pa[i], empty, logical), nil)
		}
	}
	for j := range b {
		if !usedB[j] {
			ref := StatementRef{A: -1, B: b[j].ID, Text: b[j].Text}
			r.addStatement(ref, operatorDiffs(empty, pb[j], logical), nil)
		}
	}
	return batchTotals(pa, logical), batchTotals(pb, logical)
}

// ownTotals are one statement's totals with its own elapsed time and its
// lead-in from its own start, when its completed events gave them.
func ownTotals(s StatementSide, p *findings.Profile, logical bool) totals {
	t := totalsOf(p, logical)
	if s.ElapsedUs > 0 {
		t.elapsed, t.leadIn = float64(s.ElapsedUs), max(0, t.leadIn-float64(s.StartUs))
	}
	return t
}

func readsSource(logical bool) string {
	if logical {
		return "logical"
	}
	return "physical"
}

// addStatement appends one statement's operator rows, each naming it, and
// its StatementDiff.
func (r *Result) addStatement(ref StatementRef, ops []OperatorDiff, ms []Metric) {
	one := &Result{Operators: ops}
	one.count()
	for i := range ops {
		ops[i].Statement = &ref
	}
	r.Operators = append(r.Operators, ops...)
	d := StatementDiff{StatementRef: ref, Metrics: ms, Counts: one.Counts}
	switch {
	case ref.A < 0:
		d.Status = StatusAdded
	case ref.B < 0:
		d.Status = StatusRemoved
	case one.Counts.Changed+one.Counts.Replaced+one.Counts.Added+one.Counts.Removed > 0 || anyChanged(ms):
		d.Status = StatusChanged
	default:
		d.Status = StatusSame
	}
	d.Verdict = statementVerdict(&d, len(ops))
	r.Statements = append(r.Statements, d)
}

// statementVerdict is one statement's line: what changed, or that only
// one side ran it.
func statementVerdict(d *StatementDiff, ops int) string {
	switch d.Status {
	case StatusRemoved:
		return fmt.Sprintf("removed: only in A (%d operators)", ops)
	case StatusAdded:
		return fmt.Sprintf("added: only in B (%d operators)", ops)
	case StatusSame:
		return "no significant change; the plans have the same shape"
	}
	return oneLine(d.Metrics, d.Counts)
}

// statementsSaid ends the batch's verdict with its statements' statuses:
// "; 3 statements (1 changed, 1 same, 1 added)".
func (r *Result) statementsSaid() string {
	n := map[string]int{}
	for _, d := range r.Statements {
		n[d.Status]++
	}
	var parts []string
	for _, s := range []string{StatusChanged, StatusSame, StatusAdded, StatusRemoved} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	return fmt.Sprintf("; %d statements (%s)", len(r.Statements), strings.Join(parts, ", "))
}

func anyChanged(ms []Metric) bool {
	for _, m := range ms {
		if m.Changed {
			return true
		}
	}
	return false
}
