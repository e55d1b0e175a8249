package timeline

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// maxCycles bounds the executions drawn one by one per operator; beyond it
// the operator gets the "re-executed N times" phase instead.
const maxCycles = 10000

// Where a time or phase boundary came from (Operator.TimeSource,
// Phase.Source).
const (
	// srcEvents: the operator's own matched events, or its inputs' (the
	// build input's last event, the probe input's first).
	srcEvents = "events"
	// srcProfile: query_thread_profile — a window's bounds or the active
	// time total_time_us reports.
	srcProfile = "thread_profile"
	// srcPlan: the runtime counters' ActualElapsedms.
	srcPlan = "plan"
	// srcDerived: other operators' times (its inputs).
	srcDerived = "derived"
	// srcParent: nothing of its own says; the parent's semantics placed it.
	srcParent = "parent"
	// srcEstimate: no evidence of the split at all: halfway.
	srcEstimate = "estimate"
)

// opTimes is what the planner works out for one operator.
type opTimes struct {
	start, firstEmit, end int64
	buildEnd              int64
	source                string // Operator.TimeSource
	emitSource            string // what the first emit (blocking: the end of consuming) rests on
	endSource             string // what the end rests on
	buildSource           string // what the end of a hybrid's build rests on
	// evidence: the operator or something below it has events or a
	// window of its own; without it the operator is placed inside what
	// its parent allows.
	evidence bool
	// hard: the operator or something below it has matched events — when
	// something happened, as opposed to a window, which only bounds it.
	hard               bool
	hardStart, hardEnd int64
	// win: its own query_thread_profile windows, merged: it was opened by
	// win.Start and worked no later than win.End.
	win    bool
	winS   int64
	winE   int64
	dur    int64 // its longest thread's active time (µs), its inputs' included
	durSrc string
	// spilled: the time of its last own spill warning (a sort or hash
	// aggregate spills while it reads its input).
	spilled     bool
	spillAt     int64
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
	m      *matcher
	lo, hi int64 // the statement's extent
	times  map[*showplan.Operator]*opTimes
	// atEnd: every query_thread_profile fired together when the query
	// ended, so windows give active times and bounds, not positions.
	atEnd    bool
	cycleCap []string
}

// phases works out every operator's start, first emit, end and phases
// (docs/design/tracing.md §9, with µs windows) from the strongest evidence there
// is, in two passes.
//
// Evidence, strongest first: an operator's own matched events and its
// inputs' (when something happened); the active time query_thread_profile
// (total_time_us) or the runtime counters (ActualElapsedms) report, which
// is a least duration; its query_thread_profile windows, which bound it —
// the operator was opened by the window's start and worked no later than
// its end (the event fires when the operator closes, which may be when
// the query ends) — and the operator's semantics.
//
// Bottom-up, over operators with evidence: an operator starts with its
// first event, its driving child (a hash join's build input, a nested
// loops' outer input) or the earliest child, or its window's start if
// that is earlier; it ends no earlier than its last event, any input, or
// its start plus its active time (bounded by its window's end). Then its
// phase boundaries: a blocking operator first emits once its input has
// ended (and after its own spill warnings); a hybrid's build ends once the
// build input has, and no later than the probe input's first event; a
// streaming operator first emits when its inputs first do. A re-executed
// operator is one consume→emit cycle per execution: drawn one by one where
// repeated windows show them, else one "reexecuted" phase — never one
// consume phase over the whole run.
//
// Top-down, every operator is fitted into what its parent's phases allow
// (a build input within the build phase, a probe input after it, a
// blocking operator's input within its consume phase, a nested loops'
// inner input after the outer input's first row, the inputs of Sequence
// and Concatenation one after another): times resting on events are kept,
// the rest is clamped, an input whose last row is its parent's last
// stretches to its parent's end, and an operator with nothing of its own
// is placed there (TimeSource "parent"). Operators that never ran are
// not placed at all. All times lie in [stmtStart, stmtEnd].
func (m *matcher) phases(stmtStart, stmtEnd int64) []Operator {
	p := &planner{m: m, lo: stmtStart, hi: stmtEnd, times: make(map[*showplan.Operator]*opTimes, len(m.ops)), atEnd: m.profilesAtEnd}
	for _, info := range m.ops {
		p.bottomUp(info.op)
	}
	for _, info := range m.ops {
		// Roots: the statement's, or an operator whose parent is outside
		// the statement.
		if op := info.op; op.Parent == nil || p.times[op.Parent] == nil {
			p.fitRoot(op)
		}
	}
	m.cycleNotes = p.cycleCap
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
	p.evidence(op, info, kids, t)
	if !t.evidence {
		t.start, t.end, t.firstEmit, t.buildEnd, t.source = p.lo, p.lo, p.lo, p.lo, srcParent
		return t
	}
	p.span(op, info, kids, t)
	p.settle(op, t, math.MaxInt64)
	if info != nil && !p.atEnd {
		p.cyclesFrom(op, info, kids, t)
	}
	return t
}

