package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/findings"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// The terminal replay: what the viewer shows, as text. One row per plan
// operator with its phases drawn on a shared time axis, the events each
// operator caused, the top waits and every spill.

// phaseGlyph draws each phase kind; spanGlyph marks time an operator was
// open without a known phase.
var phaseGlyph = map[timeline.PhaseKind]rune{
	timeline.PhaseConsume:    '░',
	timeline.PhaseBuild:      '▒',
	timeline.PhaseProbe:      '▓',
	timeline.PhaseEmit:       '█',
	timeline.PhaseReexecuted: '≡',
}

const spanGlyph = '·'

const phaseLegend = "░ consume  ▒ build  ▓ probe  █ emit  ≡ re-executed  · open, phase unknown"

// replayOptions shape the text replay.
type replayOptions struct {
	// Width is the number of columns of the time axis.
	Width int
	// TopWaits is how many wait types the top-waits line lists.
	TopWaits int
}

func (o replayOptions) withDefaults() replayOptions {
	if o.Width <= 0 {
		o.Width = 40
	}
	if o.TopWaits <= 0 {
		o.TopWaits = 5
	}
	return o
}

// writeReplay prints the replay of one bundle under a heading. Every
// figure is named by what it counts (docs/frames.md, "Vocabulary"): the
// batch's elapsed time with its lead-in, logical and physical reads from
// the plan, page reads from the trace, waits as time.
func writeReplay(w io.Writer, heading, description string, b *bundle.Bundle, o replayOptions) {
	o = o.withDefaults()
	fmt.Fprintf(w, "━━ %s", heading)
	if description != "" {
		fmt.Fprintf(w, " ━━ %s", description)
	}
	fmt.Fprintln(w)
	if b.SQL != "" {
		fmt.Fprintf(w, "%s\n", oneLine(b.SQL, 120))
	}
	if b.Trace == nil {
		writeReplayHeadline(w, b, nil)
		fmt.Fprintln(w, "No timeline: the trace captured no plan or events.")
		return
	}
	prof := replayProfile(b)
	facts := prof.Facts()
	writeReplayHeadline(w, b, &facts)
	// a batch split into statements: the headline is the whole batch's,
	// said so (each statement's own figures follow in its section)
	label := ""
	if bf, n, ok := findings.BatchFacts(b); ok {
		facts, label = bf, batchLabel(n)
	}
	fmt.Fprintf(w, "Time%s: %s\n", label, facts.TimeText())
	fmt.Fprintf(w, "Reads%s: %s\n", label, facts.ReadsText())
	fmt.Fprintf(w, "Waits%s: %s\n", label, facts.WaitsText())
	fmt.Fprintln(w)
	if !writeStatements(w, b, o) {
		writeOperatorTimeline(w, b.Trace, prof, o)
		fmt.Fprintln(w)
		writeTopWaits(w, b.Trace, o.TopWaits)
		writeSpills(w, b.Trace)
	}
	for _, n := range b.Trace.Summary.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
	for _, warn := range b.Result.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", warn)
	}
}

// batchLabel names the headline figures of a batch of n statements.
func batchLabel(n int) string {
	return fmt.Sprintf(" (batch, all %s)", plural(int64(n), "statement"))
}

// replayProfile is the figures of the bundle's trace with its plan's
// runtime counters when the plan parses.
func replayProfile(b *bundle.Bundle) *findings.Profile {
	var stmt *showplan.Statement
	if b.Plan != "" {
		if p, err := showplan.ParseBytes([]byte(b.Plan)); err == nil {
			stmt = findings.PlanStatement(p, b.Trace)
		}
	}
	return findings.NewProfile(b.Trace, stmt)
}

