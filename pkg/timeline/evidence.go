package timeline

import (
	"fmt"
	"math"
)

// What each operator's own events say, and when query_thread_profile
// fired.
//
// A query_thread_profile window is [timestamp − total_time_us, timestamp].
// Where the event fires as the operator closes (docs/design/tracing.md §10) the
// window lies inside the time the operator was open; where every event
// fires when the query ends (docs/design/event-fields.md §3.4: one event per
// operator and thread when the query ends, unverified) the window sits at
// the end, whatever the operator did. Either way the operator was opened
// by the window's start and worked no later than its end, and
// total_time_us is its active time: windows bound operators, events place
// them.

// detectProfilesAtEnd sets profilesAtEnd when every window (at least two)
// ended within TimingLimitUs of each other at the end of the statement:
// they fired together as the query ended, so their positions say nothing
// about when the operators worked.
func (m *matcher) detectProfilesAtEnd(stmtEnd int64) {
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	n := 0
	for _, o := range m.ops {
		for _, w := range o.windows {
			first, last = min(first, w.end), max(last, w.end)
			n++
		}
	}
	if n < 2 || last-first > TimingLimitUs || stmtEnd-last > TimingLimitUs {
		return
	}
	m.profilesAtEnd = true
	m.notes = append(m.notes, fmt.Sprintf("query_thread_profile: all %d events fired within %d µs as the query ended; their windows give operators' active times and bounds, not positions", n, last-first))
}