// evidence gathers what the operator and its subtree have: events (hard),
// windows, active time, spill warnings.
func (p *planner) evidence(op *showplan.Operator, info *opInfo, kids []*opTimes, t *opTimes) {
	if info != nil && info.hasOwn {
		t.hard, t.hardStart, t.hardEnd = true, info.own.Start, info.own.End
	}
	if info != nil && info.hasWindow {
		t.win, t.winS, t.winE = true, info.win.Start, info.win.End
	}
	if info != nil && info.spilled {
		t.spilled, t.spillAt = true, info.spillAt
	}
	t.evidence = t.hard || t.win
	for _, k := range kids {
		if k.notExecuted {
			continue
		}
		t.evidence = t.evidence || k.evidence
		if k.hard {
			if !t.hard {
				t.hard, t.hardStart, t.hardEnd = true, k.hardStart, k.hardEnd
			}
			t.hardStart, t.hardEnd = min(t.hardStart, k.hardStart), max(t.hardEnd, k.hardEnd)
		}
	}
	t.dur, t.durSrc = activeTime(op, info)
}

// activeTime is the operator's longest thread's active time in µs: the sum
// of that thread's query_thread_profile total_time_us (one event per
// execution when they fire as operators close), or its ActualElapsedms,
// whichever is longer. Row mode counts the inputs' time in.
func activeTime(op *showplan.Operator, info *opInfo) (int64, string) {
	var best int64
	src := ""
	if info != nil && len(info.windows) > 0 {
		per := map[int]int64{}
		for _, w := range info.windows {
			per[w.thread] += w.end - w.start
		}
		for _, d := range per {
			if d > best {
				best, src = d, srcProfile
			}
		}
	}
	for _, c := range op.Threads {
		if c.HasTiming && c.ElapsedMs*1000 > best {
			best, src = c.ElapsedMs*1000, srcPlan
		}
	}
	return best, src
}

// reliable: the child's times can be built on. Times resting on events or
// a placement can; a window alone can only where the windows were taken
// when operators closed, not all at the end of the query.
func (p *planner) reliable(k *opTimes) bool {
	return !k.notExecuted && (k.hard || k.placed || (k.evidence && !p.atEnd))
}

