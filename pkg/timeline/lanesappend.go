package timeline

import (
	"encoding/json"
	"slices"
	"strconv"
)

// The lanes' JSON is written by hand, not by json.Marshal of the *Wire
// types: storing a finished live trace (issue 29) must be quick, and a
// 100k-event trace spent half its encoding in encoding/json's reflection
// over the wire structs and the other half re-compacting Lanes'
// MarshalJSON output. The bytes are exactly json.Marshal(lanesWire)'s —
// the same keys in the same order, the same omitempty rules, the same
// number formatting and string escaping — which lanesappend_test.go
// checks against the reflective encoding on real, hostile, reflectively
// filled and fuzzed lanes.

// lanesEncoder appends one Lanes' JSON. Each object and candidate list is
// marshalled once and its bytes reused: a million page events name a few
// dozen objects.
type lanesEncoder struct {
	l       *Lanes
	objects [][]byte
	sets    [][]byte
}

// entryJSONSize guesses an entry's JSON length, to size the buffer once.
const entryJSONSize = 160

// laneEntries counts the entries of every lane.
func (l *Lanes) laneEntries() int {
	return len(l.Plan) + len(l.Read) + len(l.Write) + len(l.Lock) + len(l.Wait) + len(l.Memory) +
		len(l.Split) + len(l.Log) + len(l.IO) + len(l.Escalation)
}

// appendJSON appends what json.Marshal(lanesWire) writes for l.
func (l *Lanes) appendJSON(dst []byte) []byte {
	dst = slices.Grow(dst, l.laneEntries()*entryJSONSize+256)
	e := &lanesEncoder{l: l, objects: make([][]byte, len(l.Objects)), sets: make([][]byte, len(l.CandidateSets))}
	dst = appendLane(dst, `{"plan":`, l.Plan, appendPlanEntry)
	dst = appendLane(dst, `,"read":`, l.Read, e.page)
	dst = appendLane(dst, `,"write":`, l.Write, e.page)
	dst = appendLane(dst, `,"lock":`, l.Lock, e.lock)
	dst = appendLane(dst, `,"wait":`, l.Wait, e.wait)
	dst = appendLane(dst, `,"memory":`, l.Memory, e.memory)
	dst = appendLane(dst, `,"split":`, l.Split, e.split)
	dst = appendLane(dst, `,"log":`, l.Log, e.log)
	dst = appendLane(dst, `,"io":`, l.IO, e.io)
	if len(l.Escalation) > 0 { // omitempty
		dst = appendLane(dst, `,"escalation":`, l.Escalation, e.escalation)
	}
	return append(dst, '}')
}

// appendLane appends key and the lane: null when nil, as json.Marshal
// writes a nil slice.
func appendLane[E any](dst []byte, key string, lane []E, entry func([]byte, *E) []byte) []byte {
	dst = append(dst, key...)
	if lane == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range lane {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = entry(dst, &lane[i])
	}
	return append(dst, ']')
}

func appendPlanEntry(dst []byte, p *PlanEntry) []byte {
	dst = appendInt(dst, `{"t":`, p.T)
	dst = appendInt(dst, `,"end":`, p.End)
	dst = appendInt(dst, `,"firstEmit":`, p.FirstEmit)
	dst = append(dst, `,"nodeId":`...)
	return append(appendNodeID(dst, p.NodeID), '}')
}

func (e *lanesEncoder) page(dst []byte, p *PageEvent) []byte {
	dst = appendInt(dst, `{"t":`, p.T)
	dst = e.match(dst, &p.Match)
	if p.DatabaseID != 0 {
		dst = appendUint(dst, `,"databaseId":`, p.DatabaseID)
	}
	dst = appendUint(dst, `,"file":`, p.FileID)
	dst = appendUint(dst, `,"page":`, p.PageID)
	dst = e.object(dst, p.Object)
	return appendStackEnd(dst, p.Stack)
}

