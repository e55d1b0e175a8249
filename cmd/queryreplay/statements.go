package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// writeStatements prints the statement tree of a batch that ran more than
// one statement (issue 30) and then each planned statement's own replay:
// its operators, on its own timeline, with its own waits and spills.
// Events with no statement (node 0, the batch) are said to be between
// statements, on no operator. It returns false when the bundle has no tree
// worth showing (a version 1 bundle, or one statement), and the caller
// prints the single replay.
func writeStatements(w io.Writer, b *bundle.Bundle, o replayOptions) bool {
	if len(b.Statements) <= 2 {
		return false
	}
	fmt.Fprintln(w, "Statements:")
	writeStatementTree(w, b.Statements, 0, 1)
	if root := b.Statements[0]; root.Events > 0 {
		fmt.Fprintf(w, "Between statements: %s (the batch's own, on no statement and no operator)\n", plural(int64(root.Events), "event"))
	}
	for _, st := range b.Statements {
		if st.Plan == "" || st.Trace == nil {
			continue
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "── statement %d%s: %s\n", st.ID, objectSuffix(st), oneLine(st.Text, 100))
		fmt.Fprintln(w, statementFigures(st))
		prof := statementProfile(st)
		writeOperatorTimeline(w, st.Trace, prof, o)
		writeTopWaits(w, st.Trace, o.TopWaits)
		writeSpills(w, st.Trace)
	}
	fmt.Fprintln(w)
	return true
}

// writeStatementTree prints the children of parent, indented by depth.
// The tree is at most timeline.MaxStatements nodes and each node is
// visited once from its parent, so the recursion is bounded.
func writeStatementTree(w io.Writer, st []timeline.Statement, parent, depth int) {
	if depth > 64 {
		return
	}
	for _, s := range st {
		if s.ID == parent || s.Parent != parent {
			continue
		}
		plan := ""
		if s.Plan != "" {
			plan = " [plan]"
		}
		fmt.Fprintf(w, "%s%d%s%s: %s · %s\n", strings.Repeat("  ", depth), s.ID, objectSuffix(s), plan, oneLine(s.Text, 80), statementFigures(s))
		writeStatementTree(w, st, s.ID, depth+1)
	}
}

// objectSuffix names the module a statement belongs to, with its nest
// level.
func objectSuffix(s timeline.Statement) string {
	if s.ObjectName == "" {
		return ""
	}
	return fmt.Sprintf(" (%s, nest level %d)", s.ObjectName, s.NestLevel)
}

// statementFigures is one statement's own figures, named by what they
// count: elapsed from its completed event, rows, logical and physical
// reads, waits as time, events tied to it.
func statementFigures(s timeline.Statement) string {
	return fmt.Sprintf("%.3f ms elapsed · %s · %s logical reads · %s physical reads · %.3f ms waits · %s",
		float64(s.ElapsedUs)/1000, plural(int64(s.Rows), "row"), thousands(int64(s.LogicalReads)), thousands(int64(s.PhysicalReads)),
		float64(s.WaitUs)/1000, plural(int64(s.Events), "event"))
}

// statementProfile is a statement's figures with its own plan's runtime
// counters when the plan parses.
func statementProfile(s timeline.Statement) *findings.Profile {
	var stmt *showplan.Statement
	if p, err := showplan.ParseBytes([]byte(s.Plan)); err == nil {
		stmt = findings.PlanStatement(p, s.Trace)
	}
	return findings.NewProfile(s.Trace, stmt)
}
