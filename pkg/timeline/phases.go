package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// maxCycles bounds the executions drawn one by one per operator; beyond it
// the operator gets the "re-executed N times" phase instead.
const maxCycles = 10000

// opTimes is what the planner works out for one operator.
type opTimes struct {
	start, firstEmit, end int64
	buildEnd              int64
	source                string
	// evidence: the operator or something below it has events or a
	// window of its own; without it the operator is placed inside what
	// its parent allows.
	evidence    bool
	placed      bool // placed inside its parent's phases
	notExecuted bool
	execs       int64
	rebinds     int64
	rewinds     int64
	cycles      []Cycle
}

func (t *opTimes) reexecuted() bool { return t.execs > 1 || len(t.cycles) > 1 }

// planner works out every operator's times for one statement.
type planner struct {
	m        *matcher
	lo, hi   int64 // the statement's extent
	times    map[*showplan.Operator]*opTimes
	elapsed  func(op *showplan.Operator) (int64, bool)
	cycleCap []string
}

// phases works out every operator's start, first emit, end and phases
// (xe-tracing.md §9, with µs windows), in two passes.
//
// Bottom-up, over operators with evidence (their own query_thread_profile
// window or unambiguously matched events, or such a descendant): an
// operator starts with its own window or first event, else with its
// driving child (a hash join's build input, a nested loops' outer input)
// or its earliest child; it ends no earlier than its window, its last
// event or any child; it first emits when its inputs allow — a streaming
// operator not before its children, a blocking one not before its input
// ends, a hybrid one not before its build input ends and its probe input
// emits. A re-executed operator (more than one execution per thread on the
// inner side of a nested loops) is one consume→emit cycle per execution:
// drawn one by one where repeated windows show them, else as one
// "reexecuted" phase whose first emit ends the first of its equal cycles —
// never one consume phase over the whole run.
//
// Top-down, an operator with no evidence in its subtree is placed inside
// what its parent's phases allow: a build input within the build phase, a
// probe input after it, a blocking operator's input within its consume
// phase, a nested loops' inner input after the outer input's first row,
// the inputs of Sequence and Concatenation one after another. Operators
// that never ran are not placed at all. All times lie in [stmtStart,
// stmtEnd].
func (m *matcher) phases(stmtStart, stmtEnd int64) []Operator {
	p := &planner{m: m, lo: stmtStart, hi: stmtEnd, times: make(map[*showplan.Operator]*opTimes, len(m.ops))}
	for _, info := range m.ops {
		p.bottomUp(info.op)
	}
	for _, info := range m.ops {
		// Roots of subtrees nobody placed: the statement's root without
		// evidence, or an operator whose parent is outside the statement.
		if t := p.times[info.op]; !t.evidence && !t.placed && !t.notExecuted && (info.op.Parent == nil || p.times[info.op.Parent] == nil) {
			p.place(info.op, stmtStart, stmtEnd)
		}
	}
	m.notes = append(m.notes, p.cycleCap...)
	out := make([]Operator, 0, len(m.ops))
	for _, info := range m.ops {
		out = append(out, p.operator(info))
	}
	return out
}

// bottomUp computes an operator's times from its own evidence and its
// children's, memoised.
func (p *planner) bottomUp(op *showplan.Operator) *opTimes {
	if t, ok := p.times[op]; ok {
		return t
	}
	info := p.m.byID[op.NodeID]
	kids := make([]*opTimes, len(op.Children))
	for i, c := range op.Children {
		kids[i] = p.bottomUp(c)
	}
	t := &opTimes{}
	p.times[op] = t
	if info != nil && info.notExecuted {
		t.notExecuted, t.source = true, "not_executed"
		return t
	}
	t.execs, t.rebinds, t.rewinds = executions(op)
	own := info != nil && (info.hasWindow || info.hasOwn)
	t.evidence = own
	for _, k := range kids {
		t.evidence = t.evidence || (k.evidence && !k.notExecuted)
	}
	if !t.evidence {
		t.start, t.end, t.firstEmit, t.buildEnd, t.source = p.lo, p.lo, p.lo, p.lo, "parent"
		return t
	}
	p.span(op, info, kids, t)
	p.settle(op, t)
	if info != nil {
		p.cyclesFrom(op, info, kids, t)
	}
	return t
}