// span sets start, end and source from the operator's own evidence and
// its reliable children.
func (p *planner) span(op *showplan.Operator, info *opInfo, kids []*opTimes, t *opTimes) {
	have := false
	take := func(v int64) {
		if !have || v < t.start {
			t.start = v
		}
		have = true
	}
	if info != nil && info.hasOwn {
		take(info.own.Start)
	}
	if d := p.drivingChild(op, kids); d != nil {
		take(d.start)
	}
	for _, k := range kids {
		if k.hard && !k.notExecuted {
			// every input's events lie inside the operator
			take(k.hardStart)
		}
	}
	if op.Semantics.Behavior == showplan.Hybrid {
		if first, ok := p.earliestProbeEvent(op, kids); ok {
			// with no trace of the build, it still ran before probing,
			// for at least the build input's active time
			for i, c := range op.Children {
				if k := kids[i]; slices.Contains(op.Semantics.BlockingInputs, c.NodeID) && !p.reliable(k) && !k.notExecuted && k.dur > 0 {
					take(first - k.dur)
				}
			}
		}
	}
	if t.win {
		// opened by then at the latest
		take(t.winS)
	}
	if !have {
		// only unreliable inputs: take what they say, to be fitted later
		for _, k := range kids {
			if k.evidence && !k.notExecuted {
				take(k.start)
			}
		}
	}
	t.end, t.endSource = t.start, srcDerived
	later := func(v int64, src string) {
		if v > t.end {
			t.end, t.endSource = v, src
		}
	}
	if info != nil && info.hasOwn {
		t.end, t.endSource = max(t.end, info.own.End), srcEvents
	}
	for _, k := range kids {
		if p.reliable(k) {
			later(k.end, k.endSource)
		}
	}
	if t.dur > 0 {
		est, src := t.start+t.dur, t.durSrc
		if t.win && t.winE < est {
			est, src = t.winE, srcProfile
		}
		later(est, src)
	} else if t.win && !t.hard && !p.atEnd {
		later(t.winE, srcProfile)
	}
	t.start = clamp(t.start, p.lo, p.hi)
	t.end = clamp(t.end, t.start, max(p.hi, t.start))
	switch {
	case info != nil && info.hasOwn:
		t.source = srcEvents
	case t.hard:
		t.source = srcDerived
	case t.win:
		t.source = srcProfile
	default:
		t.source = srcDerived
	}
}

// settle sets firstEmit and buildEnd by the operator's semantics from its
// children's times (as far as they are known), within [start, end].
// emitBy bounds the first emit from above: a consumer's event that needed
// a row of it (the inner input of a nested loops it is the outer input
// of).
func (p *planner) settle(op *showplan.Operator, t *opTimes, emitBy int64) {
	kids := p.kidTimes(op)
	n := consumeCycles(t.execs, t.rebinds, t.rewinds)
	oneOfMany := t.reexecuted() && n > 1
	switch op.Semantics.Behavior {
	case showplan.Blocking:
		p.settleBlocking(op, t, kids, emitBy)
		if oneOfMany {
			// One of n cycles, not the whole run: its first rows leave
			// when the first execution's input has been read.
			t.firstEmit, t.emitSource = t.start+(t.end-t.start)/n, srcEstimate
		}
		t.firstEmit = clamp(t.firstEmit, t.start, t.end)
		t.buildEnd = t.firstEmit
	case showplan.Hybrid:
		p.settleHybrid(op, t, kids, oneOfMany, n)
	default:
		t.firstEmit, t.emitSource = t.start, srcDerived
		if len(kids) == 0 {
			t.emitSource = t.source
		}
		switch {
		case strings.EqualFold(op.PhysicalOp, "Concatenation"):
			for i, c := range op.Children {
				if p.ready(kids[i]) && !c.InExpression {
					t.firstEmit = kids[i].firstEmit
					break
				}
			}
		default:
			for _, k := range rowInputs(op, kids) {
				if p.ready(k) {
					t.firstEmit = max(t.firstEmit, k.firstEmit)
				}
			}
		}
		t.firstEmit = clamp(t.firstEmit, t.start, t.end)
		t.buildEnd = t.firstEmit
	}
}

// settleBlocking: the first row leaves once the input has ended and the
// operator's own spill warnings (it spills while it reads) have fired;
// without a trace of the input, after the input's active time.
func (p *planner) settleBlocking(op *showplan.Operator, t *opTimes, kids []*opTimes, emitBy int64) {
	blocking := op.Semantics.BlockingInputs
	floor, found := int64(0), false // what events require
	lower := int64(0)
	src := srcDerived
	for i, c := range op.Children {
		k := kids[i]
		if !p.reliable(k) || (len(blocking) > 0 && !slices.Contains(blocking, c.NodeID)) || (len(blocking) == 0 && c.InExpression) {
			continue
		}
		if !found || k.end > lower {
			lower, src = k.end, k.endSource
		}
		if k.hard {
			floor = max(floor, k.hardEnd)
		}
		found = true
	}
	if !found {
		lower, src = p.estimatedSplit(op, t.start, t.end)
	}
	if t.spilled && t.spillAt >= lower {
		lower, src = t.spillAt, srcEvents
	}
	if t.spilled {
		floor = max(floor, t.spillAt)
	}
	if emitBy < lower {
		// a consumer already had a row: the first emit was no later
		lower, src = max(emitBy, floor), srcEvents
	}
	t.firstEmit, t.emitSource = lower, src
}