// writeReplayHeadline: rows, the elapsed time (the batch's own, when
// there is a trace; else the client's round trip, said as such), events,
// cache.
func writeReplayHeadline(w io.Writer, b *bundle.Bundle, f *findings.Facts) {
	var rows int64
	for _, n := range b.Result.Rows {
		rows += n
	}
	elapsed := fmt.Sprintf("%.1f ms client round trip", float64(b.Result.DurationUs)/1000)
	if f != nil {
		elapsed = fmt.Sprintf("%.1f ms elapsed", float64(f.ElapsedUs)/1000)
	}
	rowText := plural(rows, "row")
	if b.Trace != nil && b.Trace.Summary.BatchRowCount > rows {
		// an UPDATE or DELETE returns no rows: say the rows it affected
		// (sql_batch_completed's row_count), named as such
		rowText = fmt.Sprintf("%s returned, %s affected", plural(rows, "row"), thousands(b.Trace.Summary.BatchRowCount-rows))
	}
	parts := []string{
		rowText,
		elapsed,
		fmt.Sprintf("%s (%d lost)", plural(b.Result.Events, "event"), b.Result.Lost),
	}
	switch {
	case b.Run.ClearBufferPool && b.Run.DisableReadAhead:
		parts = append(parts, "cold cache, read-ahead off")
	case b.Run.ClearBufferPool:
		parts = append(parts, "cold cache")
	default:
		parts = append(parts, "warm cache")
	}
	if b.Run.CallStacks {
		parts = append(parts, "call stacks")
	}
	if b.Run.Modification {
		parts = append(parts, fmt.Sprintf("modification rolled back: %v (%s)", b.Result.RolledBack, plural(int64(len(b.Result.LogRecords)), "log record")))
	}
	fmt.Fprintln(w, strings.Join(parts, " · "))
}

// writeOperatorTimeline draws the operator rows and their figures. The
// axis covers the batch, from its start (time zero) to its elapsed end,
// with the lead-in before the first operator drawn as its own row.
// Columns: logical, physical and read-ahead reads (plan counters; "—"
// without them), page reads (trace events), time waited, locks, spills.
func writeOperatorTimeline(w io.Writer, tr *timeline.Trace, prof *findings.Profile, o replayOptions) {
	order := operatorOrder(tr.Operators)
	const nameWidth = 46
	from, to := replayAxis(tr)
	left, right := fmt.Sprintf("%.1f ms", ms(from)), fmt.Sprintf("%.1f ms", ms(to))
	axis := left + strings.Repeat(" ", max(1, o.Width-len(left)-len(right))) + right
	fmt.Fprintf(w, "  op  %-*s |%s|  %7s %6s %6s %6s %9s %6s %6s\n", nameWidth, "operator", axis, "logical", "phys", "ahead", "pages", "waited", "locks", "spills")
	if lead := tr.Summary.LeadInUs; lead > 0 {
		bar := strings.ReplaceAll(operatorBar(timeline.Operator{Start: from, End: from + lead}, from, to-from, o.Width), string(spanGlyph), "─")
		fmt.Fprintf(w, "      %-*s |%s|  %s\n", nameWidth, "lead-in (before the first operator)", bar, fmt.Sprintf("%.1f ms", ms(lead)))
	}
	for _, row := range order {
		op := row.op
		name := clip(strings.Repeat("  ", row.depth)+operatorLabel(op), nameWidth)
		bar := operatorBar(op, from, to-from, o.Width)
		if op.NotExecuted {
			bar = fmt.Sprintf("%-*s", o.Width, clip("not executed: "+op.NotExecutedReason, o.Width))
		}
		logical, phys, ahead := "—", "—", "—"
		var pages, locks, spills int
		var waited int64
		if st := prof.Op(op.ID); st != nil {
			if c := st.Counters; c != nil {
				logical, phys, ahead = thousands(c.LogicalReads), thousands(c.PhysicalReads), thousands(c.ReadAheads)
			}
			pages, locks, spills, waited = st.Reads, st.Locks, st.Spills+st.ExchangeSpills, st.TotalWaitUs()
		}
		fmt.Fprintf(w, "  %2d  %-*s |%s|  %7s %6s %6s %6d %9s %6d %6d\n", op.ID, nameWidth, name, bar, logical, phys, ahead, pages, waitedText(waited), locks, spills)
	}
	if un := tr.Summary.Unmatched; un["read"]+un["lock"]+un["wait"]+un["memory"] > 0 {
		fmt.Fprintf(w, "      %-*s  %-*s   %7s %6s %6s %6d %9s %6d %6d\n", nameWidth, "statement (no single operator)", o.Width, "", "", "", "", un["read"], "", un["lock"], spillsUnmatched(tr))
	}
	fmt.Fprintf(w, "      %s  ·  logical/phys/ahead: plan counters; pages: page reads in the trace\n", phaseLegend)
}