// span sets start, end and source from the operator's own evidence and its
// children that have evidence.
func (p *planner) span(op *showplan.Operator, info *opInfo, kids []*opTimes, t *opTimes) {
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
	t.end = t.start
	if info != nil && info.hasWindow {
		t.end = max(t.end, info.win.End)
	}
	if info != nil && info.hasOwn {
		t.end = max(t.end, info.own.End)
	}
	for _, k := range kids {
		if usable(k) {
			t.end = max(t.end, k.end)
		}
	}
	// Runtime counters only fill in for operators without their own
	// window: query_thread_profile is the per-node source of truth.
	if op.Actual != nil && op.Actual.HasTiming && (info == nil || !info.hasWindow) {
		t.end = max(t.end, t.start+op.Actual.ElapsedMs*1000)
	}
	t.start = clamp(t.start, p.lo, p.hi)
	t.end = clamp(t.end, t.start, max(p.hi, t.start))
}

func usable(k *opTimes) bool { return k.evidence && !k.notExecuted }

// settle sets firstEmit and buildEnd by the operator's semantics and
// places its children that have no evidence inside what its phases allow:
// a blocking operator's consume phase, a hybrid's build phase (build
// input) or probe phase (the others), a nested loops' time after its outer
// input's first row (inner inputs), one after another for Sequence and
// Concatenation. A streaming operator's first emit waits for its placed
// children's; a blocking or hybrid one decides its input phase first.
func (p *planner) settle(op *showplan.Operator, t *opTimes) {
	kids := p.kidTimes(op)
	blocking := op.Semantics.BlockingInputs
	n := consumeCycles(t.execs, t.rebinds, t.rewinds)
	oneOfMany := t.reexecuted() && n > 1
	switch op.Semantics.Behavior {
	case showplan.Blocking:
		if anyUsable(kids) {
			t.firstEmit = latestEnd(op, kids, blocking, true)
		} else {
			t.firstEmit = p.estimatedSplit(op, t.start, t.end)
		}
		if oneOfMany {
			// One of n cycles, not the whole run: its first rows leave
			// when the first execution's input has been read.
			t.firstEmit = t.start + (t.end-t.start)/n
		}
		t.firstEmit = clamp(t.firstEmit, t.start, t.end)
		t.buildEnd = t.firstEmit
		consumeEnd := t.firstEmit
		if oneOfMany {
			consumeEnd = t.end
		}
		p.placeKids(op, t, func(*showplan.Operator, int64) (int64, int64) { return t.start, consumeEnd })
	case showplan.Hybrid:
		p.settleHybrid(op, t, kids, oneOfMany, n)
	default:
		p.placeKids(op, t, p.streamingWindow(op, t))
		kids = p.kidTimes(op)
		t.firstEmit = t.start
		switch {
		case strings.EqualFold(op.PhysicalOp, "Concatenation"):
			for i, c := range op.Children {
				if ready(kids[i]) && !c.InExpression {
					t.firstEmit = kids[i].firstEmit
					break
				}
			}
		default:
			for _, k := range rowInputs(op, kids) {
				if ready(k) {
					t.firstEmit = max(t.firstEmit, k.firstEmit)
				}
			}
		}
		t.firstEmit = clamp(t.firstEmit, t.start, t.end)
		t.buildEnd = t.firstEmit
	}
}

// settleHybrid: the build phase ends with the blocking inputs (or, with no
// trace of them, when probing began, or by the runtime counters); the
// first row leaves once the build ended and a probe row arrived.
func (p *planner) settleHybrid(op *showplan.Operator, t *opTimes, kids []*opTimes, oneOfMany bool, n int64) {
	blocking := op.Semantics.BlockingInputs
	probeStart, probed := earliestStreaming(op, kids, blocking, usable, startOf)
	switch b := blockingChildTimes(op, kids); {
	case b != nil && usable(b):
		t.buildEnd = latestEnd(op, kids, blocking, false)
	case probed:
		// The build left no trace: it ended when probing began.
		t.buildEnd = probeStart
	default:
		t.buildEnd = p.estimatedSplit(op, t.start, t.end)
	}
	if oneOfMany {
		t.buildEnd = t.start + (t.end-t.start)/n
	}
	t.buildEnd = clamp(t.buildEnd, t.start, t.end)
	if op.PhysicalOp == "Sequence" {
		p.placeKids(op, t, p.sequentialWindow(t))
	} else {
		p.placeKids(op, t, func(c *showplan.Operator, _ int64) (int64, int64) {
			if slices.Contains(blocking, c.NodeID) {
				return t.start, t.buildEnd
			}
			return t.buildEnd, t.end
		})
	}
	t.firstEmit = t.buildEnd
	if probe, ok := earliestStreaming(op, p.kidTimes(op), blocking, ready, firstEmitOf); ok {
		t.firstEmit = max(t.firstEmit, probe)
	}
	t.firstEmit = clamp(t.firstEmit, t.start, t.end)
}