// settleHybrid: the build phase ends once the build input has ended, and
// no later than the probe input's first event; with no trace of the
// build, when probing began, or after the build input's active time. The
// first row leaves once the build ended and a probe row arrived.
func (p *planner) settleHybrid(op *showplan.Operator, t *opTimes, kids []*opTimes, oneOfMany bool, n int64) {
	blocking := op.Semantics.BlockingInputs
	probeFirst, probed := p.earliestProbeEvent(op, kids)
	var b *opTimes
	for i, c := range op.Children {
		if slices.Contains(blocking, c.NodeID) {
			if k := kids[i]; p.reliable(k) && (b == nil || k.end > b.end) {
				b = k
			}
		}
	}
	switch {
	case b != nil:
		t.buildEnd, t.buildSource = b.end, b.endSource
		if probed && probeFirst <= t.buildEnd {
			// probing had begun: the build was over, unless its own
			// events say otherwise
			t.buildEnd, t.buildSource = probeFirst, srcEvents
			if b.hard && b.hardEnd > probeFirst {
				t.buildEnd = b.hardEnd
			}
		}
	case probed:
		// The build left no trace: it ended when probing began.
		t.buildEnd, t.buildSource = probeFirst, srcEvents
	default:
		t.buildEnd, t.buildSource = p.estimatedSplit(op, t.start, t.end)
		if probed {
			t.buildEnd = min(t.buildEnd, probeFirst)
		}
	}
	if oneOfMany {
		t.buildEnd, t.buildSource = t.start+(t.end-t.start)/n, srcEstimate
	}
	t.buildEnd = clamp(t.buildEnd, t.start, t.end)
	t.firstEmit, t.emitSource = t.buildEnd, t.buildSource
	for i, c := range op.Children {
		if k := kids[i]; !slices.Contains(blocking, c.NodeID) && !c.InExpression && p.ready(k) && k.firstEmit > t.firstEmit {
			t.firstEmit, t.emitSource = k.firstEmit, srcDerived
		}
	}
	t.firstEmit = clamp(t.firstEmit, t.buildEnd, t.end)
}

// earliestProbeEvent is when the hybrid's streaming (probe) inputs were
// first seen working: their subtrees' first event, or where windows were
// taken as operators closed, a window's start (it was working then).
func (p *planner) earliestProbeEvent(op *showplan.Operator, kids []*opTimes) (int64, bool) {
	var first int64
	ok := false
	for i, c := range op.Children {
		k := kids[i]
		if slices.Contains(op.Semantics.BlockingInputs, c.NodeID) || c.InExpression || k.notExecuted || !p.reliable(k) || k.placed {
			continue
		}
		at := k.start
		if k.hard {
			at = k.hardStart
		}
		if !ok || at < first {
			first = at
		}
		ok = true
	}
	return first, ok
}

// fitRoot fits a root operator into the statement. A root with a window
// worked until its window's end: it is closed when the query ends.
func (p *planner) fitRoot(op *showplan.Operator) {
	t := p.times[op]
	if t.notExecuted {
		return
	}
	stretch := int64(math.MinInt64)
	if t.win {
		stretch = t.winE
	}
	lo := p.lo
	if t.evidence && !t.hard {
		// Only windows: the plan started by its root's window's start
		// (not necessarily with the statement: a memory grant wait
		// comes first). Its active time spans nearly all of it.
		lo = t.start
	}
	p.fit(op, lo, p.hi, stretch, math.MaxInt64)
}

