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
	// poolAccessTempdb: access operators that may read tempdb (a temp
	// table, or an object whose database the plan does not name), for
	// tempdb pages whose object is unknown.
	poolAccessTempdb
	// poolModify: operators that change data (insert, update, delete, merge).
	poolModify
	poolAccessOrModify
	poolHash
	poolSort
	poolExchange
)

// tempdbID is tempdb's database_id, fixed at 2
// (https://learn.microsoft.com/en-us/sql/relational-databases/databases/tempdb-database).
const tempdbID = 2

// pagePool is the pool for a page or file I/O event of database db whose
// object is unknown: a tempdb page (a worktable or workfile of a sort,
// hash or spool, most likely) can only be read by an access operator on
// a tempdb object.
func pagePool(db uint64) pool {
	if db == tempdbID {
		return poolAccessTempdb
	}
	return poolAccess
}

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
	tempdb    bool // an access operator with an object that may be in tempdb
	hasWindow bool
	win       Window         // all its query_thread_profile windows merged
	windows   []threadWindow // each query_thread_profile window, in event order
	hasOwn    bool
	own       Window // first and last unambiguously matched event
	// strictEnd is the last end of its own events matched by more than
	// timing alone (object, node id, statement).
	hasStrict bool
	strictEnd int64
	// spilled: a spill warning carries its node id; spillAt is the last.
	spilled bool
	spillAt int64
	// hasAct: act is when it worked (its times from a first pass over
	// the evidence), which timing matches use instead of its windows.
	hasAct bool
	act    Window
	// actPlaced: act is where its parent's semantics placed it for its
	// active time, not what its own evidence showed.
	actPlaced bool
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
	case poolAccessTempdb:
		return o.access && o.tempdb
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
	// ref is ids' handle in the lanes' candidate table, once an
	// ambiguous match listed them.
	ref CandidatesRef
	// byWindows' last answer and the times it holds for: between lo and
	// hi no candidate's window starts or ends, so the same windows
	// contain t; when one does, the narrowest containing one wins
	// whatever t is, when none does, the nearest one up to where the
	// distances cross (issue 26 performance: the reads of one index,
	// a million of them in time order, ask the same question).
	cached           Match
	cacheOK          bool
	cacheLo, cacheHi int64
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
	root *showplan.Operator
	ops  []*opInfo
	byID map[int]*opInfo
	// byNode is byID as a slice indexed by node id (nil when an id is
	// negative or too large): the per-event passes look operators up a
	// million times.
	byNode  []*opInfo
	byTable map[string][]*opInfo // lower-case table → operators naming it
	// cands caches the candidate set per resolved object (catalog entries
	// are shared pointers, so a trace has few distinct ones).
	cands map[candKey]*candSet
	// recent is a small cache in front of cands, scanned in order:
	// events mostly touch a few objects (a table's clustered index and a
	// nonclustered one interleave), and comparing a few keys costs less
	// than hashing one.
	recent [4]struct {
		key candKey
		set *candSet
	}
	nRecent int
	// timingBuf and idBuf are reused by the matchers; tables interns the
	// candidate id lists of ambiguous matches (and fillLanes the entries'
	// objects), so a million ambiguous events share a handful of lists.
	timingBuf []candidate
	idBuf     []NodeID
	tables    *laneTables
	notes     []string
	// cycleNotes are the last phases pass's notes on executions drawn as
	// one phase.
	cycleNotes []string
	// profilesAtEnd: every query_thread_profile fired together as the
	// query ended, so windows bound operators but do not place them.
	profilesAtEnd bool
	// bySpans: timing matches use each operator's worked span (act)
	// instead of its windows.
	bySpans bool
	// deferTiming: the first pass leaves every match that timing would
	// decide to rematch, which decides it against the worked spans (the
	// first pass's answer would be thrown away: it is not evidence).
	deferTiming bool
}

