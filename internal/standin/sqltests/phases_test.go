package sqltests

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queryreplay/queryreplay/internal/standin"
	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/showplan"
	"github.com/queryreplay/queryreplay/pkg/timeline"
	"github.com/queryreplay/queryreplay/pkg/tracer"
)

// The operator-phase checker: every stand-in scenario and every everyday
// query is traced with the real tracer, and the timeline's operators are
// checked against what the operators' semantics require. The semantics
// are written down here, independently of pkg/timeline's own table
// (pkg/showplan's Semantics) and of the stand-in's engine, from the
// showplan operator reference
// (https://learn.microsoft.com/sql/relational-databases/showplan-logical-and-physical-operators-reference)
// and the row-mode iterator model (an operator is opened, asked for rows
// one at a time, closed: Paul White, "Iterators, Query Plans, and Why They
// Run Backwards", https://www.sql.kiwi/2010/08/iterators-query-plans-and-why-they-run-backwards.html).
//
// The invariants, each with its reason:
//
//	I1 order      Start ≤ FirstEmit ≤ End; the statement's extent holds
//	              them. Phases of one execution are ordered, do not
//	              overlap, and lie in [Start, End].
//	I2 own events An event matched to an operator (not ambiguous, not by
//	              timing alone) happened while the operator worked: it lies
//	              in [Start, End].
//	I3 nesting    A parent is opened before its inputs and asks them for
//	              rows until it is done with them, so its span holds each
//	              executed row input's span (iterator model).
//	I4 hybrid     A hash join reads its whole build input (the first
//	              input) into the hash table before it reads the probe
//	              input ("Hash Match": "uses the top input to build a hash
//	              table and the bottom input to probe"): the build phase
//	              ends no earlier than the build input's last event and
//	              its End, no later than the probe input's first event, and
//	              the probe input starts no earlier than the build phase
//	              ends.
//	I5 blocking   A Sort, a hash aggregate or an eager spool returns its
//	              first row only after reading all of its input ("Sort":
//	              "sorts all incoming rows"; "Eager Spool": "stores each
//	              row ... when the first row is requested"): its first
//	              emit is no earlier than its input's last event and End.
//	I6 emit       An operator that handed on at least two rows over
//	              measurable time has a non-empty emit (or probe) phase.
//	              Measurable: events show its rows still being taken
//	              after its first emit — its own later events, or later
//	              events of the operators that take its rows as they come
//	              (its streaming ancestors, the inner side of a nested loops
//	              it is the outer input of) — or those ancestors reach the
//	              root and the statement went on (rows to the client). A
//	              blocking ancestor consumes the rows within one call; with
//	              no event in between, how long that took is not evidence
//	              (millisecond timestamps cannot resolve it).
//	I7 loops      Nested Loops reads its inner input for each outer row
//	              ("Nested Loops": "searches the inner input for each row
//	              of the outer input"): the inner input starts no earlier
//	              than the outer input's first row (its FirstEmit).
//	I8 threads    A parallel operator's per-thread bars lie inside the
//	              operator's span, each Start ≤ End.
//	I9 first row  Rows leave a streaming operator only after rows reached
//	              it: its first emit is no earlier than the earliest first
//	              emit of its row inputs.
//
// A violation names the case, the operator and the invariant, and the
// operator table is printed with it.

// checkCase is one traced query.
type checkCase struct {
	name string
	sql  string
	opts tracer.Options
}

func phaseCases() []checkCase {
	var out []checkCase
	for _, sc := range standin.Scenarios() {
		out = append(out, checkCase{"scenario/" + sc.Name, sc.SQL, tracer.Options{SQL: sc.SQL, ClearBufferPool: sc.ClearBufferPool,
			DisableReadAhead: sc.DisableReadAhead, CallStacks: sc.CallStacks, Events: bundle.AllEventGroups()}})
	}
	for _, q := range everydayQueries {
		if q.wantErr != 0 {
			continue
		}
		s := q.sql
		if q.trace != "" {
			s = q.trace
		}
		out = append(out, checkCase{"everyday/" + q.name, s, tracer.Options{SQL: s, ClearBufferPool: true, Events: bundle.AllEventGroups()}})
	}
	return out
}

// TestOperatorPhasesSemantics traces every scenario and everyday query and
// checks invariants I1–I9 on each executed operator, once with
// query_thread_profile firing for every operator when the query ends (the
// stand-in's default) and once with it firing as each operator closes
// (Options.ThreadProfileAtClose): the timeline must be true either way.
func TestOperatorPhasesSemantics(t *testing.T) {
	cases := phaseCases()
	if len(cases) < 29+40 {
		t.Fatalf("%d cases, want every scenario (29) and everyday query (40+)", len(cases))
	}
	for _, mode := range []struct {
		name    string
		atClose bool
	}{{"profiles_at_query_end", false}, {"profiles_at_close", true}} {
		t.Run(mode.name, func(t *testing.T) {
			_, db := startStandinWith(t, standin.Options{ThreadProfileAtClose: mode.atClose})
			checkPhases(t, db, cases)
		})
	}
}