// streamingWindow is what a streaming operator allows a child: a nested
// loops' inner inputs run after the outer input's first row,
// Concatenation's inputs one after another, anything else within its span.
func (p *planner) streamingWindow(op *showplan.Operator, t *opTimes) func(*showplan.Operator, int64) (int64, int64) {
	inputs := op.Inputs()
	switch {
	case op.PhysicalOp == "Nested Loops" && len(inputs) > 1:
		return func(c *showplan.Operator, _ int64) (int64, int64) {
			if c == inputs[0] {
				return t.start, t.end
			}
			return clamp(p.times[inputs[0]].firstEmit, t.start, t.end), t.end
		}
	case op.PhysicalOp == "Concatenation":
		return p.sequentialWindow(t)
	}
	return func(*showplan.Operator, int64) (int64, int64) { return t.start, t.end }
}

func (p *planner) sequentialWindow(t *opTimes) func(*showplan.Operator, int64) (int64, int64) {
	return func(_ *showplan.Operator, prevEnd int64) (int64, int64) { return clamp(prevEnd, t.start, t.end), t.end }
}

// placeKids places op's children without evidence in the window allowed
// gives each (given the previous row input's end); scalar subqueries may
// run at any time in op's span.
func (p *planner) placeKids(op *showplan.Operator, t *opTimes, allowed func(c *showplan.Operator, prevEnd int64) (int64, int64)) {
	prevEnd := t.start
	for _, c := range op.Children {
		ct := p.times[c]
		if ct.notExecuted {
			continue
		}
		if !ct.evidence {
			lo, hi := t.start, t.end
			if !c.InExpression {
				lo, hi = allowed(c, prevEnd)
			}
			p.place(c, lo, hi)
		}
		if !c.InExpression {
			prevEnd = ct.end
		}
	}
}

// place puts an operator without evidence (and its subtree, which has none
// either) inside [lo, hi], the window its parent allows.
func (p *planner) place(op *showplan.Operator, lo, hi int64) {
	t := p.times[op]
	t.start, t.end, t.source, t.placed = lo, max(lo, hi), "parent", true
	p.settle(op, t)
}

func (p *planner) kidTimes(op *showplan.Operator) []*opTimes {
	kids := make([]*opTimes, len(op.Children))
	for i, c := range op.Children {
		kids[i] = p.times[c]
	}
	return kids
}

// ready: the child's times are known, from evidence or placement.
func ready(k *opTimes) bool { return !k.notExecuted && (k.evidence || k.placed) }

func anyUsable(kids []*opTimes) bool {
	for _, k := range kids {
		if usable(k) {
			return true
		}
	}
	return false
}

// estimatedSplit is where a blocking or hybrid operator's input phase ends
// when no event shows it: after the blocking input's ActualElapsedms (row
// mode counts the subtree), else halfway.
func (p *planner) estimatedSplit(op *showplan.Operator, start, end int64) int64 {
	for _, c := range op.Children {
		if !slices.Contains(op.Semantics.BlockingInputs, c.NodeID) {
			continue
		}
		if c.Actual != nil && c.Actual.HasTiming && c.Actual.ElapsedMs > 0 {
			return clamp(start+c.Actual.ElapsedMs*1000, start, end)
		}
		break
	}
	return start + (end-start)/2
}