type candKey struct {
	obj *ObjectName
	p   pool
}

func newMatcher(stmt *showplan.Statement) *matcher {
	m := &matcher{byID: map[int]*opInfo{}, byTable: map[string][]*opInfo{}, cands: map[candKey]*candSet{}, tables: newLaneTables()}
	if stmt == nil {
		return m
	}
	m.root = stmt.Root
	for i, op := range stmt.Operators {
		info := &opInfo{op: op, order: i}
		info.modify = isModify(op)
		info.access = !info.modify && len(op.Objects) > 0 && isAccess(op)
		info.tempdb = info.access && slices.ContainsFunc(op.Objects, mayBeTempdb)
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
	m.indexNodes()
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
// mayBeTempdb: the plan names tempdb as the object's database, names
// none, or the object is a temporary table (#name).
func mayBeTempdb(o showplan.ObjectRef) bool {
	db := strings.Trim(o.Database, "[]")
	return db == "" || strings.EqualFold(db, "tempdb") || strings.HasPrefix(strings.Trim(o.Table, "[]"), "#")
}

func isAccess(op *showplan.Operator) bool {
	p := strings.ToLower(op.PhysicalOp)
	return strings.HasSuffix(p, " scan") || strings.HasSuffix(p, " seek") || strings.HasSuffix(p, "lookup") ||
		p == "table scan" || p == "rid lookup" || p == "key lookup"
}

// timingWindow is what timing matches compare an event with: when the
// operator worked, once a first pass has worked it out from evidence
// (act), else its merged query_thread_profile window — a bound, which
// seldom decides alone: a match it decides is ambiguous unless every
// candidate has one and exactly one holds the event.
func (o *opInfo) timingWindow() (Window, bool) {
	switch {
	case o.hasAct:
		return o.act, true
	case o.hasWindow:
		return o.win, true
	}
	return Window{}, false
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
	for i := range m.nRecent {
		if m.recent[i].key == k {
			return m.recent[i].set
		}
	}
	if c, ok := m.cands[k]; ok {
		m.remember(k, c)
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
	m.remember(k, c)
	return c
}

// remember puts a candidate set first in the recent cache.
func (m *matcher) remember(k candKey, c *candSet) {
	n := min(m.nRecent+1, len(m.recent))
	copy(m.recent[1:n], m.recent[:n-1])
	m.recent[0].key, m.recent[0].set = k, c
	m.nRecent = n
}

// maxDenseNode bounds byNode's length: plans number their operators from
// 0, so any real plan fits.
const maxDenseNode = 1 << 16

// indexNodes fills byNode from byID.
func (m *matcher) indexNodes() {
	hi := -1
	for id := range m.byID {
		if id < 0 || id >= maxDenseNode {
			return
		}
		hi = max(hi, id)
	}
	m.byNode = make([]*opInfo, hi+1)
	for id, o := range m.byID {
		m.byNode[id] = o
	}
}

// node is byID[id].
func (m *matcher) node(id NodeID) *opInfo {
	if m.byNode != nil {
		if id >= 0 && int(id) < len(m.byNode) {
			return m.byNode[id]
		}
		return nil
	}
	return m.byID[int(id)]
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
	if obj == nil && m.deferTiming {
		return Match{NodeID: Unmatched}
	}
	if obj == nil {
		// Data whose object the catalog does not know: timing may still
		// tell, but far from every window it is a catalog miss, not the
		// statement's own work.
		if mt := m.matchTiming(t, p); mt.Rule != RuleStatement {
			return mt
		}
		return Match{NodeID: Unmatched}
	}
	return m.matchSet(m.candidatesFor(obj, objectPool(p)), t)
}

// objectPool is the pool of a data event whose object is known: its name
// decides, tempdb or not.
func objectPool(p pool) pool {
	if p == poolAccessTempdb {
		return poolAccess
	}
	return p
}

// matchSet is matchData for an event whose object has candidate set set.
func (m *matcher) matchSet(set *candSet, t int64) Match {
	switch len(set.cands) {
	case 0:
		return Match{NodeID: Unmatched}
	case 1:
		return Match{NodeID: NodeID(set.cands[0].op.op.NodeID), Rule: RuleObject, Confidence: set.cands[0].conf}
	}
	if m.deferTiming {
		return Match{NodeID: Unmatched, Rule: RuleObjectTiming}
	}
	return m.byWindows(t, set)
}

// matchIO is matchData for file I/O, decided at once: rematch does not
// revisit it (its entry does not hold its object).
func (m *matcher) matchIO(obj *ObjectName, t int64, p pool) Match {
	deferred := m.deferTiming
	m.deferTiming = false
	mt := m.matchData(obj, t, p)
	m.deferTiming = deferred
	return mt
}

// byWindows decides between several operators that touch the event's
// object by their execution windows. It is sure only when every candidate
// has a window and exactly one contains t; otherwise the match is
// ambiguous, with low confidence: the narrowest containing window, else the
// nearest, is taken, and the candidates are listed. With no windows at all
// nothing can choose and the event stays unmatched (still listing them).
func (m *matcher) byWindows(t int64, set *candSet) Match {
	if set.cacheOK && t >= set.cacheLo && t <= set.cacheHi {
		return set.cached
	}
	mt, containing := m.decideByWindows(t, set)
	set.cached, set.cacheOK = mt, true
	set.cacheLo, set.cacheHi = sameContainment(t, set.cands)
	if containing == 0 {
		// In a gap between windows the nearest one wins, and which is
		// nearest changes where the distances cross (issue 26
		// performance: reads between the worked spans of the operators
		// on their index, most of a trace, missed the cache).
		set.cacheLo, set.cacheHi = nearestHolds(t, set.cands, set.cacheLo, set.cacheHi)
	}
	return mt
}

// nearestHolds narrows [lo, hi], a gap around t in which no candidate's
// window contains t, to the times at which the candidate nearest t (as
// bestWindow picks it) stays the nearest. Candidates on the same side of
// t keep their order across the gap; one on the other side is beaten
// until the distances cross at the midpoint, where the tie goes to the
// deeper, then earlier operator.
func nearestHolds(t int64, cands []candidate, lo, hi int64) (int64, int64) {
	best, _, _ := bestWindow(t, cands)
	if best == nil {
		return lo, hi // no windows: nothing to be near
	}
	bw, _ := best.op.timingWindow()
	left := bw.End < t
	for i := range cands {
		o := cands[i].op
		w, ok := o.timingWindow()
		if !ok || &cands[i] == best || (w.End < t) == left {
			continue
		}
		wins := deeperOrEarlier(best.op, o)
		if left {
			// best wins while t−bw.End < w.Start−t (or equal and it wins
			// the tie): 2t < bw.End+w.Start.
			sum := bw.End + w.Start
			if !wins {
				sum--
			}
			hi = min(hi, floorHalf(sum))
		} else {
			// best wins while bw.Start−t < t−w.End: 2t > bw.Start+w.End.
			sum := bw.Start + w.End
			if !wins {
				sum++
			}
			lo = max(lo, -floorHalf(-sum))
		}
	}
	return lo, hi
}

// floorHalf is ⌊x/2⌋, for negative x too.
func floorHalf(x int64) int64 { return x >> 1 }

// sameContainment is the span of times around t in which each
// candidate's window contains t or not as it does at t.
func sameContainment(t int64, cands []candidate) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	for i := range cands {
		w, ok := cands[i].op.timingWindow()
		switch {
		case !ok:
		case t < w.Start:
			hi = min(hi, w.Start-1)
		case t > w.End:
			lo = max(lo, w.End+1)
		default:
			lo, hi = max(lo, w.Start), min(hi, w.End)
		}
	}
	return lo, hi
}

// decideByWindows is byWindows without its cache; it also returns how
// many windows contain t.
func (m *matcher) decideByWindows(t int64, set *candSet) (Match, int) {
	best, containing, windowed := bestWindow(t, set.cands)
	if best == nil {
		return Match{NodeID: Unmatched, Ambiguous: true, Candidates: m.setRef(set)}, containing
	}
	id := NodeID(best.op.op.NodeID)
	if containing == 1 && windowed == len(set.cands) {
		conf := best.conf
		if best.op.actPlaced {
			conf = ConfidenceLow
		}
		return Match{NodeID: id, Rule: RuleObjectTiming, Confidence: conf}, containing
	}
	var ids CandidatesRef
	if containing > 1 {
		ids = m.containingIDs(t, set.cands)
	} else {
		ids = m.setRef(set)
	}
	return Match{NodeID: id, Rule: RuleObjectTiming, Confidence: ConfidenceLow, Ambiguous: true, Candidates: ids}, containing
}

// bestWindow picks, among candidates with an execution window, the one whose
// window contains t (the narrowest, when several do), else the nearest.
// Ties go to the deeper operator, then the earlier in plan order. It also counts the
// windows that contain t and the candidates that have one; best is nil
// when none has a window.
func bestWindow(t int64, cands []candidate) (best *candidate, containing, windowed int) {
	bestContains := false
	bestScore := int64(math.MaxInt64)
	for i := range cands {
		o := cands[i].op
		w, ok := o.timingWindow()
		if !ok {
			continue
		}
		windowed++
		contains := t >= w.Start && t <= w.End
		var score int64
		if contains {
			containing++
			score = w.End - w.Start
		} else {
			score = distance(t, w)
		}
		better := best == nil || (contains && !bestContains) ||
			(contains == bestContains && (score < bestScore || (score == bestScore && deeperOrEarlier(o, best.op))))
		if better {
			best, bestContains, bestScore = &cands[i], contains, score
		}
	}
	return best, containing, windowed
}

// deeperOrEarlier breaks a tie between equal windows: an operator's span
// holds its inputs', so the deeper operator is the more specific one; then
// plan order.
func deeperOrEarlier(a, b *opInfo) bool {
	if a.op.Depth != b.op.Depth {
		return a.op.Depth > b.op.Depth
	}
	return a.order < b.order
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

// setRef is the handle of a candidate set's ids.
func (m *matcher) setRef(set *candSet) CandidatesRef {
	if set.ref == 0 {
		set.ref = m.tables.candidates(set.ids)
	}
	return set.ref
}

// containingIDs interns the ids of the candidates whose window contains t.
func (m *matcher) containingIDs(t int64, cands []candidate) CandidatesRef {
	ids := m.idBuf[:0]
	for _, c := range cands {
		if w, ok := c.op.timingWindow(); ok && t >= w.Start && t <= w.End {
			ids = append(ids, NodeID(c.op.op.NodeID))
		}
	}
	m.idBuf = ids
	return m.tables.candidates(ids)
}

// matchTiming matches an event that names no object (a wait, a spill
// without a node id) to the operator of pool p whose window best contains
// t, among those within TimingLimitUs. None near: the event belongs to the
// statement. Several near: ambiguous. No operator of the pool has a window
// at all: unmatched.
func (m *matcher) matchTiming(t int64, p pool) Match {
	if m.deferTiming {
		return Match{NodeID: Unmatched}
	}
	cands := m.timingBuf[:0]
	windows := false
	for _, o := range m.ops {
		if w, ok := o.timingWindow(); ok && o.in(p) && !o.notExecuted {
			windows = true
			if distance(t, w) <= TimingLimitUs {
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
	return Match{NodeID: NodeID(best.op.op.NodeID), Rule: RuleTiming, Confidence: ConfidenceLow, Ambiguous: true, Candidates: m.tables.candidates(ids)}
}
