package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Build orders the events, pairs them, ties them to operators and works out
// the operators' phases. The Builder must not be used afterwards.
func (b *Builder) Build() (*Trace, error) {
	tr := &Trace{Schema: Schema, Summary: Summary{
		Lanes:         map[string]int{},
		Unmatched:     map[string]int{},
		Ambiguous:     map[string]int{},
		Other:         b.other,
		TimingLimitUs: TimingLimitUs,
	}}
	if len(b.other) == 0 {
		tr.Summary.Other = nil
	}
	if b.stmt != nil {
		tr.Statement = b.stmt.Text
	}
	zeroNs := b.clock(tr)
	tr.Summary.Events = len(b.recs)
	if len(b.recs) > 0 {
		tr.ZeroTime = time.Unix(0, zeroNs).UTC().Format(time.RFC3339Nano)
	}

	// The statement's extent: time zero (or the earliest event) to the
	// latest event or the batch's completion (the clock's last pass).
	tr.Start, tr.End = b.start, b.end

	m := newMatcher(b.stmt)
	for _, i := range b.profiles {
		r := b.widen(&b.recs[i])
		m.addWindow(int(r.a), int(r.b), r.t-int64(r.c), r.t)
	}
	m.markExecution()
	m.detectProfilesAtEnd(tr.End)
	m.deferTiming = true
	b.fillLanes(tr, m)
	m.deferTiming = false
	// Two passes: the operators' times from the events that name them
	// (node id, object), then timing matches against those times rather
	// than against windows, and the times again with what they added.
	m.collectOwn(&tr.Lanes, false, true) // fillLanes noted the page events
	first := m.phases(tr.Start, tr.End)
	m.useSpans(first)
	m.rematch(&tr.Lanes)
	m.collectOwn(&tr.Lanes, true, true) // rematch noted the page events
	tr.Operators = m.phases(tr.Start, tr.End)
	b.elapsed(tr)
	tr.Lanes.Plan = make([]PlanEntry, 0, len(tr.Operators))
	for _, o := range tr.Operators {
		if !o.NotExecuted {
			tr.Lanes.Plan = append(tr.Lanes.Plan, PlanEntry{T: o.Start, End: o.End, FirstEmit: o.FirstEmit, NodeID: NodeID(o.ID)})
		}
	}
	// Ties keep plan order: a parent before the children that start with it.
	sortLane(tr.Lanes.Plan, func(e PlanEntry) int64 { return e.T })
	tr.Lanes.Objects, tr.Lanes.CandidateSets = m.tables.objects, m.tables.sets
	b.summarize(tr, m)
	b.buildStacks(tr)
	tr.Summary.Notes = append(append(b.notes, m.notes...), m.cycleNotes...)
	if len(tr.Summary.Ambiguous) == 0 {
		tr.Summary.Ambiguous = nil
	}
	// The records are spent: let them go now, not with the Builder (a
	// million of them are most of its memory).
	b.recs, b.profiles, b.extras = nil, nil, extraStore{}
	return tr, nil
}

// elapsed sets the trace's one elapsed time and splits it into the
// lead-in before the first operator and the operators' own time.
func (b *Builder) elapsed(tr *Trace) {
	s := &tr.Summary
	switch {
	case b.batch.started && b.batch.done:
		s.ElapsedUs, s.ElapsedSource = b.batch.end, "batch_events"
	case b.batch.done:
		s.ElapsedUs, s.ElapsedSource = b.batch.durUs, "batch_duration"
	default:
		s.ElapsedUs, s.ElapsedSource = tr.End-tr.Start, "extent"
	}
	first, last, ran := ExecutedSpan(tr)
	if ran {
		zero := int64(0)
		if !b.batch.started {
			zero = tr.Start
		}
		s.LeadInUs, s.OperatorUs = max(first-zero, 0), last-first
	}
}

