package timeline

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Build orders the events, pairs them, ties them to operators and works out
// the operators' phases. The Builder must not be used afterwards.
func (b *Builder) Build() (*Trace, error) {
	tr := &Trace{Summary: Summary{
		Events:    len(b.recs),
		Lanes:     map[string]int{},
		Unmatched: map[string]int{},
		Other:     b.other,
		Notes:     b.notes,
	}}
	if len(b.other) == 0 {
		tr.Summary.Other = nil
	}
	if b.stmt != nil {
		tr.Statement = b.stmt.Text
	}
	zeroNs := b.clock(tr)
	if len(b.recs) > 0 {
		tr.ZeroTime = time.Unix(0, zeroNs).UTC().Format(time.RFC3339Nano)
	}

	// The statement's extent: time zero (or the earliest event) to the
	// latest event or the batch's completion.
	start, end := int64(0), int64(0)
	for i := range b.recs {
		r := &b.recs[i]
		start = min(start, r.t)
		end = max(end, r.t)
	}
	tr.Start, tr.End = start, end

	m := newMatcher(b.stmt)
	for i := range b.recs {
		if r := &b.recs[i]; r.kind == kThreadProfile {
			m.addWindow(int(r.a), r.t-int64(r.c), r.t)
		}
	}
	b.fillLanes(tr, m)
	tr.Operators = m.phases(tr.Start, tr.End)
	tr.Lanes.Plan = make([]PlanEntry, len(tr.Operators))
	for i, o := range tr.Operators {
		tr.Lanes.Plan[i] = PlanEntry{T: o.Start, End: o.End, FirstEmit: o.FirstEmit, NodeID: NodeID(o.ID)}
	}
	// Ties keep plan order: a parent before the children that start with it.
	sortLane(tr.Lanes.Plan, func(e PlanEntry) int64 { return e.T })
	b.summarize(tr, m)
	return tr, nil
}

// clock orders the records, counts lost events, spreads coincident
// millisecond timestamps and sets every r.t in µs from time zero, which it
// returns as Unix ns.
func (b *Builder) clock(tr *Trace) int64 {
	recs := b.recs
	allSeq := len(recs) > 0
	for i := range recs {
		if !recs[i].hasSeq {
			allSeq = false
			break
		}
	}
	tr.Summary.Ordering = "capture"
	if allSeq {
		tr.Summary.Ordering = "event_sequence"
		bySeq := func(x, y rec) int { return cmp.Compare(x.seq, y.seq) }
		if !slices.IsSortedFunc(recs, bySeq) {
			slices.SortStableFunc(recs, bySeq)
		}
		for i := 1; i < len(recs); i++ {
			if d := recs[i].seq - recs[i-1].seq; d > 1 {
				tr.Summary.Lost += d - 1
			}
		}
	}

	msGrained := len(recs) > 0
	for i := range recs {
		if recs[i].tsNs%int64(time.Millisecond) != 0 {
			msGrained = false
			break
		}
	}
	for i := range recs {
		recs[i].t = floorDiv(recs[i].tsNs, 1000)
	}
	if msGrained {
		tr.Summary.Spread = spread(recs)
	}

	zero := int64(math.MaxInt64)
	zeroNs := int64(0)
	found := false
	for i := range recs {
		if recs[i].kind == kBatchStarting {
			zero, zeroNs, found = recs[i].t, recs[i].tsNs, true
			break
		}
	}
	if !found {
		for i := range recs {
			if recs[i].t < zero {
				zero, zeroNs = recs[i].t, recs[i].tsNs
			}
		}
		if len(recs) > 0 {
			b.notes = append(b.notes, "no sql_batch_starting: time zero is the earliest event")
			tr.Summary.Notes = b.notes
		}
	}
	for i := range recs {
		recs[i].t -= zero
	}
	return zeroNs
}