func checkPhases(t *testing.T, db *sql.DB, cases []checkCase) {
	tr := tracer.New(tracer.DBOpener{DB: db}, tracer.Policy{AllowClearBufferPool: true}, slog.New(slog.DiscardHandler))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			b, err := tr.Trace(ctx, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			ck, err := newPhaseCheck(b)
			if err != nil {
				t.Fatal(err)
			}
			if v := ck.run(); len(v) > 0 {
				t.Errorf("%d violations:\n  %s\n%s", len(v), strings.Join(v, "\n  "), ck.table())
			}
		})
	}
}

// phaseCheck holds one trace with the plan and the events per operator.
type phaseCheck struct {
	tr     *timeline.Trace
	ops    map[int]*timeline.Operator
	plan   map[int]*showplan.Operator
	own    map[int][]int64 // times of each operator's own evidence, sorted
	lastEv int64           // the latest event of the trace
}

func newPhaseCheck(b *bundle.Bundle) (*phaseCheck, error) {
	if b.Trace == nil || b.Plan == "" {
		return nil, fmt.Errorf("no trace or no plan")
	}
	p, err := showplan.ParseBytes([]byte(b.Plan))
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	ck := &phaseCheck{tr: b.Trace, ops: map[int]*timeline.Operator{}, plan: map[int]*showplan.Operator{}, own: map[int][]int64{}}
	for i := range b.Trace.Operators {
		o := &b.Trace.Operators[i]
		ck.ops[o.ID] = o
	}
	for _, st := range p.Statements {
		if st.Root == nil || len(st.Operators) != len(b.Trace.Operators) {
			continue
		}
		for _, op := range st.Operators {
			ck.plan[op.NodeID] = op
		}
		break
	}
	if len(ck.plan) == 0 {
		return nil, fmt.Errorf("no statement of the plan has the trace's %d operators", len(b.Trace.Operators))
	}
	ck.collect()
	return ck, nil
}

// collect gathers each operator's own evidence: events tied to it by its
// node id or by its object, never by timing alone, never ambiguous.
func (ck *phaseCheck) collect() {
	add := func(m timeline.Match, t int64) {
		ck.lastEv = max(ck.lastEv, t)
		if m.NodeID < 0 || m.Ambiguous || m.Rule == timeline.RuleTiming || m.Rule == timeline.RuleStatement {
			return
		}
		ck.own[int(m.NodeID)] = append(ck.own[int(m.NodeID)], t)
	}
	l := &ck.tr.Lanes
	for _, e := range l.Read {
		add(e.Match, e.T)
	}
	for _, e := range l.Write {
		add(e.Match, e.T)
	}
	for _, e := range l.Lock {
		add(e.Match, e.T)
	}
	for _, e := range l.Wait {
		add(e.Match, e.T)
	}
	for _, e := range l.Memory {
		add(e.Match, e.T)
	}
	for _, e := range l.Split {
		add(e.Match, e.T)
	}
	for _, e := range l.Log {
		add(e.Match, e.T)
	}
	for _, e := range l.IO {
		add(e.Match, e.T)
	}
	for id := range ck.own {
		slices.Sort(ck.own[id])
	}
}

// subtreeEvidence is the first and last own event of op and everything
// below it.
func (ck *phaseCheck) subtreeEvidence(op *showplan.Operator) (first, last int64, ok bool) {
	var walk func(o *showplan.Operator)
	walk = func(o *showplan.Operator) {
		if ev := ck.own[o.NodeID]; len(ev) > 0 {
			if !ok || ev[0] < first {
				first = ev[0]
			}
			if !ok || ev[len(ev)-1] > last {
				last = ev[len(ev)-1]
			}
			ok = true
		}
		for _, c := range o.Children {
			walk(c)
		}
	}
	walk(op)
	return first, last, ok
}

// kind is the checker's own classification of an operator.
type kind int

const (
	kindStreaming kind = iota
	kindBlocking
	kindHashJoin
	kindNestedLoops
	kindOther // semantics the invariants do not cover (partial aggregates, window spools, sequences)
)

func classify(op *showplan.Operator) kind {
	phys, logical := strings.ToLower(op.PhysicalOp), strings.ToLower(op.LogicalOp)
	switch {
	case strings.Contains(phys, "sort"):
		return kindBlocking
	case phys == "hash match" && len(rowInputs(op)) >= 2:
		return kindHashJoin
	case phys == "hash match" && logical == "aggregate":
		return kindBlocking
	case phys == "hash match":
		return kindOther // partial aggregate, flow distinct
	case strings.HasSuffix(phys, "spool") && logical == "eager spool":
		return kindBlocking
	case phys == "window spool" || phys == "sequence" || phys == "adaptive join" || strings.HasSuffix(phys, "spool"):
		return kindOther
	case phys == "nested loops":
		return kindNestedLoops
	}
	return kindStreaming
}