// ExecutedSpan is when the first executed operator started and the last
// one ended (ran is false when no operator ran).
func ExecutedSpan(tr *Trace) (first, last int64, ran bool) {
	for _, o := range tr.Operators {
		if o.NotExecuted {
			continue
		}
		if !ran || o.Start < first {
			first = o.Start
		}
		if !ran || o.End > last {
			last = o.End
		}
		ran = true
	}
	return first, last, ran
}

type lockKey struct {
	db, b, c, d, txn uint64
	mode, rtype      uint32
	object           bool
}

type waitKey struct {
	task     uint64
	waitType uint32
}

type ioKey struct{ db, file, offset uint64 }

// filler pairs begins with ends while fillLanes walks the records.
type filler struct {
	b        *Builder
	m        *matcher
	l        *Lanes
	locks    map[lockKey][]int
	waits    map[waitKey][]int
	ios      map[ioKey][]int
	category map[uint32]string
	pages    *pageLookup
	// lastRead and lastWrite are the page lanes' last times; unsorted
	// tells that one went back (fillLanes then sorts them).
	lastRead, lastWrite int64
	unsorted            bool
	// memo is the last page event's match with its object and pool:
	// while timing is deferred a page's match depends on nothing else,
	// and runs of reads of one index ask the same question.
	memo struct {
		ok  bool
		obj *ObjectName
		p   pool
		mt  Match
	}
}

// fillLanes walks the ordered records once, pairing begins with ends and
// matching every entry to an operator. An interval whose end was not
// captured is marked Open (never by a sentinel time: times before
// sql_batch_starting are negative) and closed at the statement end.
func (b *Builder) fillLanes(tr *Trace, m *matcher) {
	l := &tr.Lanes
	// Counted as added, before duplicates were dropped: capacities only.
	n := &b.kinds
	l.Read = make([]PageEvent, 0, n[kRead])
	l.Write = make([]PageEvent, 0, n[kWrite])
	l.Lock = make([]LockInterval, 0, n[kLockAcquired]+n[kLockReleased])
	l.Wait = make([]WaitInterval, 0, n[kWaitBegin]+n[kWaitEnd]+n[kWaitCompleted])
	l.Memory = make([]MemoryEvent, 0, n[kSpill]+n[kGrantUsage])
	l.Split = make([]SplitEvent, 0, n[kSplit])
	l.Log = make([]LogEvent, 0, n[kLogRecord]+n[kLogFlush])
	l.IO = make([]IOInterval, 0, n[kFileRead]+n[kFileReadCompleted]+n[kFileWriteCompleted])
	f := &filler{b: b, m: m, l: l, locks: map[lockKey][]int{}, waits: map[waitKey][]int{}, ios: map[ioKey][]int{}, category: map[uint32]string{},
		pages: newPageLookup(b.catalog, n[kRead]+n[kWrite]+n[kFileRead]+n[kFileReadCompleted]+n[kFileWriteCompleted])}
	m.resetOwn()
	for i := range b.recs {
		if r := &b.recs[i]; r.kind == kRead || r.kind == kWrite {
			f.page(r)
			continue
		}
		w := b.widen(&b.recs[i])
		f.add(tr, &w)
	}
	closeOpen(tr)
	l.Objects = f.m.tables.objects // rematch reads them
	if f.unsorted {
		sortLane(l.Read, func(e PageEvent) int64 { return e.T })
		sortLane(l.Write, func(e PageEvent) int64 { return e.T })
	}
	sortLane(l.Lock, func(e LockInterval) int64 { return e.T })
	sortLane(l.Wait, func(e WaitInterval) int64 { return e.T })
	sortLane(l.Memory, func(e MemoryEvent) int64 { return e.T })
	sortLane(l.Split, func(e SplitEvent) int64 { return e.T })
	sortLane(l.Log, func(e LogEvent) int64 { return e.T })
	sortLane(l.IO, func(e IOInterval) int64 { return e.T })
	sortLane(l.Escalation, func(e EscalationEvent) int64 { return e.T })
}

