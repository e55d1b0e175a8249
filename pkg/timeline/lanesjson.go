package timeline

import "encoding/json"

// The lanes' JSON is what it was before entries named objects and
// candidate lists by handle (issue 26): every entry carries its "object"
// and its match's "candidates" inline, so bundles written before load and
// the ones written now read the same to every other reader. The *Wire
// types are the entries as the JSON has them: field for field the entry
// types, in their order (the JSON's), with the handles replaced by what
// they name. TestWireTypesMatchEntries keeps them in step. UnmarshalJSON
// reads them; MarshalJSON writes the same JSON without them, by hand
// (lanesappend.go), because storing a finished live trace must be quick
// (issue 29), and the tests check its bytes against json.Marshal of them.

// matchWire is Match with its candidates inline.
type matchWire struct {
	NodeID     NodeID     `json:"nodeId"`
	Rule       Rule       `json:"rule"`
	Confidence Confidence `json:"confidence"`
	Ambiguous  bool       `json:"ambiguous,omitempty"`
	Candidates []NodeID   `json:"candidates,omitempty"`
}

type pageWire struct {
	T int64 `json:"t"`
	matchWire
	DatabaseID uint64      `json:"databaseId,omitempty"`
	FileID     uint64      `json:"file"`
	PageID     uint64      `json:"page"`
	Object     *ObjectName `json:"object,omitempty"`
	Stack      uint32      `json:"stack,omitempty"`
}

type lockWire struct {
	T   int64 `json:"t"`
	End int64 `json:"end"`
	matchWire
	Mode          string      `json:"mode"`
	ResourceType  string      `json:"resourceType"`
	Resource      string      `json:"resource"`
	TransactionID int64       `json:"transactionId"`
	Object        *ObjectName `json:"object,omitempty"`
	Open          bool        `json:"open,omitempty"`
	HeldToEnd     bool        `json:"heldToEnd,omitempty"`
	Row           string      `json:"row,omitempty"`
	AcquireSeen   bool        `json:"acquireSeen"`
	Stack         uint32      `json:"stack,omitempty"`
}

type waitWire struct {
	T   int64 `json:"t"`
	End int64 `json:"end"`
	matchWire
	WaitType         string `json:"waitType"`
	Category         string `json:"category"`
	DurationUs       uint64 `json:"durationUs"`
	DurationSource   string `json:"durationSource,omitempty"`
	DurationMs       uint64 `json:"durationMs"`
	SignalDurationMs uint64 `json:"signalDurationMs"`
	UnderOneMs       bool   `json:"underOneMs,omitempty"`
	Open             bool   `json:"open,omitempty"`
	Stack            uint32 `json:"stack,omitempty"`
}

type memoryWire struct {
	T int64 `json:"t"`
	matchWire
	Kind            string `json:"kind"`
	Detail          string `json:"detail,omitempty"`
	GrantedMemoryKB uint64 `json:"grantedKB,omitempty"`
	UsedMemoryKB    uint64 `json:"usedKB,omitempty"`
	Spill           bool   `json:"spill"`
	Stack           uint32 `json:"stack,omitempty"`
}

type splitWire struct {
	T int64 `json:"t"`
	matchWire
	FileID    uint64      `json:"file"`
	PageID    uint64      `json:"page"`
	NewFileID uint64      `json:"newFile"`
	NewPageID uint64      `json:"newPage"`
	Operation string      `json:"operation"`
	Object    *ObjectName `json:"object,omitempty"`
	Stack     uint32      `json:"stack,omitempty"`
}

type escalationWire struct {
	T int64 `json:"t"`
	matchWire
	Mode          string      `json:"mode"`
	ResourceType  string      `json:"resourceType"`
	Cause         string      `json:"cause,omitempty"`
	EscalatedLock uint64      `json:"escalatedLockCount"`
	HoBTLocks     uint64      `json:"hobtLockCount,omitempty"`
	Object        *ObjectName `json:"object,omitempty"`
	Stack         uint32      `json:"stack,omitempty"`
}

type logWire struct {
	T int64 `json:"t"`
	matchWire
	Kind          string      `json:"kind"`
	Operation     string      `json:"operation,omitempty"`
	Context       string      `json:"context,omitempty"`
	TransactionID int64       `json:"transactionId,omitempty"`
	Size          uint64      `json:"size,omitempty"`
	Object        *ObjectName `json:"object,omitempty"`
	Stack         uint32      `json:"stack,omitempty"`
}