func (e *lanesEncoder) lock(dst []byte, k *LockInterval) []byte {
	dst = appendInt(dst, `{"t":`, k.T)
	dst = appendInt(dst, `,"end":`, k.End)
	dst = e.match(dst, &k.Match)
	dst = appendStringField(dst, `,"mode":`, k.Mode)
	dst = appendStringField(dst, `,"resourceType":`, k.ResourceType)
	dst = appendStringField(dst, `,"resource":`, k.Resource)
	dst = appendInt(dst, `,"transactionId":`, k.TransactionID)
	dst = e.object(dst, k.Object)
	if k.Open {
		dst = append(dst, `,"open":true`...)
	}
	if k.HeldToEnd {
		dst = append(dst, `,"heldToEnd":true`...)
	}
	if k.Row != "" {
		dst = appendStringField(dst, `,"row":`, k.Row)
	}
	dst = appendBool(dst, `,"acquireSeen":`, k.AcquireSeen)
	return appendStackEnd(dst, k.Stack)
}

func (e *lanesEncoder) wait(dst []byte, w *WaitInterval) []byte {
	dst = appendInt(dst, `{"t":`, w.T)
	dst = appendInt(dst, `,"end":`, w.End)
	dst = e.match(dst, &w.Match)
	dst = appendStringField(dst, `,"waitType":`, w.WaitType)
	dst = appendStringField(dst, `,"category":`, w.Category)
	dst = appendUint(dst, `,"durationUs":`, w.DurationUs)
	if w.DurationSource != "" {
		dst = appendStringField(dst, `,"durationSource":`, w.DurationSource)
	}
	dst = appendUint(dst, `,"durationMs":`, w.DurationMs)
	dst = appendUint(dst, `,"signalDurationMs":`, w.SignalDurationMs)
	if w.UnderOneMs {
		dst = append(dst, `,"underOneMs":true`...)
	}
	if w.Open {
		dst = append(dst, `,"open":true`...)
	}
	return appendStackEnd(dst, w.Stack)
}

func (e *lanesEncoder) memory(dst []byte, m *MemoryEvent) []byte {
	dst = appendInt(dst, `{"t":`, m.T)
	dst = e.match(dst, &m.Match)
	dst = appendStringField(dst, `,"kind":`, m.Kind)
	if m.Detail != "" {
		dst = appendStringField(dst, `,"detail":`, m.Detail)
	}
	if m.GrantedMemoryKB != 0 {
		dst = appendUint(dst, `,"grantedKB":`, m.GrantedMemoryKB)
	}
	if m.UsedMemoryKB != 0 {
		dst = appendUint(dst, `,"usedKB":`, m.UsedMemoryKB)
	}
	dst = appendBool(dst, `,"spill":`, m.Spill)
	return appendStackEnd(dst, m.Stack)
}

func (e *lanesEncoder) split(dst []byte, s *SplitEvent) []byte {
	dst = appendInt(dst, `{"t":`, s.T)
	dst = e.match(dst, &s.Match)
	dst = appendUint(dst, `,"file":`, s.FileID)
	dst = appendUint(dst, `,"page":`, s.PageID)
	dst = appendUint(dst, `,"newFile":`, s.NewFileID)
	dst = appendUint(dst, `,"newPage":`, s.NewPageID)
	dst = appendStringField(dst, `,"operation":`, s.Operation)
	dst = e.object(dst, s.Object)
	return appendStackEnd(dst, s.Stack)
}

func (e *lanesEncoder) escalation(dst []byte, x *EscalationEvent) []byte {
	dst = appendInt(dst, `{"t":`, x.T)
	dst = e.match(dst, &x.Match)
	dst = appendStringField(dst, `,"mode":`, x.Mode)
	dst = appendStringField(dst, `,"resourceType":`, x.ResourceType)
	if x.Cause != "" {
		dst = appendStringField(dst, `,"cause":`, x.Cause)
	}
	dst = appendUint(dst, `,"escalatedLockCount":`, x.EscalatedLock)
	if x.HoBTLocks != 0 {
		dst = appendUint(dst, `,"hobtLockCount":`, x.HoBTLocks)
	}
	dst = e.object(dst, x.Object)
	return appendStackEnd(dst, x.Stack)
}

func (e *lanesEncoder) log(dst []byte, g *LogEvent) []byte {
	dst = appendInt(dst, `{"t":`, g.T)
	dst = e.match(dst, &g.Match)
	dst = appendStringField(dst, `,"kind":`, g.Kind)
	if g.Operation != "" {
		dst = appendStringField(dst, `,"operation":`, g.Operation)
	}
	if g.Context != "" {
		dst = appendStringField(dst, `,"context":`, g.Context)
	}
	if g.TransactionID != 0 {
		dst = appendInt(dst, `,"transactionId":`, g.TransactionID)
	}
	if g.Size != 0 {
		dst = appendUint(dst, `,"size":`, g.Size)
	}
	dst = e.object(dst, g.Object)
	return appendStackEnd(dst, g.Stack)
}