// escalation builds a lock_escalation's entry: its object by HoBT, else
// by object id; the statement's (an escalation counts every operator's
// locks on the object).
func (b *Builder) escalation(r *wide, tabs *laneTables) EscalationEvent {
	obj := b.catalog.hobt(r.a, r.b)
	if obj == nil && r.e != 0 {
		obj = b.catalog.object(r.a, r.e)
	}
	return EscalationEvent{T: r.t, Mode: b.strs[r.s1], ResourceType: b.strs[r.s2], Cause: b.strs[r.s3], EscalatedLock: r.c,
		HoBTLocks: r.d, Object: tabs.object(obj), Match: Match{NodeID: Unmatched, Rule: RuleStatement}, Stack: r.stack}
}

// add fills the lanes with one record that is not a page event.
func (f *filler) add(tr *Trace, r *wide) {
	b, m, l := f.b, f.m, f.l
	switch r.kind {
	case kLockAcquired, kLockReleased:
		f.lock(r)
	case kWaitBegin, kWaitEnd, kWaitCompleted:
		f.wait(r)
	case kFileRead, kFileReadCompleted, kFileWriteCompleted:
		f.io(r)
	case kSpill:
		name := b.strs[r.s1]
		e := MemoryEvent{T: r.t, Kind: name, Detail: b.strs[r.s2], GrantedMemoryKB: r.b, UsedMemoryKB: r.c, Spill: true, Stack: r.stack}
		if r.flag {
			e.Match = m.matchNode(int(r.a))
		} else {
			e.Match = m.matchTiming(r.t, spillPool(name))
		}
		l.Memory = append(l.Memory, e)
	case kGrantUsage:
		l.Memory = append(l.Memory, MemoryEvent{T: r.t, Kind: b.strs[r.s1], GrantedMemoryKB: r.b, UsedMemoryKB: r.c,
			Match: Match{NodeID: Unmatched, Rule: RuleStatement}})
	case kSplit:
		obj := b.catalog.hobt(r.a, r.d)
		if obj == nil {
			obj = b.catalog.page(r.a, r.b, r.c)
		}
		l.Split = append(l.Split, SplitEvent{T: r.t, FileID: r.b, PageID: r.c, NewFileID: r.e >> 32, NewPageID: r.e & 0xffffffff,
			Operation: b.strs[r.s1], Object: m.tables.object(obj), Match: m.matchData(obj, r.t, poolModify), Stack: r.stack})
	case kLogRecord:
		obj := b.catalog.allocUnit(r.a, r.b)
		l.Log = append(l.Log, LogEvent{T: r.t, Kind: "record", Operation: b.strs[r.s1], Context: b.strs[r.s2],
			TransactionID: int64(r.c), Size: r.d, Object: m.tables.object(obj), Match: m.matchData(obj, r.t, poolModify), Stack: r.stack})
	case kLogFlush:
		l.Log = append(l.Log, LogEvent{T: r.t, Kind: "flush", Size: r.d, Match: Match{NodeID: Unmatched, Rule: RuleStatement}, Stack: r.stack})
	case kEscalation:
		l.Escalation = append(l.Escalation, b.escalation(r, m.tables))
	case kBatchCompleted:
		tr.End = max(tr.End, r.t)
		b.batch.done, b.batch.end, b.batch.durUs = true, r.t, int64(r.a)
		tr.Summary.BatchRowCount = int64(r.b)
	case kBatchStarting:
		b.batch.started = true
	}
}