func rowInputs(op *showplan.Operator) []*showplan.Operator {
	var in []*showplan.Operator
	for _, c := range op.Children {
		if !c.InExpression {
			in = append(in, c)
		}
	}
	return in
}

func (ck *phaseCheck) executed(id int) *timeline.Operator {
	if o := ck.ops[id]; o != nil && !o.NotExecuted {
		return o
	}
	return nil
}

// reexecuted: the operator ran more than once on a thread (the inner side
// of a nested loops); its span covers all executions.
func reexecuted(o *timeline.Operator) bool { return o.Executions > 1 || len(o.Cycles) > 1 }

func (ck *phaseCheck) run() []string {
	var v []string
	bad := func(o *timeline.Operator, inv, format string, args ...any) {
		v = append(v, fmt.Sprintf("node %d %s: %s %s", o.ID, o.PhysicalOp, inv, fmt.Sprintf(format, args...)))
	}
	for id, op := range ck.plan {
		o := ck.executed(id)
		if o == nil {
			continue
		}
		ck.checkOrder(o, bad)
		for _, t := range ck.own[id] {
			if t < o.Start || t > o.End {
				bad(o, "I2", "own event at %d outside [%d, %d]", t, o.Start, o.End)
				break
			}
		}
		ck.checkInputs(op, o, bad)
		for _, th := range o.Threads {
			if th.Start < o.Start || th.End > o.End || th.Start > th.End {
				bad(o, "I8", "thread %d bar [%d, %d] outside [%d, %d]", th.Thread, th.Start, th.End, o.Start, o.End)
			}
		}
	}
	slices.Sort(v)
	return v
}

// checkOrder is I1 and I6.
func (ck *phaseCheck) checkOrder(o *timeline.Operator, bad func(*timeline.Operator, string, string, ...any)) {
	if o.Start > o.FirstEmit || o.FirstEmit > o.End || o.Start < ck.tr.Start || o.End > ck.tr.End {
		bad(o, "I1", "start %d, first emit %d, end %d (statement %d–%d)", o.Start, o.FirstEmit, o.End, ck.tr.Start, ck.tr.End)
	}
	byExec := map[int][]timeline.Phase{}
	for _, p := range o.Phases {
		byExec[p.Execution] = append(byExec[p.Execution], p)
	}
	for ex, ph := range byExec {
		for i, p := range ph {
			if p.Start > p.End || p.Start < o.Start || p.End > o.End {
				bad(o, "I1", "execution %d phase %s [%d, %d] outside [%d, %d]", ex, p.Kind, p.Start, p.End, o.Start, o.End)
			}
			if i > 0 && p.Start < ph[i-1].End {
				bad(o, "I1", "execution %d phase %s starts at %d before %s ends at %d", ex, p.Kind, p.Start, ph[i-1].Kind, ph[i-1].End)
			}
		}
	}
	if reexecuted(o) {
		return
	}
	rows := ck.plan[o.ID].Actual
	if rows == nil || rows.Rows < 2 || !ck.measurableEmit(ck.plan[o.ID], o.FirstEmit) {
		return
	}
	for _, p := range o.Phases {
		if (p.Kind == timeline.PhaseEmit || p.Kind == timeline.PhaseProbe) && p.End > p.Start {
			return
		}
	}
	bad(o, "I6", "%d rows handed on, later events until %d, but no emit time (phases %v)", rows.Rows, ck.lastEv, o.Phases)
}

// measurableEmit says whether events after first show op's rows still
// being taken (I6): its own, or those of the operators that take its rows
// as they come, up to the first blocking ancestor (or a hash join it is
// the build input of); reaching the root, the statement's later events.
func (ck *phaseCheck) measurableEmit(op *showplan.Operator, first int64) bool {
	later := func(o *showplan.Operator) bool {
		ev := ck.own[o.NodeID]
		return len(ev) > 0 && ev[len(ev)-1] > first
	}
	if later(op) {
		return true
	}
	for c := op; ; c = c.Parent {
		p := c.Parent
		if p == nil {
			return ck.lastEv > first
		}
		switch classify(p) {
		case kindBlocking, kindOther:
			return false
		case kindHashJoin:
			if in := rowInputs(p); len(in) > 0 && in[0] == c {
				return false // the build input: read whole inside one call
			}
		case kindNestedLoops:
			for _, in := range rowInputs(p)[1:] {
				if in != c {
					if _, last, ok := ck.subtreeEvidence(in); ok && last > first {
						return true
					}
				}
			}
		}
		if later(p) {
			return true
		}
	}
}

