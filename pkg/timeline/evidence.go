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
func (m *matcher) collectOwn(l *Lanes, withTiming bool) {
	for _, o := range m.ops {
		o.hasOwn, o.own, o.spilled, o.spillAt = false, Window{}, false, 0
	}
	note := func(mt Match, t, end int64) {
		n := mt.NodeID
		if n < 0 || mt.Ambiguous || (!withTiming && (mt.Rule == RuleTiming || mt.Rule == RuleObjectTiming)) {
			return
		}
		o := m.byID[int(n)]
		if o == nil {
			return
		}
		if !o.hasOwn {
			o.hasOwn, o.own = true, Window{t, end}
			return
		}
		o.own.Start = min(o.own.Start, t)
		o.own.End = max(o.own.End, end)
	}
	for _, e := range l.Read {
		note(e.Match, e.T, e.T)
	}
	for _, e := range l.Write {
		note(e.Match, e.T, e.T)
	}
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
}

// useSpans makes timing matches compare events with when each executed
// operator worked, as a first pass worked it out from events and windows.
func (m *matcher) useSpans(ops []Operator) {
	m.bySpans = true
	m.cands = map[candKey]*candSet{}
	m.lastCand = nil
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
	retry := func(mt Match, obj *ObjectName) bool {
		// and data the catalog does not know that windows could not place
		return mt.Rule == RuleObjectTiming || mt.Rule == RuleTiming || mt.Ambiguous || (obj == nil && mt.Rule == RuleUnmatched)
	}
	for i := range l.Read {
		if e := &l.Read[i]; retry(e.Match, e.Object) {
			e.Match = m.matchData(e.Object, e.T, pagePool(e.DatabaseID))
		}
	}
	for i := range l.Write {
		if e := &l.Write[i]; retry(e.Match, e.Object) {
			e.Match = m.matchData(e.Object, e.T, pagePool(e.DatabaseID))
		}
	}
	for i := range l.Lock {
		if e := &l.Lock[i]; retry(e.Match, e.Object) {
			e.Match = m.matchData(e.Object, e.T, poolAccessOrModify)
		}
	}
	for i := range l.Split {
		if e := &l.Split[i]; retry(e.Match, e.Object) {
			e.Match = m.matchData(e.Object, e.T, poolModify)
		}
	}
	for i := range l.Log {
		if e := &l.Log[i]; e.Kind == "record" && retry(e.Match, e.Object) {
			e.Match = m.matchData(e.Object, e.T, poolModify)
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
