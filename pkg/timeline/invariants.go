package timeline

import (
	"fmt"
	"slices"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Invariants a trace keeps whatever its evidence, as
// docs/design/tracing.md §9 states them. Check tests them; the package's
// tests run it on every trace they build, on generated plans, and the
// stand-in's scenario tests on every demo scenario and everyday query.
const (
	// InvOwnEvents: an operator's span holds every event matched to it
	// (not ambiguous, by any rule) — an operator never ends before its
	// own last event, nor starts after its first.
	InvOwnEvents = "own-events"
	// InvBlocking: a blocking operator (Sort, hash aggregate, eager
	// spool) first emits at or after its input's last event; a hash
	// join's build ends at or after its build input's last event.
	InvBlocking = "blocking"
	// InvPhases: Start ≤ FirstEmit ≤ End; each phase lies in the
	// operator's span, runs forwards, and the phases of one execution
	// follow one another without overlapping.
	InvPhases = "phases"
)

// Violation is one broken invariant.
type Violation struct {
	Node      int    `json:"node"`
	Invariant string `json:"invariant"`
	Detail    string `json:"detail"`
}

func (v Violation) String() string {
	return fmt.Sprintf("node %d: %s: %s", v.Node, v.Invariant, v.Detail)
}

// Check tests the trace's operators against the invariants. stmt is the
// plan statement the trace was built from (for which inputs a blocking or
// hybrid operator reads whole); nil checks only what the trace alone
// says. Re-executed operators are checked for order only: a blocking
// one's inputs' events span all its executions.
func Check(tr *Trace, stmt *showplan.Statement) []Violation {
	var out []Violation
	bad := func(node int, inv, format string, a ...any) {
		out = append(out, Violation{Node: node, Invariant: inv, Detail: fmt.Sprintf(format, a...)})
	}
	byID := make(map[int]*Operator, len(tr.Operators))
	for i := range tr.Operators {
		byID[tr.Operators[i].ID] = &tr.Operators[i]
	}
	own := ownEventSpans(tr)
	for i := range tr.Operators {
		o := &tr.Operators[i]
		if o.NotExecuted {
			continue
		}
		checkPhases(o, bad)
		if w, ok := own[o.ID]; ok && (w.Start < o.Start || w.End > o.End) {
			bad(o.ID, InvOwnEvents, "span %d–%d (%s) does not hold its own events at %d–%d", o.Start, o.End, o.TimeSource, w.Start, w.End)
		}
	}
	if stmt != nil {
		for i := range tr.Operators {
			o := &tr.Operators[i]
			if p := stmt.OperatorByID(o.ID); p != nil && !o.NotExecuted && o.Executions <= 1 && len(o.Cycles) <= 1 {
				checkBlocking(o, p, own, bad)
			}
		}
	}
	return out
}

func checkPhases(o *Operator, bad func(int, string, string, ...any)) {
	if o.Start > o.FirstEmit || o.FirstEmit > o.End {
		bad(o.ID, InvPhases, "start %d, first emit %d, end %d out of order", o.Start, o.FirstEmit, o.End)
	}
	for j, ph := range o.Phases {
		if ph.Start > ph.End || ph.Start < o.Start || ph.End > o.End {
			bad(o.ID, InvPhases, "%s phase %d–%d runs backwards or outside %d–%d", ph.Kind, ph.Start, ph.End, o.Start, o.End)
		}
		if j > 0 {
			prev := o.Phases[j-1]
			if prev.Execution == ph.Execution && prev.End > ph.Start {
				bad(o.ID, InvPhases, "%s phase %d–%d overlaps the %s phase before it (%d–%d)", ph.Kind, ph.Start, ph.End, prev.Kind, prev.Start, prev.End)
			}
		}
	}
}

// checkBlocking: the first row leaves a blocking operator once its input
// is consumed; a hybrid's build ends once its build input is.
func checkBlocking(o *Operator, p *showplan.Operator, own map[int]Window, bad func(int, string, string, ...any)) {
	behavior := p.Semantics.Behavior
	if behavior != showplan.Blocking && behavior != showplan.Hybrid {
		return
	}
	boundary, what := o.FirstEmit, "first emit"
	if behavior == showplan.Hybrid {
		if ph := o.phase(PhaseBuild); ph != nil {
			boundary, what = ph.End, "build end"
		}
	}
	for _, c := range p.Children {
		blocking := slices.Contains(p.Semantics.BlockingInputs, c.NodeID) || (len(p.Semantics.BlockingInputs) == 0 && behavior == showplan.Blocking)
		if c.InExpression || !blocking {
			continue
		}
		if last, ok := subtreeLastEvent(c, own); ok && last > boundary {
			bad(o.ID, InvBlocking, "%s at %d, before its input node %d's last event at %d", what, boundary, c.NodeID, last)
		}
	}
}

func (o *Operator) phase(k PhaseKind) *Phase {
	for i := range o.Phases {
		if o.Phases[i].Kind == k {
			return &o.Phases[i]
		}
	}
	return nil
}

// subtreeLastEvent is the latest own event of op or anything below it.
func subtreeLastEvent(op *showplan.Operator, own map[int]Window) (int64, bool) {
	last, found := int64(0), false
	if w, ok := own[op.NodeID]; ok {
		last, found = w.End, true
	}
	for _, c := range op.Children {
		if l, ok := subtreeLastEvent(c, own); ok && (!found || l > last) {
			last, found = l, true
		}
	}
	return last, found
}

// ownEventSpans is, per operator, the first and last time of the events
// matched to it (not ambiguous): what the operator's span must hold.
// Intervals count by their start, file I/O by both ends (the operator
// waited for it), as collectOwn takes them.
func ownEventSpans(tr *Trace) map[int]Window {
	out := map[int]Window{}
	note := func(mt Match, t, end int64) {
		if mt.NodeID < 0 || mt.Ambiguous {
			return
		}
		id := int(mt.NodeID)
		if w, ok := out[id]; ok {
			out[id] = Window{min(w.Start, t), max(w.End, end)}
			return
		}
		out[id] = Window{t, end}
	}
	l := &tr.Lanes
	for _, e := range l.Read {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Write {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Lock {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Wait {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Memory {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Split {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Log {
		if e.Kind == "record" {
			note(e.Match, e.T, e.T)
		}
	}
	for _, e := range l.IO {
		note(e.Match, e.T, e.End)
	}
	return out
}