// page appends a page event in place (a million of them: building each
// on the stack and copying it in cost a second write of every entry) and
// notes it for collectOwn's first pass. fillLanes made the lane with room
// for every page record, zeroed: taking the next entry is a reslice, not
// a third write (append's zero value).
func (f *filler) page(r *rec) {
	lane, last := &f.l.Read, &f.lastRead
	if r.kind == kWrite {
		lane, last = &f.l.Write, &f.lastWrite
	}
	if len(*lane) > 0 && r.t < *last {
		f.unsorted = true
	}
	*last = r.t
	n := len(*lane)
	if n < cap(*lane) {
		*lane = (*lane)[:n+1]
	} else {
		*lane = append(*lane, PageEvent{})
	}
	e := &(*lane)[n]
	db, file, page := f.b.pageIDs(r)
	var obj *ObjectName
	if r.flag {
		obj = f.pages.page(db, file, page)
	} else {
		obj = f.pages.packed(r.a)
	}
	e.T, e.DatabaseID, e.FileID, e.PageID, e.Stack = r.t, db, file, page, r.stack
	e.Object = f.m.tables.object(obj)
	if mt := f.pageMatch(obj, r.t, pagePool(db)); mt.Candidates != 0 {
		e.Match = mt
	} else {
		e.NodeID, e.Rule, e.Confidence, e.Ambiguous = mt.NodeID, mt.Rule, mt.Confidence, mt.Ambiguous
	}
	f.m.noteOwn(&e.Match, e.T, e.T, false)
}

// pageMatch is matchData for a page event, from the memo when timing is
// deferred (matchData then answers by object and pool alone).
func (f *filler) pageMatch(obj *ObjectName, t int64, p pool) Match {
	if !f.m.deferTiming {
		return f.m.matchData(obj, t, p)
	}
	if f.memo.ok && f.memo.obj == obj && f.memo.p == p {
		return f.memo.mt
	}
	mt := f.m.matchData(obj, t, p)
	f.memo.ok, f.memo.obj, f.memo.p, f.memo.mt = true, obj, p, mt
	return mt
}

func (f *filler) lock(r *wide) {
	l := f.l
	k := lockKey{db: r.a, b: r.b, c: r.c, d: r.d, txn: r.e, mode: r.s1, rtype: r.s2, object: r.flag}
	if r.kind == kLockAcquired {
		f.locks[k] = append(f.locks[k], len(l.Lock))
		e := f.b.lockEntry(r, f.m, r.t, r.t, true)
		e.Open = true
		l.Lock = append(l.Lock, e)
		return
	}
	if q := f.locks[k]; len(q) > 0 {
		// Buffers of several CPUs can disagree by a little: an interval
		// never ends before it began.
		l.Lock[q[0]].End, l.Lock[q[0]].Open = max(r.t, l.Lock[q[0]].T), false
		f.locks[k] = q[1:]
		return
	}
	l.Lock = append(l.Lock, f.b.lockEntry(r, f.m, r.t-int64(r.f), r.t, false))
}

func (f *filler) wait(r *wide) {
	l := f.l
	wt := f.b.strs[r.s1]
	cat, ok := f.category[r.s1]
	if !ok {
		cat = WaitCategory(wt)
		f.category[r.s1] = cat
	}
	k := waitKey{task: r.c, waitType: r.s1}
	switch {
	case r.kind == kWaitBegin:
		f.waits[k] = append(f.waits[k], len(l.Wait))
		l.Wait = append(l.Wait, WaitInterval{T: r.t, End: r.t, Open: true, WaitType: wt, Category: cat, Match: f.m.matchTiming(r.t, poolAll), Stack: r.stack})
	case r.kind == kWaitEnd && len(f.waits[k]) > 0:
		q := f.waits[k]
		w := &l.Wait[q[0]]
		w.End, w.Open = max(r.t, w.T), false
		// Measured on the trace's µs clock; the event's own duration is
		// whole milliseconds (a 476 µs wait reads 0 there).
		w.DurationUs, w.DurationSource = max(uint64(w.End-w.T), r.a), "events"
		setWaitFields(w, r)
		f.waits[k] = q[1:]
	default:
		t0 := r.t - int64(r.a)
		w := WaitInterval{T: t0, End: r.t, WaitType: wt, Category: cat, DurationUs: r.a, DurationSource: "duration_ms", Match: f.m.matchTiming(t0, poolAll), Stack: r.stack}
		setWaitFields(&w, r)
		l.Wait = append(l.Wait, w)
	}
}