// spread moves the k-th of n records sharing one millisecond timestamp to
// +1000·k/n µs, in their order. It reports whether any record moved.
func spread(recs []rec) bool {
	moved := false
	monotone := slices.IsSortedFunc(recs, func(x, y rec) int { return cmp.Compare(x.tsNs, y.tsNs) })
	if monotone {
		for i := 0; i < len(recs); {
			j := i + 1
			for j < len(recs) && recs[j].tsNs == recs[i].tsNs {
				j++
			}
			if n := int64(j - i); n > 1 {
				moved = true
				for k := int64(0); k < n; k++ {
					recs[i+int(k)].t += 1000 * k / n
				}
			}
			i = j
		}
		return moved
	}
	// Timestamps disagree with the order (buffers from several CPUs):
	// count per millisecond first, then hand out positions in order.
	count := map[int64]int64{}
	for i := range recs {
		count[recs[i].tsNs]++
	}
	next := make(map[int64]int64, len(count))
	for i := range recs {
		ts := recs[i].tsNs
		n := count[ts]
		if n > 1 {
			moved = true
			k := next[ts]
			next[ts] = k + 1
			recs[i].t += 1000 * k / n
		}
	}
	return moved
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
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

// fillLanes walks the ordered records once, pairing begins with ends and
// matching every entry to an operator.
func (b *Builder) fillLanes(tr *Trace, m *matcher) {
	l := &tr.Lanes
	var n [kStatementCompleted + 1]int
	for i := range b.recs {
		n[b.recs[i].kind]++
	}
	l.Read = make([]PageEvent, 0, n[kRead])
	l.Write = make([]PageEvent, 0, n[kWrite])
	l.Lock = make([]LockInterval, 0, n[kLockAcquired]+n[kLockReleased])
	l.Wait = make([]WaitInterval, 0, n[kWaitBegin]+n[kWaitEnd]+n[kWaitCompleted])
	l.Memory = make([]MemoryEvent, 0, n[kSpill]+n[kGrantUsage])
	l.Split = make([]SplitEvent, 0, n[kSplit])
	l.Log = make([]LogEvent, 0, n[kLogRecord]+n[kLogFlush])
	l.IO = make([]IOInterval, 0, n[kFileRead]+n[kFileReadCompleted]+n[kFileWriteCompleted])
	locks := map[lockKey][]int{}
	waits := map[waitKey][]int{}
	ios := map[ioKey][]int{}
	category := map[uint32]string{}
	for i := range b.recs {
		r := &b.recs[i]
		switch r.kind {
		case kRead, kWrite:
			obj := b.catalog.page(r.a, r.b, r.c)
			e := PageEvent{T: r.t, DatabaseID: r.a, FileID: r.b, PageID: r.c, Object: obj}
			e.Match = m.matchData(obj, r.t, poolAccess)
			if r.kind == kRead {
				l.Read = append(l.Read, e)
			} else {
				l.Write = append(l.Write, e)
			}
		case kLockAcquired, kLockReleased:
			k := lockKey{db: r.a, b: r.b, c: r.c, d: r.d, txn: r.e, mode: r.s1, rtype: r.s2, object: r.flag}
			if r.kind == kLockAcquired {
				locks[k] = append(locks[k], len(l.Lock))
				l.Lock = append(l.Lock, b.lockEntry(r, m, r.t, -1, true))
				continue
			}
			if q := locks[k]; len(q) > 0 {
				l.Lock[q[0]].End = r.t
				locks[k] = q[1:]
				continue
			}
			l.Lock = append(l.Lock, b.lockEntry(r, m, r.t-int64(r.f), r.t, false))
		case kWaitBegin, kWaitEnd, kWaitCompleted:
			wt := b.strs[r.s1]
			cat, ok := category[r.s1]
			if !ok {
				cat = WaitCategory(wt)
				category[r.s1] = cat
			}
			k := waitKey{task: r.c, waitType: r.s1}
			switch {
			case r.kind == kWaitBegin:
				waits[k] = append(waits[k], len(l.Wait))
				l.Wait = append(l.Wait, WaitInterval{T: r.t, End: -1, WaitType: wt, Category: cat, Match: m.matchTiming(r.t, poolAll)})
			case r.kind == kWaitEnd && len(waits[k]) > 0:
				q := waits[k]
				w := &l.Wait[q[0]]
				w.End, w.DurationUs = r.t, r.a
				waits[k] = q[1:]
			default:
				t0 := r.t - int64(r.a)
				l.Wait = append(l.Wait, WaitInterval{T: t0, End: r.t, WaitType: wt, Category: cat, DurationUs: r.a, Match: m.matchTiming(t0, poolAll)})
			}
		case kFileRead, kFileReadCompleted, kFileWriteCompleted:
			k := ioKey{r.a, r.b, r.c}
			obj := b.catalog.page(r.a, r.b, r.f)
			switch {
			case r.kind == kFileRead:
				ios[k] = append(ios[k], len(l.IO))
				l.IO = append(l.IO, IOInterval{T: r.t, End: -1, DatabaseID: r.a, FileID: r.b, Offset: r.c, Size: r.d, Match: m.matchData(obj, r.t, poolAccess)})
			case r.kind == kFileReadCompleted && len(ios[k]) > 0:
				q := ios[k]
				io := &l.IO[q[0]]
				io.End, io.Completed, io.DurationUs = r.t, true, r.e
				if r.d > 0 {
					io.Size = r.d
				}
				ios[k] = q[1:]
			default:
				t0 := r.t - int64(r.e)
				l.IO = append(l.IO, IOInterval{T: t0, End: r.t, Write: r.kind == kFileWriteCompleted, DatabaseID: r.a, FileID: r.b, Offset: r.c, Size: r.d,
					DurationUs: r.e, Completed: true, Match: m.matchData(obj, t0, poolAccess)})
			}
		case kSpill:
			name := b.strs[r.s1]
			e := MemoryEvent{T: r.t, Kind: name, Detail: b.strs[r.s2], GrantedMemoryKB: r.b, UsedMemoryKB: r.c, Spill: true}
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
				Operation: b.strs[r.s1], Object: obj, Match: m.matchData(obj, r.t, poolModify)})
		case kLogRecord:
			obj := b.catalog.allocUnit(r.a, r.b)
			l.Log = append(l.Log, LogEvent{T: r.t, Kind: "record", Operation: b.strs[r.s1], Context: b.strs[r.s2],
				TransactionID: int64(r.c), Size: r.d, Object: obj, Match: m.matchData(obj, r.t, poolModify)})
		case kLogFlush:
			l.Log = append(l.Log, LogEvent{T: r.t, Kind: "flush", Size: r.d, Match: Match{NodeID: Unmatched, Rule: RuleStatement}})
		case kBatchCompleted:
			tr.End = max(tr.End, r.t)
		}
	}
	for i := range l.Lock {
		if l.Lock[i].End < 0 {
			l.Lock[i].End, l.Lock[i].HeldToEnd = tr.End, true
		}
	}
	for i := range l.Wait {
		if l.Wait[i].End < 0 {
			l.Wait[i].End, l.Wait[i].Open = tr.End, true
		}
	}
	for i := range l.IO {
		if l.IO[i].End < 0 {
			l.IO[i].End = l.IO[i].T
		}
	}
	for _, v := range l.Lock {
		tr.End = max(tr.End, v.End)
	}
	for _, v := range l.Wait {
		tr.End = max(tr.End, v.End)
		tr.Start = min(tr.Start, v.T)
	}
	for _, v := range l.IO {
		tr.End = max(tr.End, v.End)
		tr.Start = min(tr.Start, v.T)
	}
	for _, v := range l.Lock {
		tr.Start = min(tr.Start, v.T)
	}
	sortLane(l.Read, func(e PageEvent) int64 { return e.T })
	sortLane(l.Write, func(e PageEvent) int64 { return e.T })
	sortLane(l.Lock, func(e LockInterval) int64 { return e.T })
	sortLane(l.Wait, func(e WaitInterval) int64 { return e.T })
	sortLane(l.Memory, func(e MemoryEvent) int64 { return e.T })
	sortLane(l.Split, func(e SplitEvent) int64 { return e.T })
	sortLane(l.Log, func(e LogEvent) int64 { return e.T })
	sortLane(l.IO, func(e IOInterval) int64 { return e.T })
	m.collectOwn(l)
}

