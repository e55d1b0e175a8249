package timeline

import (
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

type opTimes struct {
	start, firstEmit, end int64
	buildEnd              int64
	source                string
}

// phases works out every operator's start, first emit and end, bottom-up
// (xe-tracing.md §9, with µs windows): an operator starts with its own
// execution window or first data event, else with its driving child (a hash
// join's build input, a nested loop's outer input) or its earliest child; it
// ends no earlier than its window, its last event, any child, or its start plus
// its longest thread's elapsed time; it first emits when its inputs allow — a
// streaming operator not before its children, a blocking one not before its
// input ends, a hybrid one not before its build input ends and its probe input
// emits. All times are clamped to the statement [stmtStart, stmtEnd].
func (m *matcher) phases(stmtStart, stmtEnd int64) []Operator {
	times := make(map[*showplan.Operator]*opTimes, len(m.ops))
	var visit func(op *showplan.Operator) *opTimes
	visit = func(op *showplan.Operator) *opTimes {
		if t, ok := times[op]; ok {
			return t
		}
		info := m.byID[op.NodeID]
		kids := make([]*opTimes, len(op.Children))
		for i, c := range op.Children {
			kids[i] = visit(c)
		}
		t := &opTimes{}
		have := false
		take := func(v int64, src string) {
			if !have || v < t.start {
				t.start = v
				if !have {
					t.source = src
				}
			}
			have = true
		}
		if info != nil && info.hasWindow {
			take(info.win.Start, "thread_profile")
		}
		if info != nil && info.hasOwn {
			take(info.own.Start, "events")
		}
		if d := drivingChild(op, kids); d != nil {
			take(d.start, "derived")
		}
		if !have {
			t.start, t.source = stmtStart, "derived"
		}
		t.end = t.start
		if info != nil && info.hasWindow {
			t.end = max(t.end, info.win.End)
		}
		if info != nil && info.hasOwn {
			t.end = max(t.end, info.own.End)
		}
		for _, k := range kids {
			t.end = max(t.end, k.end)
		}
		// Runtime counters only fill in for operators without their own
		// window: query_thread_profile is the per-node source of truth.
		if op.Actual != nil && op.Actual.HasTiming && (info == nil || !info.hasWindow) {
			t.end = max(t.end, t.start+op.Actual.ElapsedMs*1000)
		}
		t.start = clamp(t.start, stmtStart, stmtEnd)
		t.end = clamp(t.end, t.start, max(stmtEnd, t.start))

		blocking := map[int]bool{}
		for _, id := range op.Semantics.BlockingInputs {
			blocking[id] = true
		}
		switch {
		case len(kids) == 0:
			t.firstEmit = t.start
		case op.Semantics.Behavior == showplan.Blocking:
			t.firstEmit = latestEnd(op, kids, blocking, true)
			t.buildEnd = t.firstEmit
		case op.Semantics.Behavior == showplan.Hybrid:
			t.buildEnd = latestEnd(op, kids, blocking, false)
			t.firstEmit = t.buildEnd
			probe, ok := earliestStreamingEmit(op, kids, blocking)
			if ok {
				t.firstEmit = max(t.firstEmit, probe)
			}
		case strings.EqualFold(op.PhysicalOp, "Concatenation"):
			t.firstEmit = kids[0].firstEmit
		default:
			for _, k := range rowInputs(op, kids) {
				t.firstEmit = max(t.firstEmit, k.firstEmit)
			}
		}
		t.firstEmit = clamp(t.firstEmit, t.start, t.end)
		t.buildEnd = clamp(t.buildEnd, t.start, t.end)
		times[op] = t
		return t
	}

	out := make([]Operator, 0, len(m.ops))
	for _, info := range m.ops {
		op := info.op
		t := visit(op)
		o := Operator{
			ID: op.NodeID, PhysicalOp: op.PhysicalOp, LogicalOp: op.LogicalOp,
			Behavior: string(op.Semantics.Behavior), Object: objectString(op.Object),
			Start: t.start, FirstEmit: t.firstEmit, End: t.end, TimeSource: t.source,
		}
		if op.Parent != nil {
			p := op.Parent.NodeID
			o.Parent = &p
		}
		if info.hasWindow {
			w := info.win
			o.Window = &w
		}
		switch op.Semantics.Behavior {
		case showplan.Blocking:
			o.Phases = []Phase{{PhaseConsume, t.start, t.firstEmit}, {PhaseEmit, t.firstEmit, t.end}}
		case showplan.Hybrid:
			o.Phases = []Phase{{PhaseBuild, t.start, t.buildEnd}, {PhaseProbe, t.buildEnd, t.end}}
		default:
			o.Phases = []Phase{{PhaseEmit, t.firstEmit, t.end}}
		}
		out = append(out, o)
	}
	return out
}

// rowInputs drops children that sit in the operator's scalar expressions:
// they do not feed its rows.
func rowInputs(op *showplan.Operator, kids []*opTimes) []*opTimes {
	var in []*opTimes
	for i, c := range op.Children {
		if !c.InExpression {
			in = append(in, kids[i])
		}
	}
	if len(in) == 0 {
		return kids
	}
	return in
}

func drivingChild(op *showplan.Operator, kids []*opTimes) *opTimes {
	if len(kids) == 0 {
		return nil
	}
	if op.Semantics.Behavior == showplan.Hybrid {
		for i, c := range op.Children {
			if slices.Contains(op.Semantics.BlockingInputs, c.NodeID) {
				return kids[i]
			}
		}
	}
	if strings.EqualFold(op.PhysicalOp, "Nested Loops") {
		return kids[0]
	}
	earliest := kids[0]
	for _, k := range kids[1:] {
		if k.start < earliest.start {
			earliest = k
		}
	}
	return earliest
}

// latestEnd is the latest end among the blocking inputs (or, when the plan
// named none and all is set, among all row inputs).
func latestEnd(op *showplan.Operator, kids []*opTimes, blocking map[int]bool, all bool) int64 {
	var end int64
	found := false
	for i, c := range op.Children {
		if blocking[c.NodeID] || (all && len(blocking) == 0 && !c.InExpression) {
			if !found || kids[i].end > end {
				end = kids[i].end
			}
			found = true
		}
	}
	if !found {
		for _, k := range kids {
			end = max(end, k.end)
		}
	}
	return end
}

func earliestStreamingEmit(op *showplan.Operator, kids []*opTimes, blocking map[int]bool) (int64, bool) {
	var t int64
	found := false
	for i, c := range op.Children {
		if blocking[c.NodeID] || c.InExpression {
			continue
		}
		if !found || kids[i].firstEmit < t {
			t = kids[i].firstEmit
		}
		found = true
	}
	return t, found
}

func clamp(v, lo, hi int64) int64 {
	return min(max(v, lo), hi)
}