// setWaitFields keeps the end event's duration and signal_duration as it
// gave them (whole ms) and marks a wait whose duration read 0 ms.
func setWaitFields(w *WaitInterval, r *wide) {
	w.DurationMs, w.SignalDurationMs = r.a/1000, r.d/1000
	w.UnderOneMs = r.a == 0
}

func (f *filler) io(r *wide) {
	l := f.l
	k := ioKey{r.a, r.b, r.c}
	obj := f.pages.page(r.a, r.b, r.f)
	switch {
	case r.kind == kFileRead:
		f.ios[k] = append(f.ios[k], len(l.IO))
		l.IO = append(l.IO, IOInterval{T: r.t, End: r.t, Open: true, DatabaseID: r.a, FileID: r.b, Offset: r.c, Size: r.d, Match: f.m.matchIO(obj, r.t, pagePool(r.a))})
	case r.kind == kFileReadCompleted && len(f.ios[k]) > 0:
		q := f.ios[k]
		io := &l.IO[q[0]]
		io.End, io.Completed, io.Open, io.DurationUs = max(r.t, io.T), true, false, r.e
		if r.d > 0 {
			io.Size = r.d
		}
		f.ios[k] = q[1:]
	default:
		t0 := r.t - int64(r.e)
		l.IO = append(l.IO, IOInterval{T: t0, End: r.t, Write: r.kind == kFileWriteCompleted, DatabaseID: r.a, FileID: r.b, Offset: r.c, Size: r.d,
			DurationUs: r.e, Completed: true, Match: f.m.matchIO(obj, t0, pagePool(r.a))})
	}
}

// closeOpen widens the statement to every interval and closes the open
// ones: locks and waits at the statement end, uncompleted reads where they
// began.
func closeOpen(tr *Trace) {
	l := &tr.Lanes
	for _, v := range l.Lock {
		tr.Start, tr.End = min(tr.Start, v.T), max(tr.End, v.End)
	}
	for _, v := range l.Wait {
		tr.Start, tr.End = min(tr.Start, v.T), max(tr.End, v.End)
	}
	for _, v := range l.IO {
		tr.Start, tr.End = min(tr.Start, v.T), max(tr.End, v.End)
	}
	for i := range l.Lock {
		if l.Lock[i].Open {
			l.Lock[i].End, l.Lock[i].HeldToEnd = tr.End, true
		}
	}
	for i := range l.Wait {
		if l.Wait[i].Open {
			l.Wait[i].End = tr.End
		}
	}
}

func sortLane[E any](s []E, t func(E) int64) {
	by := func(x, y E) int { return cmp.Compare(t(x), t(y)) }
	if !slices.IsSortedFunc(s, by) {
		slices.SortStableFunc(s, by)
	}
}

func (b *Builder) lockEntry(r *wide, m *matcher, t, end int64, acquired bool) LockInterval {
	var obj *ObjectName
	if r.flag {
		obj = b.catalog.object(r.a, r.b)
	} else {
		obj = b.catalog.hobt(r.a, r.b)
	}
	desc := b.strs[r.s3]
	res := desc
	if res == "" {
		res = fmt.Sprintf("%d:%d:%d:%d:%d", r.a, r.b, r.c&0xffffffff, r.c>>32, r.d)
	}
	return LockInterval{T: t, End: end, Mode: b.strs[r.s1], ResourceType: b.strs[r.s2], Resource: res,
		TransactionID: int64(r.e), Object: m.tables.object(obj), Row: b.lockRow(r, desc), AcquireSeen: acquired, Stack: r.stack,
		Match: m.matchData(obj, t, poolAccessOrModify)}
}

func (b *Builder) lockRow(r *wide, desc string) string {
	if desc == "" || r.flag || len(b.opts.LockRows) == 0 {
		return ""
	}
	return b.opts.LockRows[LockKey{DatabaseID: r.a, HoBTID: r.b, Hash: desc}]
}

