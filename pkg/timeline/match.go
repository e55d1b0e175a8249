package timeline

import (
	"math"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// pool selects which operators an event may belong to.
type pool uint8

const (
	poolAll pool = iota
	// poolAccess: operators that read data (scans, seeks, lookups).
	poolAccess
	// poolModify: operators that change data (insert, update, delete, merge).
	poolModify
	poolAccessOrModify
	poolHash
	poolSort
	poolExchange
)

func spillPool(event string) pool {
	switch event {
	case "sort_warning":
		return poolSort
	case "exchange_spill":
		return poolExchange
	}
	return poolHash
}

type opInfo struct {
	op        *showplan.Operator
	order     int // position in plan (pre-order)
	access    bool
	modify    bool
	hash      bool
	sort      bool
	exchange  bool
	hasWindow bool
	win       Window
	hasOwn    bool
	own       Window // first and last matched data event
}

func (o *opInfo) in(p pool) bool {
	switch p {
	case poolAccess:
		return o.access
	case poolModify:
		return o.modify
	case poolAccessOrModify:
		return o.access || o.modify
	case poolHash:
		return o.hash
	case poolSort:
		return o.sort
	case poolExchange:
		return o.exchange
	}
	return true
}

type candidate struct {
	op   *opInfo
	conf Confidence
}

// matcher ties events to the operators of one statement.
type matcher struct {
	ops     []*opInfo
	byID    map[int]*opInfo
	byTable map[string][]*opInfo // lower-case table → operators naming it
	// cands caches the candidate set per resolved object (catalog entries
	// are shared pointers, so a trace has few distinct ones).
	cands map[candKey][]candidate
	// last is a one-entry cache in front of cands: consecutive events
	// mostly touch the same object.
	lastKey   candKey
	lastCands []candidate
	lastOK    bool
	// timingBuf is reused by matchTiming.
	timingBuf []candidate
}

type candKey struct {
	obj *ObjectName
	p   pool
}

func newMatcher(stmt *showplan.Statement) *matcher {
	m := &matcher{byID: map[int]*opInfo{}, byTable: map[string][]*opInfo{}, cands: map[candKey][]candidate{}}
	if stmt == nil {
		return m
	}
	for i, op := range stmt.Operators {
		info := &opInfo{op: op, order: i}
		info.modify = isModify(op)
		info.access = !info.modify && len(op.Objects) > 0 && isAccess(op)
		phys := strings.ToLower(op.PhysicalOp)
		info.hash = phys == "hash match" || phys == "adaptive join" || phys == "batch hash table build"
		info.sort = strings.Contains(phys, "sort")
		info.exchange = phys == "parallelism"
		m.ops = append(m.ops, info)
		m.byID[op.NodeID] = info
		if info.access || info.modify {
			seen := map[string]bool{}
			for _, o := range op.Objects {
				t := lower(o.Table)
				if t == "" || seen[t] {
					continue
				}
				seen[t] = true
				m.byTable[t] = append(m.byTable[t], info)
			}
		}
	}
	return m
}

// isModify tells DML operators by their logical operation (showplan
// LogicalOp values Insert, Update, Delete, Merge; the physical ones are
// "Clustered Index Insert", "Table Update", "Index Delete", …).
func isModify(op *showplan.Operator) bool {
	switch strings.ToLower(op.LogicalOp) {
	case "insert", "update", "delete", "merge":
		return true
	}
	return false
}

// isAccess tells operators that read an index or heap.
func isAccess(op *showplan.Operator) bool {
	p := strings.ToLower(op.PhysicalOp)
	return strings.HasSuffix(p, " scan") || strings.HasSuffix(p, " seek") || strings.HasSuffix(p, "lookup") ||
		p == "table scan" || p == "rid lookup" || p == "key lookup"
}

func (m *matcher) addWindow(node int, start, end int64) {
	o := m.byID[node]
	if o == nil {
		return
	}
	if start > end {
		start = end
	}
	if !o.hasWindow {
		o.hasWindow, o.win = true, Window{start, end}
		return
	}
	o.win.Start = min(o.win.Start, start)
	o.win.End = max(o.win.End, end)
}

func (m *matcher) matchNode(node int) Match {
	if _, ok := m.byID[node]; ok {
		return Match{NodeID: NodeID(node), Rule: RuleNodeID, Confidence: ConfidenceExact}
	}
	return Match{NodeID: Unmatched}
}

// candidatesFor lists the operators in pool p that touch obj, with the best
// confidence available: strong (table and index agree) before weak (one
// side names no index). An operator on the table but a different index is
// not a candidate.
func (m *matcher) candidatesFor(obj *ObjectName, p pool) []candidate {
	k := candKey{obj, p}
	if m.lastOK && m.lastKey == k {
		return m.lastCands
	}
	if c, ok := m.cands[k]; ok {
		m.lastKey, m.lastCands, m.lastOK = k, c, true
		return c
	}
	var strong, weak []candidate
	for _, info := range m.byTable[lower(obj.Table)] {
		if !info.in(p) {
			continue
		}
		best := ConfidenceNone
		for _, o := range info.op.Objects {
			if !strings.EqualFold(o.Table, obj.Table) {
				continue
			}
			if o.Schema != "" && obj.Schema != "" && !strings.EqualFold(o.Schema, obj.Schema) {
				continue
			}
			var c Confidence
			switch {
			case strings.EqualFold(o.Index, obj.Index):
				c = ConfidenceStrong
			case o.Index == "" || obj.Index == "":
				c = ConfidenceWeak
			default:
				continue
			}
			best = max(best, c)
		}
		switch best {
		case ConfidenceStrong:
			strong = append(strong, candidate{info, best})
		case ConfidenceWeak:
			weak = append(weak, candidate{info, best})
		}
	}
	c := strong
	if len(c) == 0 {
		c = weak
	}
	m.cands[k] = c
	m.lastKey, m.lastCands, m.lastOK = k, c, true
	return c
}

// matchData matches an event that touched data: by its object when it is
// known, else by timing among the operators of pool p.
func (m *matcher) matchData(obj *ObjectName, t int64, p pool) Match {
	if obj == nil {
		return m.matchTiming(t, p)
	}
	cands := m.candidatesFor(obj, p)
	switch len(cands) {
	case 0:
		return Match{NodeID: Unmatched}
	case 1:
		return Match{NodeID: NodeID(cands[0].op.op.NodeID), Rule: RuleObject, Confidence: cands[0].conf}
	}
	if best := bestWindow(t, cands); best != nil {
		return Match{NodeID: NodeID(best.op.op.NodeID), Rule: RuleObjectTiming, Confidence: best.conf}
	}
	return Match{NodeID: Unmatched}
}

// bestWindow picks, among candidates with an execution window, the one whose
// window contains t (the narrowest, when several do), else the nearest.
// Ties go to the earlier operator in plan order. Nil when none has a window.
func bestWindow(t int64, cands []candidate) *candidate {
	var best *candidate
	bestContains := false
	bestScore := int64(math.MaxInt64)
	for i := range cands {
		o := cands[i].op
		if !o.hasWindow {
			continue
		}
		contains := t >= o.win.Start && t <= o.win.End
		var score int64
		if contains {
			score = o.win.End - o.win.Start
		} else if t < o.win.Start {
			score = o.win.Start - t
		} else {
			score = t - o.win.End
		}
		better := best == nil || (contains && !bestContains) ||
			(contains == bestContains && (score < bestScore || (score == bestScore && o.order < best.op.order)))
		if better {
			best, bestContains, bestScore = &cands[i], contains, score
		}
	}
	return best
}

// matchTiming matches an event that names no object to the operator of pool
// p whose window best contains t.
func (m *matcher) matchTiming(t int64, p pool) Match {
	cands := m.timingBuf[:0]
	for _, o := range m.ops {
		if o.hasWindow && o.in(p) {
			cands = append(cands, candidate{o, ConfidenceLow})
		}
	}
	m.timingBuf = cands
	if best := bestWindow(t, cands); best != nil {
		return Match{NodeID: NodeID(best.op.op.NodeID), Rule: RuleTiming, Confidence: ConfidenceLow}
	}
	return Match{NodeID: Unmatched}
}

// collectOwn records each operator's first and last matched data event.
func (m *matcher) collectOwn(l *Lanes) {
	note := func(n NodeID, t, end int64) {
		if n < 0 {
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
		note(e.NodeID, e.T, e.T)
	}
	for _, e := range l.Write {
		note(e.NodeID, e.T, e.T)
	}
	for _, e := range l.Lock {
		if !e.HeldToEnd {
			note(e.NodeID, e.T, e.T)
		}
	}
	for _, e := range l.Log {
		if e.Kind == "record" {
			note(e.NodeID, e.T, e.T)
		}
	}
	for _, e := range l.Split {
		note(e.NodeID, e.T, e.T)
	}
	for _, e := range l.IO {
		note(e.NodeID, e.T, e.End)
	}
}