// collectOwn records each operator's first and last matched event and its
// last spill warning. Ambiguous matches never count. The first pass
// (withTiming unset) leaves out what timing decided — matches by timing
// alone and among several operators on one object — as windows alone
// decided them. The second pass counts every event matched to an
// operator, waits and spills by timing included: an event the trace
// gives to an operator happened while it worked, so its span holds it
// (issue 26: a scan placed by its window or its parent ended before the
// last read it was given, and its Sort emitted before that read).
//
// Page events, most of a trace, are noted where their lanes are walked
// anyway (notePages): as fillLanes fills them for the first pass, as
// rematch revisits them for the second; the order of notes does not
// matter. Callers that did not note them pass pagesNoted false.
func (m *matcher) collectOwn(l *Lanes, withTiming, pagesNoted bool) {
	if !pagesNoted {
		m.resetOwn()
		m.notePages(l.Read, withTiming)
		m.notePages(l.Write, withTiming)
	}
	note := func(mt Match, t, end int64) { m.noteOwn(&mt, t, end, withTiming) }

	for _, e := range l.Lock {
		// an unreleased lock was still acquired then (its end is the
		// statement's, not evidence)
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Log {
		if e.Kind == "record" {
			note(e.Match, e.T, e.T)
		}
	}
	for _, e := range l.Split {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.IO {
		note(e.Match, e.T, e.End)
	}
	if withTiming {
		for _, e := range l.Wait {
			note(e.Match, e.T, e.T)
		}
	}
	for _, e := range l.Memory {
		if e.Rule != RuleNodeID && !(withTiming && e.Spill) {
			continue
		}
		note(e.Match, e.T, e.T)
		if o := m.byID[int(e.NodeID)]; o != nil && e.Spill {
			o.spilled, o.spillAt = true, max(o.spillAt, e.T)
		}
	}
	if withTiming {
		m.buildEndsBeforeProbe(l)
	}
}

// resetOwn forgets what a previous collectOwn found.
func (m *matcher) resetOwn() {
	for _, o := range m.ops {
		o.hasOwn, o.own, o.spilled, o.spillAt = false, Window{}, false, 0
		o.hasStrict, o.strictEnd = false, 0
	}
}

// notePages notes page events for collectOwn.
func (m *matcher) notePages(es []PageEvent, withTiming bool) {
	for i := range es {
		m.noteOwn(&es[i].Match, es[i].T, es[i].T, withTiming)
	}
}

// noteOwn notes one event, from t to end, matched by mt.
func (m *matcher) noteOwn(mt *Match, t, end int64, withTiming bool) {
	n := mt.NodeID
	if n < 0 || mt.Ambiguous || (!withTiming && (mt.Rule == RuleTiming || mt.Rule == RuleObjectTiming)) {
		return
	}
	o := m.node(n)
	if o == nil {
		return
	}
	if mt.Rule != RuleTiming {
		o.strictEnd, o.hasStrict = max(o.strictEnd, end), true
	}
	if !o.hasOwn {
		o.hasOwn, o.own = true, Window{t, end}
		return
	}
	o.own.Start = min(o.own.Start, t)
	o.own.End = max(o.own.End, end)
}

// buildEndsBeforeProbe gives a hash join's probe input the events that
// timing alone gave its build input after the probe input's first own
// event: the probe input does not start before the build has consumed its
// input, so such an event (a wait or read the timing gave to the wrong
// child) is the probe side's. What the build input owns by object or node
// id stays.
func (m *matcher) buildEndsBeforeProbe(l *Lanes) {
	for _, o := range m.ops {
		if !o.hash || len(o.op.Children) < 2 {
			continue
		}
		build, probe := m.byID[o.op.Children[0].NodeID], m.byID[o.op.Children[1].NodeID]
		if build == nil || probe == nil || !build.hasOwn || !probe.hasOwn {
			continue
		}
		m.probeStartsAfterBuild(l, o, build, probe)
		if build.own.End <= probe.own.Start {
			continue
		}
		bn, pn := NodeID(o.op.Children[0].NodeID), NodeID(o.op.Children[1].NodeID)
		last, moved := build.own.Start, false
		if build.hasStrict {
			last = max(last, build.strictEnd)
		}
		l.eachTimed(func(t int64, mt *Match) {
			if mt.NodeID != bn || mt.Ambiguous {
				return
			}
			if mt.Rule == RuleTiming && t > probe.own.Start && (!build.hasStrict || t > build.strictEnd) {
				mt.NodeID, moved = pn, true
				probe.own.End = max(probe.own.End, t)
				return
			}
			last = max(last, t)
		})
		if moved {
			build.own.End = last
		}
	}
}

// probeStartsAfterBuild gives a hash join's build input the events that
// timing alone gave its probe input before the build input's last event
// matched by object or node id: the build was still consuming then, so
// the probe input had not started.
func (m *matcher) probeStartsAfterBuild(l *Lanes, o, build, probe *opInfo) {
	if !build.hasStrict || probe.own.Start >= build.strictEnd {
		return
	}
	bn, pn := NodeID(o.op.Children[0].NodeID), NodeID(o.op.Children[1].NodeID)
	first, kept, moved := int64(0), false, false
	l.eachTimed(func(t int64, mt *Match) {
		if mt.NodeID != pn || mt.Ambiguous {
			return
		}
		if mt.Rule == RuleTiming && t < build.strictEnd {
			mt.NodeID, moved = bn, true
			build.own.Start = min(build.own.Start, t)
			return
		}
		if !kept || t < first {
			first, kept = t, true
		}
	})
	if moved && kept {
		probe.own.Start = first
	}
}

// eachTimed calls f with the time and match of every event-lane entry.
func (l *Lanes) eachTimed(f func(t int64, m *Match)) {
	for i := range l.Read {
		f(l.Read[i].T, &l.Read[i].Match)
	}
	for i := range l.Write {
		f(l.Write[i].T, &l.Write[i].Match)
	}
	for i := range l.Lock {
		f(l.Lock[i].T, &l.Lock[i].Match)
	}
	for i := range l.Wait {
		f(l.Wait[i].T, &l.Wait[i].Match)
	}
	for i := range l.Memory {
		f(l.Memory[i].T, &l.Memory[i].Match)
	}
	for i := range l.Split {
		f(l.Split[i].T, &l.Split[i].Match)
	}
	for i := range l.Log {
		f(l.Log[i].T, &l.Log[i].Match)
	}
	for i := range l.IO {
		f(l.IO[i].T, &l.IO[i].Match)
	}
}

// useSpans makes timing matches compare events with when each executed
// operator worked, as a first pass worked it out from events and windows.
func (m *matcher) useSpans(ops []Operator) {
	m.bySpans = true
	m.cands = map[candKey]*candSet{}
	m.nRecent = 0
	for _, o := range ops {
		info := m.byID[o.ID]
		if info == nil || o.NotExecuted {
			continue
		}
		switch {
		case o.TimeSource != srcParent:
			info.hasAct, info.act = true, Window{o.Start, o.End}
		case activeTimeKnown(info):
			// placed by its parent's semantics for its active time: a
			// weaker hint, whatever it decides is low
			info.hasAct, info.act, info.actPlaced = true, Window{o.Start, o.End}, true
		}
		// An operator its parent merely placed, with no active time, did
		// not show when it worked: it gets no timing window.
	}
}

// rematch matches again, against the operators' worked spans, every event
// that timing decided or could not decide: waits, spills without a node
// id, data events whose object several operators touch, and data events
// whose object the catalog does not know (file I/O keeps its first match:
// its entry does not hold its object).
func (m *matcher) rematch(l *Lanes) {
	retry := func(mt Match, obj ObjectRef) bool {
		// and data the catalog does not know that windows could not place
		return mt.Rule == RuleObjectTiming || mt.Rule == RuleTiming || mt.Ambiguous || (obj == 0 && mt.Rule == RuleUnmatched)
	}
	// The page lanes are noted for collectOwn's second pass as they are
	// revisited.
	m.resetOwn()
	for _, lane := range [][]PageEvent{l.Read, l.Write} {
		// Runs of a lane's events share an object: its candidate set is
		// kept across them rather than looked up for each (issue 26
		// performance).
		var obj ObjectRef
		var p pool
		var set *candSet
		for i := range lane {
			e := &lane[i]
			if retry(e.Match, e.Object) {
				switch ep := pagePool(e.DatabaseID); {
				case e.Object == 0:
					e.Match = m.matchData(nil, e.T, ep)
				default:
					if set == nil || e.Object != obj || ep != p {
						obj, p, set = e.Object, ep, m.candidatesFor(l.ObjectOf(e.Object), objectPool(ep))
					}
					e.Match = m.matchSet(set, e.T)
				}
			}
			m.noteOwn(&e.Match, e.T, e.T, true)
		}
	}
	for i := range l.Lock {
		if e := &l.Lock[i]; retry(e.Match, e.Object) {
			e.Match = m.matchData(l.ObjectOf(e.Object), e.T, poolAccessOrModify)
		}
	}
	for i := range l.Split {
		if e := &l.Split[i]; retry(e.Match, e.Object) {
			e.Match = m.matchData(l.ObjectOf(e.Object), e.T, poolModify)
		}
	}
	for i := range l.Log {
		if e := &l.Log[i]; e.Kind == "record" && retry(e.Match, e.Object) {
			e.Match = m.matchData(l.ObjectOf(e.Object), e.T, poolModify)
		}
	}
	for i := range l.Wait {
		if e := &l.Wait[i]; e.Rule != RuleNodeID {
			e.Match = m.matchTiming(e.T, poolAll)
		}
	}
	for i := range l.Memory {
		if e := &l.Memory[i]; e.Spill && e.Rule != RuleNodeID {
			e.Match = m.matchTiming(e.T, spillPool(e.Kind))
		}
	}
}

// activeTimeKnown: query_thread_profile or the runtime counters report how
// long the operator was active.
func activeTimeKnown(info *opInfo) bool {
	d, _ := activeTime(info.op, info)
	return d > 0
}