// fit puts an operator inside [lo, hi], the window its parent's phases
// allow, and then its children inside its own phases. Times resting on
// events are kept even where they disagree; an operator without them is
// placed. stretchTo is where its last row was at the latest (its parent's
// end, when it is an input whose last row is the parent's last):
// MinInt64 when nothing says so. emitBy bounds its first emit.
func (p *planner) fit(op *showplan.Operator, lo, hi, stretchTo, emitBy int64) {
	t := p.times[op]
	if t.notExecuted {
		return
	}
	hi = max(lo, hi)
	consumed := stretchTo != math.MinInt64 // its rows are taken as they come until its parent is done
	switch {
	case !t.evidence || (!t.hard && p.atEnd):
		// nothing of its own says when: placed where its parent allows,
		// for its active time if it is not taken until its parent's end
		t.start, t.end, t.source, t.placed, t.endSource = lo, hi, srcParent, true, srcParent
		if !consumed && t.dur > 0 {
			t.end = min(hi, lo+t.dur)
		}
	case !t.hard:
		// only windows taken as operators closed: it worked no later
		// than its window's end; taken as it goes, it worked from when
		// its parent allows, else for its active time before that end
		d := t.dur
		if d == 0 {
			d = t.end - t.start
		}
		t.end = clamp(t.end, lo, hi) // its (or its inputs') windows' end
		t.start = lo
		if !consumed {
			t.start = clamp(t.end-d, lo, t.end)
		}
		t.placed, t.source, t.endSource = true, srcProfile, srcProfile
	default:
		t.start = min(max(t.start, lo), t.hardStart)
		if t.end > hi {
			// its parent's phase was over: it was too
			t.end, t.endSource = max(hi, t.hardEnd), srcParent
			if t.end == t.hardEnd {
				t.endSource = srcEvents
			}
		}
		t.end = max(t.end, t.start)
		if consumed {
			to := min(stretchTo, hi)
			if t.win && !p.atEnd {
				to = min(to, max(t.winE, t.hardEnd))
			}
			if to > t.end {
				t.end, t.endSource = to, srcParent
			}
		}
	}
	if t.placed && consumed && t.source == srcParent {
		t.end = max(t.end, min(stretchTo, hi))
	}
	t.end = max(t.end, t.start)
	for i := range t.cycles {
		c := &t.cycles[i]
		c.Start, c.End = clamp(c.Start, t.start, t.end), clamp(c.End, t.start, t.end)
		c.FirstEmit = clamp(c.FirstEmit, c.Start, c.End)
	}
	p.settle(op, t, emitBy)
	if emitBy < t.firstEmit && op.Semantics.Behavior != showplan.Blocking {
		// its first row had been taken by then, whatever its own events
		// (they may lie with another operator on the same object)
		if op.Semantics.Behavior == showplan.Streaming {
			t.start = min(t.end, max(lo, min(t.start, emitBy)))
		}
		floor := t.start
		if op.Semantics.Behavior == showplan.Hybrid {
			floor = t.buildEnd
		}
		t.firstEmit, t.emitSource = clamp(max(floor, min(t.firstEmit, emitBy)), t.start, t.end), srcEvents
		if op.Semantics.Behavior == showplan.Streaming {
			t.buildEnd = t.firstEmit
		}
	}
	p.applyCycles(op, t)
	p.fitKids(op, t)
	p.resettle(op, t, emitBy)
	p.applyCycles(op, t)
}