// cyclesFrom turns repeated query_thread_profile windows of one thread
// into one cycle per execution.
func (p *planner) cyclesFrom(op *showplan.Operator, info *opInfo, kids []*opTimes, t *opTimes) {
	perThread := map[int]int{}
	repeated := false
	for _, w := range info.windows {
		perThread[w.thread]++
		repeated = repeated || perThread[w.thread] > 1
	}
	if !repeated {
		return
	}
	if len(info.windows) > maxCycles {
		p.cycleCap = append(p.cycleCap, fmt.Sprintf("node %d: %d executions seen; drawn as one re-executed phase (more than %d)", op.NodeID, len(info.windows), maxCycles))
		t.execs = max(t.execs, int64(len(info.windows)))
		return
	}
	wins := slices.Clone(info.windows)
	slices.SortStableFunc(wins, func(x, y threadWindow) int { return cmp.Compare(x.start, y.start) })
	var inputCycles []Cycle
	if b := blockingChildTimes(op, kids); b != nil && len(b.cycles) == len(wins) {
		inputCycles = b.cycles
	}
	t.cycles = make([]Cycle, len(wins))
	for i, w := range wins {
		ws, we := clamp(w.start, t.start, t.end), clamp(w.end, t.start, t.end)
		c := Cycle{Execution: i + 1, Thread: w.thread, Start: ws, End: we, FirstEmit: ws}
		if op.Semantics.Behavior != showplan.Streaming {
			// The input's matching cycle ends the consume phase; without
			// one, the whole window is taken as consuming.
			c.FirstEmit = we
			if inputCycles != nil {
				c.FirstEmit = clamp(inputCycles[i].End, ws, we)
			}
		}
		t.cycles[i] = c
	}
	t.execs = max(t.execs, int64(len(wins)))
	first := &t.cycles[0]
	if op.Semantics.Behavior == showplan.Streaming {
		// Its first rows still wait for its inputs' first rows.
		first.FirstEmit = clamp(t.firstEmit, first.Start, first.End)
		return
	}
	t.firstEmit = clamp(first.FirstEmit, t.start, t.end)
	t.buildEnd = t.firstEmit
}

func blockingChildTimes(op *showplan.Operator, kids []*opTimes) *opTimes {
	for i, c := range op.Children {
		if slices.Contains(op.Semantics.BlockingInputs, c.NodeID) {
			return kids[i]
		}
	}
	return nil
}

// operator assembles the model's Operator for one plan operator.
func (p *planner) operator(info *opInfo) Operator {
	op := info.op
	t := p.times[op]
	o := Operator{
		ID: op.NodeID, PhysicalOp: op.PhysicalOp, LogicalOp: op.LogicalOp,
		Behavior: string(op.Semantics.Behavior), Object: objectString(op.Object),
		Start: t.start, FirstEmit: t.firstEmit, End: t.end, TimeSource: t.source,
	}
	if t.reexecuted() {
		o.Executions, o.Rebinds, o.Rewinds = t.execs, t.rebinds, t.rewinds
	}
	if op.Parent != nil {
		pid := op.Parent.NodeID
		o.Parent = &pid
	}
	if info.hasWindow {
		w := info.win
		o.Window = &w
	}
	if t.notExecuted {
		at := p.lo
		if op.Parent != nil {
			at = p.notExecutedAt(op.Parent)
		}
		o.Start, o.FirstEmit, o.End = at, at, at
		o.NotExecuted, o.NotExecutedReason, o.Phases = true, info.whyNot, []Phase{}
		o.Executions, o.Rebinds, o.Rewinds, o.Window = 0, 0, 0, nil
		return o
	}
	o.Phases = phasesOf(op, t)
	if len(t.cycles) > 1 {
		o.Cycles = t.cycles
	}
	o.Threads = threadBars(op, info, t)
	if op.PhysicalOp == "Parallelism" {
		o.Exchange = p.exchange(op, info, t)
	}
	return o
}

// notExecutedAt is where a never-run operator sits: its nearest executed
// ancestor's start.
func (p *planner) notExecutedAt(parent *showplan.Operator) int64 {
	for a := parent; a != nil; a = a.Parent {
		if t := p.times[a]; t != nil && !t.notExecuted {
			return t.start
		}
	}
	return p.lo
}

