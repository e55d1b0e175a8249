package timeline

import (
	"math"
	"slices"
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
	win       Window         // all its query_thread_profile windows merged
	windows   []threadWindow // each query_thread_profile window, in event order
	hasOwn    bool
	own       Window // first and last unambiguously matched event
	// notExecuted: the plan says it never ran (and no thread profile
	// says otherwise); it is nobody's candidate.
	notExecuted bool
	whyNot      string
}

// threadWindow is one query_thread_profile window of one thread.
type threadWindow struct {
	thread     int
	start, end int64
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

// candSet is the cached candidate set of one object and pool, with its
// node ids for ambiguous matches.
type candSet struct {
	cands []candidate
	ids   []NodeID
}

// TimingLimitUs is the distance limit of a timing match: an event that
// names no object and lies farther than this from every operator's
// execution window did not happen while any operator ran (a
// RESOURCE_SEMAPHORE wait for the memory grant, say) and belongs to the
// statement. Two milliseconds are two granules of the millisecond
// timestamps XE usually writes, which is the error of a window's edges.
const TimingLimitUs = 2000

// matcher ties events to the operators of one statement.
type matcher struct {
	root    *showplan.Operator
	ops     []*opInfo
	byID    map[int]*opInfo
	byTable map[string][]*opInfo // lower-case table → operators naming it
	// cands caches the candidate set per resolved object (catalog entries
	// are shared pointers, so a trace has few distinct ones).
	cands map[candKey]*candSet
	// last is a one-entry cache in front of cands: consecutive events
	// mostly touch the same object.
	lastKey  candKey
	lastCand *candSet
	// timingBuf and idBuf are reused by the matchers; sets interns the
	// candidate id lists of ambiguous matches (keyed by their bytes), so
	// a million ambiguous events share a handful of slices.
	timingBuf []candidate
	idBuf     []NodeID
	keyBuf    []byte
	sets      map[string][]NodeID
	notes     []string
}

type candKey struct {
	obj *ObjectName
	p   pool
}

func newMatcher(stmt *showplan.Statement) *matcher {
	m := &matcher{byID: map[int]*opInfo{}, byTable: map[string][]*opInfo{}, cands: map[candKey]*candSet{}, sets: map[string][]NodeID{}}
	if stmt == nil {
		return m
	}
	m.root = stmt.Root
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

func (m *matcher) addWindow(node, thread int, start, end int64) {
	o := m.byID[node]
	if o == nil {
		return
	}
	if start > end {
		start = end
	}
	o.windows = append(o.windows, threadWindow{thread, start, end})
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
// not a candidate, nor is one that never ran.
func (m *matcher) candidatesFor(obj *ObjectName, p pool) *candSet {
	k := candKey{obj, p}
	if m.lastCand != nil && m.lastKey == k {
		return m.lastCand
	}
	if c, ok := m.cands[k]; ok {
		m.lastKey, m.lastCand = k, c
		return c
	}
	var strong, weak []candidate
	for _, info := range m.byTable[lower(obj.Table)] {
		if !info.in(p) || info.notExecuted {
			continue
		}
		switch best := identity(info.op, obj); best {
		case ConfidenceStrong:
			strong = append(strong, candidate{info, best})
		case ConfidenceWeak:
			weak = append(weak, candidate{info, best})
		}
	}
	c := &candSet{cands: strong}
	if len(c.cands) == 0 {
		c.cands = weak
	}
	for _, cd := range c.cands {
		c.ids = append(c.ids, NodeID(cd.op.op.NodeID))
	}
	m.cands[k] = c
	m.lastKey, m.lastCand = k, c
	return c
}

// identity grades how well an operator's objects name obj: strong when
// table and index agree, weak when one side names no index, none otherwise.
func identity(op *showplan.Operator, obj *ObjectName) Confidence {
	best := ConfidenceNone
	for _, o := range op.Objects {
		if !strings.EqualFold(o.Table, obj.Table) {
			continue
		}
		if o.Schema != "" && obj.Schema != "" && !strings.EqualFold(o.Schema, obj.Schema) {
			continue
		}
		switch {
		case strings.EqualFold(o.Index, obj.Index):
			best = max(best, ConfidenceStrong)
		case o.Index == "" || obj.Index == "":
			best = max(best, ConfidenceWeak)
		}
	}
	return best
}

// matchData matches an event that touched data: by its object when it is
// known, else by timing among the operators of pool p.
func (m *matcher) matchData(obj *ObjectName, t int64, p pool) Match {
	if obj == nil {
		// Data whose object the catalog does not know: timing may still
		// tell, but far from every window it is a catalog miss, not the
		// statement's own work.
		if mt := m.matchTiming(t, p); mt.Rule != RuleStatement {
			return mt
		}
		return Match{NodeID: Unmatched}
	}
	set := m.candidatesFor(obj, p)
	switch len(set.cands) {
	case 0:
		return Match{NodeID: Unmatched}
	case 1:
		return Match{NodeID: NodeID(set.cands[0].op.op.NodeID), Rule: RuleObject, Confidence: set.cands[0].conf}
	}
	return m.byWindows(t, set)
}

// byWindows decides between several operators that touch the event's
// object by their execution windows. It is sure only when every candidate
// has a window and exactly one contains t; otherwise the match is
// ambiguous, with low confidence: the narrowest containing window, else the
// nearest, is taken, and the candidates are listed. With no windows at all
// nothing can choose and the event stays unmatched (still listing them).
func (m *matcher) byWindows(t int64, set *candSet) Match {
	best, containing, windowed := bestWindow(t, set.cands)
	if best == nil {
		return Match{NodeID: Unmatched, Ambiguous: true, Candidates: set.ids}
	}
	id := NodeID(best.op.op.NodeID)
	if containing == 1 && windowed == len(set.cands) {
		return Match{NodeID: id, Rule: RuleObjectTiming, Confidence: best.conf}
	}
	ids := set.ids
	if containing > 1 {
		ids = m.containingIDs(t, set.cands)
	}
	return Match{NodeID: id, Rule: RuleObjectTiming, Confidence: ConfidenceLow, Ambiguous: true, Candidates: ids}
}

// bestWindow picks, among candidates with an execution window, the one whose
// window contains t (the narrowest, when several do), else the nearest.
// Ties go to the earlier operator in plan order. It also counts the
// windows that contain t and the candidates that have one; best is nil
// when none has a window.
func bestWindow(t int64, cands []candidate) (best *candidate, containing, windowed int) {
	bestContains := false
	bestScore := int64(math.MaxInt64)
	for i := range cands {
		o := cands[i].op
		if !o.hasWindow {
			continue
		}
		windowed++
		contains := t >= o.win.Start && t <= o.win.End
		var score int64
		if contains {
			containing++
			score = o.win.End - o.win.Start
		} else {
			score = distance(t, o.win)
		}
		better := best == nil || (contains && !bestContains) ||
			(contains == bestContains && (score < bestScore || (score == bestScore && o.order < best.op.order)))
		if better {
			best, bestContains, bestScore = &cands[i], contains, score
		}
	}
	return best, containing, windowed
}

func distance(t int64, w Window) int64 {
	switch {
	case t < w.Start:
		return w.Start - t
	case t > w.End:
		return t - w.End
	}
	return 0
}

// containingIDs interns the ids of the candidates whose window contains t.
func (m *matcher) containingIDs(t int64, cands []candidate) []NodeID {
	ids := m.idBuf[:0]
	for _, c := range cands {
		if c.op.hasWindow && t >= c.op.win.Start && t <= c.op.win.End {
			ids = append(ids, NodeID(c.op.op.NodeID))
		}
	}
	m.idBuf = ids
	return m.intern(ids)
}

// intern returns a shared copy of ids.
func (m *matcher) intern(ids []NodeID) []NodeID {
	key := m.keyBuf[:0]
	for _, id := range ids {
		key = append(key, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	m.keyBuf = key
	if s, ok := m.sets[string(key)]; ok {
		return s
	}
	s := slices.Clone(ids)
	m.sets[string(key)] = s
	return s
}

// matchTiming matches an event that names no object (a wait, a spill
// without a node id) to the operator of pool p whose window best contains
// t, among those within TimingLimitUs. None near: the event belongs to the
// statement. Several near: ambiguous. No operator of the pool has a window
// at all: unmatched.
func (m *matcher) matchTiming(t int64, p pool) Match {
	cands := m.timingBuf[:0]
	windows := false
	for _, o := range m.ops {
		if o.hasWindow && o.in(p) && !o.notExecuted {
			windows = true
			if distance(t, o.win) <= TimingLimitUs {
				cands = append(cands, candidate{o, ConfidenceLow})
			}
		}
	}
	m.timingBuf = cands
	best, _, _ := bestWindow(t, cands)
	switch {
	case !windows:
		// No operator has a window: timing cannot tell anything.
		return Match{NodeID: Unmatched}
	case best == nil:
		return Match{NodeID: Unmatched, Rule: RuleStatement}
	case len(cands) == 1:
		return Match{NodeID: NodeID(best.op.op.NodeID), Rule: RuleTiming, Confidence: ConfidenceLow}
	}
	ids := m.idBuf[:0]
	for _, c := range cands {
		ids = append(ids, NodeID(c.op.op.NodeID))
	}
	m.idBuf = ids
	return Match{NodeID: NodeID(best.op.op.NodeID), Rule: RuleTiming, Confidence: ConfidenceLow, Ambiguous: true, Candidates: m.intern(ids)}
}

// collectOwn records each operator's first and last matched data event.
func (m *matcher) collectOwn(l *Lanes) {
	note := func(mt Match, t, end int64) {
		n := mt.NodeID
		if n < 0 || mt.Ambiguous {
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
		if !e.Open {
			note(e.Match, e.T, e.T)
		}
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
	for _, e := range l.Memory {
		if e.Rule == RuleNodeID {
			note(e.Match, e.T, e.T)
		}
	}
}