type ioWire struct {
	T   int64 `json:"t"`
	End int64 `json:"end"`
	matchWire
	Write      bool   `json:"write"`
	DatabaseID uint64 `json:"databaseId"`
	FileID     uint64 `json:"file"`
	Offset     uint64 `json:"offset"`
	Size       uint64 `json:"size"`
	DurationUs uint64 `json:"durationUs"`
	Completed  bool   `json:"completed"`
	Open       bool   `json:"open,omitempty"`
}

// lanesWire is Lanes as the JSON has it.
type lanesWire struct {
	Plan       []PlanEntry      `json:"plan"`
	Read       []pageWire       `json:"read"`
	Write      []pageWire       `json:"write"`
	Lock       []lockWire       `json:"lock"`
	Wait       []waitWire       `json:"wait"`
	Memory     []memoryWire     `json:"memory"`
	Split      []splitWire      `json:"split"`
	Log        []logWire        `json:"log"`
	IO         []ioWire         `json:"io"`
	Escalation []escalationWire `json:"escalation,omitempty"`
}

// MarshalJSON writes the lanes with every object and candidate list
// inline. A value receiver: a Trace marshalled by value writes them too.
// The bytes are json.Marshal(lanesWire)'s, written by hand (lanesappend.go).
func (l Lanes) MarshalJSON() ([]byte, error) {
	return l.appendJSON(nil), nil
}

// UnmarshalJSON reads lanes with objects and candidate lists inline,
// giving each distinct one a handle in the lanes' tables.
func (l *Lanes) UnmarshalJSON(b []byte) error {
	var w lanesWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	t := newLaneTables()
	m := func(x *matchWire) Match {
		return Match{x.NodeID, x.Rule, x.Confidence, x.Ambiguous, t.candidates(x.Candidates)}
	}
	obj := func(o *ObjectName) ObjectRef {
		if o == nil {
			return 0
		}
		return t.name(*o)
	}
	*l = Lanes{Plan: w.Plan}
	l.Read, l.Write = entryLane(w.Read, func(e *pageWire) PageEvent {
		return PageEvent{e.T, m(&e.matchWire), e.DatabaseID, e.FileID, e.PageID, obj(e.Object), e.Stack}
	}), entryLane(w.Write, func(e *pageWire) PageEvent {
		return PageEvent{e.T, m(&e.matchWire), e.DatabaseID, e.FileID, e.PageID, obj(e.Object), e.Stack}
	})
	l.Lock = entryLane(w.Lock, func(e *lockWire) LockInterval {
		return LockInterval{e.T, e.End, m(&e.matchWire), e.Mode, e.ResourceType, e.Resource, e.TransactionID, obj(e.Object),
			e.Open, e.HeldToEnd, e.Row, e.AcquireSeen, e.Stack}
	})
	l.Wait = entryLane(w.Wait, func(e *waitWire) WaitInterval {
		return WaitInterval{e.T, e.End, m(&e.matchWire), e.WaitType, e.Category, e.DurationUs, e.DurationSource, e.DurationMs,
			e.SignalDurationMs, e.UnderOneMs, e.Open, e.Stack}
	})
	l.Memory = entryLane(w.Memory, func(e *memoryWire) MemoryEvent {
		return MemoryEvent{e.T, m(&e.matchWire), e.Kind, e.Detail, e.GrantedMemoryKB, e.UsedMemoryKB, e.Spill, e.Stack}
	})
	l.Split = entryLane(w.Split, func(e *splitWire) SplitEvent {
		return SplitEvent{e.T, m(&e.matchWire), e.FileID, e.PageID, e.NewFileID, e.NewPageID, e.Operation, obj(e.Object), e.Stack}
	})
	l.Log = entryLane(w.Log, func(e *logWire) LogEvent {
		return LogEvent{e.T, m(&e.matchWire), e.Kind, e.Operation, e.Context, e.TransactionID, e.Size, obj(e.Object), e.Stack}
	})
	l.IO = entryLane(w.IO, func(e *ioWire) IOInterval {
		return IOInterval{e.T, e.End, m(&e.matchWire), e.Write, e.DatabaseID, e.FileID, e.Offset, e.Size, e.DurationUs, e.Completed, e.Open}
	})
	l.Escalation = entryLane(w.Escalation, func(e *escalationWire) EscalationEvent {
		return EscalationEvent{e.T, m(&e.matchWire), e.Mode, e.ResourceType, e.Cause, e.EscalatedLock, e.HoBTLocks, obj(e.Object), e.Stack}
	})
	l.Objects, l.CandidateSets = t.objects, t.sets
	return nil
}

// entryLane is a lane of entries from the lane as the JSON has it; nil
// stays nil.
func entryLane[W, E any](lane []W, f func(*W) E) []E {
	if lane == nil {
		return nil
	}
	out := make([]E, len(lane))
	for i := range lane {
		out[i] = f(&lane[i])
	}
	return out
}