func sortLane[E any](s []E, t func(E) int64) {
	by := func(x, y E) int { return cmp.Compare(t(x), t(y)) }
	if !slices.IsSortedFunc(s, by) {
		slices.SortStableFunc(s, by)
	}
}

func (b *Builder) lockEntry(r *rec, m *matcher, t, end int64, acquired bool) LockInterval {
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
		TransactionID: int64(r.e), Object: obj, Row: b.lockRow(r, desc), AcquireSeen: acquired,
		Match: m.matchData(obj, t, poolAccessOrModify)}
}

func (b *Builder) lockRow(r *rec, desc string) string {
	if desc == "" || r.flag || len(b.opts.LockRows) == 0 {
		return ""
	}
	return b.opts.LockRows[LockKey{DatabaseID: r.a, HoBTID: r.b, Hash: desc}]
}

func (b *Builder) summarize(tr *Trace, m *matcher) {
	s := &tr.Summary
	per := map[NodeID]*OperatorSummary{}
	for _, op := range tr.Operators {
		per[NodeID(op.ID)] = &OperatorSummary{ID: op.ID}
	}
	count := func(lane string, n NodeID, rule Rule, f func(*OperatorSummary)) {
		s.Lanes[lane]++
		if n < 0 {
			if rule != RuleStatement {
				s.Unmatched[lane]++
			}
			return
		}
		if o := per[n]; o != nil {
			f(o)
		}
	}
	l := &tr.Lanes
	for _, e := range l.Read {
		count("read", e.NodeID, e.Rule, func(o *OperatorSummary) { o.Reads++ })
	}
	for _, e := range l.Write {
		count("write", e.NodeID, e.Rule, func(o *OperatorSummary) { o.Writes++ })
	}
	for _, e := range l.Lock {
		count("lock", e.NodeID, e.Rule, func(o *OperatorSummary) { o.Locks++ })
	}
	for _, e := range l.Wait {
		wt := e.WaitType
		count("wait", e.NodeID, e.Rule, func(o *OperatorSummary) {
			if o.Waits == nil {
				o.Waits = map[string]int{}
			}
			o.Waits[wt]++
		})
	}
	for _, e := range l.Memory {
		spill := e.Spill
		count("memory", e.NodeID, e.Rule, func(o *OperatorSummary) {
			if spill {
				o.Spills++
			}
		})
	}
	for _, e := range l.Split {
		count("split", e.NodeID, e.Rule, func(o *OperatorSummary) { o.Splits++ })
	}
	for _, e := range l.Log {
		count("log", e.NodeID, e.Rule, func(o *OperatorSummary) { o.Logs++ })
	}
	for _, e := range l.IO {
		count("io", e.NodeID, e.Rule, func(*OperatorSummary) {})
	}
	s.Operators = make([]OperatorSummary, 0, len(tr.Operators))
	for _, op := range tr.Operators {
		s.Operators = append(s.Operators, *per[NodeID(op.ID)])
	}
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