// waitedText writes time waited in ms ("21.89ms"), "0" for none.
func waitedText(us int64) string {
	if us == 0 {
		return "0"
	}
	return fmt.Sprintf("%.2fms", float64(us)/1000)
}

// replayAxis is [time zero or the earliest operator start, the batch's
// elapsed end or the last operator end]: the whole batch, so the lead-in
// and the operators share one axis.
func replayAxis(tr *timeline.Trace) (int64, int64) {
	from, to := executionWindow(tr)
	zero := min(int64(0), tr.Start)
	if tr.Summary.ElapsedSource == "" {
		return from, to
	}
	return min(from, zero), max(to, zero+tr.Summary.ElapsedUs)
}

// executionWindow is [first operator start, last operator end] of the
// operators that ran, or the trace's own window when none has times.
func executionWindow(tr *timeline.Trace) (int64, int64) {
	from, to := int64(-1), int64(-1)
	for _, op := range tr.Operators {
		if op.NotExecuted || op.End < op.Start {
			continue
		}
		if from < 0 || op.Start < from {
			from = op.Start
		}
		if op.End > to {
			to = op.End
		}
	}
	if from < 0 || to <= from {
		return tr.Start, tr.End
	}
	return from, to
}

type operatorRow struct {
	op    timeline.Operator
	depth int
}

// operatorOrder lists operators depth first from the root, children in
// node id order, with their depth; operators whose parent is missing come
// last at depth 0.
func operatorOrder(ops []timeline.Operator) []operatorRow {
	children := map[int][]timeline.Operator{}
	ids := map[int]bool{}
	for _, op := range ops {
		ids[op.ID] = true
	}
	var roots []timeline.Operator
	for _, op := range ops {
		if op.Parent == nil || !ids[*op.Parent] {
			roots = append(roots, op)
			continue
		}
		children[*op.Parent] = append(children[*op.Parent], op)
	}
	var out []operatorRow
	var walk func(op timeline.Operator, depth int)
	walk = func(op timeline.Operator, depth int) {
		out = append(out, operatorRow{op, depth})
		kids := children[op.ID]
		sort.Slice(kids, func(i, j int) bool { return kids[i].ID < kids[j].ID })
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].ID < roots[j].ID })
	for _, r := range roots {
		walk(r, 0)
	}
	return out
}

// operatorLabel is "Name (Logical) object", Name as SSMS shows it (a
// Clustered Index Seek with Lookup="1" is a Key Lookup).
func operatorLabel(op timeline.Operator) string {
	s := op.DisplayName()
	if op.LogicalOp != "" && !strings.HasSuffix(s, op.LogicalOp) && !strings.HasSuffix(op.PhysicalOp, op.LogicalOp) {
		s += " (" + op.LogicalOp + ")"
	}
	if op.Object != "" {
		s += " " + op.Object
	}
	return s
}

