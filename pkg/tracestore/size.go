package tracestore

import (
	"slices"
	"unsafe"

	"github.com/queryreplay/queryreplay/pkg/bundle"
	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// compact shares what a decoded trace repeats: JSON decoding gives every
// event its own copy of short strings (lock modes, wait types), which
// would multiply a stored trace's memory several times. Object names and
// candidate lists need nothing: decoding keeps each once, in the lanes'
// tables.
func compact(tr *timeline.Trace) {
	strs := map[string]string{}
	str := func(s string) string {
		if v, ok := strs[s]; ok {
			return v
		}
		strs[s] = s
		return s
	}
	l := &tr.Lanes
	l.Plan, l.Read, l.Write, l.Lock = exact(l.Plan), exact(l.Read), exact(l.Write), exact(l.Lock)
	l.Wait, l.Memory, l.Split, l.Log, l.IO = exact(l.Wait), exact(l.Memory), exact(l.Split), exact(l.Log), exact(l.IO)
	for i := range l.Lock {
		e := &l.Lock[i]
		e.Mode, e.ResourceType = str(e.Mode), str(e.ResourceType)
	}
	for i := range l.Wait {
		e := &l.Wait[i]
		e.WaitType, e.Category = str(e.WaitType), str(e.Category)
	}
	for i := range l.Memory {
		e := &l.Memory[i]
		e.Kind, e.Detail = str(e.Kind), str(e.Detail)
	}
	for i := range l.Split {
		e := &l.Split[i]
		e.Operation = str(e.Operation)
	}
	for i := range l.Log {
		e := &l.Log[i]
		e.Kind, e.Operation, e.Context = str(e.Kind), str(e.Operation), str(e.Context)
	}
}

// exact reallocates a slice that grew past its length (decoding and
// building append), so a stored trace holds no spare capacity.
func exact[E any](s []E) []E {
	if cap(s)-len(s) <= len(s)/16 {
		return s
	}
	return slices.Clone(s)
}

// EstimateBytes estimates the memory a decoded bundle holds: the lanes'
// elements at their Go sizes plus the strings each entry owns (shared
// strings and object names counted once). It is the store's byte bound, so
// it errs high rather than low.
func EstimateBytes(b *bundle.Bundle) int64 {
	tr := b.Trace
	if tr == nil {
		return int64(len(b.SQL))
	}
	l := &tr.Lanes
	// capacities, not lengths: that is what the slices hold
	n := int64(len(b.SQL)+len(b.Plan)+len(tr.Statement)) + 4096
	n += int64(cap(l.Plan)) * int64(unsafe.Sizeof(timeline.PlanEntry{}))
	n += int64(cap(l.Read)+cap(l.Write)) * int64(unsafe.Sizeof(timeline.PageEvent{}))
	n += int64(cap(l.Lock)) * int64(unsafe.Sizeof(timeline.LockInterval{}))
	n += int64(cap(l.Wait)) * int64(unsafe.Sizeof(timeline.WaitInterval{}))
	n += int64(cap(l.Memory)) * int64(unsafe.Sizeof(timeline.MemoryEvent{}))
	n += int64(cap(l.Split)) * int64(unsafe.Sizeof(timeline.SplitEvent{}))
	n += int64(cap(l.Log)) * int64(unsafe.Sizeof(timeline.LogEvent{}))
	n += int64(cap(l.IO)) * int64(unsafe.Sizeof(timeline.IOInterval{}))
	n += int64(cap(l.Escalation)) * int64(unsafe.Sizeof(timeline.EscalationEvent{}))
	// the object table: each name once, each of its strings decoded on its own
	for _, o := range l.Objects {
		n += int64(unsafe.Sizeof(o)) + int64(len(o.Database)+len(o.Schema)+len(o.Table)+len(o.Index)) + 64
	}
	for i := range l.Lock {
		e := &l.Lock[i]
		n += allocSize(len(e.Resource)) + allocSize(len(e.Row)) // each decoded string is its own allocation
	}
	for i := range l.Escalation {
		e := &l.Escalation[i]
		n += allocSize(len(e.Mode)) + allocSize(len(e.ResourceType)) + allocSize(len(e.Cause))
	}
	n += candidateBytes(l)
	for _, o := range tr.Operators {
		n += int64(unsafe.Sizeof(o)) + int64(len(o.PhysicalOp)+len(o.LogicalOp)+len(o.Object)+len(o.Behavior)) +
			int64(len(o.Phases))*int64(unsafe.Sizeof(timeline.Phase{})) + int64(len(o.Cycles))*int64(unsafe.Sizeof(timeline.Cycle{})) +
			int64(len(o.Threads))*int64(unsafe.Sizeof(timeline.ThreadBar{}))
		if o.Exchange != nil {
			n += int64(unsafe.Sizeof(*o.Exchange)) + 8*int64(len(o.Exchange.Producer.Threads)+len(o.Exchange.Consumer.Threads))
		}
	}
	for _, r := range b.Result.LogRecords {
		n += int64(unsafe.Sizeof(r)) + int64(len(r.LSN)+len(r.Operation)+len(r.Context)+len(r.TransactionID)+len(r.PageID))
	}
	// interned strings and map overhead are small; 10% margin for the rest
	return n + n/10
}

// candidateBytes counts the lanes' table of candidate lists (each
// distinct list of an ambiguous match once).
func candidateBytes(l *timeline.Lanes) int64 {
	n := int64(cap(l.CandidateSets)) * int64(unsafe.Sizeof([]timeline.NodeID(nil)))
	for _, c := range l.CandidateSets {
		n += int64(cap(c)) * int64(unsafe.Sizeof(timeline.NodeID(0)))
	}
	return n
}

// allocSize rounds a string's length up to the size class the allocator
// gives it (16-byte steps for small objects, which is close enough).
func allocSize(n int) int64 {
	if n == 0 {
		return 0
	}
	return int64((n + 15) &^ 15)
}