// fitKids fits op's children into what its phases allow: a blocking
// operator's inputs within its consume phase, a hybrid's build inputs
// within the build and the others after it, a nested loops' inner inputs
// after the outer's first row, Sequence's and Concatenation's inputs one
// after another; scalar subqueries anywhere in its span.
func (p *planner) fitKids(op *showplan.Operator, t *opTimes) {
	inputs := op.Inputs()
	blocking := op.Semantics.BlockingInputs
	phys := op.PhysicalOp
	sequential := phys == "Concatenation" || phys == "Sequence"
	nested := phys == "Nested Loops" && len(inputs) > 1
	oneOfMany := t.reexecuted() && consumeCycles(t.execs, t.rebinds, t.rewinds) > 1
	prevEnd := t.start
	for _, c := range op.Children {
		ct := p.times[c]
		if ct.notExecuted {
			continue
		}
		lo, hi, stretch, emitBy := t.start, t.end, t.end, int64(math.MaxInt64)
		if op.Semantics.Behavior == showplan.Streaming && t.emitSource == srcEvents {
			// rows leave an input before they leave the operator, whose
			// first row events showed taken
			emitBy = t.firstEmit
		}
		switch {
		case c.InExpression:
			stretch, emitBy = math.MinInt64, math.MaxInt64
		case op.Semantics.Behavior == showplan.Blocking:
			hi = t.firstEmit
			if oneOfMany {
				hi = t.end
			}
			stretch = math.MinInt64 // it ended before the operator sorted, spilled, aggregated
		case op.Semantics.Behavior == showplan.Hybrid && slices.Contains(blocking, c.NodeID) && !sequential:
			hi, stretch = t.buildEnd, t.buildEnd
		case op.Semantics.Behavior == showplan.Hybrid && !sequential:
			lo = t.buildEnd
		case sequential:
			lo = prevEnd
			if c != inputs[len(inputs)-1] {
				stretch = math.MinInt64
			}
			if c != inputs[0] {
				emitBy = math.MaxInt64
			}
		case nested && c != inputs[0]:
			lo = p.times[inputs[0]].firstEmit
		case nested:
			// the outer input's first row came before the inner input
			// was first seen (its first event, or opened by its window)
			for _, in := range inputs[1:] {
				if it := p.times[in]; !it.notExecuted && it.evidence && (it.hard || !p.atEnd) {
					emitBy = min(emitBy, it.start)
				}
			}
		}
		lo = clamp(lo, t.start, t.end)
		p.fit(c, lo, max(lo, min(hi, t.end)), stretch, emitBy)
		if !c.InExpression {
			prevEnd = ct.end
		}
	}
}

// resettle updates the first emit that rests on the (now fitted) inputs'.
func (p *planner) resettle(op *showplan.Operator, t *opTimes, emitBy int64) {
	kids := p.kidTimes(op)
	switch op.Semantics.Behavior {
	case showplan.Blocking:
		return
	case showplan.Hybrid:
		for i, c := range op.Children {
			if k := kids[i]; !slices.Contains(op.Semantics.BlockingInputs, c.NodeID) && !c.InExpression && p.ready(k) && k.firstEmit > t.firstEmit {
				t.firstEmit, t.emitSource = k.firstEmit, srcDerived
			}
		}
		t.firstEmit = clamp(t.firstEmit, t.buildEnd, t.end)
		return
	}
	if len(op.Children) > 0 {
		p.settle(op, t, emitBy)
	}
}

func (p *planner) kidTimes(op *showplan.Operator) []*opTimes {
	kids := make([]*opTimes, len(op.Children))
	for i, c := range op.Children {
		kids[i] = p.times[c]
	}
	return kids
}

// ready: the child's times are known, from evidence or placement.
func (p *planner) ready(k *opTimes) bool { return p.reliable(k) }

// estimatedSplit is where a blocking or hybrid operator's input phase ends
// when no event shows it: after the blocking input's active time (its
// query_thread_profile total or ActualElapsedms; row mode counts the
// subtree), else halfway.
func (p *planner) estimatedSplit(op *showplan.Operator, start, end int64) (int64, string) {
	for _, c := range op.Children {
		if !slices.Contains(op.Semantics.BlockingInputs, c.NodeID) {
			continue
		}
		if ct := p.times[c]; ct != nil && ct.dur > 0 {
			return clamp(start+ct.dur, start, end), ct.durSrc
		}
		break
	}
	return start + (end-start)/2, srcEstimate
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
	p.applyCycles(op, t)
}

