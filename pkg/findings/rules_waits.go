package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/timeline"
)

// lockTolerance is how far (µs) a lock acquisition may be from the end of
// the lock wait it ended: the acquisition follows the wait at once, but
// millisecond timestamps may have been spread (timeline §6.2).
const lockTolerance = 2000

// lockMode turns a lock wait type into the lock mode it waited for:
// LCK_M_X → X, LCK_M_SCH_M → SCH-M, LCK_M_IX_LOW_PRIORITY → IX.
func lockMode(waitType string) string {
	m := strings.TrimPrefix(strings.ToUpper(waitType), "LCK_M_")
	for _, suf := range []string{"_LOW_PRIORITY", "_ABORT_BLOCKERS"} {
		m = strings.TrimSuffix(m, suf)
	}
	return strings.ReplaceAll(m, "_", "-")
}

func sameMode(lockLaneMode, waited string) bool {
	return strings.EqualFold(strings.ReplaceAll(lockLaneMode, "_", "-"), waited)
}

// blockedLock finds the lock a wait ended with: the acquisition of the
// waited mode nearest the wait's end (within lockTolerance, not before the
// wait began). -1 when there is none.
func blockedLock(locks []timeline.LockInterval, w timeline.WaitInterval) int {
	if w.Open {
		return -1
	}
	mode := lockMode(w.WaitType)
	best, bestD := -1, int64(lockTolerance+1)
	lo, _ := slices.BinarySearchFunc(locks, w.End-lockTolerance, func(l timeline.LockInterval, t int64) int { return cmp.Compare(l.T, t) })
	for i := lo; i < len(locks) && locks[i].T <= w.End+lockTolerance; i++ {
		l := locks[i]
		if l.T < w.T || !l.AcquireSeen || !sameMode(l.Mode, mode) {
			continue
		}
		if d := abs64(l.T - w.End); d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// blockGroup is the lock waits on one resource.
type blockGroup struct {
	key   string
	lock  int // lock-lane index of the first acquisition found, or -1
	mode  string
	waits []int
	locks []int
	us    int64
	open  bool
}

// blocking groups lock waits by the resource they waited for and reports
// each resource waited on for at least MinLockWaitUs.
func blocking(a *analysis) []Finding {
	l := &a.in.Trace.Lanes
	groups := map[string]*blockGroup{}
	var order []string
	for i, w := range l.Wait {
		if !strings.HasPrefix(strings.ToUpper(w.WaitType), "LCK_M_") {
			continue
		}
		li := blockedLock(l.Lock, w)
		key := "?" + lockMode(w.WaitType)
		if li >= 0 {
			key = l.Lock[li].ResourceType + " " + l.Lock[li].Resource
		}
		g := groups[key]
		if g == nil {
			g = &blockGroup{key: key, lock: li, mode: lockMode(w.WaitType)}
			groups[key] = g
			order = append(order, key)
		}
		g.waits = append(g.waits, i)
		g.us += WaitUs(w)
		g.open = g.open || w.Open
		if li >= 0 {
			g.locks = append(g.locks, li)
		}
	}
	var out []Finding
	for _, k := range order {
		if g := groups[k]; g.us >= a.cfg.MinLockWaitUs {
			out = append(out, a.blockFinding(g))
		}
	}
	return out
}

func (a *analysis) blockFinding(g *blockGroup) Finding {
	l := &a.in.Trace.Lanes
	f := Finding{Severity: SeverityWarning, pending: append(ev(LaneWait, g.waits), ev(LaneLock, g.locks)...)}
	f.Numbers = []Number{num("waitUs", float64(g.us), "us", "events"), num("waits", float64(len(g.waits)), "count", "events")}
	f.Operators = a.opRefs(a.nodesOf(f.pending)...)
	what := fmt.Sprintf("an %s lock", g.mode)
	if !startsWithVowelSound(g.mode) {
		what = fmt.Sprintf("a %s lock", g.mode)
	}
	var holderText string
	if g.lock >= 0 {
		lk := l.Lock[g.lock]
		what += " on " + a.lockResource(lk)
		holderText = a.holder(lk)
	}
	if holderText == "" {
		f.Holders = a.sampledHolders(g) // rules_blockers.go
		holderText = holdersText(f.Holders)
	}
	f.Title = fmt.Sprintf("Blocked for %s waiting for %s", Duration(g.us), what)
	var detail []string
	if g.lock < 0 {
		detail = append(detail, "The trace has no acquisition of that lock at the wait's end, so the resource is unknown.")
	}
	if g.open {
		detail = append(detail, "A wait did not end inside the trace: the statement timed out (SET LOCK_TIMEOUT), was cancelled, or the trace stopped first.")
	}
	if holderText != "" {
		detail = append(detail, holderText)
	} else {
		detail = append(detail, "The holder is not in this trace: the session traces only its own SPID. sys.dm_os_waiting_tasks "+
			"(blocking_session_id) or a blocked process report names it while it happens.")
	}
	f.Detail = strings.Join(detail, " ")
	if a.p.DurationUs > 0 && share(g.us, a.p.DurationUs) >= a.cfg.CriticalWaitShare {
		f.Severity = SeverityCritical
	}
	f.Hint = "Another transaction held an incompatible lock on the resource until it committed or rolled back. Keep transactions " +
		"short, and index the other statement's search predicate so it locks fewer rows."
	// Row versioning (RCSI) spares readers only: a writer (X, U, IX)
	// still waits for the other writer.
	if m := strings.ToUpper(g.mode); m == "S" || m == "IS" {
		f.Hint += " Readers can use row versions instead (READ_COMMITTED_SNAPSHOT), so they do not wait for writers."
	}
	f.Reference = refBlocking
	return f
}

// startsWithVowelSound: lock modes are read letter by letter ("an X
// lock", "an IX lock", "a U lock"); these letters' names start with a vowel.
func startsWithVowelSound(mode string) bool {
	return mode != "" && strings.ContainsRune("AEFHILMNORSX", rune(mode[0]))
}

// lockResource describes a lock's resource: "KEY dbo.Orders.PK_Orders
// (row: OrderID = 42)".
func (a *analysis) lockResource(lk timeline.LockInterval) string {
	s := lk.ResourceType
	if o := a.in.Trace.ObjectOf(lk.Object); o != nil {
		s += " " + o.String()
	} else if lk.Resource != "" {
		s += " " + lk.Resource
	}
	if lk.Row != "" {
		s += " (row " + clip(lk.Row, 80) + ")"
	}
	return s
}

// holder describes the session the input names as holding lk's resource.
func (a *analysis) holder(lk timeline.LockInterval) string {
	obj := a.in.Trace.ObjectOf(lk.Object).String() // "" for none
	for _, h := range a.in.Run.Holders {
		if h.Resource != "" && h.Resource == lk.Resource || h.Resource == "" && h.Object != "" && h.Object == obj {
			s := fmt.Sprintf("Held by session %d", h.SessionID)
			if h.Mode != "" {
				s += " in mode " + h.Mode
			}
			if h.Statement != "" {
				s += ", running: " + clip(h.Statement, 120)
			}
			return s + "."
		}
	}
	return ""
}

// parallelismWaits: CX* waits took at least ParallelWaitShare of all wait
// time, and at least MinParallelWaitUs.
func parallelismWaits(a *analysis) []Finding {
	var total, cx int64
	var idx []int
	types := map[string]bool{}
	for i, w := range a.in.Trace.Lanes.Wait {
		us := WaitUs(w)
		total += us
		// CXCONSUMER is a consumer waiting for rows, normal in every
		// parallel plan (sys.dm_os_wait_stats); only producer-side waits
		// say threads waited on uneven work.
		if waitCategory(w) == "Parallelism" && !strings.EqualFold(w.WaitType, "CXCONSUMER") {
			cx += us
			idx = append(idx, i)
			types[strings.ToUpper(w.WaitType)] = true
		}
	}
	if cx < a.cfg.MinParallelWaitUs || share(cx, total) < a.cfg.ParallelWaitShare {
		return nil
	}
	names := sortedKeys(types)
	f := Finding{
		Title:    fmt.Sprintf("%s took %s of the wait time: %s of %s", strings.Join(names, "/"), Percent(share(cx, total)), Duration(cx), Duration(total)),
		Severity: SeverityInfo,
		pending:  ev(LaneWait, idx),
		Numbers: []Number{num("parallelWaitUs", float64(cx), "us", "events"), num("totalWaitUs", float64(total), "us", "events"),
			num("share", share(cx, total)*100, "percent", "events"), num("waits", float64(len(idx)), "count", "events")},
		Hint: "Parallel threads waited for each other (CXCONSUMER, a consumer waiting for rows, is normal and left out). CXPACKET " +
			"waits that dominate mean producers waited — usually uneven work between threads (see parallel-skew) or a parallel plan " +
			"for a query too small to need one (cost threshold for parallelism, MAXDOP).",
		Reference: refWaitStats,
	}
	var nodes []int
	for _, i := range idx {
		if n := nodeOf(a.in.Trace.Lanes.Wait[i].Match); n >= 0 && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	f.Operators = a.opRefs(nodes...)
	return []Finding{f}
}

// coldCache: at least MinPhysicalReads pages came from disk and, when the
// plan gives the logical reads, at least ColdCacheShare of them.
func coldCache(a *analysis) []Finding {
	p := a.p
	var phys, logical, ahead int64
	src := "events"
	if p.HasCounters && p.LogicalReads > 0 {
		phys, logical, ahead, src = p.PhysicalReads+p.ReadAheads, p.LogicalReads, p.ReadAheads, "plan"
	} else {
		phys = int64(p.PageReads)
	}
	if phys < a.cfg.MinPhysicalReads || logical > 0 && share(phys, logical) < a.cfg.ColdCacheShare {
		return nil
	}
	io := a.readIO()
	if src == "events" {
		ahead = io.aheadPages
	}
	f := Finding{Severity: SeverityWarning, pending: append(ev(LaneRead, allIdx(p.PageReads)), ev(LaneWait, io.latchWaits)...)}
	f.Numbers = []Number{num("physicalPages", float64(phys), "pages", src), num("readAheadPages", float64(ahead), "pages", src),
		num("readAheadIOs", float64(io.aheadIOs), "count", "events"), num("pageIOLatchWaits", float64(len(io.latchWaits)), "count", "events"),
		num("pageIOLatchUs", float64(io.latchUs), "us", "events")}
	if logical > 0 {
		f.Numbers = append(f.Numbers, num("logicalReads", float64(logical), "pages", src), num("share", min(share(phys, logical), 1)*100, "percent", src))
	}
	// Read-ahead may fetch more pages than the query then reads, so the
	// pages from disk can exceed the logical reads.
	pages, forLogical := plural(phys, "page", "pages"), ""
	switch {
	case logical > 0 && phys <= logical:
		pages = fmt.Sprintf("%s of %s pages (%s)", Count(phys), Count(logical), Percent(share(phys, logical)))
	case logical > 0:
		forLogical = " for " + plural(logical, "logical read", "logical reads")
	}
	if a.in.Run.DisableReadAhead {
		f.Title = fmt.Sprintf("Cold cache with read-ahead off: %s read from disk one at a time%s, %s (%s)", pages, forLogical,
			plural(int64(len(io.latchWaits)), "PAGEIOLATCH wait", "PAGEIOLATCH waits"), Duration(io.latchUs))
		f.Hint = "Read-ahead was disabled for the trace (trace flag 652), so every page not in the buffer pool was read when the " +
			"operator asked for it and the query waited for each read. Trace again with read-ahead on to see what prefetching saves; " +
			"a warm run shows the query's cost without disk reads."
	} else {
		f.Title = fmt.Sprintf("Cold cache: %s came from disk%s", pages, forLogical)
		if ahead > 0 {
			f.Title += fmt.Sprintf(", %s of them by read-ahead", Count(ahead))
		}
		f.Hint = coldHint(ahead, io.aheadIOs)
	}
	if a.in.Run.ClearBufferPool {
		f.Severity = SeverityInfo
		f.Detail = "The buffer pool was cleared before the run (DBCC DROPCLEANBUFFERS), so this cost was asked for."
	}
	f.Reference = refReadingPages
	return []Finding{f}
}

// coldHint explains the disk reads by what the trace shows read-ahead did:
// it claims prefetching only when read-ahead pages (counters) or
// multi-page reads (file_read events) are there.
func coldHint(aheadPages int64, aheadIOs int) string {
	const warm = " A warm run shows the query's own cost; a cold run shows what it costs after a restart or under memory pressure."
	if aheadPages == 0 && aheadIOs == 0 {
		return "Pages not in the buffer pool were read from disk one at a time, when the operator asked for each: no read-ahead " +
			"happened (the counters show no read-ahead pages and the trace no multi-page read). Read-ahead prefetches for scans " +
			"and ordered range reads, not for single-row seeks and lookups, so each of these reads was waited for." + warm
	}
	return "Pages not in the buffer pool were read from disk. Read-ahead fetched pages ahead of the scan in large reads (up to " +
		"64 pages each), so the query waited less than one read per page." + warm
}

type readIOStats struct {
	aheadPages int64
	aheadIOs   int
	latchWaits []int
	latchUs    int64
}

// readIO counts multi-page file reads (read-ahead issues reads of up to 64
// contiguous pages; a demand read is one page) and PAGEIOLATCH waits.
func (a *analysis) readIO() readIOStats {
	var s readIOStats
	l := &a.in.Trace.Lanes
	for _, e := range l.IO {
		if !e.Write && e.Size > 8192 {
			s.aheadIOs++
			s.aheadPages += int64(e.Size / 8192)
		}
	}
	for i, w := range l.Wait {
		if strings.HasPrefix(strings.ToUpper(w.WaitType), "PAGEIOLATCH_") {
			s.latchWaits = append(s.latchWaits, i)
			s.latchUs += WaitUs(w)
		}
	}
	return s
}

func allIdx(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