// operatorBar draws an operator's phases on width columns covering
// [start, start+span]: a column shows the phase open at its middle (the
// one that began last), or · while the operator is open without a phase.
// An operator shorter than a column still gets one mark.
func operatorBar(op timeline.Operator, start, span int64, width int) string {
	cells := make([]rune, width)
	for i := range cells {
		cells[i] = ' '
	}
	if span <= 0 {
		span = 1
	}
	column := func(t int64) int {
		c := int((t - start) * int64(width) / span)
		return min(max(c, 0), width-1)
	}
	marked := false
	for c := range cells {
		mid := start + (int64(2*c+1)*span)/int64(2*width)
		if mid < op.Start || mid > op.End {
			continue
		}
		cells[c] = spanGlyph
		best := int64(-1)
		for _, p := range op.Phases {
			if p.Start <= mid && mid <= p.End && p.Start > best {
				if g, ok := phaseGlyph[p.Kind]; ok {
					cells[c], best = g, p.Start
				}
			}
		}
		marked = true
	}
	// A phase too short to hold a column's middle still shows, in the
	// column where it ends (later phases win a shared column).
	for _, p := range op.Phases {
		g, ok := phaseGlyph[p.Kind]
		if !ok || p.End < op.Start {
			continue
		}
		if !slices.Contains(cells, g) {
			cells[column(p.End)] = g
			marked = true
		}
	}
	if !marked && op.End >= op.Start {
		g := spanGlyph
		if len(op.Phases) > 0 {
			if pg, ok := phaseGlyph[op.Phases[0].Kind]; ok {
				g = pg
			}
		}
		cells[column(op.Start)] = g
	}
	return string(cells)
}

func spillsUnmatched(tr *timeline.Trace) int {
	n := 0
	for _, m := range tr.Lanes.Memory {
		if m.Spill && m.NodeID < 0 {
			n++
		}
	}
	return n
}

// writeTopWaits lists the wait types with the most time waited
// (findings.WaitsByType, the totals the frames' wait_stats carry too).
func writeTopWaits(w io.Writer, tr *timeline.Trace, top int) {
	list := findings.WaitsByType(tr)
	if len(list) == 0 {
		fmt.Fprintln(w, "Top waits: none")
		return
	}
	var parts []string
	for _, a := range list[:min(top, len(list))] {
		p := fmt.Sprintf("%s ×%d (%.2f ms", a.WaitType, a.Waits, float64(a.WaitUs)/1000)
		if a.Untimed > 0 {
			p += fmt.Sprintf("; %d shorter than 1 ms, not timed", a.Untimed)
		}
		parts = append(parts, p+")")
	}
	if len(list) > top {
		parts = append(parts, fmt.Sprintf("and %d more", len(list)-top))
	}
	fmt.Fprintf(w, "Top waits: %s\n", strings.Join(parts, ", "))
}

// writeSpills lists every spill with its operator.
func writeSpills(w io.Writer, tr *timeline.Trace) {
	names := map[int]string{}
	for _, op := range tr.Operators {
		names[op.ID] = operatorLabel(op)
	}
	var lines []string
	for _, m := range tr.Lanes.Memory {
		if !m.Spill {
			continue
		}
		where := "the statement"
		if m.NodeID >= 0 {
			where = fmt.Sprintf("operator %d %s", int(m.NodeID), names[int(m.NodeID)])
		}
		line := fmt.Sprintf("  %8.1f ms  %s in %s", ms(m.T-tr.Start), m.Kind, where)
		if m.GrantedMemoryKB > 0 || m.UsedMemoryKB > 0 {
			line += fmt.Sprintf(" (granted %d KB, used %d KB)", m.GrantedMemoryKB, m.UsedMemoryKB)
		}
		if m.Detail != "" {
			line += ": " + oneLine(m.Detail, 80)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		fmt.Fprintln(w, "Spills: none")
		return
	}
	fmt.Fprintf(w, "Spills: %d\n", len(lines))
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// clip shortens s to at most n runes, ending in … when it cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// plural writes "1 row", "2,395 rows".
func plural(n int64, word string) string {
	s := thousands(n) + " " + word
	if n != 1 {
		s += "s"
	}
	return s
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