// checkInputs is I3, I4, I5, I7 and I9.
func (ck *phaseCheck) checkInputs(op *showplan.Operator, o *timeline.Operator, bad func(*timeline.Operator, string, string, ...any)) {
	inputs := rowInputs(op)
	var kids []*timeline.Operator
	for _, c := range inputs {
		if k := ck.executed(c.NodeID); k != nil {
			kids = append(kids, k)
			if k.Start < o.Start || k.End > o.End {
				bad(o, "I3", "input node %d [%d, %d] outside [%d, %d]", k.ID, k.Start, k.End, o.Start, o.End)
			}
		}
	}
	if len(kids) == 0 || reexecuted(o) {
		return
	}
	switch classify(op) {
	case kindHashJoin:
		ck.checkHashJoin(op, o, bad)
	case kindBlocking:
		for _, c := range inputs {
			k := ck.executed(c.NodeID)
			if k == nil {
				continue
			}
			if _, last, ok := ck.subtreeEvidence(c); ok && o.FirstEmit < last {
				bad(o, "I5", "first emit %d before its input's last event at %d", o.FirstEmit, last)
			}
			if o.FirstEmit < k.End {
				bad(o, "I5", "first emit %d before its input node %d ends at %d", o.FirstEmit, k.ID, k.End)
			}
		}
	case kindNestedLoops:
		outer := ck.executed(inputs[0].NodeID)
		for _, c := range inputs[1:] {
			if k := ck.executed(c.NodeID); k != nil && outer != nil && k.Start < outer.FirstEmit {
				bad(o, "I7", "inner node %d starts at %d before the outer node %d's first row at %d", k.ID, k.Start, outer.ID, outer.FirstEmit)
			}
		}
	case kindStreaming:
		first := kids[0].FirstEmit
		for _, k := range kids[1:] {
			first = min(first, k.FirstEmit)
		}
		if o.FirstEmit < first {
			bad(o, "I9", "first emit %d before any input's first row at %d", o.FirstEmit, first)
		}
	}
}

// checkHashJoin is I4.
func (ck *phaseCheck) checkHashJoin(op *showplan.Operator, o *timeline.Operator, bad func(*timeline.Operator, string, string, ...any)) {
	inputs := rowInputs(op)
	var buildEnd int64
	found := false
	for _, p := range o.Phases {
		if p.Kind == timeline.PhaseBuild {
			buildEnd, found = p.End, true
		}
	}
	if !found {
		bad(o, "I4", "no build phase (phases %v)", o.Phases)
		return
	}
	if b := ck.executed(inputs[0].NodeID); b != nil && b.End > buildEnd {
		bad(o, "I4", "build input node %d ends at %d after the build phase ends at %d", b.ID, b.End, buildEnd)
	}
	if _, last, ok := ck.subtreeEvidence(inputs[0]); ok && last > buildEnd {
		bad(o, "I4", "build input's last event at %d after the build phase ends at %d", last, buildEnd)
	}
	for _, c := range inputs[1:] {
		k := ck.executed(c.NodeID)
		if k == nil {
			continue
		}
		if k.Start < buildEnd {
			bad(o, "I4", "probe input node %d starts at %d before the build phase ends at %d", k.ID, k.Start, buildEnd)
		}
		if first, _, ok := ck.subtreeEvidence(c); ok && first < buildEnd {
			bad(o, "I4", "probe input's first event at %d before the build phase ends at %d", first, buildEnd)
		}
	}
}

// table prints the operators as the timeline has them, with their own
// evidence, for a failure message.
func (ck *phaseCheck) table() string {
	var b strings.Builder
	ids := make([]int, 0, len(ck.plan))
	for id := range ck.plan {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		op, o := ck.plan[id], ck.ops[id]
		if o == nil {
			continue
		}
		ev := ck.own[id]
		evs := "-"
		if len(ev) > 0 {
			evs = fmt.Sprintf("%d..%d (%d)", ev[0], ev[len(ev)-1], len(ev))
		}
		win := "-"
		if o.Window != nil {
			win = fmt.Sprintf("%d..%d", o.Window.Start, o.Window.End)
		}
		ph := fmt.Sprint(o.Phases)
		if len(o.Phases) > 4 {
			ph = fmt.Sprintf("%v … (%d phases)", o.Phases[:4], len(o.Phases))
		}
		fmt.Fprintf(&b, "    %2d %-*s %-22s %-9s start %7d first %7d end %7d  %-14s window %-15s own %s phases %s\n", id, 2*op.Depth, "",
			op.PhysicalOp, o.Behavior, o.Start, o.FirstEmit, o.End, o.TimeSource, win, evs, ph)
	}
	return b.String()
}