func (b *Builder) summarize(tr *Trace, m *matcher) {
	s := &tr.Summary
	t := newTally(tr.Operators)
	l := &tr.Lanes
	// Lane totals are counted in locals and stored once per lane, and
	// operators are found by slice index: a map operation per event cost
	// more than the rest of the summary (issue 26 performance). A lane's
	// key is present only when it has entries.
	for i := range l.Read {
		if o := t.add(&l.Read[i].Match); o != nil {
			o.Reads++
		}
	}
	t.flush(s, "read")
	for i := range l.Write {
		if o := t.add(&l.Write[i].Match); o != nil {
			o.Writes++
		}
	}
	t.flush(s, "write")
	for i := range l.Lock {
		if o := t.add(&l.Lock[i].Match); o != nil {
			o.Locks++
		}
	}
	t.flush(s, "lock")
	for i := range l.Wait {
		if o := t.add(&l.Wait[i].Match); o != nil {
			if o.Waits == nil {
				o.Waits = map[string]int{}
			}
			o.Waits[l.Wait[i].WaitType]++
		}
	}
	t.flush(s, "wait")
	for i := range l.Memory {
		if o := t.add(&l.Memory[i].Match); o != nil && l.Memory[i].Spill {
			o.Spills++
		}
	}
	t.flush(s, "memory")
	for i := range l.Split {
		if o := t.add(&l.Split[i].Match); o != nil {
			o.Splits++
		}
	}
	t.flush(s, "split")
	for i := range l.Log {
		if o := t.add(&l.Log[i].Match); o != nil {
			o.Logs++
		}
	}
	t.flush(s, "log")
	for i := range l.IO {
		t.add(&l.IO[i].Match)
	}
	t.flush(s, "io")
	s.Operators = make([]OperatorSummary, 0, len(tr.Operators))
	for _, op := range tr.Operators {
		s.Operators = append(s.Operators, *t.op(NodeID(op.ID)))
	}
}

// tally counts one lane's entries for summarize.
type tally struct {
	byNode             []*OperatorSummary // by node id when ids are small
	byID               map[NodeID]*OperatorSummary
	total, amb, unmatd int
}

func newTally(ops []Operator) *tally {
	t := &tally{byID: map[NodeID]*OperatorSummary{}}
	hi := -1
	for _, op := range ops {
		t.byID[NodeID(op.ID)] = &OperatorSummary{ID: op.ID}
		hi = max(hi, op.ID)
	}
	if hi < maxDenseNode && !slices.ContainsFunc(ops, func(o Operator) bool { return o.ID < 0 }) {
		t.byNode = make([]*OperatorSummary, hi+1)
		for id, o := range t.byID {
			t.byNode[id] = o
		}
	}
	return t
}

// op is the summary of operator id, nil when the statement has none.
func (t *tally) op(id NodeID) *OperatorSummary {
	if t.byNode == nil {
		return t.byID[id]
	}
	if id >= 0 && int(id) < len(t.byNode) {
		return t.byNode[id]
	}
	return nil
}

// add counts one entry and returns the summary of its operator, nil when
// it has none.
func (t *tally) add(mt *Match) *OperatorSummary {
	t.total++
	if mt.Ambiguous {
		t.amb++
	}
	if mt.NodeID < 0 {
		if mt.Rule != RuleStatement {
			t.unmatd++
		}
		return nil
	}
	return t.op(mt.NodeID)
}

// flush stores the lane's counts and starts the next lane.
func (t *tally) flush(s *Summary, lane string) {
	if t.total > 0 {
		s.Lanes[lane] += t.total
	}
	if t.amb > 0 {
		s.Ambiguous[lane] += t.amb
	}
	if t.unmatd > 0 {
		s.Unmatched[lane] += t.unmatd
	}
	t.total, t.amb, t.unmatd = 0, 0, 0
}

// objectString names a plan object the way ObjectName.String does.
func objectString(o *showplan.ObjectRef) string {
	if o == nil {
		return ""
	}
	n := ObjectName{Schema: o.Schema, Table: o.Table, Index: o.Index}
	return n.String()
}

func lower(s string) string { return strings.ToLower(s) }