func (e *lanesEncoder) io(dst []byte, o *IOInterval) []byte {
	dst = appendInt(dst, `{"t":`, o.T)
	dst = appendInt(dst, `,"end":`, o.End)
	dst = e.match(dst, &o.Match)
	dst = appendBool(dst, `,"write":`, o.Write)
	dst = appendUint(dst, `,"databaseId":`, o.DatabaseID)
	dst = appendUint(dst, `,"file":`, o.FileID)
	dst = appendUint(dst, `,"offset":`, o.Offset)
	dst = appendUint(dst, `,"size":`, o.Size)
	dst = appendUint(dst, `,"durationUs":`, o.DurationUs)
	dst = appendBool(dst, `,"completed":`, o.Completed)
	if o.Open {
		dst = append(dst, `,"open":true`...)
	}
	return append(dst, '}')
}

// ruleJSON and confidenceJSON are the names MarshalText gives, quoted.
var ruleJSON, confidenceJSON = quotedNames(ruleNames[:]), quotedNames(confidenceNames[:])

func quotedNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(appendString(nil, n))
	}
	return out
}

// match appends matchWire's fields, after the entry's first field. A rule
// or confidence out of range panics, as their MarshalText does.
func (e *lanesEncoder) match(dst []byte, m *Match) []byte {
	dst = append(dst, `,"nodeId":`...)
	dst = appendNodeID(dst, m.NodeID)
	dst = append(dst, `,"rule":`...)
	dst = append(dst, ruleJSON[m.Rule]...)
	dst = append(dst, `,"confidence":`...)
	dst = append(dst, confidenceJSON[m.Confidence]...)
	if m.Ambiguous {
		dst = append(dst, `,"ambiguous":true`...)
	}
	if set := e.candidates(m.Candidates); set != nil {
		dst = append(dst, `,"candidates":`...)
		dst = append(dst, set...)
	}
	return dst
}

// candidates is the JSON of the candidate list r names, nil when the
// list is omitted (none, or empty).
func (e *lanesEncoder) candidates(r CandidatesRef) []byte {
	if r == 0 || int(r) > len(e.sets) {
		return nil
	}
	if b := e.sets[r-1]; b != nil {
		return b
	}
	set := e.l.CandidateSets[r-1]
	if len(set) == 0 {
		return nil
	}
	b := []byte{'['}
	for i, id := range set {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNodeID(b, id)
	}
	b = append(b, ']')
	e.sets[r-1] = b
	return b
}

// object appends the entry's "object", unless it names none.
func (e *lanesEncoder) object(dst []byte, r ObjectRef) []byte {
	if r == 0 || int(r) > len(e.objects) {
		return dst
	}
	b := e.objects[r-1]
	if b == nil {
		b, _ = json.Marshal(&e.l.Objects[r-1]) // strings only: it cannot fail
		e.objects[r-1] = b
	}
	dst = append(dst, `,"object":`...)
	return append(dst, b...)
}

// appendNodeID appends what NodeID.MarshalJSON writes.
func appendNodeID(dst []byte, n NodeID) []byte {
	if n < 0 {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(n), 10)
}

// appendStackEnd appends an entry's last field, its stack (omitempty),
// and closes the entry.
func appendStackEnd(dst []byte, stack uint32) []byte {
	if stack != 0 {
		dst = appendUint(dst, `,"stack":`, uint64(stack))
	}
	return append(dst, '}')
}

func appendInt(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(dst, key...), v, 10)
}

func appendUint(dst []byte, key string, v uint64) []byte {
	return strconv.AppendUint(append(dst, key...), v, 10)
}

func appendBool(dst []byte, key string, v bool) []byte {
	return strconv.AppendBool(append(dst, key...), v)
}

func appendStringField(dst []byte, key, s string) []byte {
	return appendString(append(dst, key...), s)
}

// appendString appends s as json.Marshal writes a string. Plain printable
// ASCII with nothing to escape (nearly every string a trace holds) is
// copied between quotes; anything else is json.Marshal's own work, so
// its escaping (HTML characters, U+2028 and U+2029, invalid UTF-8) is
// exactly encoding/json's.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string cannot fail
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