// phasesOf lays out an executed operator's phases.
func phasesOf(op *showplan.Operator, t *opTimes) []Phase {
	behavior := op.Semantics.Behavior
	if len(t.cycles) > 1 {
		var ph []Phase
		for _, c := range t.cycles {
			switch behavior {
			case showplan.Blocking:
				ph = append(ph, Phase{Kind: PhaseConsume, Start: c.Start, End: c.FirstEmit, Execution: c.Execution},
					Phase{Kind: PhaseEmit, Start: c.FirstEmit, End: c.End, Execution: c.Execution})
			case showplan.Hybrid:
				ph = append(ph, Phase{Kind: PhaseBuild, Start: c.Start, End: c.FirstEmit, Execution: c.Execution},
					Phase{Kind: PhaseProbe, Start: c.FirstEmit, End: c.End, Execution: c.Execution})
			default:
				ph = append(ph, Phase{Kind: PhaseEmit, Start: c.FirstEmit, End: c.End, Execution: c.Execution})
			}
		}
		return ph
	}
	if t.execs > 1 {
		n := consumeCycles(t.execs, t.rebinds, t.rewinds)
		if behavior == showplan.Blocking && n == 1 {
			// Read once, replayed: a spool or sort rewound by its nested
			// loops.
			return []Phase{{Kind: PhaseConsume, Start: t.start, End: t.firstEmit},
				{Kind: PhaseEmit, Start: t.firstEmit, End: t.end, Executions: t.execs}}
		}
		return []Phase{{Kind: PhaseReexecuted, Start: t.start, End: t.end, Executions: t.execs}}
	}
	switch behavior {
	case showplan.Blocking:
		return []Phase{{Kind: PhaseConsume, Start: t.start, End: t.firstEmit}, {Kind: PhaseEmit, Start: t.firstEmit, End: t.end}}
	case showplan.Hybrid:
		return []Phase{{Kind: PhaseBuild, Start: t.start, End: t.buildEnd}, {Kind: PhaseProbe, Start: t.buildEnd, End: t.end}}
	}
	return []Phase{{Kind: PhaseEmit, Start: t.firstEmit, End: t.end}}
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

// drivingChild is the child whose start starts the operator: a hybrid's
// build input, a nested loops' outer input, else the earliest; only
// children with evidence count.
func drivingChild(op *showplan.Operator, kids []*opTimes) *opTimes {
	if op.Semantics.Behavior == showplan.Hybrid {
		for i, c := range op.Children {
			if slices.Contains(op.Semantics.BlockingInputs, c.NodeID) && usable(kids[i]) {
				return kids[i]
			}
		}
	}
	if strings.EqualFold(op.PhysicalOp, "Nested Loops") {
		for i, c := range op.Children {
			if !c.InExpression {
				if usable(kids[i]) {
					return kids[i]
				}
				break
			}
		}
	}
	var earliest *opTimes
	for _, k := range kids {
		if usable(k) && (earliest == nil || k.start < earliest.start) {
			earliest = k
		}
	}
	return earliest
}

// latestEnd is the latest end among the blocking inputs (or, when the plan
// named none and all is set, among all row inputs) that have evidence.
func latestEnd(op *showplan.Operator, kids []*opTimes, blocking []int, all bool) int64 {
	var end int64
	found := false
	for i, c := range op.Children {
		if !usable(kids[i]) {
			continue
		}
		if slices.Contains(blocking, c.NodeID) || (all && len(blocking) == 0 && !c.InExpression) {
			if !found || kids[i].end > end {
				end = kids[i].end
			}
			found = true
		}
	}
	if !found {
		for _, k := range kids {
			if usable(k) {
				end = max(end, k.end)
			}
		}
	}
	return end
}

// earliestStreaming is the earliest value among the streaming (probe) row
// inputs that keep accepts; ok is false when there is none.
func earliestStreaming(op *showplan.Operator, kids []*opTimes, blocking []int, keep func(*opTimes) bool, value func(*opTimes) int64) (t int64, ok bool) {
	for i, c := range op.Children {
		if slices.Contains(blocking, c.NodeID) || c.InExpression || !keep(kids[i]) {
			continue
		}
		if v := value(kids[i]); !ok || v < t {
			t = v
		}
		ok = true
	}
	return t, ok
}

func firstEmitOf(k *opTimes) int64 { return k.firstEmit }
func startOf(k *opTimes) int64     { return k.start }

func clamp(v, lo, hi int64) int64 {
	return min(max(v, lo), hi)
}