// applyCycles ties the first emit to the first execution the events show:
// a blocking or hybrid operator's first rows leave when its first cycle
// stops consuming; a streaming one's first cycle still waits for its
// inputs' first rows.
func (p *planner) applyCycles(op *showplan.Operator, t *opTimes) {
	if len(t.cycles) < 2 {
		return
	}
	first := &t.cycles[0]
	if op.Semantics.Behavior == showplan.Streaming {
		first.FirstEmit = clamp(t.firstEmit, first.Start, first.End)
		return
	}
	t.firstEmit = clamp(first.FirstEmit, t.start, t.end)
	t.buildEnd = t.firstEmit
	t.emitSource, t.buildSource = srcProfile, srcProfile
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
		ID: op.NodeID, PhysicalOp: op.PhysicalOp, LogicalOp: op.LogicalOp, Name: op.DisplayName,
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
	o.Threads = p.threadBars(op, info, t)
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

// phasesOf lays out an executed operator's phases. Each phase's Source
// says what its boundary with the neighbouring phase rests on.
func phasesOf(op *showplan.Operator, t *opTimes) []Phase {
	behavior := op.Semantics.Behavior
	if len(t.cycles) > 1 {
		var ph []Phase
		for _, c := range t.cycles {
			switch behavior {
			case showplan.Blocking:
				ph = append(ph, Phase{Kind: PhaseConsume, Start: c.Start, End: c.FirstEmit, Execution: c.Execution, Source: srcProfile},
					Phase{Kind: PhaseEmit, Start: c.FirstEmit, End: c.End, Execution: c.Execution, Source: srcProfile})
			case showplan.Hybrid:
				ph = append(ph, Phase{Kind: PhaseBuild, Start: c.Start, End: c.FirstEmit, Execution: c.Execution, Source: srcProfile},
					Phase{Kind: PhaseProbe, Start: c.FirstEmit, End: c.End, Execution: c.Execution, Source: srcProfile})
			default:
				ph = append(ph, Phase{Kind: PhaseEmit, Start: c.FirstEmit, End: c.End, Execution: c.Execution, Source: srcProfile})
			}
		}
		return ph
	}
	if t.execs > 1 {
		n := consumeCycles(t.execs, t.rebinds, t.rewinds)
		if behavior == showplan.Blocking && n == 1 {
			// Read once, replayed: a spool or sort rewound by its nested
			// loops.
			return []Phase{{Kind: PhaseConsume, Start: t.start, End: t.firstEmit, Source: t.emitSource},
				{Kind: PhaseEmit, Start: t.firstEmit, End: t.end, Executions: t.execs, Source: t.emitSource}}
		}
		return []Phase{{Kind: PhaseReexecuted, Start: t.start, End: t.end, Executions: t.execs, Source: t.source}}
	}
	switch behavior {
	case showplan.Blocking:
		return []Phase{{Kind: PhaseConsume, Start: t.start, End: t.firstEmit, Source: t.emitSource},
			{Kind: PhaseEmit, Start: t.firstEmit, End: t.end, Source: t.emitSource}}
	case showplan.Hybrid:
		return []Phase{{Kind: PhaseBuild, Start: t.start, End: t.buildEnd, Source: t.buildSource},
			{Kind: PhaseProbe, Start: t.buildEnd, End: t.end, Source: t.buildSource}}
	}
	return []Phase{{Kind: PhaseEmit, Start: t.firstEmit, End: t.end, Source: t.emitSource}}
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
// reliable children count.
func (p *planner) drivingChild(op *showplan.Operator, kids []*opTimes) *opTimes {
	if op.Semantics.Behavior == showplan.Hybrid {
		for i, c := range op.Children {
			if slices.Contains(op.Semantics.BlockingInputs, c.NodeID) && p.reliable(kids[i]) {
				return kids[i]
			}
		}
	}
	if strings.EqualFold(op.PhysicalOp, "Nested Loops") {
		for i, c := range op.Children {
			if !c.InExpression {
				if p.reliable(kids[i]) {
					return kids[i]
				}
				break
			}
		}
	}
	var earliest *opTimes
	for _, k := range kids {
		if p.reliable(k) && (earliest == nil || k.start < earliest.start) {
			earliest = k
		}
	}
	return earliest
}

func clamp(v, lo, hi int64) int64 {
	return min(max(v, lo), hi)
}
